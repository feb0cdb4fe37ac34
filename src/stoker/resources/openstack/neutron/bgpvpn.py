"""OS::Neutron::BGPVPN and its network, router and port associations
(OS::Neutron::BGPVPN-NET-ASSOCIATION, -ROUTER-ASSOCIATION, -PORT-ASSOCIATION), as
networking-bgpvpn's own Heat plugin has them (Heat itself ships none: the plugin registers
them, with the ``neutron.bgpvpn`` constraint, when it is installed beside heat-engine).

Owns: the four types; none is updated in place (the plugin's handle_update raises, so any
change replaces it). An association lives below its BGPVPN, named by name or id.
"""

from __future__ import annotations

from typing import Any, ClassVar

from stoker.resources.openstack.neutron.extension_resource import ExtensionResource
from stoker.sdk import attributes, constraints, properties

__all__ = ["BGPVPN", "BGPVPNNetAssoc", "BGPVPNPortAssoc", "BGPVPNRouterAssoc", "resource_mapping"]

_ATTRIBUTES = (SHOW, STATUS) = ("show", "status")
_ATTRIBUTES_SCHEMA = {
    STATUS: attributes.Schema("Status of bgpvpn."),
    SHOW: attributes.Schema("All attributes."),
}
_LOCAL_PREF_RANGE = constraints.Range(0, 2**32 - 1)


def _bgpvpn_id_schema() -> properties.Schema:
    return properties.Schema(
        properties.Schema.STRING,
        "name or ID of the BGPVPN.",
        required=True,
        constraints=[constraints.CustomConstraint("neutron.bgpvpn")],
    )


class BGPVPN(ExtensionResource):
    """A resource for BGPVPN service in neutron."""

    extension_entity = "bgpvpn"

    PROPERTIES = (
        NAME, TYPE, DESCRIPTION, ROUTE_DISTINGUISHERS, IMPORT_TARGETS, EXPORT_TARGETS,
        ROUTE_TARGETS, TENANT_ID, LOCAL_PREF,
    ) = (
        "name", "type", "description", "route_distinguishers", "import_targets",
        "export_targets", "route_targets", "tenant_id", "local_pref",
    )  # fmt: skip
    ATTRIBUTES = _ATTRIBUTES

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "Name for the bgpvpn."),
        TYPE: properties.Schema(
            properties.Schema.STRING,
            "BGP VPN type selection between L3VPN (l3) and EVPN (l2), default:l3",
            required=False,
            default="l3",
            constraints=[constraints.AllowedValues(["l2", "l3"])],
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description for the bgpvpn.", required=False
        ),
        TENANT_ID: properties.Schema(
            properties.Schema.STRING,
            "Tenant this bgpvpn belongs to (name or id).",
            required=False,
            constraints=[constraints.CustomConstraint("keystone.project")],
        ),
        ROUTE_DISTINGUISHERS: properties.Schema(
            properties.Schema.LIST,
            "List of RDs that will be used to advertize BGPVPN routes.",
            required=False,
        ),
        IMPORT_TARGETS: properties.Schema(
            properties.Schema.LIST,
            "List of additional Route Targets to import from.",
            required=False,
        ),
        EXPORT_TARGETS: properties.Schema(
            properties.Schema.LIST, "List of additional Route Targets to export to.", required=False
        ),
        ROUTE_TARGETS: properties.Schema(
            properties.Schema.LIST,
            "Route Targets list to import/export for this BGPVPN.",
            required=False,
        ),
        LOCAL_PREF: properties.Schema(
            properties.Schema.INTEGER,
            "Default value of the BGP LOCAL_PREF for the route advertisement to this BGPVPN.",
            constraints=[_LOCAL_PREF_RANGE],
        ),
    }
    attributes_schema = _ATTRIBUTES_SCHEMA

    def request_body(self) -> dict[str, Any]:
        body = self.prepare_properties()
        if self.TENANT_ID in body:
            body[self.TENANT_ID] = self.client_plugin("keystone").get_project_id(
                body[self.TENANT_ID]
            )
        return body


class _Association(ExtensionResource):
    """An association below a BGPVPN (not a type itself)."""

    BGPVPN_ID: ClassVar[str] = "bgpvpn_id"
    attributes_schema = _ATTRIBUTES_SCHEMA

    def parent_id(self) -> str | None:
        return self.client_plugin().resolve_ext_resource("bgpvpn", self.properties[self.BGPVPN_ID])

    def request_body(self) -> dict[str, Any]:
        body = self.prepare_properties()
        body.pop(self.BGPVPN_ID)
        return body

    def find_created(self) -> str | None:
        # Associations have no name to find them by; one per (BGPVPN, object) exists at
        # most, so the one naming our object is ours.
        key = next(
            name
            for name in self.properties_schema
            if name != self.BGPVPN_ID and name.endswith("_id")
        )
        found = self.client_plugin().list_ext_resources(
            self.extension_entity, parent=self.parent_id(), **{key: self.properties[key]}
        )
        return str(found[0]["id"]) if len(found) == 1 else None


