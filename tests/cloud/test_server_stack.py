"""The README's server example (examples/server.yaml) through its whole life against the
real services, as a project member: create; update in place (the server's name and
metadata, the security group's rules); an update that replaces the data volume (and
moves its attachment); a flavor resize; suspend and resume; check; delete; and then
openstacksdk finds nothing of it left in the cloud."""

from __future__ import annotations

import copy
import secrets
from pathlib import Path

import pytest
import yaml

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from tests.support.stacks import from_data

EXAMPLE = yaml.safe_load((Path(__file__).resolve().parents[2] / "examples" / "server.yaml").read_text())


@pytest.fixture
def demo_cloud(openstack_cloud):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("demo")))
    yield openstack_cloud
    set_cloud_source(None)


@pytest.fixture
def public_network(openstack_cloud):
    admin = openstack_cloud.connect("admin")
    network = admin.network.create_network(name=f"public-{secrets.token_hex(3)}", is_router_external=True)
    admin.network.create_subnet(network_id=network.id, cidr="172.29.0.0/24", ip_version=4, enable_dhcp=False)
    yield network
    # After a failed test the stack's router may still hold a gateway port here: the
    # network is then left for the session's end (its databases are dropped).
    try:
        for subnet in admin.network.subnets(network_id=network.id):
            admin.network.delete_subnet(subnet, ignore_missing=True)
        admin.network.delete_network(network, ignore_missing=True)
    except Exception:  # noqa: BLE001
        pass


def _template(server_name: str, metadata: dict, ssh_port: int, zone: str | None = None) -> dict:
    template = copy.deepcopy(EXAMPLE)
    resources = template["resources"]
    resources["server"]["properties"].update(name=server_name, metadata=metadata)
    resources["ssh"]["properties"]["rules"][0].update(port_range_min=ssh_port, port_range_max=ssh_port)
    if zone is not None:
        resources["data"]["properties"]["availability_zone"] = zone
    return template


def _volume_gone(demo, volume_id: str) -> bool:
    from openstack.exceptions import NotFoundException

    try:
        demo.block_storage.get_volume(volume_id)
    except NotFoundException:
        return True
    return False


def _ids(service, name: str) -> dict[str, str]:
    return {row.name: row.physical_resource_id for row in service.list_resources(name)}


def test_server_stack_lives_its_whole_life_and_leaves_nothing(demo_cloud, public_network, make_service):
    suffix = secrets.token_hex(3)
    name = f"server-{suffix}"
    service = make_service()
    demo = demo_cloud.connect("demo")
    parameters = {"public_net": public_network.id, "image": demo_cloud.image_name, "flavor": "m1.tiny"}

    stack = service.create_stack(name, from_data(_template(f"web-{suffix}", {"role": "web"}, 22)), parameters=parameters)

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = _ids(service, name)
    server = demo.compute.get_server(ids["server"])
    assert (server.name, server.metadata, server.status) == (f"web-{suffix}", {"role": "web"}, "ACTIVE")
    assert server.key_name == ids["key"]
    assert [attachment.volume_id for attachment in demo.compute.volume_attachments(server)] == [ids["data"]]
    floating = demo.network.get_ip(ids["floating_ip"])
    assert floating.port_id == ids["port"] and floating.floating_network_id == public_network.id
    outputs = {output["output_key"]: output["output_value"] for output in service.outputs(name)}
    assert outputs["address"] == floating.floating_ip_address
    assert outputs["private_key"].startswith("-----BEGIN")

    # In place: the server's name and metadata, the group's rules.
    stack = service.update_stack(name, from_data(_template(f"www-{suffix}", {"role": "www"}, 2222)), parameters=parameters)

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert _ids(service, name) == ids
    server = demo.compute.get_server(ids["server"])
    assert (server.name, server.metadata) == (f"www-{suffix}", {"role": "www"})
    ports = {rule["port_range_min"] for rule in demo.network.get_security_group(ids["ssh"]).security_group_rules if rule["direction"] == "ingress"}
    assert 2222 in ports and 22 not in ports

    # Replacement: the volume's availability zone cannot change in place; the attachment
    # moves to the new volume and the old one is deleted.
    stack = service.update_stack(name, from_data(_template(f"www-{suffix}", {"role": "www"}, 2222, zone="nova")), parameters=parameters)

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    replaced = _ids(service, name)
    assert replaced["data"] != ids["data"] and replaced["server"] == ids["server"]
    assert _volume_gone(demo, ids["data"])
    assert [attachment.volume_id for attachment in demo.compute.volume_attachments(server)] == [replaced["data"]]

    # Resize: the same server, on the new flavor.
    stack = service.update_stack(
        name, from_data(_template(f"www-{suffix}", {"role": "www"}, 2222, zone="nova")), parameters={**parameters, "flavor": "m1.small"}
    )

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    server = demo.compute.get_server(ids["server"])
    assert (server.id, server.flavor.name, server.status) == (ids["server"], "m1.small", "ACTIVE")

    assert service.stack_action(name, "SUSPEND").state == "SUSPEND_COMPLETE"
    assert demo.compute.get_server(ids["server"]).status == "SUSPENDED"
    assert service.stack_action(name, "RESUME").state == "RESUME_COMPLETE"
    assert demo.compute.get_server(ids["server"]).status == "ACTIVE"
    assert service.stack_action(name, "CHECK").state == "CHECK_COMPLETE"

    deleted = service.delete_stack(name)

    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert demo.compute.find_server(ids["server"]) is None
    assert demo.compute.find_keypair(ids["key"]) is None
    assert _volume_gone(demo, replaced["data"])
    for kind, key in (("network", "net"), ("subnet", "subnet"), ("router", "router"), ("port", "port"), ("security_group", "ssh"), ("ip", "floating_ip")):
        assert getattr(demo.network, f"find_{kind}")(replaced[key]) is None, f"{key} is left in the cloud"
