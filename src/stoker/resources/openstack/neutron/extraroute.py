"""OS::Neutron::ExtraRoute, as Heat has it (UNSUPPORTED there: "Use this resource at your
own risk"): one extra route on a router, read-modify-written into the router's routes,
so two of them on one router may race (OS::Neutron::ExtraRouteSet does not). The router
follows its interfaces and gateways in the template (Heat's implicit dependency)."""

from __future__ import annotations

from typing import Any

from stoker.resources.openstack.neutron import dependencies
from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import constraints, properties, support
from stoker.sdk.dependencies import ResourceView, StackView
from stoker.sdk.exceptions import ResourceFailure

__all__ = ["ExtraRoute", "resource_mapping"]


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
        if self.resource_id is None:
            return None
        return self.client_plugin().show("router", self.properties[self.ROUTER_ID])


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::ExtraRoute": ExtraRoute}
