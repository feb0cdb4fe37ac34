"""OS::Cinder::QoSSpecs, as Heat has it.

Owns: a set of Cinder QoS specs (a name and key/value specs): created, its specs updated
in place (keys set and unset), disassociated from every volume type and deleted on delete.
Cinder's default policy lets administrators only manage QoS specs.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import properties, support
from stoker.sdk.resource import Resource

__all__ = ["CinderQoSSpecs", "resource_mapping"]


class CinderQoSSpecs(Resource):
    """A resource for creating cinder QoS specs.

    Users can ask for a specific volume type. Part of that volume type is a string that
    defines the QoS of the volume IO (fast, normal, or slow). Backends that can handle all
    of the demands of the volume type become candidates for scheduling. Usage of this
    resource restricted to admins only by default policy.
    """

    support_status = support.SupportStatus(version="7.0.0")
    default_client_name = "cinder"
    entity = "qos_spec"

    PROPERTIES = (NAME, SPECS) = ("name", "specs")

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "Name of the QoS."),
        SPECS: properties.Schema(
            properties.Schema.MAP,
            "The specs key and value pairs of the QoS.",
            required=True,
            update_allowed=True,
        ),
    }

    @staticmethod
    def _strings(specs: Mapping[str, Any] | None) -> dict[str, str]:
        return {str(key): str(value) for key, value in (specs or {}).items()}

    def qos_name(self) -> str:
        return self.properties[self.NAME] or self.physical_resource_name()

    def handle_create(self) -> None:
        created = self.client().create_qos_spec(
            name=self.qos_name(), **self._strings(self.properties[self.SPECS])
        )
        self.resource_id_set(created.id)

    def find_created(self) -> str | None:
        if self.properties[self.NAME]:
            return None
        found = self.client().find_qos_spec(self.physical_resource_name(), ignore_missing=True)
        return None if found is None else str(found.id)

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if self.SPECS not in prop_diff or self.resource_id is None:
            return
        wanted = self._strings(prop_diff[self.SPECS])
        current = self._strings(self.client().get_qos_spec(self.resource_id).specs)
        changed = {key: value for key, value in wanted.items() if current.get(key) != value}
        if changed:
            # PUT /qos-specs/{id} sets the keys given (openstacksdk's update sends the
            # whole object, name included, which Cinder refuses).
            self.client_plugin().rest(
                "PUT", f"/qos-specs/{self.resource_id}", json={"qos_specs": changed}
            )
        stale = sorted(set(current) - set(wanted))
        if stale:
            self.client().delete_qos_spec_metadata(self.resource_id, stale)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        client = self.client()
        try:
            client.disassociate_all_qos_spec(self.resource_id)
            client.delete_qos_spec(self.resource_id, ignore_missing=True)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client().get_qos_spec(self.resource_id)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        found = self.client().get_qos_spec(self.resource_id)
        return found.to_dict(original_names=True, headers=False, computed=False)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Cinder::QoSSpecs": CinderQoSSpecs}
