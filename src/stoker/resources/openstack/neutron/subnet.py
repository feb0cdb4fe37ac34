"""OS::Neutron::Subnet."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.exceptions import ValidationError

_HIDDEN_SINCE = support.SupportStatus(
    status=support.HIDDEN,
    version="5.0.0",
    message="Use property network.",
    previous_status=support.SupportStatus(status=support.DEPRECATED, version="2014.2"),
)


class Subnet(NeutronResource):
    """A resource for managing Neutron subnets.

    A subnet represents an IP address block that can be used for assigning IP addresses
    to virtual instances. Each subnet must have a CIDR and must be associated with a
    network. IPs can be either selected from the whole subnet CIDR, or from "allocation
    pools" that can be specified by the user.
    """

    entity = "subnet"

    PROPERTIES = (
        NETWORK_ID, NETWORK, SUBNETPOOL, PREFIXLEN, CIDR, VALUE_SPECS, NAME, IP_VERSION,
        DNS_NAMESERVERS, GATEWAY_IP, ENABLE_DHCP, ALLOCATION_POOLS, TENANT_ID, HOST_ROUTES,
        IPV6_RA_MODE, IPV6_ADDRESS_MODE, SEGMENT, TAGS,
    ) = (
        "network_id", "network", "subnetpool", "prefixlen", "cidr", "value_specs", "name", "ip_version",
        "dns_nameservers", "gateway_ip", "enable_dhcp", "allocation_pools", "tenant_id", "host_routes",
        "ipv6_ra_mode", "ipv6_address_mode", "segment", "tags",
    )
    ALLOCATION_POOL_START, ALLOCATION_POOL_END = "start", "end"
    ROUTE_DESTINATION, ROUTE_NEXTHOP = "destination", "nexthop"
    IPV6_MODES = ("dhcpv6-stateful", "dhcpv6-stateless", "slaac")

    properties_schema = {
        NETWORK_ID: properties.Schema(
            properties.Schema.STRING,
            "ID of the network to associate this subnet with.",
            support_status=_HIDDEN_SINCE,
            constraints=[constraints.CustomConstraint("neutron.network")],
        ),
        NETWORK: properties.Schema(
            properties.Schema.STRING,
            "The ID of the attached network.",
            required=True,
            constraints=[constraints.CustomConstraint("neutron.network")],
            support_status=support.SupportStatus(version="2014.2"),
        ),
        SUBNETPOOL: properties.Schema(
            properties.Schema.STRING,
            "The name or ID of the subnet pool.",
            constraints=[constraints.CustomConstraint("neutron.subnetpool")],
            support_status=support.SupportStatus(version="6.0.0"),
        ),
        PREFIXLEN: properties.Schema(
            properties.Schema.INTEGER,
            "Prefix length for subnet allocation from subnet pool.",
            constraints=[constraints.Range(min=0)],
            support_status=support.SupportStatus(version="6.0.0"),
        ),
        CIDR: properties.Schema(
            properties.Schema.STRING,
            "The CIDR.",
            constraints=[constraints.CustomConstraint("net_cidr")],
        ),
        VALUE_SPECS: properties.Schema(
            properties.Schema.MAP,
            "Extra parameters to include in the request.",
            default={},
            update_allowed=True,
        ),
        NAME: properties.Schema(properties.Schema.STRING, "The name of the subnet.", update_allowed=True),
        IP_VERSION: properties.Schema(
            properties.Schema.INTEGER,
            "The IP version, which is 4 or 6.",
            default=4,
            constraints=[constraints.AllowedValues([4, 6])],
        ),
        DNS_NAMESERVERS: properties.Schema(
            properties.Schema.LIST,
            "A specified set of DNS name servers to be used.",
            default=[],
            update_allowed=True,
        ),
        GATEWAY_IP: properties.Schema(
            properties.Schema.STRING,
            "The gateway IP address. Set to any of [ null | ~ | \"\" ] to create/update a "
            "subnet without a gateway. Set to \"auto\" (or leave out) to let Neutron choose "
            "one from the CIDR. When updating, the old gateway IP address will be detached.",
            update_allowed=True,
        ),
        ENABLE_DHCP: properties.Schema(
            properties.Schema.BOOLEAN,
            "Set to true if DHCP is enabled and false if DHCP is disabled.",
            default=True,
            update_allowed=True,
        ),
        ALLOCATION_POOLS: properties.Schema(
            properties.Schema.LIST,
            "The start and end addresses for the allocation pools.",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    ALLOCATION_POOL_START: properties.Schema(
                        properties.Schema.STRING, "Start address for the allocation pool.", required=True,
                        constraints=[constraints.CustomConstraint("ip_addr")],
                    ),
                    ALLOCATION_POOL_END: properties.Schema(
                        properties.Schema.STRING, "End address for the allocation pool.", required=True,
                        constraints=[constraints.CustomConstraint("ip_addr")],
                    ),
                },
            ),
            update_allowed=True,
        ),
        TENANT_ID: properties.Schema(
            properties.Schema.STRING,
            "The ID of the tenant who owns the network. Only administrative users can specify "
            "a tenant ID other than their own.",
        ),
        HOST_ROUTES: properties.Schema(
            properties.Schema.LIST,
            "A list of host route dictionaries for the subnet.",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    ROUTE_DESTINATION: properties.Schema(
                        properties.Schema.STRING, "The destination for static route.", required=True,
                        constraints=[constraints.CustomConstraint("net_cidr")],
                    ),
                    ROUTE_NEXTHOP: properties.Schema(
                        properties.Schema.STRING, "The next hop for the destination.", required=True,
                        constraints=[constraints.CustomConstraint("ip_addr")],
                    ),
                },
            ),
            update_allowed=True,
        ),
        IPV6_RA_MODE: properties.Schema(
            properties.Schema.STRING,
            "IPv6 RA (Router Advertisement) mode.",
            constraints=[constraints.AllowedValues(list(IPV6_MODES))],
            support_status=support.SupportStatus(version="2015.1"),
        ),
        IPV6_ADDRESS_MODE: properties.Schema(
            properties.Schema.STRING,
            "IPv6 address mode.",
            constraints=[constraints.AllowedValues(list(IPV6_MODES))],
            support_status=support.SupportStatus(version="2015.1"),
        ),
        SEGMENT: properties.Schema(
            properties.Schema.STRING,
            "The name/ID of the segment to associate.",
            constraints=[constraints.CustomConstraint("neutron.segment")],
            update_allowed=True,
            support_status=support.SupportStatus(version="9.0.0"),
        ),
        TAGS: properties.Schema(
            properties.Schema.LIST,
            "The tags to be added to the subnet.",
            schema=properties.Schema(properties.Schema.STRING),
            update_allowed=True,
            support_status=support.SupportStatus(version="9.0.0"),
        ),
    }

    ATTRIBUTES = (
        NAME_ATTR, NETWORK_ID_ATTR, TENANT_ID_ATTR, ALLOCATION_POOLS_ATTR, GATEWAY_IP_ATTR,
        HOST_ROUTES_ATTR, IP_VERSION_ATTR, CIDR_ATTR, DNS_NAMESERVERS_ATTR, ENABLE_DHCP_ATTR,
    ) = (
        "name", "network_id", "tenant_id", "allocation_pools", "gateway_ip",
        "host_routes", "ip_version", "cidr", "dns_nameservers", "enable_dhcp",
    )

    attributes_schema = {
        NAME_ATTR: attributes.Schema("Friendly name of the subnet.", type=attributes.Schema.STRING),
        NETWORK_ID_ATTR: attributes.Schema("Parent network of the subnet.", type=attributes.Schema.STRING),
        TENANT_ID_ATTR: attributes.Schema("Tenant owning the subnet.", type=attributes.Schema.STRING),
        ALLOCATION_POOLS_ATTR: attributes.Schema("Ip allocation pools and their ranges.", type=attributes.Schema.LIST),
        GATEWAY_IP_ATTR: attributes.Schema("Ip of the subnet's gateway.", type=attributes.Schema.STRING),
        HOST_ROUTES_ATTR: attributes.Schema("Additional routes for this subnet.", type=attributes.Schema.LIST),
        IP_VERSION_ATTR: attributes.Schema("Ip version for the subnet.", type=attributes.Schema.STRING),
        CIDR_ATTR: attributes.Schema("CIDR block notation for this subnet.", type=attributes.Schema.STRING),
        DNS_NAMESERVERS_ATTR: attributes.Schema("List of dns nameservers.", type=attributes.Schema.LIST),
        ENABLE_DHCP_ATTR: attributes.Schema(
            "'true' if DHCP is enabled for this subnet; 'false' otherwise.", type=attributes.Schema.STRING
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(props, translation.TranslationRule.REPLACE, [self.NETWORK], value_path=[self.NETWORK_ID]),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.NETWORK],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="network",
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.SUBNETPOOL],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="subnetpool",
            ),
        ]

    def validate(self) -> None:
        super().validate()
        where = f"resources.{self.name}.properties"
        subnetpool, prefixlen, cidr = self.given(self.SUBNETPOOL), self.given(self.PREFIXLEN), self.given(self.CIDR)
        if subnetpool is not None and cidr:
            raise ValidationError("Cannot define the following properties at the same time: subnetpool, cidr", path=where)
        if subnetpool is None and not cidr:
            raise ValidationError("At least one of the following properties must be specified: subnetpool, cidr", path=where)
        if prefixlen and cidr:
            raise ValidationError("Cannot define the following properties at the same time: prefixlen, cidr", path=where)
        ra_mode, address_mode = self.given(self.IPV6_RA_MODE), self.given(self.IPV6_ADDRESS_MODE)
        if self.given(self.IP_VERSION) == 4 and (ra_mode or address_mode):
            raise ValidationError("ipv6_ra_mode and ipv6_address_mode are not supported for ipv4.", path=where)
        if ra_mode and address_mode and ra_mode != address_mode:
            raise ValidationError("When both ipv6_ra_mode and ipv6_address_mode are set, they must be equal.", path=where)
        gateway_ip = self.given(self.GATEWAY_IP)
        if gateway_ip and gateway_ip not in ("~", "", "auto"):
            try:
                ipaddress.ip_address(gateway_ip)
            except ValueError:
                raise ValidationError(f'Gateway IP address "{gateway_ip}" is in invalid format.', path=f"{where}.gateway_ip")

    @classmethod
    def _normalize_gateway_ip(cls, body: dict[str, Any]) -> None:
        if cls.GATEWAY_IP not in body:
            return
        if body[cls.GATEWAY_IP] in ("", "~"):
            body[cls.GATEWAY_IP] = None
        elif body[cls.GATEWAY_IP] == "auto":
            body.pop(cls.GATEWAY_IP)

    def handle_create(self) -> None:
        body = self.prepare_properties()
        # The retired network_id (translated into network) must not reach Neutron.
        body.pop(self.NETWORK_ID, None)
        body["network_id"] = body.pop(self.NETWORK)
        if body.get(self.SEGMENT):
            body["segment_id"] = body.pop(self.SEGMENT)
        if body.get(self.SUBNETPOOL):
            body["subnetpool_id"] = body.pop(self.SUBNETPOOL)
        tags = body.pop(self.TAGS, None)
        self._normalize_gateway_ip(body)
        subnet = self.client().create_subnet(**body)
        self.created(subnet)
        if tags:
            self.set_tags(subnet, tags)

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> None:
        changes = dict(prop_diff)
        self.prepare_update_properties(changes)
        if self.ALLOCATION_POOLS in changes and changes[self.ALLOCATION_POOLS] is None:
            changes[self.ALLOCATION_POOLS] = []
        if changes.get(self.SEGMENT):
            changes["segment_id"] = changes.pop(self.SEGMENT)
        if changes.get(self.GATEWAY_IP) == "auto":
            raise ValidationError(
                'The value "auto" for gateway_ip cannot be used to update a subnet.',
                path=f"resources.{self.name}.properties.gateway_ip",
                hint="give an address, or ~ for no gateway",
            )
        self._normalize_gateway_ip(changes)
        if self.TAGS in changes:
            self.set_tags(self.client().get_subnet(self.resource_id), changes.pop(self.TAGS))
        if changes:
            self.client().update_subnet(self.resource_id, **changes)


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::Subnet": Subnet}
