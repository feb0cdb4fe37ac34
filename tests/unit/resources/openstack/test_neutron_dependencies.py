"""Heat's implicit dependencies among networking resources, read from templates: which
edges the rules add, and the graph the engine builds from them (no cloud needed: the
rules read the template only)."""

from __future__ import annotations

from stoker.engine.implicit import implicit_dependencies
from stoker.engine.stack import dependency_graph
from stoker.environment.registry import ResourceRegistry
from stoker.resources import builtin_mapping
from stoker.template.hot import Template

REGISTRY = ResourceRegistry()
REGISTRY.register_mapping(builtin_mapping(), "stoker.resources")


def edges(resources: dict, params: dict | None = None) -> dict[str, set[str]]:
    values = dict(params or {})
    template = Template.from_data(
        {
            "heat_template_version": "2021-04-16",
            "parameters": {name: {"type": "string"} for name in values},
            "resources": resources,
        }
    )
    return implicit_dependencies(template.resources, REGISTRY.get_class, values.__getitem__)


def net(name: str = "") -> dict:
    return {"type": "OS::Neutron::Net", "properties": {"name": name} if name else {}}


def subnet(network, cidr: str = "10.0.0.0/24") -> dict:
    return {"type": "OS::Neutron::Subnet", "properties": {"network": network, "cidr": cidr}}


NETWORKS = {
    "private": net(),
    "private_a": subnet({"get_resource": "private"}),
    "private_b": subnet({"get_resource": "private"}, "10.0.1.0/24"),
    "other": net(),
    "other_subnet": subnet({"get_resource": "other"}, "10.9.0.0/24"),
}


def test_port_follows_every_subnet_of_its_network_and_no_other():
    found = edges({**NETWORKS, "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "private"}}}})

    assert found == {"port": {"private_a", "private_b"}}


def test_port_matches_subnets_naming_the_same_parameter_value():
    found = edges(
        {
            "subnet": subnet({"get_param": "net"}),
            "elsewhere": subnet("another-network"),
            "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_param": "net"}}},
        },
        {"net": "private-net"},
    )

    assert found == {"port": {"subnet"}}


def test_port_on_a_network_named_by_an_attribute_adds_nothing():
    found = edges({**NETWORKS, "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_attr": ["private", "name"]}}}})

    assert found == {}


def test_router_follows_the_subnets_of_its_gateway_network():
    found = edges(
        {
            **NETWORKS,
            "public": net(),
            "public_subnet": subnet({"get_resource": "public"}, "172.24.4.0/24"),
            "router": {"type": "OS::Neutron::Router", "properties": {"external_gateway_info": {"network": {"get_resource": "public"}}}},
        }
    )

    assert found == {"router": {"public_subnet"}}


def test_floating_ip_follows_gateway_router_and_the_interface_of_its_port_subnet():
    resources = {
        **NETWORKS,
        "public": net(),
        "public_subnet": subnet({"get_resource": "public"}, "172.24.4.0/24"),
        "router": {"type": "OS::Neutron::Router", "properties": {"external_gateway_info": {"network": {"get_resource": "public"}}}},
        "interface_a": {"type": "OS::Neutron::RouterInterface", "properties": {"router": {"get_resource": "router"}, "subnet": {"get_resource": "private_a"}}},
        # Heat's old name of the subnet property counts too.
        "interface_other": {"type": "OS::Neutron::RouterInterface", "properties": {"router": {"get_resource": "router"}, "subnet_id": {"get_resource": "other_subnet"}}},
        "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "private"}, "fixed_ips": [{"subnet": {"get_resource": "private_a"}}]}},
        "fip": {"type": "OS::Neutron::FloatingIP", "properties": {"floating_network": {"get_resource": "public"}, "port_id": {"get_resource": "port"}}},
        "unbound_fip": {"type": "OS::Neutron::FloatingIP", "properties": {"floating_network": {"get_resource": "public"}}},
        "association": {"type": "OS::Neutron::FloatingIPAssociation", "properties": {"floatingip_id": {"get_resource": "unbound_fip"}, "port_id": {"get_resource": "port"}}},
    }

    found = edges(resources)

    assert found["fip"] == {"router", "interface_a"}
    assert found["unbound_fip"] == {"router"}
    assert found["association"] == {"interface_a"}


def test_floating_ip_port_without_fixed_ips_follows_interfaces_on_its_network():
    resources = {
        **NETWORKS,
        "router": {"type": "OS::Neutron::Router"},
        "interface_a": {"type": "OS::Neutron::RouterInterface", "properties": {"router": {"get_resource": "router"}, "subnet": {"get_resource": "private_a"}}},
        "interface_other": {"type": "OS::Neutron::RouterInterface", "properties": {"router": {"get_resource": "router"}, "subnet": {"get_resource": "other_subnet"}}},
        "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "private"}}},
        "fip": {"type": "OS::Neutron::FloatingIP", "properties": {"floating_network": "public", "port_id": {"get_resource": "port"}}},
    }

    assert edges(resources)["fip"] == {"interface_a"}


def test_implicit_edge_that_would_close_a_cycle_is_left_out():
    # The subnet states it needs the port: the port's inferred need of the subnet would
    # close a loop the user never wrote, so the graph keeps the stated order.
    resources = {
        "private": net(),
        "subnet": {**subnet({"get_resource": "private"}), "depends_on": ["port"]},
        "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "private"}}},
    }
    template = Template.from_data({"heat_template_version": "2021-04-16", "resources": resources})
    implicit = edges(resources)

    graph = dependency_graph(template.resources, implicit)

    assert implicit == {"port": {"subnet"}}
    assert graph.requires("port") == {"private"}
    assert graph.topological_order().index("port") < graph.topological_order().index("subnet")


def test_graph_orders_port_after_subnet_it_never_references():
    resources = {**NETWORKS, "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "private"}}}}
    template = Template.from_data({"heat_template_version": "2021-04-16", "resources": resources})

    graph = dependency_graph(template.resources, edges(resources))

    assert graph.requires("port") == {"private", "private_a", "private_b"}
    # Teardown is the reverse: the port goes before the subnets (Neutron refuses to
    # delete a subnet with ports on it).
    assert graph.reversed().requires("private_a") == {"port"}


def test_router_gateway_follows_its_router_interfaces_and_its_network_subnets():
    found = edges(
        {
            **NETWORKS,
            "router": {"type": "OS::Neutron::Router"},
            "interface": {"type": "OS::Neutron::RouterInterface", "properties": {"router": {"get_resource": "router"}, "subnet": {"get_resource": "private_a"}}},
            "gateway": {"type": "OS::Neutron::RouterGateway", "properties": {"router_id": {"get_resource": "router"}, "network": {"get_resource": "other"}}},
        }
    )

    assert found["gateway"] == {"interface", "other_subnet"}
