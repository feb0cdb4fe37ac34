"""``NeutronRestResource``: Neutron types read and written as Neutron's own JSON documents
(``{"vpnservice": {...}}`` at ``/vpn/vpnservices``) through the network proxy's REST calls,
as Heat's neutronclient calls do.

Owns: create, show, update and delete of one object of a collection, the check that Neutron
offers the API extension a type needs (Heat's ``required_service_extension``, with Heat's
message), and finding what an interrupted create made. Used where openstacksdk has no model
(FWaaS v1, the NSX network gateways) or renames the fields Heat's attributes are named after
(VPNaaS: ``admin_state_up``). Must not hold a type's schema.
"""

from __future__ import annotations

from typing import Any, ClassVar

from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk.exceptions import ResourceFailure

__all__ = ["NeutronRestResource"]


class NeutronRestResource(NeutronResource):
    """Base of the Neutron types kept as Neutron's JSON documents (not a type itself)."""

    # The collection's path under the endpoint ("/vpn/vpnservices"); the document's key is
    # ``entity`` ("vpnservice").
    collection: ClassVar[str] = ""
    # The key of a listing's documents ("vpnservices", "firewall_policies").
    plural: ClassVar[str] = ""
    # The API extension alias the type needs ("vpnaas"), as Heat names it.
    required_service_extension: ClassVar[str | None] = None

    def require_extension(self) -> None:
        """Refuse, as Heat does, a type whose API extension this Neutron does not offer."""
        alias = self.required_service_extension
        if alias and not self.client_plugin().has_extension(alias):
            raise ResourceFailure(
                f"Service neutron is not available for resource type {self.type}, reason: "
                f"Required extension {alias} in neutron service is not available.",
                path=f"resources.{self.name}",
            )

    def _url(self, object_id: str | None = None) -> str:
        return self.collection if object_id is None else f"{self.collection}/{object_id}"

    def rest_create(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST the document, record its id at once (crash safety), return the object."""
        self.require_extension()
        response = self.client_plugin().rest("POST", self._url(), json={self.entity: body})
        made = response.json()[self.entity]
        self.resource_id_set(made["id"])
        return made

    def rest_update(self, changes: dict[str, Any]) -> None:
        if changes:
            self.client_plugin().rest(
                "PUT", self._url(self.resource_id), json={self.entity: changes}
            )

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return self.client_plugin().rest("GET", self._url(self.resource_id)).json()[self.entity]

    def _delete(self) -> None:
        self.client_plugin().rest("DELETE", self._url(self.resource_id))

    def handle_delete(self) -> Any:
        """Delete ("already gone" is fine), then poll until it is gone, as Heat does."""
        super().handle_delete()
        return self.resource_id is not None

    def handle_check(self) -> None:
        """The live object must exist and, where it has a status, not be in ERROR."""
        if self.resource_id is None:
            return
        status = (self._show_resource() or {}).get("status")
        if status == "ERROR":
            raise ResourceFailure(
                'Went to status ERROR due to "Unknown"', path=f"resources.{self.name}"
            )

    def wait_status(self, done: tuple[str, ...], waiting: tuple[str, ...] = ()) -> bool:
        """Heat's check of a created VPN or firewall object: done in ``done``, not yet in
        ``waiting``, ERROR or any other status a failure."""
        status = (self._show_resource() or {}).get("status")
        if status in done:
            return True
        if status in waiting:
            return False
        kind = type(self).__name__
        if status == "ERROR":
            raise ResourceFailure(f'Went to status ERROR due to "Error in {kind}"')
        raise ResourceFailure(f'Unknown status {status} due to "{kind} creation failed"')

    def find_created(self) -> str | None:
        """The object an interrupted create made, by its physical resource name (only when
        the template gave no name)."""
        if "name" not in self.properties_schema or self.given("name") is not None:
            return None
        name = self.physical_resource_name()
        response = self.client_plugin().rest("GET", self._url(), params={"name": name})
        found = [
            item
            for item in response.json()[self.plural or f"{self.entity}s"]
            if item.get("name") == name
        ]
        return str(found[0]["id"]) if len(found) == 1 else None