class BGPVPNNetAssoc(_Association):
    """A resource for BGPVPNNetAssoc in neutron."""

    extension_entity = "network_association"

    PROPERTIES = (BGPVPN_ID, NETWORK_ID) = ("bgpvpn_id", "network_id")
    ATTRIBUTES = _ATTRIBUTES

    properties_schema = {
        BGPVPN_ID: _bgpvpn_id_schema(),
        NETWORK_ID: properties.Schema(
            properties.Schema.STRING,
            "Network which shall be associated with the BGPVPN.",
            required=True,
            constraints=[constraints.CustomConstraint("neutron.network")],
        ),
    }


class BGPVPNRouterAssoc(_Association):
    """A resource for BGPVPNRouterAssoc in neutron."""

    extension_entity = "router_association"

    PROPERTIES = (BGPVPN_ID, ROUTER_ID) = ("bgpvpn_id", "router_id")
    ATTRIBUTES = _ATTRIBUTES

    properties_schema = {
        BGPVPN_ID: _bgpvpn_id_schema(),
        ROUTER_ID: properties.Schema(
            properties.Schema.STRING,
            "Router which shall be associated with the BGPVPN.",
            required=True,
            constraints=[constraints.CustomConstraint("neutron.router")],
        ),
    }


class BGPVPNPortAssoc(_Association):
    """A resource for BGPVPNPortAssoc in neutron."""

    extension_entity = "port_association"

    PROPERTIES = (BGPVPN_ID, PORT_ID, ADVERTISE_FIXED_IPS, ROUTES) = (
        "bgpvpn_id", "port_id", "advertise_fixed_ips", "routes",
    )  # fmt: skip
    _ROUTE_KEYS = (TYPE, PREFIX, FROM_BGPVPN, LOCAL_PREF) = (
        "type",
        "prefix",
        "bgpvpn_id",
        "local_pref",
    )
    _ROUTE_TYPES = (PREFIX_TYPE, BGPVPN_TYPE) = ("prefix", "bgpvpn")
    ATTRIBUTES = _ATTRIBUTES

    properties_schema = {
        BGPVPN_ID: _bgpvpn_id_schema(),
        PORT_ID: properties.Schema(
            properties.Schema.STRING,
            "Port which shall be associated with the BGPVPN.",
            required=True,
            constraints=[constraints.CustomConstraint("neutron.port")],
        ),
        ADVERTISE_FIXED_IPS: properties.Schema(
            properties.Schema.BOOLEAN,
            "whether or not the fixed IPs of he port will be advertised into the BGPVPN.",
        ),
        ROUTES: properties.Schema(
            properties.Schema.LIST,
            "Defines routes to advertise into the BGPVPN, and for which this port will be the nexthop",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    TYPE: properties.Schema(
                        properties.Schema.STRING,
                        "Type of the route.",
                        constraints=[constraints.AllowedValues(list(_ROUTE_TYPES))],
                        required=True,
                    ),
                    PREFIX: properties.Schema(
                        properties.Schema.STRING,
                        "Prefix to readvertise.",
                        constraints=[constraints.CustomConstraint("net_cidr")],
                    ),
                    FROM_BGPVPN: properties.Schema(
                        properties.Schema.STRING,
                        "BGPVPN from which to readvertise routes(any route carrying an RT among "
                        "route_targets or import_targets of this BGPVPN, will be readvertised).",
                        constraints=[constraints.CustomConstraint("neutron.bgpvpn")],
                    ),
                    LOCAL_PREF: properties.Schema(
                        properties.Schema.INTEGER,
                        "Value of the BGP LOCAL_PREF for the routes.",
                        constraints=[_LOCAL_PREF_RANGE],
                    ),
                },
            ),
        ),
    }

    def request_body(self) -> dict[str, Any]:
        body = super().request_body()
        routes = []
        for given in body.get(self.ROUTES) or []:
            # A prefix route carries no BGPVPN, a BGPVPN route no prefix; an unset
            # local_pref is left to Neutron's default (as the plugin does).
            route = {key: value for key, value in given.items() if value is not None}
            if route[self.TYPE] == self.PREFIX_TYPE:
                route.pop(self.FROM_BGPVPN, None)
            else:
                route.pop(self.PREFIX, None)
                route[self.FROM_BGPVPN] = self.client_plugin().resolve_ext_resource(
                    "bgpvpn", route[self.FROM_BGPVPN]
                )
            routes.append(route)
        if self.ROUTES in body:
            body[self.ROUTES] = routes
        return body


def resource_mapping() -> dict[str, type[ExtensionResource]]:
    return {
        "OS::Neutron::BGPVPN": BGPVPN,
        "OS::Neutron::BGPVPN-NET-ASSOCIATION": BGPVPNNetAssoc,
        "OS::Neutron::BGPVPN-ROUTER-ASSOCIATION": BGPVPNRouterAssoc,
        "OS::Neutron::BGPVPN-PORT-ASSOCIATION": BGPVPNPortAssoc,
    }
