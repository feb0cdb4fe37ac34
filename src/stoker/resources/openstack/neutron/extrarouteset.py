"""OS::Neutron::ExtraRouteSet, as Heat has it (Neutron's ``extraroute-atomic``): a set of
extra routes on one router, added and removed atomically, so several stacks may manage
routes of the same router. An update adds and removes only the routes that changed; a
route the router already has is refused (Heat's PhysicalResourceExists). The router
follows its interfaces in the template (Heat's implicit dependency)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from stoker.resources.openstack.neutron import dependencies
from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import constraints, properties, support
from stoker.sdk.dependencies import ResourceView, StackView
from stoker.sdk.exceptions import ResourceFailure

__all__ = ["ExtraRouteSet", "resource_mapping"]

Route = frozenset[tuple[str, str]]


def as_set(routes: Iterable[Mapping[str, Any]]) -> set[Route]:
    return {
        frozenset(
            (key, str(value)) for key, value in route.items() if key in ("destination", "nexthop")
        )
        for route in routes
    }


def as_list(routes: Iterable[Route]) -> list[dict[str, str]]:
    return sorted((dict(route) for route in routes), key=lambda r: (r["destination"], r["nexthop"]))


def refuse_duplicates(
    router_id: str, existing: Iterable[Mapping[str, Any]], adding: set[Route]
) -> None:
    """Heat's PhysicalResourceExists for a route the router already has."""
    for route in as_list(adding & as_set(existing)):
        raise ResourceFailure(
            f"The physical resource for ({router_id},{route['destination']}={route['nexthop']}) exists."
        )


class ExtraRouteSet(NeutronResource):
    """Resource for specifying extra routes for a Neutron router.

    Requires Neutron ``extraroute-atomic`` extension to be enabled. An extra route is a
    static routing table entry that is added beyond the routes managed implicitly by router
    interfaces and router gateways. The ``destination`` of an extra route is any IP network
    in /CIDR notation. The ``nexthop`` of an extra route is an IP in a subnet that is
    directly connected to the router.

    In a single OS::Neutron::ExtraRouteSet resource you can specify a set of extra routes
    (represented as a list) on the same virtual router. It is safe to manage multiple extra
    routes of the same router from multiple stacks; the same route on the same router is not
    safe from multiple stacks.
    """

    support_status = support.SupportStatus(version="14.0.0")

    PROPERTIES = (ROUTER, ROUTES) = ("router", "routes")
    _ROUTE_KEYS = (DESTINATION, NEXTHOP) = ("destination", "nexthop")

    properties_schema = {
        ROUTER: properties.Schema(
            properties.Schema.STRING,
            "The router id.",
            required=True,
            constraints=[constraints.CustomConstraint("neutron.router")],
        ),
        ROUTES: properties.Schema(
            properties.Schema.LIST,
            "A set of route dictionaries for the router.",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    DESTINATION: properties.Schema(
                        properties.Schema.STRING,
                        "The destination network in CIDR notation.",
                        required=True,
                        constraints=[constraints.CustomConstraint("net_cidr")],
                    ),
                    NEXTHOP: properties.Schema(
                        properties.Schema.STRING,
                        "The next hop for the destination.",
                        required=True,
                        constraints=[constraints.CustomConstraint("ip_addr")],
                    ),
                },
            ),
            default=[],
            update_allowed=True,
        ),
    }

    @classmethod
    def implicit_dependencies(cls, me: ResourceView, stack: StackView) -> list[str]:
        return dependencies.interfaces_of_router(stack, me.get("router"))

    def _router_routes(self) -> list[dict[str, Any]]:
        return list(self.client().get_router(self.properties[self.ROUTER]).routes or [])

    def _change(self, verb: str, routes: set[Route]) -> None:
        if routes:
            change = getattr(
                self.client(), f"{verb}_extra_routes_{'to' if verb == 'add' else 'from'}_router"
            )
            change(self.properties[self.ROUTER], {"router": {"routes": as_list(routes)}})

    def handle_create(self) -> None:
        routes = as_set(self.properties[self.ROUTES] or [])
        refuse_duplicates(self.properties[self.ROUTER], self._router_routes(), routes)
        self._change("add", routes)
        self.resource_id_set(self.properties[self.ROUTER])

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if self.ROUTES not in prop_diff:
            return
        old, new = as_set(self.properties[self.ROUTES] or []), as_set(prop_diff[self.ROUTES] or [])
        refuse_duplicates(self.properties[self.ROUTER], self._router_routes(), new - old)
        self._change("remove", old - new)
        self._change("add", new - old)

    def handle_delete(self) -> None:
        if not self.resource_id:
            return
        try:
            self._change("remove", as_set(self.properties[self.ROUTES] or []))
        except Exception as error:  # noqa: BLE001 - openstacksdk's types: the router is gone
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        missing = as_set(self.properties[self.ROUTES] or []) - as_set(self._router_routes())
        if missing:
            listed = ", ".join(f"{r['destination']}={r['nexthop']}" for r in as_list(missing))
            raise ResourceFailure(f"The router no longer has these extra routes: {listed}")

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return self.client_plugin().show("router", self.resource_id)

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        """The set's own routes the router still has: the router's other routes belong
        to other sets (another stack's) or single routes, and are no drift of this one."""
        live = super().parse_live_resource_data(resource_properties, resource_data)
        if self.ROUTES in live:
            present = as_set(live[self.ROUTES] or [])
            mine = resource_properties.get(self.ROUTES) or []
            live[self.ROUTES] = [route for route in mine if as_set([route]) <= present]
        return live


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::ExtraRouteSet": ExtraRouteSet}
