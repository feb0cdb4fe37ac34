"""Neutron's segments, floating IP port forwarding and VPNaaS types against the real Neutron
of the test cloud (its ``segments``, ``port_forwarding`` and ``vpnaas`` service plugins on,
neutron-vpnaas with our no-op VPN driver): created, updated in place, replaced where Heat
replaces, checked and deleted, openstacksdk the witness; Heat's validation of segments and
network gateways; the FWaaS v1 types refused with Heat's message by a Neutron without the
``fwaas`` extension; and crash safety (the command SIGKILLed after each commit in turn, then
the next command finishes and nothing is orphaned in Neutron)."""

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


def outputs(service, stack_name: str) -> dict:
    return {
        output["output_key"]: output.get("output_value") for output in service.outputs(stack_name)
    }


def vpn_template(
    *,
    description: str = "first",
    ipsec_policy: str,
    lifetime: int = 3600,
    peer_cidrs: tuple[str, ...] = ("10.40.0.0/24",),
    external_port: int = 2222,
    segment_name: str = "blue",
) -> dict:
    """A router with a gateway and an interface, a port with a forwarded floating IP, a VPN
    service with an IKE policy and a site connection (on ``ipsec_policy``, made beside the
    stack: see ``test_ipsec_policy_refused_by_vpnaas_2026_2``), and a segment. No names: each
    object gets its physical resource name (what a crashed create is found by). SHA-256, not
    Heat's default SHA-1, which neutron-vpnaas 2026.2 no longer stores."""
    private_subnet = {"get_resource": "private_subnet"}
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "public": {
                "type": "OS::Neutron::Net",
                "properties": {"value_specs": {"router:external": True}},
            },
            "public_subnet": {
                "type": "OS::Neutron::Subnet",
                "properties": {
                    "network": {"get_resource": "public"},
                    "cidr": "172.24.8.0/24",
                    "enable_dhcp": False,
                },
            },
            "private": {"type": "OS::Neutron::Net"},
            "private_subnet": {
                "type": "OS::Neutron::Subnet",
                "properties": {
                    "network": {"get_resource": "private"},
                    "cidr": "10.30.0.0/24",
                    "enable_dhcp": False,
                },
            },
            "router": {
                "type": "OS::Neutron::Router",
                "properties": {"external_gateway_info": {"network": {"get_resource": "public"}}},
            },
            "interface": {
                "type": "OS::Neutron::RouterInterface",
                "properties": {"router": {"get_resource": "router"}, "subnet": private_subnet},
            },
            "port": {
                "type": "OS::Neutron::Port",
                "properties": {
                    "network": {"get_resource": "private"},
                    "fixed_ips": [{"subnet": private_subnet}],
                },
            },
            "floating_ip": {
                "type": "OS::Neutron::FloatingIP",
                "properties": {"floating_network": {"get_resource": "public"}},
                "depends_on": ["interface"],
            },
            "forward": {
                "type": "OS::Neutron::FloatingIPPortForward",
                "properties": {
                    "floating_ip": {"get_resource": "floating_ip"},
                    "internal_port": {"get_resource": "port"},
                    "internal_ip_address": {"get_attr": ["port", "fixed_ips", 0, "ip_address"]},
                    "internal_port_number": 22,
                    "external_port": external_port,
                    "protocol": "tcp",
                },
            },
            "ike": {
                "type": "OS::Neutron::IKEPolicy",
                "properties": {"auth_algorithm": "sha256", "lifetime": {"value": lifetime}},
            },
            "vpn": {
                "type": "OS::Neutron::VPNService",
                "properties": {
                    "router": {"get_resource": "router"},
                    "subnet": private_subnet,
                    "description": description,
                },
                "depends_on": ["interface"],
            },
            "connection": {
                "type": "OS::Neutron::IPsecSiteConnection",
                "properties": {
                    "peer_address": "172.24.8.233",
                    "peer_id": "172.24.8.233",
                    "peer_cidrs": list(peer_cidrs),
                    "psk": "secret",
                    "ikepolicy_id": {"get_resource": "ike"},
                    "ipsecpolicy_id": ipsec_policy,
                    "vpnservice_id": {"get_resource": "vpn"},
                    "dpd": {"actions": "restart"},
                },
            },
            "segment_network": {"type": "OS::Neutron::Net"},
            "segment": {
                "type": "OS::Neutron::Segment",
                "properties": {
                    "network": {"get_resource": "segment_network"},
                    "network_type": "vxlan",
                    "name": segment_name,
                },
            },
        },
        "outputs": {
            "vpn_status": {"value": {"get_attr": ["vpn", "status"]}},
            "connection": {"value": {"get_attr": ["connection", "dpd"]}},
            "ike_lifetime": {"value": {"get_attr": ["ike", "lifetime"]}},
        },
    }


