"""OS::Neutron::FloatingIP and OS::Neutron::FloatingIPAssociation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron import dependencies
from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.dependencies import ResourceView, StackView
from stoker.sdk.exceptions import ResourceFailure, ValidationError


class FloatingIP(NeutronResource):
    """A resource for managing Neutron floating ips.

    Floating IP addresses can change their association between routers by action of the
    user. One of the most common use cases for floating IPs is to provide public IP
    addresses to a private cloud, where there are a limited number of IP addresses
    available. Another is for a public cloud user to have a "static" IP address that can
    be reassigned when an instance is upgraded or moved.
    """

    entity = "floatingip"

    PROPERTIES = (
        FLOATING_NETWORK_ID, FLOATING_NETWORK, FLOATING_SUBNET, VALUE_SPECS, PORT_ID,
        FIXED_IP_ADDRESS, FLOATING_IP_ADDRESS, DNS_NAME, DNS_DOMAIN,
    ) = (
        "floating_network_id", "floating_network", "floating_subnet", "value_specs", "port_id",
        "fixed_ip_address", "floating_ip_address", "dns_name", "dns_domain",
    )

    properties_schema = {
        FLOATING_NETWORK_ID: properties.Schema(
            properties.Schema.STRING,
            "ID of network to allocate floating IP from.",
            support_status=support.SupportStatus(
                status=support.HIDDEN,
                version="5.0.0",
                message="Use property floating_network.",
                previous_status=support.SupportStatus(status=support.DEPRECATED, version="2014.2"),
            ),
            constraints=[constraints.CustomConstraint("neutron.network")],
        ),
        FLOATING_NETWORK: properties.Schema(
            properties.Schema.STRING,
            "Network to allocate floating IP from.",
            support_status=support.SupportStatus(version="2014.2"),
            required=True,
            constraints=[constraints.CustomConstraint("neutron.network")],
        ),
        FLOATING_SUBNET: properties.Schema(
            properties.Schema.STRING,
            "Subnet to allocate floating IP from.",
            support_status=support.SupportStatus(version="9.0.0"),
            constraints=[constraints.CustomConstraint("neutron.subnet")],
        ),
        VALUE_SPECS: properties.Schema(
            properties.Schema.MAP,
            "Extra parameters to include in the \"floatingip\" object in the creation request. "
            "Parameters are often specific to installed hardware or extensions.",
            default={},
        ),
        PORT_ID: properties.Schema(
            properties.Schema.STRING,
            "ID of an existing port with at least one IP address to associate with this floating IP.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("neutron.port")],
        ),
        FIXED_IP_ADDRESS: properties.Schema(
            properties.Schema.STRING,
            "IP address to use if the port has multiple addresses.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("ip_addr")],
        ),
        FLOATING_IP_ADDRESS: properties.Schema(
            properties.Schema.STRING,
            "IP address of the floating IP. NOTE: The default policy setting in Neutron "
            "restricts usage of this property to administrative users only.",
            constraints=[constraints.CustomConstraint("ip_addr")],
            support_status=support.SupportStatus(version="5.0.0"),
        ),
        DNS_NAME: properties.Schema(
            properties.Schema.STRING,
            "DNS name associated with floating ip.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("rel_dns_name")],
            support_status=support.SupportStatus(version="7.0.0"),
        ),
        DNS_DOMAIN: properties.Schema(
            properties.Schema.STRING,
            "DNS domain associated with floating ip.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("dns_domain")],
            support_status=support.SupportStatus(version="7.0.0"),
        ),
    }

    ATTRIBUTES = (
        ROUTER_ID, TENANT_ID, FLOATING_NETWORK_ID_ATTR, FIXED_IP_ADDRESS_ATTR, FLOATING_IP_ADDRESS_ATTR, PORT_ID_ATTR,
    ) = (
        "router_id", "tenant_id", "floating_network_id", "fixed_ip_address", "floating_ip_address", "port_id",
    )

    attributes_schema = {
        ROUTER_ID: attributes.Schema(
            "ID of the router used as gateway, set when associated with a port.", type=attributes.Schema.STRING
        ),
        TENANT_ID: attributes.Schema("The tenant owning this floating IP.", type=attributes.Schema.STRING),
        FLOATING_NETWORK_ID_ATTR: attributes.Schema(
            "ID of the network in which this IP is allocated.", type=attributes.Schema.STRING
        ),
        FIXED_IP_ADDRESS_ATTR: attributes.Schema(
            "IP address of the associated port, if specified.",
            type=attributes.Schema.STRING,
            cache_mode=attributes.Schema.CACHE_NONE,
        ),
        FLOATING_IP_ADDRESS_ATTR: attributes.Schema("The allocated address of this IP.", type=attributes.Schema.STRING),
        PORT_ID_ATTR: attributes.Schema(
            "ID of the port associated with this IP.",
            type=attributes.Schema.STRING,
            cache_mode=attributes.Schema.CACHE_NONE,
        ),
    }

    @classmethod
    def implicit_dependencies(cls, me: ResourceView, stack: StackView) -> list[str]:
        return dependencies.floating_ip_dependencies(me, stack)

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.REPLACE, [self.FLOATING_NETWORK], value_path=[self.FLOATING_NETWORK_ID]
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.FLOATING_NETWORK],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="network",
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.FLOATING_SUBNET],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="subnet",
            ),
        ]

    def validate(self) -> None:
        super().validate()
        if self.given(self.PORT_ID) is None and self.given(self.FIXED_IP_ADDRESS) is not None:
            raise ValidationError(
                "fixed_ip_address specified without port_id.",
                path=f"resources.{self.name}.properties.fixed_ip_address",
                hint="give port_id as well, or leave out fixed_ip_address",
            )

    def handle_create(self) -> None:
        body = self.prepare_properties()
        body["floating_network_id"] = body.pop(self.FLOATING_NETWORK)
        if self.FLOATING_SUBNET in body:
            body["subnet_id"] = body.pop(self.FLOATING_SUBNET)
        # A floating IP has no name: its description carries the physical resource name
        # (unless value_specs gives one), so a create killed before its id was recorded is
        # found again (find_created) instead of leaking an address that blocks the subnet's
        # delete.
        body.setdefault("description", self.physical_resource_name())
        self.created(self.client().create_ip(**body))

    def find_created(self) -> str | None:
        if "description" in (self.properties[self.VALUE_SPECS] or {}):
            return None
        name = self.physical_resource_name()
        found = [ip for ip in self.client().ips(description=name) if ip.description == name]
        return str(found[0].id) if len(found) == 1 else None

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> None:
        if not prop_diff:
            return
        changes: dict[str, Any] = {
            "port_id": prop_diff.get(self.PORT_ID, self.given(self.PORT_ID)),
            "fixed_ip_address": prop_diff.get(self.FIXED_IP_ADDRESS, self.given(self.FIXED_IP_ADDRESS)),
        }
        for key in (self.DNS_NAME, self.DNS_DOMAIN):
            if key in prop_diff:
                changes[key] = prop_diff[key]
        self.client().update_ip(self.resource_id, **changes)


class FloatingIPAssociation(NeutronResource):
    """A resource for associating floating ips and ports.

    This resource allows associating a floating IP to a port with at least one IP
    address to associate with this floating IP.
    """

    PROPERTIES = (FLOATINGIP_ID, PORT_ID, FIXED_IP_ADDRESS) = ("floatingip_id", "port_id", "fixed_ip_address")

    properties_schema = {
        FLOATINGIP_ID: properties.Schema(
            properties.Schema.STRING, "ID of the floating IP to associate.", required=True, update_allowed=True
        ),
        PORT_ID: properties.Schema(
            properties.Schema.STRING,
            "ID of an existing port with at least one IP address to associate with this floating IP.",
            required=True,
            update_allowed=True,
            constraints=[constraints.CustomConstraint("neutron.port")],
        ),
        FIXED_IP_ADDRESS: properties.Schema(
            properties.Schema.STRING,
            "IP address to use if the port has multiple addresses.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("ip_addr")],
        ),
    }

    @classmethod
    def implicit_dependencies(cls, me: ResourceView, stack: StackView) -> list[str]:
        return dependencies.router_interfaces_of_ports(me, stack)

    def _association_id(self) -> str:
        # Heat records the resource's own id; the stack-unique uuid serves the same end.
        return self.uuid or self.physical_resource_name()

    def handle_create(self) -> None:
        body = {
            key: self.given(key) for key in (self.PORT_ID, self.FIXED_IP_ADDRESS) if self.given(key) is not None
        }
        self.client().update_ip(self.given(self.FLOATINGIP_ID), **body)
        self.resource_id_set(self._association_id())

    def _associated(self) -> bool:
        """Whether the floating IP is associated with this resource's port now."""
        with self.client_plugin().ignore_not_found:
            return self.client().get_ip(self.given(self.FLOATINGIP_ID)).port_id == self.given(self.PORT_ID)
        return False

    def find_created(self) -> str | None:
        # An association has no object of its own: a create killed after Neutron associated
        # the floating IP, before the id was recorded, left the floating IP on the port.
        return self._association_id() if self._associated() else None

    def handle_delete(self) -> None:
        # Without a recorded id the association may still have been made (a create killed
        # in between, or one that failed after Neutron took it): undone when the floating
        # IP is on this resource's port, or the router interface it needs cannot go (409).
        if not self.resource_id and not self._associated():
            return
        with self.client_plugin().ignore_not_found:
            self.client().update_ip(self.given(self.FLOATINGIP_ID), port_id=None)

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> None:
        if not prop_diff:
            return
        floatingip_id = self.given(self.FLOATINGIP_ID)
        if self.FLOATINGIP_ID in prop_diff:
            with self.client_plugin().ignore_not_found:
                self.client().update_ip(floatingip_id, port_id=None)
        floatingip_id = prop_diff.get(self.FLOATINGIP_ID) or floatingip_id
        self.client().update_ip(
            floatingip_id,
            port_id=prop_diff.get(self.PORT_ID) or self.given(self.PORT_ID),
            fixed_ip_address=prop_diff.get(self.FIXED_IP_ADDRESS) or self.given(self.FIXED_IP_ADDRESS),
        )
        self.resource_id_set(self._association_id())

    def handle_check(self) -> None:
        """The floating IP must still be associated with the port."""
        if not self.resource_id:
            return
        found = self.client().get_ip(self.given(self.FLOATINGIP_ID))
        if found.port_id != self.given(self.PORT_ID):
            raise ResourceFailure(
                f"Floating IP {found.id} is associated with port {found.port_id}, not {self.given(self.PORT_ID)}",
            )


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::FloatingIP": FloatingIP, "OS::Neutron::FloatingIPAssociation": FloatingIPAssociation}
