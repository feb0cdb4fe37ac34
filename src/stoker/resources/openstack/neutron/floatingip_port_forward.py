"""OS::Neutron::FloatingIPPortForward, as Heat has it: a port forwarding of a floating IP
(Neutron's ``port_forwarding`` service plugin) to an address of an internal port. Every
property but the floating IP changes in place; another floating IP replaces it. The floating
IP and the port are named by name or id (Heat resolves them with openstacksdk's finders), and
the forwarding waits for the router interfaces on the port's subnet, as Heat's does."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron import dependencies
from stoker.resources.openstack.neutron.client_plugin import as_dict
from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import constraints, properties, support, translation
from stoker.sdk.dependencies import ResourceView, StackView

__all__ = ["FloatingIPPortForward", "resource_mapping"]


class FloatingIPPortForward(NeutronResource):
    """A resource for creating port forwarding for floating IPs.

    This resource creates port forwarding for floating IPs. These are sub-resource of
    exsisting Floating ips, which requires the service_plugin and extension port_forwarding
    enabled and that the floating ip is not associated with a neutron port.
    """

    support_status = support.SupportStatus(status=support.SUPPORTED, version="19.0.0")
    entity = "port_forwarding"

    PROPERTIES = (
        INTERNAL_IP_ADDRESS, INTERNAL_PORT_NUMBER, EXTERNAL_PORT, INTERNAL_PORT, PROTOCOL, FLOATINGIP,
    ) = (
        "internal_ip_address", "internal_port_number", "external_port", "internal_port", "protocol", "floating_ip",
    )  # fmt: skip

    # Heat's property names -> Neutron's fields.
    _FIELDS = {INTERNAL_PORT_NUMBER: "internal_port", INTERNAL_PORT: "internal_port_id"}
    # Neutron's ``internal_port`` is the port number: the live state reads each property
    # from its own field.
    live_fields = _FIELDS

    properties_schema = {
        INTERNAL_IP_ADDRESS: properties.Schema(
            properties.Schema.STRING,
            "Internal IP address to port forwarded to.",
            required=True,
            update_allowed=True,
            constraints=[constraints.CustomConstraint("ip_addr")],
        ),
        INTERNAL_PORT_NUMBER: properties.Schema(
            properties.Schema.INTEGER,
            "Internal port number to port forward to.",
            update_allowed=True,
            constraints=[constraints.Range(min=1, max=65535)],
        ),
        EXTERNAL_PORT: properties.Schema(
            properties.Schema.INTEGER,
            "External port address to port forward from.",
            required=True,
            update_allowed=True,
            constraints=[constraints.Range(min=1, max=65535)],
        ),
        INTERNAL_PORT: properties.Schema(
            properties.Schema.STRING,
            "Name or ID of the internal_ip_address port.",
            required=True,
            update_allowed=True,
            constraints=[constraints.CustomConstraint("neutron.port")],
        ),
        PROTOCOL: properties.Schema(
            properties.Schema.STRING,
            "Port protocol to forward.",
            required=True,
            update_allowed=True,
            constraints=[
                constraints.AllowedValues(["tcp", "udp", "icmp", "icmp6", "sctp", "dccp"])
            ],
        ),
        FLOATINGIP: properties.Schema(
            properties.Schema.STRING,
            "Name or ID of the floating IP create port forwarding on.",
            required=True,
        ),
    }

    @classmethod
    def implicit_dependencies(cls, me: ResourceView, stack: StackView) -> list[str]:
        return dependencies.router_interfaces_of_ports(me, stack)

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        # Heat resolves these with its openstack plugin's find_network_ip / find_network_port
        # (openstacksdk's finders): the neutron plugin's finder asks the same proxy.
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.FLOATINGIP], client_plugin="neutron",
                finder="find_resourceid_by_name_or_id", entity="floatingip",
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.INTERNAL_PORT], client_plugin="neutron",
                finder="find_resourceid_by_name_or_id", entity="port",
            ),
        ]  # fmt: skip

    def _floating_ip(self) -> str:
        return self.properties[self.FLOATINGIP]

    def handle_create(self) -> dict[str, Any]:
        body = {
            self._FIELDS.get(key, key): value
            for key, value in self.properties.resolved().items()
            if value is not None and key != self.FLOATINGIP
        }
        found = self.client().create_floating_ip_port_forwarding(self._floating_ip(), **body)
        self.resource_id_set(found.id)
        return as_dict(found)

    def handle_update(self, json_snippet: Any, tmpl_diff: Any, prop_diff: Mapping[str, Any]) -> None:
        if prop_diff:
            changes = {self._FIELDS.get(key, key): value for key, value in prop_diff.items()}
            self.client().update_floating_ip_port_forwarding(
                self._floating_ip(), self.resource_id, **changes
            )

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return as_dict(
            self.client().get_floating_ip_port_forwarding(self._floating_ip(), self.resource_id)
        )

    def _delete(self) -> None:
        self.client().delete_floating_ip_port_forwarding(
            self._floating_ip(), self.resource_id, ignore_missing=True
        )

    def needs_replace_failed(self) -> bool:
        if not self.resource_id:
            return True
        try:
            self._show_resource()
        except Exception as error:  # noqa: BLE001 - the client's own types
            self.client_plugin().ignore_not_found(error)
            return True
        return False

    def find_created(self) -> str | None:
        """The forwarding an interrupted create made: the one of this floating IP with this
        external port and protocol (Neutron allows one)."""
        for found in self.client().floating_ip_port_forwardings(self._floating_ip()):
            if (
                found.external_port == self.properties[self.EXTERNAL_PORT]
                and found.protocol == self.properties[self.PROTOCOL]
            ):
                return str(found.id)
        return None


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::FloatingIPPortForward": FloatingIPPortForward}
