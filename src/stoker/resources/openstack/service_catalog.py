"""The refusal of a resource type whose service the cloud does not have: a client plugin
for a service that many clouds lack (Magnum, Trove, Zun, Blazar) looks for the service in
the cloud's catalog before its first call, and refuses with the service named, its type,
and what to do, instead of openstacksdk's error from deep inside a call.

Owns: ``ServiceNotInCatalogError`` and ``CatalogCheckedClientPlugin`` (the check, once per
plugin object, under the service type and each alias os-service-types knows; and
``call``, the JSON request these families make through the plugin's ``rest()``).
Must not: check anything else of the service (its version, its health): the first call does.
"""

from __future__ import annotations

from typing import Any, ClassVar

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin
from stoker.sdk.exceptions import ClientPluginError

__all__ = ["CatalogCheckedClientPlugin", "ServiceNotInCatalogError"]


class ServiceNotInCatalogError(ClientPluginError):
    """The cloud's catalog has no endpoint of the service a resource type needs."""

    def __init__(self, project: str, service_type: str):
        super().__init__(
            f"The {project} service (service type {service_type}) is not in this cloud's catalog",
            hint=f"deploy {project} in this cloud (and register its endpoints in Keystone), "
            "or use a cloud that has it",
        )
        self.project = project
        self.service_type = service_type


class CatalogCheckedClientPlugin(OpenStackClientPlugin):
    """An openstacksdk client plugin whose service is looked for in the catalog first."""

    # The service's project, as the refusal names it ("Magnum").
    project: ClassVar[str] = ""

    def client(self, version: str | None = None) -> Any:
        self.require_service()
        return super().client(version)

    def require_service(self) -> None:
        """``ServiceNotInCatalogError`` unless the catalog has the service (under its
        type or an alias)."""
        if getattr(self, "_service_found", False):
            return
        for service_type in self._service_types():
            if self._endpoint(service_type) is not None:
                self._service_found = True
                return
        raise ServiceNotInCatalogError(self.project, self.service_type)

    def call(self, method: str, path: str, body: Any = None) -> Any:
        """A JSON request on the service's endpoint (``rest()``: an error answer raises
        openstacksdk's exception for it); the answer's JSON, None when it has no body."""
        arguments = {} if body is None else {"json": body}
        response = self.rest(method, path, **arguments)
        return response.json() if response.content else None

    def _service_types(self) -> list[str]:
        import os_service_types

        return [self.service_type, *os_service_types.ServiceTypes().get_aliases(self.service_type)]

    def _endpoint(self, service_type: str) -> str | None:
        try:
            return self.connection.endpoint_for(service_type)
        except Exception as error:  # noqa: BLE001 - keystoneauth's catalog errors
            if type(error).__name__ == "EndpointNotFound":
                return None
            raise
