"""OS::Neutron::ProviderNet: a network with its physical realisation (admins only)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.net import Net
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ValidationError


class ProviderNet(Net):
    """A resource for managing Neutron provider networks.

    Provider networks specify details of physical realisation of the existing network.
    The default policy usage of this resource is limited to administrators only.
    """

    support_status = support.SupportStatus(version="2014.1")

    PROPERTIES = (
        NAME, PROVIDER_NETWORK_TYPE, PROVIDER_PHYSICAL_NETWORK, PROVIDER_SEGMENTATION_ID,
        ADMIN_STATE_UP, SHARED, PORT_SECURITY_ENABLED, ROUTER_EXTERNAL, DNS_DOMAIN,
        AVAILABILITY_ZONE_HINTS, TAGS, TENANT_ID,
    ) = (
        "name", "network_type", "physical_network", "segmentation_id",
        "admin_state_up", "shared", "port_security_enabled", "router_external", "dns_domain",
        "availability_zone_hints", "tags", "tenant_id",
    )  # fmt: skip

    NETWORK_TYPES = (LOCAL, VLAN, VXLAN, GRE, GENEVE, FLAT) = ("local", "vlan", "vxlan", "gre", "geneve", "flat")

    # Property -> the field Neutron's API names it.
    _PROVIDER_FIELDS = {
        PROVIDER_NETWORK_TYPE: "provider:network_type",
        PROVIDER_PHYSICAL_NETWORK: "provider:physical_network",
        PROVIDER_SEGMENTATION_ID: "provider:segmentation_id",
        ROUTER_EXTERNAL: "router:external",
    }

    properties_schema = {
        NAME: Net.properties_schema[Net.NAME],
        PROVIDER_NETWORK_TYPE: properties.Schema(
            properties.Schema.STRING,
            "A string specifying the provider network type for the network.",
            update_allowed=True,
            required=True,
            constraints=[constraints.AllowedValues(list(NETWORK_TYPES))],
        ),
        PROVIDER_PHYSICAL_NETWORK: properties.Schema(
            properties.Schema.STRING,
            "A string specifying physical network mapping for the network.",
            update_allowed=True,
        ),
        PROVIDER_SEGMENTATION_ID: properties.Schema(
            properties.Schema.STRING,
            "A string specifying the segmentation id for the network.",
            update_allowed=True,
        ),
        ADMIN_STATE_UP: Net.properties_schema[Net.ADMIN_STATE_UP],
        SHARED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether this network should be shared across all tenants.",
            default=True,
            update_allowed=True,
        ),
        PORT_SECURITY_ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Flag to enable/disable port security on the network. It provides the default "
            "value for the attribute of the ports created on this network.",
            update_allowed=True,
            support_status=support.SupportStatus(version="8.0.0"),
        ),
        ROUTER_EXTERNAL: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether the network contains an external router.",
            default=False,
            update_allowed=True,
            support_status=support.SupportStatus(version="6.0.0"),
        ),
        TAGS: properties.Schema(
            properties.Schema.LIST,
            "The tags to be added to the provider network.",
            schema=properties.Schema(properties.Schema.STRING),
            update_allowed=True,
            support_status=support.SupportStatus(version="12.0.0"),
        ),
        DNS_DOMAIN: properties.Schema(
            properties.Schema.STRING,
            "DNS domain associated with this network.",
            constraints=[constraints.CustomConstraint("dns_domain")],
            update_allowed=True,
            support_status=support.SupportStatus(version="15.0.0"),
        ),
        AVAILABILITY_ZONE_HINTS: properties.Schema(
            properties.Schema.LIST,
            "Availability zone candidates for the network. It requires the "
            "availability_zone extension to be available.",
            update_allowed=True,
            support_status=support.SupportStatus(version="19.0.0"),
        ),
        TENANT_ID: properties.Schema(
            properties.Schema.STRING,
            "The ID of the tenant which will own the provider network. Only administrative "
            "users can set the tenant identifier; this cannot be changed using "
            "authorization policies.",
            support_status=support.SupportStatus(version="24.0.0"),
        ),
    }

    ATTRIBUTES = (STATUS, SUBNETS, SEGMENTS) = ("status", "subnets", "segments")

    attributes_schema = {
        STATUS: attributes.Schema("The status of the network.", type=attributes.Schema.STRING),
        SUBNETS: attributes.Schema("Subnets of this network.", type=attributes.Schema.LIST),
        SEGMENTS: attributes.Schema(
            "The segments of this network.",
            type=attributes.Schema.LIST,
            support_status=support.SupportStatus(version="16.0.0"),
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[Any]:
        return []

    def validate(self) -> None:
        super().validate()
        network_type = self.properties[self.PROVIDER_NETWORK_TYPE]
        path = f"resources.{self.name}.properties"
        if self.properties[self.PROVIDER_SEGMENTATION_ID] and network_type in (self.LOCAL, self.FLAT):
            raise ValidationError(
                "segmentation_id not allowed for network types: local, flat",
                path=f"{path}.segmentation_id",
                hint="remove segmentation_id, or use a vlan, vxlan, gre or geneve network",
            )
        if self.properties[self.PROVIDER_PHYSICAL_NETWORK] and network_type in (self.VXLAN, self.GRE, self.GENEVE, self.LOCAL):
            raise ValidationError(
                "physical_network not allowed for network types: vxlan, gre, geneve, local",
                path=f"{path}.physical_network",
                hint="remove physical_network, or use a flat or vlan network",
            )

    def _provider_fields(self, body: dict[str, Any]) -> dict[str, Any]:
        for key, field in self._PROVIDER_FIELDS.items():
            if key in body:
                body[field] = body.pop(key)
        return body

    def handle_create(self) -> dict[str, Any]:
        body = self._provider_fields(self.prepare_properties())
        tags = body.pop(self.TAGS, None)
        network = self.client().create_network(**body)
        created = self.created(network)
        if tags:
            self.set_tags(network, tags)
        return {"status": created.get("status")}

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> None:
        changes = dict(prop_diff)
        self.prepare_update_properties(changes)
        if self.TAGS in changes:
            self.set_tags(self.client().get_network(self.resource_id), changes.pop(self.TAGS))
        changes = self._provider_fields(changes)
        if changes:
            self.client().update_network(self.resource_id, **changes)


def resource_mapping() -> dict[str, type[Net]]:
    return {"OS::Neutron::ProviderNet": ProviderNet}
