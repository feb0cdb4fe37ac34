"""OS::Barbican::Order, as Heat has it.

Owns: submitting an order (a key, an asymmetric key pair or a certificate that Barbican
generates), waiting for it as Heat does (ACTIVE is done, ERROR a failure carrying
Barbican's status code and reason), Heat's checks of which properties each order type
takes, delete, check, and the attributes (the generated secret's or container's
references, and the payloads of a container's secrets). Every property replaces the
order when it changes. The physical id is the order's reference (its URL), recorded as
soon as Barbican answers, so a create interrupted while the order is pending is polled
on by the next command.

Where Heat leaves it behind, stoker deletes what the order generated (its secret, or its
container and the container's secrets) with the order: nothing the stack made outlives it.
The generated private key is a hidden value: ``resource show`` masks it.
"""

from __future__ import annotations

from typing import Any, ClassVar

from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ResourceFailure, ValidationError
from stoker.sdk.properties import UNRESOLVED
from stoker.sdk.resource import Resource

__all__ = ["Order", "resource_mapping"]

V5 = support.SupportStatus(version="5.0.0")
# How a hidden value is shown (stoker.masking's mask; plugins do not import the service's layer).
MASK = "******"


class Order(Resource):
    """A resource allowing for the generation secret material by Barbican.

    The resource allows to generate some secret material. It can be, for example, some key
    or certificate. The order encapsulates the workflow and history for the creation of a
    secret. The time to generate a secret can vary depending on the type of secret.
    """

    support_status = support.SupportStatus(version="2014.2")
    default_client_name = "barbican"
    entity = "orders"
    sensitive_attributes: ClassVar[tuple[str, ...]] = ("private_key",)

    PROPERTIES = (
        NAME, PAYLOAD_CONTENT_TYPE, MODE, EXPIRATION, ALGORITHM, BIT_LENGTH, TYPE, REQUEST_TYPE,
        SUBJECT_DN, SOURCE_CONTAINER_REF, CA_ID, PROFILE, REQUEST_DATA, PASS_PHRASE,
    ) = (
        "name", "payload_content_type", "mode", "expiration", "algorithm", "bit_length", "type",
        "request_type", "subject_dn", "source_container_ref", "ca_id", "profile", "request_data",
        "pass_phrase",
    )  # fmt: skip
    ATTRIBUTES = (
        STATUS, ORDER_REF, SECRET_REF, PUBLIC_KEY, PRIVATE_KEY, CERTIFICATE, INTERMEDIATES, CONTAINER_REF,
    ) = (
        "status", "order_ref", "secret_ref", "public_key", "private_key", "certificate", "intermediates",
        "container_ref",
    )  # fmt: skip
    ORDER_TYPES = (KEY, ASYMMETRIC, CERTIFICATE_TYPE) = ("key", "asymmetric", "certificate")
    REQUEST_TYPES = ("stored-key", "simple-cmc", "custom")
    ALLOWED_PROPERTIES_FOR_TYPE = {
        KEY: [NAME, ALGORITHM, BIT_LENGTH, MODE, PAYLOAD_CONTENT_TYPE, EXPIRATION],
        ASYMMETRIC: [
            NAME,
            ALGORITHM,
            BIT_LENGTH,
            MODE,
            PASS_PHRASE,
            PAYLOAD_CONTENT_TYPE,
            EXPIRATION,
        ],
        CERTIFICATE_TYPE: [
            NAME,
            REQUEST_TYPE,
            SUBJECT_DN,
            SOURCE_CONTAINER_REF,
            CA_ID,
            PROFILE,
            REQUEST_DATA,
        ],
    }
    CONTAINER_PAYLOADS = (PUBLIC_KEY, PRIVATE_KEY, CERTIFICATE, INTERMEDIATES)

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "Human readable name for the secret."),
        PAYLOAD_CONTENT_TYPE: properties.Schema(
            properties.Schema.STRING, "The type/format the secret data is provided in."
        ),
        EXPIRATION: properties.Schema(
            properties.Schema.STRING,
            "The expiration date for the secret in ISO-8601 format.",
            constraints=[constraints.CustomConstraint("expiration")],
        ),
        ALGORITHM: properties.Schema(
            properties.Schema.STRING,
            "The algorithm type used to generate the secret. Required for key and asymmetric types of order.",
        ),
        BIT_LENGTH: properties.Schema(
            properties.Schema.INTEGER,
            "The bit-length of the secret. Required for key and asymmetric types of order.",
        ),
        MODE: properties.Schema(
            properties.Schema.STRING,
            "The type/mode of the algorithm associated with the secret information.",
        ),
        TYPE: properties.Schema(
            properties.Schema.STRING,
            "The type of the order.",
            constraints=[constraints.AllowedValues(list(ORDER_TYPES))],
            required=True,
            support_status=V5,
        ),
        REQUEST_TYPE: properties.Schema(
            properties.Schema.STRING,
            "The type of the certificate request.",
            support_status=V5,
            constraints=[constraints.AllowedValues(list(REQUEST_TYPES))],
        ),
        SUBJECT_DN: properties.Schema(
            properties.Schema.STRING, "The subject of the certificate request.", support_status=V5
        ),
        SOURCE_CONTAINER_REF: properties.Schema(
            properties.Schema.STRING,
            "The source of certificate request.",
            support_status=V5,
            constraints=[constraints.CustomConstraint("barbican.container")],
        ),
        CA_ID: properties.Schema(
            properties.Schema.STRING, "The identifier of the CA to use.", support_status=V5
        ),
        PROFILE: properties.Schema(
            properties.Schema.STRING, "The profile of certificate to use.", support_status=V5
        ),
        REQUEST_DATA: properties.Schema(
            properties.Schema.STRING,
            "The content of the CSR. Only for certificate orders.",
            support_status=V5,
        ),
        PASS_PHRASE: properties.Schema(
            properties.Schema.STRING,
            "The passphrase of the created key. Can be set only for asymmetric type of order.",
            support_status=V5,
        ),
    }

    attributes_schema = {
        STATUS: attributes.Schema("The status of the order.", type=attributes.Schema.STRING),
        ORDER_REF: attributes.Schema("The URI to the order.", type=attributes.Schema.STRING),
        SECRET_REF: attributes.Schema(
            "The URI to the created secret.", type=attributes.Schema.STRING
        ),
        CONTAINER_REF: attributes.Schema(
            "The URI to the created container.", support_status=V5, type=attributes.Schema.STRING
        ),
        PUBLIC_KEY: attributes.Schema(
            "The payload of the created public key, if available.",
            support_status=V5,
            type=attributes.Schema.STRING,
        ),
        PRIVATE_KEY: attributes.Schema(
            "The payload of the created private key, if available.",
            support_status=V5,
            type=attributes.Schema.STRING,
            cache_mode=attributes.Schema.CACHE_NONE,
        ),
        CERTIFICATE: attributes.Schema(
            "The payload of the created certificate, if available.",
            support_status=V5,
            type=attributes.Schema.STRING,
        ),
        INTERMEDIATES: attributes.Schema(
            "The payload of the created intermediates, if available.",
            support_status=V5,
            type=attributes.Schema.STRING,
        ),
    }

    def validate(self) -> None:
        """Heat's rules: key and asymmetric orders need algorithm and bit_length; a
        certificate's profile needs ca_id; each type takes only its own properties."""
        super().validate()
        given = {
            key: value for key, value in self.properties.resolved().items() if value is not None
        }
        if any(value is UNRESOLVED for value in given.values()):
            return
        order_type = given[self.TYPE]  # required: super().validate() has seen it given
        path = f"resources.{self.name}.properties"
        if order_type != self.CERTIFICATE_TYPE:
            if given.get(self.ALGORITHM) is None or given.get(self.BIT_LENGTH) is None:
                raise ValidationError(
                    f"Properties {self.ALGORITHM} and {self.BIT_LENGTH} are required for {order_type} type of order.",
                    path=path,
                )
        elif given.get(self.PROFILE) and not given.get(self.CA_ID):
            raise ValidationError(
                f"{self.PROFILE} cannot be specified without {self.CA_ID}.",
                path=f"{path}.{self.PROFILE}",
            )
        allowed = sorted(self.ALLOWED_PROPERTIES_FOR_TYPE[order_type])
        unexpected = sorted(set(given) - {self.TYPE} - set(allowed))
        if unexpected:
            raise ValidationError(
                f"Unexpected properties: {', '.join(unexpected)}. Only these properties are allowed for "
                f"{order_type} type of order: {', '.join(allowed)}.",
                path=f"{path}.{unexpected[0]}",
            )

    def handle_create(self) -> str:
        given = {
            key: value for key, value in self.properties.resolved().items() if value is not None
        }
        order_type = given.pop(self.TYPE)
        created = self.client().create_order(type=order_type, meta=given)
        self.resource_id_set(created.order_ref)
        return str(created.order_ref)

    def check_create_complete(self, order_ref: str) -> bool:
        order = self.client_plugin().order(order_ref)
        if order.get("status") == "ERROR":
            # Barbican's own answer; it never holds the generated secret.
            reason = order.get("error_reason") or order.get("sub_status_message")
            code = order.get("error_status_code") or order.get("sub_status")
            raise ResourceFailure(f"Order '{self.name}' failed: {code} - {reason}")
        return order.get("status") == "ACTIVE"

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        plugin = self.client_plugin()
        try:
            order = plugin.order(self.resource_id)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            plugin.ignore_not_found(error)
            return
        if order.get("container_ref"):
            try:
                container = plugin.container(order["container_ref"])
            except Exception as error:  # noqa: BLE001
                plugin.ignore_not_found(error)
            else:
                plugin.delete("container", order["container_ref"])
                for reference in container.secret_refs or []:
                    plugin.delete("secret", reference["secret_ref"])
        if order.get("secret_ref"):
            plugin.delete("secret", order["secret_ref"])
        plugin.delete("order", self.resource_id)

    def handle_check(self) -> None:
        self.client_plugin().order(self.resource_id)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        order = self.client_plugin().order(self.resource_id)
        # Barbican echoes the order's meta; the key's passphrase is a secret.
        if isinstance(order.get("meta"), dict) and order["meta"].get(self.PASS_PHRASE) is not None:
            order["meta"] = {**order["meta"], self.PASS_PHRASE: MASK}
        return order

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        plugin = self.client_plugin()
        order = plugin.order(self.resource_id)
        if name in self.CONTAINER_PAYLOADS:
            if not order.get("container_ref"):
                return None
            container = plugin.container(order["container_ref"])
            found = {item["name"]: item["secret_ref"] for item in container.secret_refs or []}
            return plugin.secret_payload(found[name]) if name in found else None
        return order.get(name)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Barbican::Order": Order}
