"""OS::Neutron::Trunk, as Heat has it.

Owns: a trunk on a parent port (never changed in place) with VLAN subports; name,
description, admin state and the subports updated in place in at most three calls (the
trunk's fields, the subports that went, the subports that came: removed before added, as
one port cannot be two subports at once). Ports are named by name or id (Heat's RESOLVE
rules). The ``port_id`` attribute is the parent port, so a server can use the port through
the trunk (``get_attr: [trunk, port_id]``) and boot after the trunk exists.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import attributes, constraints, properties, support, translation

__all__ = ["Trunk", "resource_mapping"]


def _subport_key(subport: Mapping[str, Any]) -> tuple[str, str, int]:
    return (
        str(subport["port"]),
        str(subport["segmentation_type"]),
        int(subport["segmentation_id"]),
    )


class Trunk(NeutronResource):
    """A resource for managing Neutron trunks.

    The network trunk service allows multiple networks to be connected to an instance using
    a single virtual NIC (vNIC). Every trunk has a parent port and can have any number of
    subports; a subport presents its port's network to the instance on a VLAN
    (``segmentation_id``). Refer to the trunk's parent port indirectly (``get_attr: [trunk,
    port_id]``) so a server boots after its trunk exists.
    """

    support_status = support.SupportStatus(status=support.SUPPORTED, version="9.0.0")
    entity = "trunk"

    PROPERTIES = (NAME, PARENT_PORT, SUB_PORTS, DESCRIPTION, ADMIN_STATE_UP) = (
        "name", "port", "sub_ports", "description", "admin_state_up",
    )  # fmt: skip
    _SUBPORT_KEYS = (PORT, SEGMENTATION_TYPE, SEGMENTATION_ID) = (
        "port",
        "segmentation_type",
        "segmentation_id",
    )
    ATTRIBUTES = (PORT_ATTR,) = ("port_id",)

    _subport_schema = {
        PORT: properties.Schema(
            properties.Schema.STRING,
            "ID or name of a port to be used as a subport.",
            required=True,
            constraints=[constraints.CustomConstraint("neutron.port")],
        ),
        SEGMENTATION_TYPE: properties.Schema(
            properties.Schema.STRING,
            "Segmentation type to be used on the subport.",
            required=True,
            constraints=[constraints.AllowedValues(["vlan"])],
        ),
        SEGMENTATION_ID: properties.Schema(
            properties.Schema.INTEGER,
            "The segmentation ID on which the subport network is presented to the instance.",
            required=True,
            constraints=[constraints.Range(1, 4094)],
        ),
    }

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING,
            "A string specifying a symbolic name for the trunk, which is not required to be unique.",
            update_allowed=True,
        ),
        PARENT_PORT: properties.Schema(
            properties.Schema.STRING,
            "ID or name of a port to be used as a parent port.",
            required=True,
            immutable=True,
            constraints=[constraints.CustomConstraint("neutron.port")],
        ),
        SUB_PORTS: properties.Schema(
            properties.Schema.LIST,
            "List with 0 or more map elements containing subport details.",
            schema=properties.Schema(properties.Schema.MAP, schema=_subport_schema),
            update_allowed=True,
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description for the trunk.", update_allowed=True
        ),
        ADMIN_STATE_UP: properties.Schema(
            properties.Schema.BOOLEAN,
            "Enable/disable subport addition, removal and trunk delete.",
            update_allowed=True,
        ),
    }

    attributes_schema = {
        PORT_ATTR: attributes.Schema(
            "ID or name of a port used as a parent port.", type=attributes.Schema.STRING
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.PARENT_PORT], client_plugin="neutron",
                finder="find_resourceid_by_name_or_id", entity="port",
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, translation_path=[self.SUB_PORTS, self.PORT],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="port",
            ),
        ]  # fmt: skip

    @staticmethod
    def _subports(subports: list[Mapping[str, Any]] | None) -> list[dict[str, Any]]:
        return [
            {"port_id": port, "segmentation_type": kind, "segmentation_id": number}
            for port, kind, number in sorted(_subport_key(subport) for subport in subports or [])
        ]

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        """Heat's default, each subport as the template gives it (``port``, not Neutron's
        ``port_id``)."""
        live = super().parse_live_resource_data(resource_properties, resource_data)
        if isinstance(live.get(self.SUB_PORTS), list):
            live[self.SUB_PORTS] = [
                {self.PORT: subport.get("port_id"), self.SEGMENTATION_TYPE: subport.get("segmentation_type"), self.SEGMENTATION_ID: subport.get("segmentation_id")}
                for subport in live[self.SUB_PORTS]
            ]
        return live

    def handle_create(self) -> dict[str, Any]:
        body = self.prepare_properties()
        body["port_id"] = body.pop(self.PARENT_PORT)
        if body.get(self.SUB_PORTS):
            body[self.SUB_PORTS] = self._subports(body[self.SUB_PORTS])
        return self.created(self.client().create_trunk(**body))

    def check_create_complete(self, token: Any) -> bool:
        return self.is_built(self._show_resource() or {})

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        changes = dict(prop_diff)
        old = {_subport_key(subport) for subport in self.properties[self.SUB_PORTS] or []}
        new = {_subport_key(subport) for subport in changes.pop(self.SUB_PORTS, None) or []}
        moved = self.SUB_PORTS in prop_diff
        self.prepare_update_properties(changes)
        client = self.client()
        if changes:
            client.update_trunk(self.resource_id, **changes)
        if moved and old - new:
            client.delete_trunk_subports(
                self.resource_id, [{"port_id": port} for port, _, _ in sorted(old - new)]
            )
        if moved and new - old:
            client.add_trunk_subports(
                self.resource_id,
                [
                    {"port_id": p, "segmentation_type": t, "segmentation_id": i}
                    for p, t, i in sorted(new - old)
                ],
            )

    def check_update_complete(self, token: Any) -> bool:
        return self.is_built(self._show_resource() or {})

    def _resolve_attribute(self, name: str) -> Any:
        if name == self.PORT_ATTR:
            return self.properties[self.PARENT_PORT]
        return super()._resolve_attribute(name)


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::Trunk": Trunk}
