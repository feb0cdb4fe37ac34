"""``ExtensionResource``: what the types of Neutron's add-on service plugins share
(networking-sfc, tap-as-a-service, networking-l2gw, networking-bgpvpn).

Owns: their objects reached by REST through the client plugin's ``*_ext_resource`` methods
(as Heat reaches them: openstacksdk's data models drop fields these plugins send, such as a
tap flow's ``vlan_filter``), the object below a parent (a BGPVPN's associations), create
with the physical id recorded first, update in place of the changed properties, the wait for
ACTIVE of the types an agent programs (tap services and flows), delete tolerating "already
gone", ``check`` reading the live object, and finding what an interrupted create made.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from stoker.resources.openstack.neutron.neutron import NeutronResource

__all__ = ["ExtensionResource"]


class ExtensionResource(NeutronResource):
    """Base of the add-on service plugins' types (not a type itself)."""

    # Heat's name for the object ("port_pair"): the request's key and the path's.
    extension_entity: ClassVar[str] = ""
    # Heat waits for ACTIVE after a create or update of the objects an agent programs.
    waits_for_active: ClassVar[bool] = False

    # -- what a subclass shapes -----------------------------------------------------------

    def request_body(self) -> dict[str, Any]:
        """The create request's body (Heat's prepare_properties, then renames)."""
        return self.prepare_properties()

    def update_body(self, changes: dict[str, Any]) -> dict[str, Any]:
        return changes

    def parent_id(self) -> str | None:
        """The id of the object this one lives below (a BGPVPN), or None."""
        return None

    # -- lifecycle ------------------------------------------------------------------------

    def handle_create(self) -> dict[str, Any]:
        record = self.client_plugin().create_ext_resource(
            self.extension_entity, self.request_body(), parent=self.parent_id()
        )
        # Recorded first, so a crash right after leaves the object known to the stack.
        self.resource_id_set(record["id"])
        return record

    def check_create_complete(self, token: Any) -> bool:
        if not self.waits_for_active:
            return True
        return self.client_plugin().check_ext_resource_status(
            self.extension_entity, str(self.resource_id)
        )

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> bool:
        changes = dict(prop_diff)
        self.prepare_update_properties(changes)
        changes = self.update_body(changes)
        if not changes:
            return False
        self.client_plugin().update_ext_resource(
            self.extension_entity, changes, str(self.resource_id), parent=self.parent_id()
        )
        return True

    def check_update_complete(self, token: Any) -> bool:
        if not (token and self.waits_for_active):
            return True
        return self.client_plugin().check_ext_resource_status(
            self.extension_entity, str(self.resource_id)
        )

    def _delete(self) -> None:
        self.client_plugin().delete_ext_resource(
            self.extension_entity, str(self.resource_id), parent=self.parent_id()
        )

    def handle_delete(self) -> Any:
        """Delete; "already gone" is fine. Neutron removes these rows before it answers
        (our test cloud's TaaS driver too, acting as the agent), so there is nothing to poll."""
        if self.resource_id is None:
            return None
        try:
            self._delete()
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
        return None

    def handle_check(self) -> None:
        """The live object must exist and not be in ERROR."""
        if self.resource_id is None:
            return
        self.is_built(self._show_resource() or {})

    # -- reading the live object ------------------------------------------------------------

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return self.client_plugin().show_ext_resource(
            self.extension_entity, self.resource_id, parent=self.parent_id()
        )

    def find_created(self) -> str | None:
        """The object an interrupted create made, by the physical resource name it was
        given (only when the template gave no name)."""
        if "name" not in self.properties_schema or self.given("name"):
            return None
        name = self.physical_resource_name()
        found = self.client_plugin().list_ext_resources(
            self.extension_entity, parent=self.parent_id(), name=name
        )
        matches = [item for item in found if item.get("name") == name]
        return str(matches[0]["id"]) if len(matches) == 1 else None
