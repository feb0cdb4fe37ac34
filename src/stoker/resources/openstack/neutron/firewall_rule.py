"""OS::Neutron::FirewallRule, as Heat 27 has it: a match and an action of Neutron's FWaaS
**v1** API (``/fw/firewall_rules``), served by no Neutron since Stein (see
``firewall.py``). Every property changes in place; protocol ``any`` is sent as null, as
Heat sends it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.rest_resource import NeutronRestResource
from stoker.sdk import attributes, constraints, properties

__all__ = ["FirewallRule", "resource_mapping"]

_STRING = attributes.Schema.STRING


class FirewallRule(NeutronRestResource):
    """A resource for the FirewallRule resource in Neutron FWaaS.

    FirewallRule represents a collection of attributes like ports, ip addresses etc. which
    define match criteria and action (allow, or deny) that needs to be taken on the matched
    data traffic.
    """

    entity = "firewall_rule"
    collection = "/fw/firewall_rules"
    required_service_extension = "fwaas"

    PROPERTIES = (
        NAME, DESCRIPTION, SHARED, PROTOCOL, IP_VERSION, SOURCE_IP_ADDRESS, DESTINATION_IP_ADDRESS,
        SOURCE_PORT, DESTINATION_PORT, ACTION, ENABLED,
    ) = (
        "name", "description", "shared", "protocol", "ip_version", "source_ip_address", "destination_ip_address",
        "source_port", "destination_port", "action", "enabled",
    )  # fmt: skip
    ATTRIBUTES = (
        NAME_ATTR, DESCRIPTION_ATTR, FIREWALL_POLICY_ID, SHARED_ATTR, PROTOCOL_ATTR, IP_VERSION_ATTR,
        SOURCE_IP_ADDRESS_ATTR, DESTINATION_IP_ADDRESS_ATTR, SOURCE_PORT_ATTR, DESTINATION_PORT_ATTR,
        ACTION_ATTR, ENABLED_ATTR, POSITION, TENANT_ID,
    ) = (
        "name", "description", "firewall_policy_id", "shared", "protocol", "ip_version",
        "source_ip_address", "destination_ip_address", "source_port", "destination_port",
        "action", "enabled", "position", "tenant_id",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name for the firewall rule.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description for the firewall rule.", update_allowed=True
        ),
        SHARED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether this rule should be shared across all tenants.",
            default=False,
            update_allowed=True,
        ),
        PROTOCOL: properties.Schema(
            properties.Schema.STRING,
            "Protocol for the firewall rule.",
            constraints=[constraints.AllowedValues(["tcp", "udp", "icmp", "any"])],
            default="any",
            update_allowed=True,
        ),
        IP_VERSION: properties.Schema(
            properties.Schema.STRING,
            "Internet protocol version.",
            default="4",
            constraints=[constraints.AllowedValues(["4", "6"])],
            update_allowed=True,
        ),
        SOURCE_IP_ADDRESS: properties.Schema(
            properties.Schema.STRING,
            "Source IP address or CIDR.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("net_cidr")],
        ),
        DESTINATION_IP_ADDRESS: properties.Schema(
            properties.Schema.STRING,
            "Destination IP address or CIDR.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("net_cidr")],
        ),
        SOURCE_PORT: properties.Schema(
            properties.Schema.STRING, "Source port number or a range.", update_allowed=True
        ),
        DESTINATION_PORT: properties.Schema(
            properties.Schema.STRING, "Destination port number or a range.", update_allowed=True
        ),
        ACTION: properties.Schema(
            properties.Schema.STRING,
            "Action to be performed on the traffic matching the rule.",
            default="deny",
            constraints=[constraints.AllowedValues(["allow", "deny"])],
            update_allowed=True,
        ),
        ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether this rule should be enabled.",
            default=True,
            update_allowed=True,
        ),
    }

    attributes_schema = {
        NAME_ATTR: attributes.Schema("Name for the firewall rule.", type=_STRING),
        DESCRIPTION_ATTR: attributes.Schema("Description of the firewall rule.", type=_STRING),
        FIREWALL_POLICY_ID: attributes.Schema(
            "Unique identifier of the firewall policy to which this firewall rule belongs.",
            type=_STRING,
        ),
        SHARED_ATTR: attributes.Schema("Shared status of this firewall rule.", type=_STRING),
        PROTOCOL_ATTR: attributes.Schema("Protocol value for this firewall rule.", type=_STRING),
        IP_VERSION_ATTR: attributes.Schema("Ip_version for this firewall rule.", type=_STRING),
        SOURCE_IP_ADDRESS_ATTR: attributes.Schema(
            "Source ip_address for this firewall rule.", type=_STRING
        ),
        DESTINATION_IP_ADDRESS_ATTR: attributes.Schema(
            "Destination ip_address for this firewall rule.", type=_STRING
        ),
        SOURCE_PORT_ATTR: attributes.Schema(
            "Source port range for this firewall rule.", type=_STRING
        ),
        DESTINATION_PORT_ATTR: attributes.Schema(
            "Destination port range for this firewall rule.", type=_STRING
        ),
        ACTION_ATTR: attributes.Schema(
            "Allow or deny action for this firewall rule.", type=_STRING
        ),
        ENABLED_ATTR: attributes.Schema(
            "Indicates whether this firewall rule is enabled or not.", type=_STRING
        ),
        POSITION: attributes.Schema(
            "Position of the rule within the firewall policy.", type=_STRING
        ),
        TENANT_ID: attributes.Schema("Id of the tenant owning the firewall.", type=_STRING),
    }

    def handle_create(self) -> dict[str, Any]:
        body = self.prepare_properties()
        if body.get(self.PROTOCOL) == "any":
            body[self.PROTOCOL] = None
        return self.rest_create(body)

    def handle_update(self, json_snippet: Any, tmpl_diff: Any, prop_diff: Mapping[str, Any]) -> None:
        changes = dict(prop_diff)
        if changes.get(self.PROTOCOL) == "any":
            changes[self.PROTOCOL] = None
        self.rest_update(changes)


def resource_mapping() -> dict[str, type[NeutronRestResource]]:
    return {"OS::Neutron::FirewallRule": FirewallRule}