@pytest.fixture
def ipsec_policy(admin_cloud):
    """An IPsec policy of SHA-256 (Heat's IPsecPolicy allows only SHA-1)."""
    network = admin_cloud.connect("admin").network
    made = network.create_vpn_ipsec_policy(
        name=f"ipsec-{secrets.token_hex(3)}", auth_algorithm="sha256"
    )
    yield made.id
    network.delete_vpn_ipsec_policy(made.id, ignore_missing=True)


def test_segment_port_forward_and_vpn_types_create_update_replace_check_delete(
    admin_cloud, ipsec_policy, stacks
):
    service, names = stacks
    network = admin_cloud.connect("admin").network
    stack_name = f"vpn-{secrets.token_hex(3)}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(vpn_template(ipsec_policy=ipsec_policy)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    segment = network.get_segment(ids["segment"])
    assert (segment.network_id, segment.network_type, segment.name) == (
        ids["segment_network"],
        "vxlan",
        "blue",
    )
    port = network.get_port(ids["port"])
    forward = network.get_floating_ip_port_forwarding(ids["floating_ip"], ids["forward"])
    assert (forward.internal_port_id, forward.internal_ip_address, forward.internal_port) == (
        port.id,
        port.fixed_ips[0]["ip_address"],
        22,
    )
    assert (forward.external_port, forward.protocol) == (2222, "tcp")
    vpn = network.get_vpn_service(ids["vpn"])
    assert (vpn.router_id, vpn.subnet_id, vpn.description) == (
        ids["router"],
        ids["private_subnet"],
        "first",
    )
    assert vpn.name.startswith(f"{stack_name}-vpn-")
    connection = network.get_vpn_ipsec_site_connection(ids["connection"])
    assert connection.status == "ACTIVE"
    assert (connection.ikepolicy_id, connection.ipsecpolicy_id, connection.vpnservice_id) == (
        ids["ike"],
        ipsec_policy,
        ids["vpn"],
    )
    assert connection.peer_cidrs == ["10.40.0.0/24"]
    assert network.get_vpn_ike_policy(ids["ike"]).lifetime == {"units": "seconds", "value": 3600}
    shown = outputs(service, stack_name)
    # ACTIVE once its connection is made (the no-op driver's answer); the attribute was
    # read when the service was created, still PENDING_CREATE (Heat completes it then).
    assert shown["vpn_status"] == "PENDING_CREATE"
    assert network.get_vpn_service(ids["vpn"]).status == "ACTIVE"
    assert shown["connection"] == {
        "action": "restart",
        "interval": 30,
        "timeout": 120,
    }  # Neutron's keys
    assert shown["ike_lifetime"] == {"units": "seconds", "value": 3600}
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    updated = service.update_stack(
        stack_name,
        from_data(
            vpn_template(
                description="second",
                ipsec_policy=ipsec_policy,
                peer_cidrs=("10.40.0.0/24", "10.41.0.0/24"),
                external_port=2223,
                segment_name="green",
            )
        ),
    )

    assert updated.state == "UPDATE_COMPLETE", updated.status_reason
    after = physical_ids(service, stack_name)
    # In place: the segment's name, the forwarding's port, the service's description, the
    # IKE policy unchanged (Neutron refuses any change to a policy in use). Replaced: the connection (its peer CIDRs).
    for same in ("segment", "forward", "vpn", "ike"):
        assert after[same] == ids[same], same
    assert after["connection"] != ids["connection"]
    assert network.get_segment(ids["segment"]).name == "green"
    assert (
        network.get_floating_ip_port_forwarding(ids["floating_ip"], ids["forward"]).external_port
        == 2223
    )
    assert network.get_vpn_service(ids["vpn"]).description == "second"
    assert network.find_vpn_ipsec_site_connection(ids["connection"]) is None
    assert network.get_vpn_ipsec_site_connection(after["connection"]).peer_cidrs == [
        "10.40.0.0/24",
        "10.41.0.0/24",
    ]

    network.delete_vpn_ipsec_site_connection(after["connection"])  # gone behind the stack's back
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"

    service.delete_stack(stack_name)

    assert service.store.find_stack(stack_name) is None
    assert network.find_segment(ids["segment"]) is None
    assert network.find_vpn_service(ids["vpn"]) is None
    assert network.find_vpn_ike_policy(ids["ike"]) is None
    assert network.find_vpn_ipsec_site_connection(after["connection"]) is None
    assert network.find_ip(ids["floating_ip"]) is None


