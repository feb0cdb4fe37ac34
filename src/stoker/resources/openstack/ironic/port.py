"""OS::Ironic::Port, as Heat has it.

Owns: the port's create request (the node and port group resolved to their UUIDs by Heat's
translation; a property newer than the cloud's Ironic microversion refused in Heat's
words), updates in place of every property (a JSON patch of what changed), delete, the
attributes (the port as Ironic shows it), and finding the port an interrupted create made:
Ironic keeps a port's address (MAC) unique, so the port with this address is that one; such
a port (or one whose create failed) is updated by the next stack update, not replaced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.exceptions import ResourceFailure
from stoker.sdk.resource import Resource

__all__ = ["IronicPort", "resource_mapping"]

_LINK_CONNECTION = (
    "The Port binding profile. If specified, must contain switch_id (only a MAC address or an "
    "OpenFlow based datapath_id of the switch are accepted in this field) and port_id "
    "(identifier of the physical port on the switch to which node's port is connected to) "
    "fields. switch_info is an optional string field to be used to store any vendor-specific "
    "information."
)


class IronicPort(Resource):
    """A resource that creates a ironic port.

    Node UUID and physical hardware address for the Port (MAC address in most cases) are
    needed (all Ports must be associated to a Node when created).
    """

    support_status = support.SupportStatus(version="13.0.0")
    default_client_name = "ironic"
    entity = "port"

    PROPERTIES = (
        NODE, ADDRESS, PORTGROUP, LOCAL_LINK_CONNECTION, PXE_ENABLED, PHYSICAL_NETWORK, EXTRA,
        IS_SMARTNIC,
    ) = (
        "node", "address", "portgroup", "local_link_connection", "pxe_enabled",
        "physical_network", "extra", "is_smartnic",
    )  # fmt: skip
    # The Ironic microversion each property needs (Heat's PROPERTIES_MIN_SUPPORT_VERSION).
    MIN_MICROVERSION = {
        PXE_ENABLED: "1.19",
        LOCAL_LINK_CONNECTION: "1.19",
        PORTGROUP: "1.24",
        PHYSICAL_NETWORK: "1.34",
        IS_SMARTNIC: "1.53",
    }
    # The properties as Ironic's API names the port's fields.
    API_FIELDS = {NODE: "node_uuid", PORTGROUP: "portgroup_uuid"}

    ATTRIBUTES = (
        ADDRESS_ATTR, NODE_UUID_ATTR, PORTGROUP_UUID_ATTR, LOCAL_LINK_CONNECTION_ATTR,
        PXE_ENABLED_ATTR, PHYSICAL_NETWORK_ATTR, INTERNAL_INFO_ATTR, EXTRA_ATTR,
        IS_SMARTNIC_ATTR,
    ) = (
        "address", "node_uuid", "portgroup_uuid", "local_link_connection", "pxe_enabled",
        "physical_network", "internal_info", "extra", "is_smartnic",
    )  # fmt: skip

    properties_schema = {
        NODE: properties.Schema(
            properties.Schema.STRING,
            "UUID or name of the Node this resource belongs to.",
            constraints=[constraints.CustomConstraint("ironic.node")],
            required=True,
            update_allowed=True,
        ),
        ADDRESS: properties.Schema(
            properties.Schema.STRING,
            "Physical hardware address of this network Port, typically the hardware MAC address.",
            required=True,
            update_allowed=True,
        ),
        PORTGROUP: properties.Schema(
            properties.Schema.STRING,
            "UUID or name of the Portgroup this resource belongs to.",
            constraints=[constraints.CustomConstraint("ironic.portgroup")],
            update_allowed=True,
        ),
        LOCAL_LINK_CONNECTION: properties.Schema(
            properties.Schema.MAP, _LINK_CONNECTION, update_allowed=True
        ),
        PXE_ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Indicates whether PXE is enabled or disabled on the Port.",
            update_allowed=True,
        ),
        PHYSICAL_NETWORK: properties.Schema(
            properties.Schema.STRING,
            "The name of the physical network to which a port is connected. May be empty.",
            update_allowed=True,
        ),
        EXTRA: properties.Schema(
            properties.Schema.MAP,
            "A set of one or more arbitrary metadata key and value pairs.",
            update_allowed=True,
        ),
        IS_SMARTNIC: properties.Schema(
            properties.Schema.BOOLEAN,
            "Indicates whether the Port is a Smart NIC port.",
            update_allowed=True,
        ),
    }

    attributes_schema = {
        ADDRESS_ATTR: attributes.Schema(
            "Physical hardware address of this network Port, typically the hardware MAC address.",
            type=attributes.Schema.STRING,
        ),
        NODE_UUID_ATTR: attributes.Schema(
            "UUID of the Node this resource belongs to.", type=attributes.Schema.STRING
        ),
        PORTGROUP_UUID_ATTR: attributes.Schema(
            "UUID of the Portgroup this resource belongs to.", type=attributes.Schema.STRING
        ),
        LOCAL_LINK_CONNECTION_ATTR: attributes.Schema(_LINK_CONNECTION, type=attributes.Schema.MAP),
        PXE_ENABLED_ATTR: attributes.Schema(
            "Indicates whether PXE is enabled or disabled on the Port.",
            type=attributes.Schema.BOOLEAN,
        ),
        PHYSICAL_NETWORK_ATTR: attributes.Schema(
            "The name of the physical network to which a port is connected. May be empty.",
            type=attributes.Schema.STRING,
        ),
        INTERNAL_INFO_ATTR: attributes.Schema(
            "Internal metadata set and stored by the Port. This field is read-only.",
            type=attributes.Schema.MAP,
        ),
        EXTRA_ATTR: attributes.Schema(
            "A set of one or more arbitrary metadata key and value pairs.",
            type=attributes.Schema.MAP,
        ),
        IS_SMARTNIC_ATTR: attributes.Schema(
            "Indicates whether the Port is a Smart NIC port.", type=attributes.Schema.BOOLEAN
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.NODE],
                client_plugin="ironic", finder="get_node",
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.PORTGROUP],
                client_plugin="ironic", finder="get_portgroup",
            ),
        ]  # fmt: skip

    def _check_supported(self, values: Mapping[str, Any]) -> None:
        """Heat's refusal of a property the cloud's Ironic is too old for."""
        plugin = self.client_plugin()
        for key, version in self.MIN_MICROVERSION.items():
            if values.get(key) is not None and not plugin.is_version_supported(version):
                raise ResourceFailure(f"OS::Ironic::Port with {key} property is not supported.")

    def _request_body(self, values: Mapping[str, Any]) -> dict[str, Any]:
        return {self.API_FIELDS.get(key, key): value for key, value in values.items()}

    # -- create, update, delete -------------------------------------------------------

    def handle_create(self) -> str:
        given = {
            key: value for key, value in self.properties.resolved().items() if value is not None
        }
        self._check_supported(given)
        port = self.client().create_port(**self._request_body(given))
        self.resource_id_set(port.id)
        return str(port.id)

    def check_create_complete(self, token: Any) -> bool:
        try:
            self.client_plugin().read(lambda: self.client().get_port(token))
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return False
        return True

    def find_created(self) -> str | None:
        # Ironic refuses a second port with one address, so the port with this address
        # is the one the interrupted create made.
        address = self.properties[self.ADDRESS]
        found = list(self.client().ports(address=address))
        return str(found[0].id) if len(found) == 1 else None

    def needs_replace_failed(self) -> bool:
        # A port whose create failed or was cut short (and found again) is kept and updated
        # while Ironic has it: a replacement would be refused, its address being this
        # port's (Heat would replace it, and fail so).
        if self.resource_id is None:
            return True
        try:
            self.client_plugin().read(lambda: self.client().get_port(self.resource_id))
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return True
        return False

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if not prop_diff:
            return
        self._check_supported(prop_diff)
        # A property taken out of the template is removed from the port, not set to null
        # (Ironic refuses null for most fields).
        patch = [
            {"op": "replace", "path": f"/{field}", "value": value}
            if value is not None
            else {"op": "remove", "path": f"/{field}"}
            for field, value in self._request_body(prop_diff).items()
        ]
        self.client().patch_port(self.resource_id, patch)

    def handle_delete(self) -> str | None:
        if self.resource_id is None:
            return None
        try:
            self.client().delete_port(self.resource_id, ignore_missing=False)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return None
        return self.resource_id

    def check_delete_complete(self, token: Any) -> bool:
        if not token:
            return True
        try:
            self.client_plugin().read(lambda: self.client().get_port(token))
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return True
        return False

    # -- attributes ------------------------------------------------------------------

    def _port(self) -> dict[str, Any]:
        port = self.client_plugin().read(lambda: self.client().get_port(self.resource_id))
        return port.to_dict(original_names=True, headers=False, computed=False)

    def _show_resource(self) -> dict[str, Any] | None:
        return None if self.resource_id is None else self._port()

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        return self._port().get(name)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Ironic::Port": IronicPort}
