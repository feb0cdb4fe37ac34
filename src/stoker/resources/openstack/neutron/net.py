"""OS::Neutron::Net."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import attributes, constraints, properties, support, translation


class Net(NeutronResource):
    """A resource for managing Neutron net.

    A network is a virtual isolated layer-2 broadcast domain which is typically
    reserved to the tenant who created it, unless the network has been explicitly
    configured to be shared.
    """

    entity = "network"

    PROPERTIES: tuple[str, ...]
    PROPERTIES = (
        NAME, VALUE_SPECS, ADMIN_STATE_UP, TENANT_ID, SHARED, DHCP_AGENT_IDS,
        PORT_SECURITY_ENABLED, QOS_POLICY, DNS_DOMAIN, AVAILABILITY_ZONE_HINTS, TAGS,
    ) = (
        "name", "value_specs", "admin_state_up", "tenant_id", "shared", "dhcp_agent_ids",
        "port_security_enabled", "qos_policy", "dns_domain", "availability_zone_hints", "tags",
    )

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING,
            "A string specifying a symbolic name for the network, which is not required to be unique.",
            update_allowed=True,
        ),
        VALUE_SPECS: properties.Schema(
            properties.Schema.MAP,
            "Extra parameters to include in the request. Parameters are often specific to "
            "installed hardware or extensions.",
            default={},
            update_allowed=True,
        ),
        ADMIN_STATE_UP: properties.Schema(
            properties.Schema.BOOLEAN,
            "A boolean value specifying the administrative status of the network.",
            default=True,
            update_allowed=True,
        ),
        TENANT_ID: properties.Schema(
            properties.Schema.STRING,
            "The ID of the tenant which will own the network. Only administrative users can "
            "set the tenant identifier; this cannot be changed using authorization policies.",
        ),
        SHARED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether this network should be shared across all tenants. Note that the default "
            "policy setting restricts usage of this attribute to administrative users only.",
            default=False,
            update_allowed=True,
        ),
        DHCP_AGENT_IDS: properties.Schema(
            properties.Schema.LIST,
            "The IDs of the DHCP agent to schedule the network. Note that the default policy "
            "setting in Neutron restricts usage of this property to administrative users only.",
            update_allowed=True,
        ),
        PORT_SECURITY_ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Flag to enable/disable port security on the network. It provides the default "
            "value for the attribute of the ports created on this network.",
            update_allowed=True,
            support_status=support.SupportStatus(version="5.0.0"),
        ),
        QOS_POLICY: properties.Schema(
            properties.Schema.STRING,
            "The name or ID of QoS policy to attach to this network.",
            constraints=[constraints.CustomConstraint("neutron.qos_policy")],
            update_allowed=True,
            support_status=support.SupportStatus(version="6.0.0"),
        ),
        DNS_DOMAIN: properties.Schema(
            properties.Schema.STRING,
            "DNS domain associated with this network.",
            constraints=[constraints.CustomConstraint("dns_domain")],
            update_allowed=True,
            support_status=support.SupportStatus(version="7.0.0"),
        ),
        AVAILABILITY_ZONE_HINTS: properties.Schema(
            properties.Schema.LIST,
            "Availability zone candidates for the network. It requires the availability_zone "
            "extension to be available.",
            support_status=support.SupportStatus(version="19.0.0"),
        ),
        TAGS: properties.Schema(
            properties.Schema.LIST,
            "The tags to be added to the network.",
            schema=properties.Schema(properties.Schema.STRING),
            update_allowed=True,
            support_status=support.SupportStatus(version="9.0.0"),
        ),
    }

    ATTRIBUTES: tuple[str, ...]
    ATTRIBUTES = (
        STATUS, NAME_ATTR, SUBNETS, ADMIN_STATE_UP_ATTR, TENANT_ID_ATTR,
        PORT_SECURITY_ENABLED_ATTR, MTU_ATTR, QOS_POLICY_ATTR, L2_ADJACENCY, SEGMENTS,
    ) = (
        "status", "name", "subnets", "admin_state_up", "tenant_id",
        "port_security_enabled", "mtu", "qos_policy_id", "l2_adjacency", "segments",
    )

    attributes_schema = {
        STATUS: attributes.Schema("The status of the network.", type=attributes.Schema.STRING),
        NAME_ATTR: attributes.Schema("The name of the network.", type=attributes.Schema.STRING),
        SUBNETS: attributes.Schema("Subnets of this network.", type=attributes.Schema.LIST),
        ADMIN_STATE_UP_ATTR: attributes.Schema("The administrative status of the network.", type=attributes.Schema.STRING),
        TENANT_ID_ATTR: attributes.Schema("The tenant owning this network.", type=attributes.Schema.STRING),
        PORT_SECURITY_ENABLED_ATTR: attributes.Schema(
            "Port security enabled of the network.",
            support_status=support.SupportStatus(version="5.0.0"),
            type=attributes.Schema.BOOLEAN,
        ),
        MTU_ATTR: attributes.Schema(
            "The maximum transmission unit size(in bytes) for the network.",
            support_status=support.SupportStatus(version="5.0.0"),
            type=attributes.Schema.INTEGER,
        ),
        QOS_POLICY_ATTR: attributes.Schema(
            "The QoS policy ID attached to this network.",
            type=attributes.Schema.STRING,
            support_status=support.SupportStatus(version="6.0.0"),
        ),
        L2_ADJACENCY: attributes.Schema(
            "A boolean value for L2 adjacency, True means that you can expect L2 connectivity "
            "throughout the Network.",
            type=attributes.Schema.BOOLEAN,
            support_status=support.SupportStatus(version="9.0.0"),
        ),
        SEGMENTS: attributes.Schema(
            "The segments of this network.",
            type=attributes.Schema.LIST,
            support_status=support.SupportStatus(version="11.0.0"),
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.QOS_POLICY],
                client_plugin="neutron", finder="get_qos_policy_id",
            )
        ]

    def handle_create(self) -> dict[str, Any]:
        body = self.prepare_properties()
        dhcp_agent_ids = body.pop(self.DHCP_AGENT_IDS, None)
        tags = body.pop(self.TAGS, None)
        qos_policy = body.pop(self.QOS_POLICY, None)
        if qos_policy:
            body["qos_policy_id"] = qos_policy
        network = self.client().create_network(**body)
        created = self.created(network)
        if dhcp_agent_ids:
            self._replace_dhcp_agents(dhcp_agent_ids)
        if tags:
            self.set_tags(network, tags)
        # The create's answer is the first poll: a network already ACTIVE costs no GET.
        return {"status": created.get("status"), "port_security_enabled": created.get("port_security_enabled")}

    def check_create_complete(self, token: Any) -> bool:
        attributes = token if isinstance(token, dict) and token.get("status") not in (None, "BUILD") else None
        if attributes is None:
            attributes = self._show_resource() or {}
        if attributes.get("port_security_enabled") is not None:
            self.data_set("port_security_enabled", attributes["port_security_enabled"])
        return self.is_built(attributes)

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> None:
        changes = dict(prop_diff)
        self.prepare_update_properties(changes)
        if self.DHCP_AGENT_IDS in changes:
            self._replace_dhcp_agents(changes.pop(self.DHCP_AGENT_IDS) or [])
        if self.QOS_POLICY in changes:
            changes["qos_policy_id"] = changes.pop(self.QOS_POLICY)
        if self.TAGS in changes:
            self.set_tags(self.client().get_network(self.resource_id), changes.pop(self.TAGS))
        if changes:
            self.client().update_network(self.resource_id, **changes)

    def check_update_complete(self, token: Any) -> bool:
        return self.is_built(self._show_resource() or {})

    def _replace_dhcp_agents(self, dhcp_agent_ids: list[str]) -> None:
        client, plugin = self.client(), self.client_plugin()
        old = {agent.id for agent in client.network_hosting_dhcp_agents(self.resource_id)}
        new = set(dhcp_agent_ids)
        for agent_id in new - old:
            try:
                client.add_dhcp_agent_to_network(agent_id, self.resource_id)
            except Exception as error:  # noqa: BLE001
                if not plugin.is_conflict(error):
                    raise
        for agent_id in old - new:
            try:
                client.remove_dhcp_agent_from_network(agent_id, self.resource_id)
            except Exception as error:  # noqa: BLE001
                if not (plugin.is_conflict(error) or plugin.is_not_found(error)):
                    raise

    live_fields = {"qos_policy": "qos_policy_id"}

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        """Heat's Net reading, without ``shared`` (as Heat: a policy may hide it) and the
        DHCP agents (an admin's view)."""
        result = super().parse_live_resource_data(resource_properties, resource_data)
        result.pop(self.SHARED, None)
        result.pop(self.DHCP_AGENT_IDS, None)
        return result

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        if name == self.SEGMENTS:
            segments = [
                segment.to_dict(original_names=True, headers=False, computed=False)
                for segment in self.client().segments(network_id=self.resource_id)
            ]
            segments.sort(key=lambda segment: segment.get("name") is not None)
            return segments
        return super()._resolve_attribute(name)


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::Net": Net}