def test_ipsec_policy_refused_by_vpnaas_2026_2(admin_cloud, stacks):
    """Heat 27's OS::Neutron::IPsecPolicy defaults auth_algorithm to sha1, which
    neutron-vpnaas 2026.2 dropped from its tables (migration 842256a43ce2) while its API still
    takes it: Neutron answers 500, and the stack fails naming the resource."""
    service, names = stacks
    stack_name = f"ipsec-{secrets.token_hex(3)}"
    names.append(stack_name)
    template = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "ipsec": {"type": "OS::Neutron::IPsecPolicy", "properties": {"pfs": "group14"}}
        },
    }

    stack = service.create_stack(stack_name, from_data(template))

    assert stack.state == "CREATE_FAILED"
    assert "resources.ipsec" in stack.status_reason and "500" in stack.status_reason
    assert physical_ids(service, stack_name)["ipsec"] in (None, "")


def test_ipsec_policy_of_sha256_creates_updates_in_place_and_deletes(admin_cloud, stacks):
    service, names = stacks
    network = admin_cloud.connect("admin").network
    stack_name = f"ipsec-{secrets.token_hex(3)}"
    names.append(stack_name)

    def template(description: str) -> dict:
        properties = {"auth_algorithm": "sha256", "pfs": "group14", "description": description}
        return {
            "heat_template_version": "2021-04-16",
            "resources": {"ipsec": {"type": "OS::Neutron::IPsecPolicy", "properties": properties}},
        }

    stack = service.create_stack(stack_name, from_data(template("first")))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    made = physical_ids(service, stack_name)["ipsec"]
    assert network.get_vpn_ipsec_policy(made).auth_algorithm == "sha256"

    stack = service.update_stack(stack_name, from_data(template("second")))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["ipsec"] == made  # in place
    assert network.get_vpn_ipsec_policy(made).description == "second"

    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert network.find_vpn_ipsec_policy(made) is None


def test_segment_and_network_gateway_refuse_what_heat_refuses(admin_cloud, stacks):
    service, _ = stacks
    network = admin_cloud.connect("admin").network
    made = network.create_network(name=f"refusals-{secrets.token_hex(3)}")
    try:
        _refusals(service, made.id)
    finally:
        network.delete_network(made.id)


def _refusals(service, network_id: str) -> None:

    def refused(resource: dict) -> str:
        template = {"heat_template_version": "2021-04-16", "resources": {"thing": resource}}
        with pytest.raises(TemplateErrors) as error:
            service.create_stack(f"refused-{secrets.token_hex(3)}", from_data(template))
        return str(error.value)

    vlan = refused(
        {
            "type": "OS::Neutron::Segment",
            "properties": {"network": network_id, "network_type": "vlan"},
        }
    )
    assert "physical_network is required for vlan provider network." in vlan
    assert "resources.thing.properties.physical_network" in vlan
    tunnel = {"network": network_id, "network_type": "vxlan", "physical_network": "public"}
    assert "physical_network is prohibited for vxlan provider network." in refused(
        {"type": "OS::Neutron::Segment", "properties": tunnel}
    )
    too_high = {
        "network": network_id,
        "network_type": "vlan",
        "physical_network": "p",
        "segmentation_id": 4095,
    }
    assert "Up to 4094 VLAN network segments can exist on each physical_network." in refused(
        {"type": "OS::Neutron::Segment", "properties": too_high}
    )
    gateway = {
        "devices": [{"id": "device", "interface_name": "eth1"}],
        "connections": [{"network": network_id, "segmentation_type": "vlan"}],
    }
    message = refused({"type": "OS::Neutron::NetworkGateway", "properties": gateway})
    assert "segmentation_id must be specified for using vlan" in message
    assert "resources.thing.properties.connections[0].segmentation_id" in message


