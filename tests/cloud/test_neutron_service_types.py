"""Neutron's service-plugin types against the real Neutron of the test cloud (its QoS,
trunk and metering plugins enabled; no agent acts on them): OS::Neutron::QoSPolicy and its
four rule types, OS::Neutron::Trunk, OS::Neutron::MeteringLabel and MeteringRule, and
OS::Neutron::Quota. Created, updated in place, replaced where Heat replaces, checked,
deleted; openstacksdk the witness."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from tests.support.stacks import from_data


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


@pytest.fixture
def project(admin_cloud) -> Iterator[object]:
    connection = admin_cloud.connect("admin")
    made = connection.identity.create_project(
        name=f"quota-{secrets.token_hex(3)}", domain_id="default"
    )
    yield made
    connection.identity.delete_project(made)


def physical_ids(service, stack_name: str) -> dict[str, str]:
    return {
        record.name: record.physical_resource_id for record in service.list_resources(stack_name)
    }


def hot(resources: dict, outputs: dict | None = None) -> dict:
    """A template of ``resources`` with ``outputs`` (name -> value)."""
    wrapped = {name: {"value": value} for name, value in (outputs or {}).items()}
    return {"heat_template_version": "2021-04-16", "resources": resources, "outputs": wrapped}


def outputs(service, stack_name: str) -> dict:
    return {
        output["output_key"]: output.get("output_value") for output in service.outputs(stack_name)
    }


def test_qos_policy_with_every_rule_type_on_a_port(admin_cloud, stacks):
    service, names = stacks
    connection = admin_cloud.connect("admin")
    suffix = secrets.token_hex(3)
    stack_name = f"qos-{suffix}"
    names.append(stack_name)

    def template(max_kbps: int, dscp: int, min_kbps: int, min_kpps: int, description: str) -> dict:
        policy = {"get_resource": "policy"}
        return hot(
            {
                "policy": {
                    "type": "OS::Neutron::QoSPolicy",
                    "properties": {"description": description},
                },
                "limit": {
                    "type": "OS::Neutron::QoSBandwidthLimitRule",
                    "properties": {"policy": policy, "max_kbps": max_kbps, "direction": "ingress"},
                },
                "dscp": {
                    "type": "OS::Neutron::QoSDscpMarkingRule",
                    "properties": {"policy": policy, "dscp_mark": dscp},
                },
                "minimum": {
                    "type": "OS::Neutron::QoSMinimumBandwidthRule",
                    "properties": {"policy": policy, "min_kbps": min_kbps},
                },
                "packets": {
                    "type": "OS::Neutron::QoSMinimumPacketRateRule",
                    "properties": {"policy": policy, "min_kpps": min_kpps, "direction": "any"},
                },
                "net": {"type": "OS::Neutron::Net", "properties": {"qos_policy": policy}},
            },
        )

    stack = service.create_stack(stack_name, from_data(template(1000, 16, 500, 100, "first")))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    policy = connection.network.get_qos_policy(ids["policy"])
    assert policy.name.startswith(f"{stack_name}-policy-") and policy.description == "first"
    limit = connection.network.get_qos_bandwidth_limit_rule(ids["limit"], ids["policy"])
    assert (limit.max_kbps, limit.max_burst_kbps, limit.direction) == (1000, 0, "ingress")
    assert connection.network.get_qos_dscp_marking_rule(ids["dscp"], ids["policy"]).dscp_mark == 16
    assert (
        connection.network.get_qos_minimum_bandwidth_rule(ids["minimum"], ids["policy"]).min_kbps
        == 500
    )
    packets = connection.network.get_qos_minimum_packet_rate_rule(ids["packets"], ids["policy"])
    assert (packets.min_kpps, packets.direction) == (100, "any")
    assert connection.network.get_network(ids["net"]).qos_policy_id == ids["policy"]
    assert {rule["type"] for rule in connection.network.get_qos_policy(ids["policy"]).rules} == {
        "bandwidth_limit",
        "dscp_marking",
        "minimum_bandwidth",
        "minimum_packet_rate",
    }
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    stack = service.update_stack(stack_name, from_data(template(2000, 26, 700, 200, "second")))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name) == ids
    assert connection.network.get_qos_policy(ids["policy"]).description == "second"
    assert (
        connection.network.get_qos_bandwidth_limit_rule(ids["limit"], ids["policy"]).max_kbps
        == 2000
    )
    assert connection.network.get_qos_dscp_marking_rule(ids["dscp"], ids["policy"]).dscp_mark == 26
    assert (
        connection.network.get_qos_minimum_bandwidth_rule(ids["minimum"], ids["policy"]).min_kbps
        == 700
    )
    assert (
        connection.network.get_qos_minimum_packet_rate_rule(ids["packets"], ids["policy"]).min_kpps
        == 200
    )

    service.delete_stack(stack_name)
    assert connection.network.find_qos_policy(ids["policy"], ignore_missing=True) is None


def test_trunk_with_subports_updated_in_place(admin_cloud, stacks):
    service, names = stacks
    connection = admin_cloud.connect("admin")
    suffix = secrets.token_hex(3)
    stack_name = f"trunk-{suffix}"
    names.append(stack_name)

    def template(name: str, subports: list[tuple[str, int]]) -> dict:
        resources = {
            "net": {"type": "OS::Neutron::Net"},
            "subnet": {
                "type": "OS::Neutron::Subnet",
                "properties": {"network": {"get_resource": "net"}, "cidr": "192.168.77.0/24"},
            },
            "parent": {
                "type": "OS::Neutron::Port",
                "properties": {"network": {"get_resource": "net"}},
            },
            "trunk": {
                "type": "OS::Neutron::Trunk",
                "properties": {
                    "name": name,
                    "port": {"get_resource": "parent"},
                    "sub_ports": [
                        {
                            "port": {"get_resource": port},
                            "segmentation_type": "vlan",
                            "segmentation_id": vlan,
                        }
                        for port, vlan in subports
                    ],
                },
            },
        }
        for port in ("sub_a", "sub_b"):
            resources[port] = {
                "type": "OS::Neutron::Port",
                "properties": {"network": {"get_resource": "net"}},
            }
        return hot(resources, {"parent": {"get_attr": ["trunk", "port_id"]}})

    stack = service.create_stack(
        stack_name, from_data(template(f"trunk-{suffix}", [("sub_a", 101)]))
    )

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    trunk = connection.network.get_trunk(ids["trunk"])
    assert (trunk.name, trunk.port_id) == (f"trunk-{suffix}", ids["parent"])
    assert [(s["port_id"], s["segmentation_id"]) for s in trunk.sub_ports] == [(ids["sub_a"], 101)]
    assert outputs(service, stack_name) == {"parent": ids["parent"]}
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: renamed; sub_a moves to VLAN 102 (removed, then added) and sub_b joins.
    stack = service.update_stack(
        stack_name, from_data(template(f"renamed-{suffix}", [("sub_a", 102), ("sub_b", 103)]))
    )

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["trunk"] == ids["trunk"]
    trunk = connection.network.get_trunk(ids["trunk"])
    assert trunk.name == f"renamed-{suffix}"
    assert sorted((s["port_id"], s["segmentation_id"]) for s in trunk.sub_ports) == sorted(
        [(ids["sub_a"], 102), (ids["sub_b"], 103)]
    )

    service.delete_stack(stack_name)
    assert connection.network.find_trunk(ids["trunk"], ignore_missing=True) is None


def test_metering_label_and_rule_replaced_on_change(admin_cloud, stacks):
    service, names = stacks
    connection = admin_cloud.connect("admin")
    suffix = secrets.token_hex(3)
    stack_name = f"metering-{suffix}"
    names.append(stack_name)

    def template(prefix: str) -> dict:
        return hot(
            {
                "label": {
                    "type": "OS::Neutron::MeteringLabel",
                    "properties": {"description": "external"},
                },
                "rule": {
                    "type": "OS::Neutron::MeteringRule",
                    "properties": {
                        "metering_label_id": {"get_resource": "label"},
                        "remote_ip_prefix": prefix,
                        "direction": "egress",
                        "excluded": True,
                    },
                },
            },
            {
                "direction": {"get_attr": ["rule", "direction"]},
                "shared": {"get_attr": ["label", "shared"]},
            },
        )

    stack = service.create_stack(stack_name, from_data(template("10.50.0.0/16")))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    label = connection.network.get_metering_label(ids["label"])
    assert label.name.startswith(f"{stack_name}-label-") and label.description == "external"
    rule = connection.network.get_metering_label_rule(ids["rule"])
    assert (rule.metering_label_id, rule.remote_ip_prefix, rule.direction, rule.is_excluded) == (
        ids["label"],
        "10.50.0.0/16",
        "egress",
        True,
    )
    assert outputs(service, stack_name)["direction"] == "egress"

    # No property updates in place: a new prefix is a new rule.
    stack = service.update_stack(stack_name, from_data(template("10.60.0.0/16")))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    new_rule = physical_ids(service, stack_name)["rule"]
    assert new_rule != ids["rule"]
    assert connection.network.find_metering_label_rule(ids["rule"], ignore_missing=True) is None
    assert connection.network.get_metering_label_rule(new_rule).remote_ip_prefix == "10.60.0.0/16"

    service.delete_stack(stack_name)
    assert connection.network.find_metering_label(ids["label"], ignore_missing=True) is None


def test_neutron_quota_sets_limits_then_reverts(admin_cloud, stacks, project):
    service, names = stacks
    connection = admin_cloud.connect("admin")
    defaults = connection.network.get_quota(project.id)
    stack_name = f"neutron-quota-{secrets.token_hex(3)}"
    names.append(stack_name)

    def quota(**limits: int) -> dict:
        return hot(
            {
                "quota": {
                    "type": "OS::Neutron::Quota",
                    "properties": {"project": project.name, **limits},
                }
            }
        )

    stack = service.create_stack(
        stack_name, from_data(quota(network=3, port=20, floatingip=-1, rbac_policy=5))
    )

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    current = connection.network.get_quota(project.id)
    assert (current.networks, current.ports, current.floating_ips, current.rbac_policies) == (
        3,
        20,
        -1,
        5,
    )
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    stack = service.update_stack(stack_name, from_data(quota(network=4, port=20)))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert connection.network.get_quota(project.id).networks == 4

    service.delete_stack(stack_name)
    current = connection.network.get_quota(project.id)
    assert (current.networks, current.ports) == (defaults.networks, defaults.ports)
