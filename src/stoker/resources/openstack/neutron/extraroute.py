"""OS::Neutron::ExtraRoute, as Heat has it (UNSUPPORTED there: "Use this resource at your
own risk"): one extra route on a router, read-modify-written into the router's routes,
so two of them on one router may race (OS::Neutron::ExtraRouteSet does not). The router
follows its interfaces and gateways in the template (Heat's implicit dependency)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron import dependencies
from stoker.resources.openstack.neutron.extrarouteset import as_set
from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import constraints, properties, support
from stoker.sdk.dependencies import ResourceView, StackView
from stoker.sdk.exceptions import EntityNotFound, ResourceFailure

__all__ = ["ExtraRoute", "resource_mapping", "route_of_id"]

# Heat's physical id: "<router id>:<destination CIDR>:<nexthop>". An IPv6 CIDR holds
# colons too: the destination is what ends in "/<prefix length>".
_ROUTE_ID = re.compile(r"^(?P<router>[^:]+):(?P<destination>[^/]+/\d+):(?P<nexthop>.+)$")


def route_of_id(physical_id: str) -> tuple[str, str, str] | None:
    """(router id, destination, nexthop) of an extra route's physical id; None when it
    is not one."""
    parts = _ROUTE_ID.match(physical_id)
    return None if parts is None else (parts["router"], parts["destination"], parts["nexthop"])


class ExtraRoute(NeutronResource):
    """Resource for specifying extra routes for Neutron router.

    Resource allows to specify nexthop IP and destination network for router.
    """

    support_status = support.SupportStatus(
        status=support.UNSUPPORTED, message="Use this resource at your own risk."
    )

    PROPERTIES = (ROUTER_ID, DESTINATION, NEXTHOP) = ("router_id", "destination", "nexthop")

    properties_schema = {
        ROUTER_ID: properties.Schema(
            properties.Schema.STRING,
            "The router id.",
            required=True,
            constraints=[constraints.CustomConstraint("neutron.router")],
        ),
        DESTINATION: properties.Schema(
            properties.Schema.STRING, "Network in CIDR notation.", required=True
        ),
        NEXTHOP: properties.Schema(properties.Schema.STRING, "Nexthop IP address.", required=True),
    }

    @classmethod
    def implicit_dependencies(cls, me: ResourceView, stack: StackView) -> list[str]:
        router = me.get("router_id")
        return dependencies.interfaces_of_router(stack, router) + dependencies.gateways_of_router(
            stack, router
        )

    def _route(self) -> dict[str, str]:
        return {
            "destination": self.properties[self.DESTINATION],
            "nexthop": self.properties[self.NEXTHOP],
        }

    def handle_create(self) -> None:
        router_id = self.properties[self.ROUTER_ID]
        routes = list(self.client().get_router(router_id).routes or [])
        route = self._route()
        if route in routes:
            raise ResourceFailure("Route duplicates an existing route.")
        self.client().update_router(router_id, routes=[*routes, route])
        self.resource_id_set(f"{router_id}:{route['destination']}:{route['nexthop']}")

    def handle_delete(self) -> None:
        if not self.resource_id:
            return
        router_id = self.properties[self.ROUTER_ID]
        try:
            routes = list(self.client().get_router(router_id).routes or [])
            if self._route() in routes:
                routes.remove(self._route())
                self.client().update_router(router_id, routes=routes)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types: the router is gone
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        if self._route() not in list(
            self.client().get_router(self.properties[self.ROUTER_ID]).routes or []
        ):
            raise ResourceFailure("The router no longer has this extra route.")

    def _show_resource(self) -> dict[str, Any] | None:
        """The route the physical id names, as this type's properties, when its router
        has it; not found when the router or the route is gone (drift: DELETED; an import
        of an id no router has is refused)."""
        if self.resource_id is None:
            return None
        parts = route_of_id(str(self.resource_id))
        if parts is None:
            raise ResourceFailure(
                f"{self.resource_id!r} is not an extra route's id: <router id>:<destination CIDR>:<nexthop>"
            )
        router_id, destination, nexthop = parts
        route = {"destination": destination, "nexthop": nexthop}
        router = self.client_plugin().show("router", router_id)
        if not as_set([route]) <= as_set(router.get("routes") or []):
            raise EntityNotFound("Route", str(self.resource_id))
        return {self.ROUTER_ID: router_id, **route}

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        # Every property is the route itself (none is updated in place): all are compared.
        return {key: resource_data[key] for key in self.PROPERTIES}


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::ExtraRoute": ExtraRoute}
