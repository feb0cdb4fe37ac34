"""Heat's implicit dependencies among networking resources, as rules on views of the
template (``stoker.sdk.dependencies``).

Heat adds these edges in the types' ``add_dependencies``; templates rely on them (most
public templates create a port or server on a network whose subnet they never
reference). The rules, as Heat has them:

- a port follows every subnet of its network (which subnet gives its address is not
  known beforehand);
- a server follows every subnet of the networks it is on, and every subnet whose
  network it cannot tell (an entry with only a port, a subnet of unknown network);
- a router follows the subnets of its external gateway's network;
- a router gateway (Heat's HIDDEN ``OS::Neutron::RouterGateway``) follows the router
  interfaces of its router and the subnets of its network;
- an extra route (``OS::Neutron::ExtraRoute``) follows the router interfaces and router
  gateways of its router; an extra route set, the router interfaces of its router;
- a floating IP follows the routers (and router gateways) on its floating network and
  the router interfaces of the subnets its port is on; a floating IP association, the
  router interfaces of its port's subnets.

Where Heat asks Neutron which subnets a port's network has, the rules read the template
instead (a subnet resource of the same network): no API call to build a graph.
"""

from __future__ import annotations

from typing import Any

from stoker.sdk.dependencies import ResourceView, StackView, known

__all__ = [
    "floating_ip_dependencies",
    "gateways_of_router",
    "interfaces_of_router",
    "network_of",
    "port_dependencies",
    "router_dependencies",
    "router_gateway_dependencies",
    "router_interfaces_of_ports",
    "server_dependencies",
]

SUBNET, PORT, ROUTER, ROUTER_INTERFACE, ROUTER_GATEWAY = (
    "OS::Neutron::Subnet", "OS::Neutron::Port", "OS::Neutron::Router",
    "OS::Neutron::RouterInterface", "OS::Neutron::RouterGateway",
)  # fmt: skip


def _first(*values: Any) -> Any:
    for value in values:
        if known(value):
            return value
    return next((value for value in values if value is not None), None)


def network_of(view: ResourceView) -> Any:
    """The network a subnet or port names (``network``, or Heat's older ``network_id``)."""
    return _first(view.get("network"), view.get("network_id"))


def _subnets_on(stack: StackView, network: Any) -> list[str]:
    return [subnet.name for subnet in stack.of_type(SUBNET) if network_of(subnet) == network]


def port_dependencies(me: ResourceView, stack: StackView) -> list[str]:
    network = network_of(me)
    return _subnets_on(stack, network) if known(network) else []


def router_dependencies(me: ResourceView, stack: StackView) -> list[str]:
    network = _first(me.get("external_gateway_info", "network"), me.get("external_gateway_info", "network_id"))
    return _subnets_on(stack, network) if known(network) else []


def interfaces_of_router(stack: StackView, router: Any) -> list[str]:
    """The router interfaces of ``router`` (as the template names it)."""
    if not known(router):
        return []
    return [
        interface.name
        for interface in stack.of_type(ROUTER_INTERFACE)
        if _first(interface.get("router"), interface.get("router_id")) == router
    ]


def gateways_of_router(stack: StackView, router: Any) -> list[str]:
    """The router gateways (Heat's HIDDEN type) of ``router``."""
    if not known(router):
        return []
    return [
        gateway.name
        for gateway in stack.of_type(ROUTER_GATEWAY)
        if _first(gateway.get("router_id"), gateway.get("router")) == router
    ]


def router_gateway_dependencies(me: ResourceView, stack: StackView) -> list[str]:
    router = _first(me.get("router_id"), me.get("router"))
    network = _first(me.get("network"), me.get("network_id"))
    needs = []
    if known(router):
        needs += [
            interface.name
            for interface in stack.of_type(ROUTER_INTERFACE)
            if _first(interface.get("router"), interface.get("router_id")) == router
        ]
    if known(network):
        needs += _subnets_on(stack, network)
    return needs


def server_dependencies(me: ResourceView, stack: StackView) -> list[str]:
    networks = me.items("networks")
    if not networks:
        return []
    needs = []
    for subnet in stack.of_type(SUBNET):
        subnet_network = network_of(subnet)
        for entry in networks:
            network = _first(entry.get("network"), entry.get("uuid"))
            # A subnet of unknown network, or an entry that does not say its network (a
            # port only): the server may well be on that subnet, so it waits for it.
            if not known(subnet_network) or not known(network) or network == subnet_network:
                needs.append(subnet.name)
                break
    return needs


def _port_on_subnet(port: ResourceView, subnet: Any, stack: StackView) -> bool:
    fixed_ips = port.items("fixed_ips")
    if fixed_ips:
        return any(_first(fixed_ip.get("subnet"), fixed_ip.get("subnet_id")) == subnet for fixed_ip in fixed_ips)
    # No fixed_ips: the port gets an address on any subnet of its network.
    subnet_view = stack.get(subnet)
    network = network_of(port)
    return subnet_view is not None and subnet_view.is_a(SUBNET) and known(network) and network_of(subnet_view) == network


def router_interfaces_of_ports(me: ResourceView, stack: StackView) -> list[str]:
    """The router interfaces on a subnet that a port this resource references is on."""
    ports = [view for view in stack.of_type(PORT) if me.refers_to(view.name)]
    if not ports:
        return []
    needs = []
    for interface in stack.of_type(ROUTER_INTERFACE):
        subnet = _first(interface.get("subnet"), interface.get("subnet_id"))
        if known(subnet) and any(_port_on_subnet(port, subnet, stack) for port in ports):
            needs.append(interface.name)
    return needs


def floating_ip_dependencies(me: ResourceView, stack: StackView) -> list[str]:
    floating_network = _first(me.get("floating_network"), me.get("floating_network_id"))
    needs = []
    if known(floating_network):
        for gateway in stack.of_type(ROUTER_GATEWAY):
            if _first(gateway.get("network"), gateway.get("network_id")) == floating_network:
                needs.append(gateway.name)
        for router in stack.of_type(ROUTER):
            if router.get("external_gateway_info", "network") == floating_network:
                needs.append(router.name)
    return needs + router_interfaces_of_ports(me, stack)
