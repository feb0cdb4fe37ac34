"""The ``barbican`` client plugin (openstacksdk's key-manager proxy) and Heat's custom
constraints for Barbican: ``barbican.secret``, ``barbican.container``, and ``expiration``
(an ISO 8601 time in the future, which Barbican's types check).

Barbican names its objects by reference (a URL ending in the object's UUID): a secret's
or container's physical id is that reference, as in Heat. openstacksdk negotiates the
key-manager microversion itself (it probes Barbican, whose version document has no
range). Owns: turning a reference into the id openstacksdk wants, reading a secret's
metadata without its payload (a payload is read only when an attribute asks for it), and
deleting an object that may be gone already.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin
from stoker.resources.openstack.constraints import LookupConstraint
from stoker.sdk.exceptions import EntityNotFound

__all__ = ["BarbicanClientPlugin", "client_mapping", "constraint_mapping", "reference_id"]


def reference_id(reference: str) -> str:
    """The UUID at the end of a Barbican reference (or the value itself if it is one)."""
    path = urlsplit(reference).path if "://" in reference else reference
    return path.rstrip("/").rsplit("/", 1)[-1]


class BarbicanClientPlugin(OpenStackClientPlugin):
    """Barbican through openstacksdk's ``connection.key_manager``."""

    name = "barbican"
    service_type = "key-manager"
    proxy_name = "key_manager"

    # -- finders (Heat's get_secret_by_ref and get_container_by_ref) ---------------

    def get_secret_by_ref(self, secret_ref: str) -> dict[str, Any]:
        """The secret's metadata (never its payload); EntityNotFound when there is none."""
        return self._answer("secret", secret_ref, lambda: self.secret_metadata(secret_ref))

    def get_container_by_ref(self, container_ref: str) -> Any:
        return self._answer(
            "container",
            container_ref,
            lambda: self.client().get_container(reference_id(container_ref)),
        )

    def _answer(self, entity: str, reference: str, read: Any) -> Any:
        from stoker.resources.openstack.constraints import CACHE

        def ask() -> Any:
            try:
                return read()
            except Exception as error:  # noqa: BLE001 - openstacksdk's types, classified
                if self.is_not_found(error) or _is_bad_reference(error):
                    raise EntityNotFound(entity.capitalize(), reference) from None
                raise

        return CACHE.answer(self.context, (self.name, "find", entity, reference), ask)

    # -- reads --------------------------------------------------------------------------

    def document(self, collection: str, reference: str) -> dict[str, Any]:
        """``GET /v1/<collection>/<id>`` as Barbican answers it (openstacksdk's order
        model lacks ``container_ref`` and the error fields; its get_secret also fetches
        the payload, which only the ``decrypted_payload`` attribute may read)."""

        def get() -> dict[str, Any]:
            from openstack import exceptions

            response = self.client().get(f"/{collection}/{reference_id(reference)}")
            exceptions.raise_from_response(response)
            return dict(response.json())

        return self.read(get)

    def secret_metadata(self, secret_ref: str) -> dict[str, Any]:
        """The secret's metadata, never its payload."""
        return self.document("secrets", secret_ref)

    def secret_payload(self, secret_ref: str) -> Any:
        payload = self.client().get_secret(reference_id(secret_ref)).payload
        return payload.decode() if isinstance(payload, bytes) else payload

    def get_secret_payload_by_ref(self, secret_ref: str) -> Any:
        """Heat's name for it: the payload of the secret ``secret_ref`` names."""
        return self.secret_payload(secret_ref)

    def order(self, order_ref: str) -> dict[str, Any]:
        return self.document("orders", order_ref)

    def container(self, container_ref: str) -> Any:
        return self.read(lambda: self.client().get_container(reference_id(container_ref)))

    # -- deletes ------------------------------------------------------------------------

    def delete(self, entity: str, reference: str) -> None:
        """Delete the ``entity`` (secret, order, container) ``reference`` names; one gone
        already is deleted."""
        try:
            getattr(self.client(), f"delete_{entity}")(reference_id(reference), ignore_missing=True)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.ignore_not_found(error)


def _is_bad_reference(error: BaseException) -> bool:
    # Barbican answers 400/404 for a reference that is not a UUID; a user's typo is "not found".
    from stoker.resources.openstack.client_plugin import http_status

    return http_status(error) == 400


class SecretConstraint(LookupConstraint):
    name, client_plugin_name, finder = "barbican.secret", "barbican", "get_secret_by_ref"


class ContainerConstraint(LookupConstraint):
    name, client_plugin_name, finder = "barbican.container", "barbican", "get_container_by_ref"


class ExpirationConstraint:
    """Heat's ``expiration``: an ISO 8601 time, which must not be past."""

    name = "expiration"

    def __init__(self) -> None:
        self._message = ""

    def validate(self, value: Any, context: Any = None, template: Any = None) -> bool:
        if not isinstance(value, str):
            self._message = f'"{value}" is not an ISO 8601 time'
            return False
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            self._message = f'"{value}" is not an ISO 8601 time (e.g. 2030-01-31T12:00:00Z)'
            return False
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        if moment <= datetime.now(UTC):
            self._message = "Expiration time is out of date."
            return False
        return True

    def error(self, value: Any) -> str:
        return self._message or f'"{value}" does not validate expiration'


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"barbican": BarbicanClientPlugin}


def constraint_mapping() -> dict[str, Any]:
    return {c.name: c for c in (SecretConstraint, ContainerConstraint, ExpirationConstraint)}
