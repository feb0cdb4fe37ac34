"""The types of Neutron's add-on service plugins against the real Neutron of the test cloud
(networking-sfc with its dummy drivers, tap-as-a-service and networking-l2gw with the cloud's
no-op drivers, networking-bgpvpn with its database-only driver; see tests/cloud/README.md):
OS::Neutron::PortPair, PortPairGroup, FlowClassifier, PortChain; OS::Neutron::TaaS::TapService,
TapFlow; OS::Neutron::L2Gateway, L2GatewayConnection; OS::Neutron::BGPVPN and its three
associations. Created, updated in place, replaced where Heat replaces, checked, deleted, and
a create killed part-way then finished; openstacksdk the witness."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.template.errors import TemplateErrors
from tests.support.stacks import from_data

STOKER = str(Path(sys.executable).with_name("stoker"))
WAIT_S = 300


@pytest.fixture
def admin_cloud(openstack_cloud):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    yield openstack_cloud
    set_cloud_source(None)


@pytest.fixture
def stacks(make_service, admin_cloud):
    service = make_service()
    names: list[str] = []
    yield service, names
    for name in names:
        if service.store.find_stack(name) is not None:
            service.delete_stack(name)


def physical_ids(service, stack_name: str) -> dict[str, str]:
    return {
        record.name: record.physical_resource_id for record in service.list_resources(stack_name)
    }


def hot(resources: dict, outputs: dict | None = None) -> dict:
    wrapped = {name: {"value": value} for name, value in (outputs or {}).items()}
    return {"heat_template_version": "2021-04-16", "resources": resources, "outputs": wrapped}


def outputs(service, stack_name: str) -> dict:
    return {
        output["output_key"]: output.get("output_value") for output in service.outputs(stack_name)
    }


def rest(connection, path: str) -> dict | None:
    """The object at ``path`` of Neutron's API (openstacksdk has no L2 gateway model), or
    None when it is gone."""
    response = connection.network.get(path)
    if response.status_code == 404:
        return None
    response.raise_for_status()
    return response.json()


def network_and_ports(
    *ports: str, cidr: str = "192.168.91.0/24", devices: dict | None = None
) -> dict:
    """A network, its subnet and ``ports`` on it; ``devices``: the device (a service
    function's server) a port is on, by port (an SFC port pair's two ports must be on one)."""
    resources = {
        "net": {"type": "OS::Neutron::Net"},
        "subnet": {
            "type": "OS::Neutron::Subnet",
            "properties": {"network": {"get_resource": "net"}, "cidr": cidr},
        },
    }
    for port in ports:
        resources[port] = {
            "type": "OS::Neutron::Port",
            "properties": {"network": {"get_resource": "net"}},
            "depends_on": ["subnet"],
        }
        if port in (devices or {}):
            resources[port]["properties"]["device_id"] = devices[port]
    return resources


def sfc_template(suffix: str, pair_name: str, protocol: str, second_pair: bool) -> dict:
    functions = {"in_a": f"function-a-{suffix}", "out_a": f"function-a-{suffix}"}
    functions.update({"in_b": f"function-b-{suffix}", "out_b": f"function-b-{suffix}"})
    resources = network_and_ports("in_a", "out_a", "in_b", "out_b", "source", devices=functions)
    resources.update(
        {
            "pair_a": {
                "type": "OS::Neutron::PortPair",
                "properties": {
                    "name": pair_name,
                    "ingress": {"get_resource": "in_a"},
                    "egress": {"get_resource": "out_a"},
                },
            },
            "pair_b": {
                "type": "OS::Neutron::PortPair",
                "properties": {
                    "name": f"pair-b-{suffix}",
                    "ingress": {"get_resource": "in_b"},
                    "egress": {"get_resource": "out_b"},
                },
            },
            "group": {
                "type": "OS::Neutron::PortPairGroup",
                "properties": {
                    # A pair named, not referenced: Heat's RESOLVE rule finds its id.
                    "port_pairs": [{"get_resource": "pair_a"}]
                    + ([f"pair-b-{suffix}"] if second_pair else []),
                },
                "depends_on": ["pair_b"],
            },
            "classifier": {
                "type": "OS::Neutron::FlowClassifier",
                "properties": {
                    "protocol": protocol,
                    "source_ip_prefix": "192.168.91.0/24",
                    "destination_port_range_min": 80,
                    "destination_port_range_max": 8080,
                    "logical_source_port": {"get_resource": "source"},
                },
            },
            "chain": {
                "type": "OS::Neutron::PortChain",
                "properties": {
                    "port_pair_groups": [{"get_resource": "group"}],
                    "flow_classifiers": [{"get_resource": "classifier"}],
                },
            },
        }
    )
    return hot(resources, {"chain": {"get_attr": ["chain", "show"]}})


def test_service_chain_created_updated_in_place_and_replaced(admin_cloud, stacks):
    service, names = stacks
    network = admin_cloud.connect("admin").network
    suffix = secrets.token_hex(3)
    stack_name = f"sfc-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(
        stack_name, from_data(sfc_template(suffix, f"pair-a-{suffix}", "tcp", second_pair=False))
    )

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    pair = network.get_sfc_port_pair(ids["pair_a"])
    assert (pair.name, pair.ingress, pair.egress) == (f"pair-a-{suffix}", ids["in_a"], ids["out_a"])
    assert network.get_sfc_port_pair_group(ids["group"]).port_pairs == [ids["pair_a"]]
    classifier = network.get_sfc_flow_classifier(ids["classifier"])
    assert (classifier.protocol, classifier.logical_source_port) == ("tcp", ids["source"])
    assert (classifier.destination_port_range_min, classifier.destination_port_range_max) == (
        80,
        8080,
    )
    chain = network.get_sfc_port_chain(ids["chain"])
    assert (chain.port_pair_groups, chain.flow_classifiers) == ([ids["group"]], [ids["classifier"]])
    assert chain.name.startswith(f"{stack_name}-chain-")
    assert chain.chain_parameters["correlation"] == "mpls"
    assert outputs(service, stack_name)["chain"]["id"] == ids["chain"]
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: the pair renamed, the group gains the second pair (named). Replaced: the
    # classifier (its protocol is not updated in place), which the chain then names.
    stack = service.update_stack(
        stack_name, from_data(sfc_template(suffix, f"renamed-{suffix}", "udp", second_pair=True))
    )

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = physical_ids(service, stack_name)
    assert {name: after[name] for name in ("pair_a", "group", "chain")} == {
        name: ids[name] for name in ("pair_a", "group", "chain")
    }
    assert network.get_sfc_port_pair(ids["pair_a"]).name == f"renamed-{suffix}"
    assert sorted(network.get_sfc_port_pair_group(ids["group"]).port_pairs) == sorted(
        [ids["pair_a"], ids["pair_b"]]
    )
    assert after["classifier"] != ids["classifier"]
    assert network.get_sfc_flow_classifier(after["classifier"]).protocol == "udp"
    assert network.find_sfc_flow_classifier(ids["classifier"], ignore_missing=True) is None
    assert network.get_sfc_port_chain(ids["chain"]).flow_classifiers == [after["classifier"]]

    service.delete_stack(stack_name)
    for kind, name in (
        ("port_chain", "chain"),
        ("port_pair_group", "group"),
        ("port_pair", "pair_a"),
    ):
        assert getattr(network, f"find_sfc_{kind}")(after[name], ignore_missing=True) is None


def test_sfc_constraint_names_a_missing_port_pair(admin_cloud, stacks):
    service, _ = stacks
    template = hot(
        {
            "group": {
                "type": "OS::Neutron::PortPairGroup",
                "properties": {"port_pairs": ["no-such-pair"]},
            }
        }
    )

    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(f"sfc-missing-{secrets.token_hex(3)}", from_data(template))

    assert "resources.group.properties.port_pairs" in str(raised.value)
    assert "The port_pair (no-such-pair) could not be found." in str(raised.value)


def test_tap_service_and_flow_wait_for_active_and_update_in_place(admin_cloud, stacks):
    service, names = stacks
    connection = admin_cloud.connect("admin")
    suffix = secrets.token_hex(3)
    stack_name = f"taas-{suffix}"
    names.append(stack_name)

    def template(description: str, vlans: str) -> dict:
        resources = network_and_ports("probe", "mirrored", cidr="192.168.92.0/24")
        resources["tap"] = {
            "type": "OS::Neutron::TaaS::TapService",
            "properties": {
                "name": f"tap-{suffix}",
                "description": description,
                "port": {"get_resource": "probe"},
            },
        }
        resources["flow"] = {
            "type": "OS::Neutron::TaaS::TapFlow",
            "properties": {
                "port": {"get_resource": "mirrored"},
                "tap_service": {"get_resource": "tap"},
                "direction": "IN",
                "vlan_filter": vlans,
            },
        }
        return hot(resources)

    stack = service.create_stack(stack_name, from_data(template("mirror", "10,20-29")))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    tap = connection.network.get_tap_service(ids["tap"])
    assert (tap.name, tap.port_id, tap.status) == (f"tap-{suffix}", ids["probe"], "ACTIVE")
    flow = rest(connection, f"/taas/tap_flows/{ids['flow']}")["tap_flow"]
    assert (flow["source_port"], flow["tap_service_id"], flow["direction"]) == (
        ids["mirrored"],
        ids["tap"],
        "IN",
    )
    assert (flow["vlan_filter"], flow["status"], flow["name"]) == ("10,20-29", "ACTIVE", "")
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # The description in place; the VLANs (not updated in place) replace the flow.
    stack = service.update_stack(stack_name, from_data(template("renamed", "30")))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = physical_ids(service, stack_name)
    assert after["tap"] == ids["tap"]
    assert connection.network.get_tap_service(ids["tap"]).description == "renamed"
    assert after["flow"] != ids["flow"]
    assert rest(connection, f"/taas/tap_flows/{ids['flow']}") is None
    assert rest(connection, f"/taas/tap_flows/{after['flow']}")["tap_flow"]["vlan_filter"] == "30"

    service.delete_stack(stack_name)
    assert connection.network.find_tap_service(ids["tap"], ignore_missing=True) is None
    assert rest(connection, f"/taas/tap_flows/{after['flow']}") is None


def test_l2_gateway_updated_in_place_and_connection_replaced(admin_cloud, stacks):
    service, names = stacks
    connection = admin_cloud.connect("admin")
    suffix = secrets.token_hex(3)
    stack_name = f"l2gw-{suffix}"
    names.append(stack_name)

    def template(name: str, interface: str, network: str) -> dict:
        resources = network_and_ports(cidr="192.168.93.0/24")
        resources["other_net"] = {"type": "OS::Neutron::Net"}
        resources["gateway"] = {
            "type": "OS::Neutron::L2Gateway",
            "properties": {
                "name": name,
                "devices": [{"device_name": "switch1", "interfaces": [{"name": interface}]}],
            },
        }
        resources["connection"] = {
            "type": "OS::Neutron::L2GatewayConnection",
            "properties": {
                "l2_gateway_id": {"get_resource": "gateway"},
                "network_id": {"get_resource": network},
                "segmentation_id": "100",
            },
        }
        return hot(resources)

    stack = service.create_stack(stack_name, from_data(template(f"gw-{suffix}", "eth0", "net")))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    gateway = rest(connection, f"/l2-gateways/{ids['gateway']}")["l2_gateway"]
    assert gateway["name"] == f"gw-{suffix}"
    assert [
        (d["device_name"], [i["name"] for i in d["interfaces"]]) for d in gateway["devices"]
    ] == [("switch1", ["eth0"])]
    link = rest(connection, f"/l2-gateway-connections/{ids['connection']}")["l2_gateway_connection"]
    assert (link["l2_gateway_id"], link["network_id"], str(link["segmentation_id"])) == (
        ids["gateway"],
        ids["net"],
        "100",
    )
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # The gateway renamed in place; another network is a new connection (made before the
    # old one goes: a gateway connects a network once).
    stack = service.update_stack(
        stack_name, from_data(template(f"renamed-{suffix}", "eth0", "other_net"))
    )

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = physical_ids(service, stack_name)
    assert after["gateway"] == ids["gateway"]
    assert (
        rest(connection, f"/l2-gateways/{ids['gateway']}")["l2_gateway"]["name"]
        == f"renamed-{suffix}"
    )
    assert after["connection"] != ids["connection"]
    assert rest(connection, f"/l2-gateway-connections/{ids['connection']}") is None
    moved = rest(connection, f"/l2-gateway-connections/{after['connection']}")[
        "l2_gateway_connection"
    ]
    assert moved["network_id"] == after["other_net"]

    service.delete_stack(stack_name)
    assert rest(connection, f"/l2-gateways/{ids['gateway']}") is None
    assert rest(connection, f"/l2-gateway-connections/{after['connection']}") is None


def test_bgpvpn_and_its_associations_replaced_on_change(admin_cloud, stacks):
    service, names = stacks
    network = admin_cloud.connect("admin").network
    suffix = secrets.token_hex(3)
    stack_name = f"bgpvpn-{suffix}"
    names.append(stack_name)

    def template(route_target: str) -> dict:
        resources = network_and_ports("port", cidr="192.168.94.0/24")
        resources.update(
            {
                "router": {"type": "OS::Neutron::Router"},
                "vpn": {
                    "type": "OS::Neutron::BGPVPN",
                    "properties": {"name": f"vpn-{suffix}", "route_targets": [route_target]},
                },
                "net_association": {
                    "type": "OS::Neutron::BGPVPN-NET-ASSOCIATION",
                    "properties": {
                        "bgpvpn_id": {"get_resource": "vpn"},
                        "network_id": {"get_resource": "net"},
                    },
                },
                "router_association": {
                    "type": "OS::Neutron::BGPVPN-ROUTER-ASSOCIATION",
                    "properties": {
                        "bgpvpn_id": {"get_resource": "vpn"},
                        "router_id": {"get_resource": "router"},
                    },
                },
                "port_association": {
                    "type": "OS::Neutron::BGPVPN-PORT-ASSOCIATION",
                    "properties": {
                        "bgpvpn_id": {"get_resource": "vpn"},
                        "port_id": {"get_resource": "port"},
                        "routes": [{"type": "prefix", "prefix": "10.77.0.0/16", "local_pref": 100}],
                    },
                },
            }
        )
        return hot(resources)

    stack = service.create_stack(stack_name, from_data(template("64512:1")))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    vpn = network.get_bgpvpn(ids["vpn"])
    assert (vpn.name, vpn.route_targets, vpn.type) == (f"vpn-{suffix}", ["64512:1"], "l3")
    assert (
        network.get_bgpvpn_network_association(ids["vpn"], ids["net_association"]).network_id
        == ids["net"]
    )
    assert (
        network.get_bgpvpn_router_association(ids["vpn"], ids["router_association"]).router_id
        == ids["router"]
    )
    port_association = network.get_bgpvpn_port_association(ids["vpn"], ids["port_association"])
    assert port_association.port_id == ids["port"]
    assert [(r["type"], r["prefix"], r["local_pref"]) for r in port_association.routes] == [
        ("prefix", "10.77.0.0/16", 100)
    ]
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # Nothing is updated in place: a new route target is a new BGPVPN, and the
    # associations naming it follow it.
    stack = service.update_stack(stack_name, from_data(template("64512:2")))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = physical_ids(service, stack_name)
    assert after["vpn"] != ids["vpn"]
    assert network.get_bgpvpn(after["vpn"]).route_targets == ["64512:2"]
    assert network.find_bgpvpn(ids["vpn"], ignore_missing=True) is None
    assert (
        network.get_bgpvpn_network_association(after["vpn"], after["net_association"]).network_id
        == ids["net"]
    )

    service.delete_stack(stack_name)
    assert network.find_bgpvpn(after["vpn"], ignore_missing=True) is None


# No names given: each object gets the physical resource name, which is how the command
# after a crash finds an object whose id was never recorded (``find_created``).
CRASH_TEMPLATE = hot(
    {
        **network_and_ports(
            "ingress",
            "egress",
            cidr="192.168.95.0/24",
            devices={"ingress": "function", "egress": "function"},
        ),
        "pair": {
            "type": "OS::Neutron::PortPair",
            "properties": {
                "ingress": {"get_resource": "ingress"},
                "egress": {"get_resource": "egress"},
            },
        },
        "group": {
            "type": "OS::Neutron::PortPairGroup",
            "properties": {"port_pairs": [{"get_resource": "pair"}]},
        },
        "chain": {
            "type": "OS::Neutron::PortChain",
            "properties": {"port_pair_groups": [{"get_resource": "group"}]},
        },
    }
)


def test_service_chain_create_killed_at_commits_then_finished_leaves_nothing(
    openstack_cloud, tmp_path
):
    network = openstack_cloud.connect("admin").network
    template = tmp_path / "sfc.yaml"
    template.write_text(yaml.safe_dump(CRASH_TEMPLATE))
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("OS_", "STOKER_"))
    }
    environment.update(
        OS_CLIENT_CONFIG_FILE=str(openstack_cloud.clouds_yaml),
        STOKER_DATABASE_URL=f"sqlite:///{tmp_path / 'stoker.sqlite'}",
    )

    def stoker(*command: str, kill_after: int | None = None) -> subprocess.CompletedProcess:
        run_environment = dict(environment)
        if kill_after is not None:
            run_environment["STOKER_FAULT_KILL_AFTER_COMMITS"] = str(kill_after)
        return subprocess.run(
            [STOKER, "--os-cloud", openstack_cloud.cloud("admin"), "stack", *command],
            env=run_environment, capture_output=True, text=True, timeout=WAIT_S, check=False,
        )  # fmt: skip

    def left(stack_name: str) -> dict[str, list[str]]:
        prefix = f"{stack_name}-"
        return {
            kind: [
                item.name
                for item in getattr(network, f"sfc_{kind}s")()
                if item.name.startswith(prefix)
            ]
            for kind in ("port_pair", "port_pair_group", "port_chain")
        }

    nothing = {"port_pair": [], "port_pair_group": [], "port_chain": []}
    suffix = secrets.token_hex(3)
    crashes = 0
    # Every sixth commit from the pair's on (the network, subnet and ports come first): each
    # type's create is cut, within about three minutes on a busy machine.
    for commits in range(14, 60, 6):
        name = f"sc{commits}-{suffix}"
        created = stoker("create", name, "-t", str(template), "--wait", kill_after=commits)
        if created.returncode == 0:
            break
        assert created.returncode == -9, created.stderr
        crashes += 1
        if crashes % 2:
            retried = stoker("update", name, "-t", str(template), "--wait")
            assert retried.returncode == 0, retried.stderr
            made = left(name)
            assert all(len(found) == 1 for found in made.values()), made
        deleted = stoker("delete", name, "--yes", "--wait")
        assert deleted.returncode == 0, deleted.stderr
        assert left(name) == nothing, (commits, created.stderr)
    else:
        raise AssertionError("the create never completed")
    assert crashes >= 3
    deleted = stoker("delete", name, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    assert left(name) == nothing
