"""OS::Barbican::GenericContainer, as Heat has it; the certificate and RSA containers
(``certificate_container.py``, ``rsa_container.py``) are it with named secrets.

Owns: making a container of secret references, waiting for it ACTIVE (ERROR is a failure
with Barbican's reason), Heat's duplicate-reference check, delete (one gone already is
deleted; the secrets stay: they are their own resources), check, and the attributes.
Every property replaces the container when it changes. The physical id is the
container's reference (its URL), as in Heat.
"""

from __future__ import annotations

from typing import Any, ClassVar

from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ResourceFailure, ValidationError
from stoker.sdk.properties import contains_unresolved
from stoker.sdk.resource import Resource

__all__ = ["GenericContainer", "resource_mapping"]


class GenericContainer(Resource):
    """A resource for creating Barbican generic container.

    A generic container is used for any type of secret that a user may wish to aggregate.
    There are no restrictions on the amount of secrets that can be held within this
    container.
    """

    support_status = support.SupportStatus(version="6.0.0")
    default_client_name = "barbican"
    entity = "containers"
    # Barbican's container type.
    container_type: ClassVar[str] = "generic"

    PROPERTIES: tuple[str, ...]
    PROPERTIES = (NAME, SECRETS) = ("name", "secrets")
    ATTRIBUTES = (STATUS, CONTAINER_REF, SECRET_REFS, CONSUMERS) = (
        "status",
        "container_ref",
        "secret_refs",
        "consumers",
    )
    _SECRETS_PROPERTIES = (SECRET_NAME, REF) = ("name", "ref")

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "Human-readable name for the container."),
        SECRETS: properties.Schema(
            properties.Schema.LIST,
            "References to secrets that will be stored in container.",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    SECRET_NAME: properties.Schema(
                        properties.Schema.STRING, "Name of the secret.", required=True
                    ),
                    REF: properties.Schema(
                        properties.Schema.STRING,
                        "Reference to the secret.",
                        required=True,
                        constraints=[constraints.CustomConstraint("barbican.secret")],
                    ),
                },
            ),
        ),
    }

    attributes_schema = {
        STATUS: attributes.Schema("The status of the container.", type=attributes.Schema.STRING),
        CONTAINER_REF: attributes.Schema(
            "The URI to the container.", type=attributes.Schema.STRING
        ),
        SECRET_REFS: attributes.Schema(
            "The URIs to secrets stored in container.", type=attributes.Schema.MAP
        ),
        CONSUMERS: attributes.Schema(
            "The URIs to container consumers.", type=attributes.Schema.LIST
        ),
    }

    def secret_references(self) -> dict[str, str]:
        """The container's secrets: name -> reference."""
        secrets = self.properties.resolved().get(self.SECRETS) or []
        return {secret[self.SECRET_NAME]: secret[self.REF] for secret in secrets}

    def _references(self) -> list[Any]:
        secrets = self.properties.resolved().get(self.SECRETS) or []
        return [secret.get(self.REF) for secret in secrets if isinstance(secret, dict)]

    def validate(self) -> None:
        super().validate()
        references = self._references()
        if contains_unresolved(references):
            return
        if len(references) != len(set(references)):
            raise ValidationError(
                "Duplicate refs are not allowed.", path=f"resources.{self.name}.properties"
            )

    def handle_create(self) -> str:
        arguments: dict[str, Any] = {
            "type": self.container_type,
            "secret_refs": [
                {"name": name, "secret_ref": reference}
                for name, reference in self.secret_references().items()
            ],
        }
        name = self.properties.resolved().get(self.NAME)
        if name is not None:
            arguments["name"] = name
        created = self.client().create_container(**arguments)
        self.resource_id_set(created.container_ref)
        return str(created.container_ref)

    def check_create_complete(self, container_ref: str) -> bool:
        container = self.client_plugin().document("containers", container_ref)
        if container.get("status") == "ERROR":
            raise ResourceFailure(
                f"Container '{self.name}' creation failed: "
                f"{container.get('error_status_code')} - {container.get('error_reason')}"
            )
        return container.get("status") == "ACTIVE"

    def handle_delete(self) -> None:
        if self.resource_id is not None:
            self.client_plugin().delete("container", self.resource_id)

    def handle_check(self) -> None:
        self.client_plugin().document("containers", self.resource_id)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return self.client_plugin().document("containers", self.resource_id)

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        container = self.client_plugin().document("containers", self.resource_id)
        if name == self.SECRET_REFS:
            # python-barbicanclient's (and so Heat's) shape: name -> reference.
            return {item["name"]: item["secret_ref"] for item in container.get("secret_refs") or []}
        if name == self.CONSUMERS:
            return container.get("consumers") or []
        return container.get(name)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Barbican::GenericContainer": GenericContainer}