def test_fwaas_v1_types_are_refused_with_heats_message_where_neutron_lacks_fwaas(
    admin_cloud, stacks
):
    """Heat 27's firewall types talk to FWaaS v1, which no Neutron serves since Stein."""
    service, names = stacks
    network = admin_cloud.connect("admin").network
    stack_name = f"fw-{secrets.token_hex(3)}"
    names.append(stack_name)
    template = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "rule": {
                "type": "OS::Neutron::FirewallRule",
                "properties": {"protocol": "tcp", "action": "allow"},
            },
        },
    }

    stack = service.create_stack(stack_name, from_data(template))

    assert stack.state == "CREATE_FAILED"
    assert "Required extension fwaas in neutron service is not available." in stack.status_reason
    assert "fwaas" not in {extension.alias for extension in network.extensions()}
    assert service.delete_stack(stack_name) is None or service.store.find_stack(stack_name) is None


class Commands:
    """The stoker command on its own store, as the cloud's admin."""

    def __init__(self, cloud, tmp_path: Path, ipsec_policy: str):
        self.template = tmp_path / "vpn.yaml"
        self.template.write_text(yaml.safe_dump(vpn_template(ipsec_policy=ipsec_policy)))
        self.environment = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("OS_", "STOKER_"))
        }
        self.environment.update(
            OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml),
            STOKER_DATABASE_URL=f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        )
        self.cloud = ["--os-cloud", cloud.cloud("admin")]

    def run(self, *command: str, kill_after: int | None = None) -> subprocess.CompletedProcess:
        environment = dict(self.environment)
        if kill_after is not None:
            environment["STOKER_FAULT_KILL_AFTER_COMMITS"] = str(kill_after)
        return subprocess.run(
            [STOKER, *self.cloud, "stack", *command],
            env=environment,
            capture_output=True,
            text=True,
            timeout=WAIT_S,
            check=False,
        )


def left_in_neutron(network, stack_name: str) -> dict[str, list[str]]:
    prefix = f"{stack_name}-"
    listers = {
        "vpn_service": network.vpn_services,
        "ike_policy": network.vpn_ike_policies,
        "connection": network.vpn_ipsec_site_connections,
        "network": network.networks,
        "router": network.routers,
    }
    return {
        kind: [item.name for item in lister() if (item.name or "").startswith(prefix)]
        for kind, lister in listers.items()
    }


def test_vpn_stack_create_killed_at_commits_then_finished_leaves_nothing(
    openstack_cloud, tmp_path, ipsec_policy
):
    network = openstack_cloud.connect("admin").network
    commands = Commands(openstack_cloud, tmp_path, ipsec_policy)
    suffix = secrets.token_hex(3)
    nothing = {
        kind: []
        for kind in (
            "vpn_service",
            "ike_policy",
            "connection",
            "network",
            "router",
        )
    }
    crashes = 0
    # A point every eleventh commit until the create completes: the networks, the router,
    # the policies, the service, the connection and the segment are each cut in turn.
    for commits in range(5, 200, 11):
        name = f"vc{commits}-{suffix}"
        created = commands.run(
            "create", name, "-t", str(commands.template), "--wait", kill_after=commits
        )
        if created.returncode == 0:
            break
        assert created.returncode == -9, created.stderr
        crashes += 1
        if commands.run("show", name).returncode != 0:
            assert left_in_neutron(network, name) == nothing
            continue
        if crashes % 2:
            retried = commands.run("update", name, "-t", str(commands.template), "--wait")
            assert retried.returncode == 0, retried.stderr
            # One of each: what the killed create made was found, not made again.
            left = left_in_neutron(network, name)
            assert [len(left[kind]) for kind in ("vpn_service", "ike_policy", "connection")] == [
                1,
                1,
                1,
            ], left
        deleted = commands.run("delete", name, "--yes", "--wait")
        assert deleted.returncode == 0, deleted.stderr
        assert left_in_neutron(network, name) == nothing, (commits, created.stderr)
    else:
        raise AssertionError("the create never completed")
    assert crashes >= 4
    deleted = commands.run("delete", name, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    assert left_in_neutron(network, name) == nothing
