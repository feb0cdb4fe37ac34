"""OS::Nova::Server against the real Nova, Neutron, Glance and Cinder of the test cloud:
servers on a network by network, subnet, port and fixed IP, with a key pair; attributes;
updates in place (name, metadata, networks, image rebuild, flavor resize) and replacement;
suspend, resume, check; boot from volume; "allocate_network"; delete that tolerates a
server already gone. openstacksdk is the witness, and nothing is left in the cloud."""

from __future__ import annotations

import base64
import configparser
import ipaddress
import secrets
import time

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.resources.openstack.nova.server import Server
from stoker.sdk.testing import PluginHarness
from tests.support.stacks import from_data


@pytest.fixture
def admin_cloud(openstack_cloud):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    yield openstack_cloud
    set_cloud_source(None)


@pytest.fixture
def service(make_service):
    """A service whose stacks are deleted at the end, whatever the test did (the cloud is
    shared: a failed test must not leave servers behind)."""
    made = make_service()
    yield made
    for stack in made.list_stacks():
        try:
            made.delete_stack(stack.name)
        except Exception:  # noqa: BLE001, S110 - best effort; the test's own failure is what matters
            pass


def ids_of(service, stack_name: str) -> dict[str, str]:
    return {record.name: record.physical_resource_id for record in service.list_resources(stack_name)}


def outputs(service, stack_name: str) -> dict:
    return {output["output_key"]: output.get("output_value") for output in service.outputs(stack_name)}


def network_resources(suffix: str, cidr: str = "10.30.0.0/24") -> dict:
    """A network and a /24 subnet whose addresses Neutron hands out from .100 up: the
    fixed addresses tests name (below .100) are never taken by chance (a port given the
    address a server's update then names would keep that port, say)."""
    network = ipaddress.ip_network(cidr)
    pool = [{"start": str(network[100]), "end": str(network[250])}]
    return {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"srv-net-{suffix}"}},
        "subnet": {
            "type": "OS::Neutron::Subnet",
            "properties": {"network": {"get_resource": "net"}, "cidr": cidr, "allocation_pools": pool},
        },
    }


def server(networks: list, **properties) -> dict:
    return {
        # No depends_on: a server follows the subnets of its networks (implicit, as in Heat).
        "type": "OS::Nova::Server",
        "properties": {"flavor": "m1.tiny", "image": "stoker-tiny", "user_data_format": "RAW", "networks": networks, **properties},
    }


def template(resources: dict, outputs_: dict | None = None) -> dict:
    values = {name: {"value": value} for name, value in (outputs_ or {}).items()}
    return {"heat_template_version": "2021-04-16", "resources": resources, "outputs": values}


def server_gone(connection, server_id: str) -> bool:
    """Nova shows an admin a deleted server for a while (status DELETED): gone too."""
    found = connection.compute.find_server(server_id)
    return found is None or found.status == "DELETED"


def wait_gone(find, identifier: str, timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while find(identifier) is not None:
        assert time.monotonic() < deadline, f"{identifier} is left in the cloud"
        time.sleep(1)


def test_nova_server_create_update_check_delete(admin_cloud, service):
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    keypair = connection.compute.create_keypair(name=f"key-{suffix}")
    try:
        resources = {
            **network_resources(suffix),
            "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "net"}}},
            "by_network": server(
                [{"network": {"get_resource": "net"}}],
                name=f"web-{suffix}",
                key_name=keypair.name,
                metadata={"role": "web", "weight": 3},
                tags=["blue"],
            ),
            "by_subnet": server([{"subnet": {"get_resource": "subnet"}}]),
            "by_port": server([{"port": {"get_resource": "port"}}]),
            "fixed": server([{"network": {"get_resource": "net"}, "fixed_ip": "10.30.0.50"}], key_name=keypair.name),
        }
        values = {
            "first": {"get_attr": ["fixed", "first_address"]},
            "networks": {"get_attr": ["fixed", "networks"]},
            "port_of_fixed": {"get_attr": ["fixed", "addresses", f"srv-net-{suffix}", 0, "port"]},
            "subnets_of_fixed": {"get_attr": ["fixed", "addresses", f"srv-net-{suffix}", 0, "subnets", 0, "cidr"]},
            "web_name": {"get_attr": ["by_network", "name"]},
            "generated_name": {"get_attr": ["by_subnet", "name"]},
            "instance_name": {"get_attr": ["by_network", "instance_name"]},
            "access": {"get_attr": ["by_network", "accessIPv4"]},
            "tags": {"get_attr": ["by_network", "tags"]},
            "show_id": {"get_attr": ["by_port", "show", "id"]},
        }
        stack = service.create_stack(f"srv-{suffix}", from_data(template(resources, values)))
        assert stack.state == "CREATE_COMPLETE", stack.status_reason
        ids = ids_of(service, stack.name)

        web = connection.compute.get_server(ids["by_network"])
        assert (web.name, web.key_name, web.status) == (f"web-{suffix}", keypair.name, "ACTIVE")
        assert web.metadata == {"role": "web", "weight": "3"}
        assert web.flavor.original_name == "m1.tiny"
        by_subnet_ports = list(connection.network.ports(device_id=ids["by_subnet"]))
        assert [port.name for port in by_subnet_ports] == ["by_subnet-port-0"]  # the server made it
        assert by_subnet_ports[0].fixed_ips[0]["subnet_id"] == ids["subnet"]
        assert [port.id for port in connection.network.ports(device_id=ids["by_port"])] == [ids["port"]]
        fixed_ports = list(connection.network.ports(device_id=ids["fixed"]))
        assert [port.fixed_ips[0]["ip_address"] for port in fixed_ports] == ["10.30.0.50"]

        values = outputs(service, stack.name)
        assert values["first"] == "10.30.0.50"
        assert values["networks"] == {f"srv-net-{suffix}": ["10.30.0.50"], ids["net"]: ["10.30.0.50"]}
        assert values["port_of_fixed"] == fixed_ports[0].id
        assert values["subnets_of_fixed"] == "10.30.0.0/24"
        assert values["web_name"] == f"web-{suffix}"
        assert values["generated_name"] == connection.compute.get_server(ids["by_subnet"]).name
        assert values["generated_name"].startswith(f"srv-{suffix}-by_subnet-")
        assert values["instance_name"] == web.instance_name and values["instance_name"]
        assert values["access"] in ("", None)
        assert values["tags"] == ["blue"]
        assert values["show_id"] == ids["by_port"]

        assert service.stack_action(stack.name, "CHECK").state == "CHECK_COMPLETE"
        suspended = service.stack_action(stack.name, "SUSPEND")
        assert suspended.state == "SUSPEND_COMPLETE", suspended.status_reason
        assert {connection.compute.get_server(ids[name]).status for name in ("by_network", "fixed")} == {"SUSPENDED"}
        resumed = service.stack_action(stack.name, "RESUME")
        assert resumed.state == "RESUME_COMPLETE", resumed.status_reason
        assert connection.compute.get_server(ids["by_network"]).status == "ACTIVE"

        # In place: name, metadata and tags of one server; the networks of another (its
        # subnet entry replaced by a fixed IP: the port it made is detached and deleted).
        # Replaced: a key pair change (key_name cannot be updated).
        resources["by_network"]["properties"].update(name=f"renamed-{suffix}", metadata={"role": "db"}, tags=["green"])
        resources["by_subnet"]["properties"]["networks"] = [{"network": {"get_resource": "net"}, "fixed_ip": "10.30.0.60"}]
        # (A replacement is made before the old server goes: it needs another address.)
        del resources["fixed"]["properties"]["key_name"]
        resources["fixed"]["properties"]["networks"] = [{"network": {"get_resource": "net"}, "fixed_ip": "10.30.0.51"}]
        stack = service.update_stack(stack.name, from_data(template(resources)))
        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        after = ids_of(service, stack.name)
        assert {name: after[name] for name in ("by_network", "by_subnet", "by_port")} == {
            name: ids[name] for name in ("by_network", "by_subnet", "by_port")
        }
        web = connection.compute.get_server(ids["by_network"])
        assert (web.name, web.metadata) == (f"renamed-{suffix}", {"role": "db"})
        assert web.fetch_tags(connection.compute).tags == ["green"]
        subnet_server_ports = list(connection.network.ports(device_id=ids["by_subnet"]))
        assert [port.fixed_ips[0]["ip_address"] for port in subnet_server_ports] == ["10.30.0.60"]
        assert connection.network.find_port(by_subnet_ports[0].id) is None
        assert after["fixed"] != ids["fixed"]
        assert connection.compute.get_server(after["fixed"]).key_name is None
        wait_gone(lambda server_id: None if server_gone(connection, server_id) else server_id, ids["fixed"])

        # Deleted behind the stack's back: check fails, naming the server; delete copes.
        connection.compute.delete_server(after["by_port"])
        connection.compute.wait_for_delete(connection.compute.get_server(after["by_port"]), wait=60)
        checked = service.stack_action(stack.name, "CHECK")
        assert checked.state == "CHECK_FAILED"
        assert "by_port" in checked.status_reason and "could not be found" in checked.status_reason

        deleted = service.delete_stack(stack.name)
        assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
        for name in ("by_network", "by_subnet", "by_port", "fixed"):
            assert server_gone(connection, after[name]), f"{name} is left in the cloud"
        assert connection.network.find_network(after["net"]) is None
        assert connection.network.find_port(ids["port"]) is None
    finally:
        connection.compute.delete_keypair(keypair, ignore_missing=True)


def test_nova_server_image_rebuild_keeps_the_server(admin_cloud, service):
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    other = connection.image.create_image(
        name=f"other-{suffix}", data=b"\0" * 65536, disk_format="raw", container_format="bare", wait=True
    )
    try:
        resources = {**network_resources(suffix, "10.31.0.0/24"), "vm": server([{"network": {"get_resource": "net"}}])}
        stack = service.create_stack(f"rebuild-{suffix}", from_data(template(resources)))
        assert stack.state == "CREATE_COMPLETE", stack.status_reason
        server_id = ids_of(service, stack.name)["vm"]

        resources["vm"]["properties"]["image"] = other.name
        stack = service.update_stack(stack.name, from_data(template(resources)))

        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        assert ids_of(service, stack.name)["vm"] == server_id
        rebuilt = connection.compute.get_server(server_id)
        assert (rebuilt.image.id, rebuilt.status) == (other.id, "ACTIVE")

        # user_data_update_policy REBUILD: the new user data through a rebuild (compute 2.57).
        resources["vm"]["properties"].update(user_data="echo again", user_data_update_policy="REBUILD")
        stack = service.update_stack(stack.name, from_data(template(resources)))
        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        assert ids_of(service, stack.name)["vm"] == server_id
        rebuilt = connection.compute.get_server(server_id)
        assert base64.b64decode(rebuilt.user_data).decode() == "echo again"
        assert (rebuilt.image.id, rebuilt.status) == (other.id, "ACTIVE")

        # image_update_policy REPLACE: a new server instead.
        resources["vm"]["properties"].update(image="stoker-tiny", image_update_policy="REPLACE")
        stack = service.update_stack(stack.name, from_data(template(resources)))
        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        replacement = ids_of(service, stack.name)["vm"]
        assert replacement != server_id
        wait_gone(lambda server_id: None if server_gone(connection, server_id) else server_id, server_id)
        assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"
        assert server_gone(connection, replacement)
    finally:
        connection.image.delete_image(other, ignore_missing=True)


def _resizes_to_same_host(cloud) -> bool:
    configuration = configparser.ConfigParser(interpolation=None, strict=False)
    configuration.read(cloud.etc / "nova" / "nova.conf")
    return configuration.getboolean("DEFAULT", "allow_resize_to_same_host", fallback=False)


def _resize_stack(service, suffix: str, cidr: str):
    resources = {**network_resources(suffix, cidr), "vm": server([{"network": {"get_resource": "net"}}])}
    stack = service.create_stack(f"resize-{suffix}", from_data(template(resources)))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    resources["vm"]["properties"]["flavor"] = "m1.small"
    return service, stack, resources


def test_nova_server_flavor_resize_keeps_the_server(admin_cloud, service):
    if not _resizes_to_same_host(admin_cloud):
        pytest.skip("the test cloud has one compute host and no allow_resize_to_same_host: Nova cannot resize")
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    service, stack, resources = _resize_stack(service, suffix, "10.32.0.0/24")
    server_id = ids_of(service, stack.name)["vm"]

    stack = service.update_stack(stack.name, from_data(template(resources)))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert ids_of(service, stack.name)["vm"] == server_id
    resized = connection.compute.get_server(server_id)
    assert (resized.flavor.original_name, resized.status) == ("m1.small", "ACTIVE")
    assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"


def test_nova_server_flavor_resize_refused_by_nova_fails_with_its_reason(admin_cloud, service):
    """A resize Nova cannot place ends ACTIVE with the old flavor, not VERIFY_RESIZE: the
    update fails with Nova's reason instead of waiting for ever."""
    if _resizes_to_same_host(admin_cloud):
        pytest.skip("this cloud can resize in place (test_nova_server_flavor_resize_keeps_the_server)")
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    service, stack, resources = _resize_stack(service, suffix, "10.33.0.0/24")
    server_id = ids_of(service, stack.name)["vm"]

    stack = service.update_stack(stack.name, from_data(template(resources)))

    assert stack.state == "UPDATE_FAILED"
    assert f"Resizing to '{admin_cloud.flavors['m1.small']}' failed" in stack.status_reason
    assert "No valid host" in stack.status_reason
    assert connection.compute.get_server(server_id).flavor.original_name == "m1.tiny"
    assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"
    assert server_gone(connection, server_id)


def test_nova_server_boots_from_a_volume_with_block_device_mapping_v2(admin_cloud, service):
    """Boot from a bootable volume (bdm v2 "volume_id"). A volume made from an image
    ("image" source) cannot be tested here: the test cloud's Cinder needs sudo for
    qemu-img and puts such volumes in error."""
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    volume = connection.block_storage.create_volume(size=1, name=f"boot-{suffix}")
    connection.block_storage.wait_for_status(volume, "available", wait=60)
    connection.block_storage.set_volume_bootable_status(volume, True)
    try:
        resources = {
            **network_resources(suffix, "10.34.0.0/24"),
            "vm": {
                "type": "OS::Nova::Server",
                "properties": {
                    "flavor": "m1.tiny",
                    "user_data_format": "RAW",
                    "networks": [{"network": {"get_resource": "net"}}],
                    "block_device_mapping_v2": [{"volume_id": volume.id, "boot_index": 0}],
                },
            },
        }
        stack = service.create_stack(f"bfv-{suffix}", from_data(template(resources)))
        assert stack.state == "CREATE_COMPLETE", stack.status_reason
        server_id = ids_of(service, stack.name)["vm"]
        booted = connection.compute.get_server(server_id)
        assert not (booted.image or {}).get("id")  # no image: booted from the volume
        assert [attached["id"] for attached in booted.attached_volumes] == [volume.id]
        assert connection.block_storage.get_volume(volume.id).status == "in-use"

        assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"
        assert server_gone(connection, server_id)
        # delete_on_termination defaults to false for a volume: it is kept, detached.
        connection.block_storage.wait_for_status(volume, "available", wait=60)
    finally:
        for stack in service.list_stacks():
            service.delete_stack(stack.name)
        connection.block_storage.wait_for_status(volume, "available", failures=["error"], wait=60)
        connection.block_storage.delete_volume(volume, ignore_missing=True)


def test_nova_server_delete_tolerates_a_server_already_gone(admin_cloud, service):
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    resources = {**network_resources(suffix, "10.35.0.0/24"), "vm": server([{"subnet": {"get_resource": "subnet"}}])}
    stack = service.create_stack(f"gone-{suffix}", from_data(template(resources)))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = ids_of(service, stack.name)
    connection.compute.delete_server(ids["vm"])

    deleted = service.delete_stack(stack.name)

    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert server_gone(connection, ids["vm"])
    assert connection.network.find_network(ids["net"]) is None  # its port, made by the server, went too


def test_nova_server_find_created_finds_the_server_an_interrupted_create_made(admin_cloud):
    """A create that made the server but died before recording its id: the server is
    found by its exact generated name, and a server whose name only starts alike is not."""
    from stoker.resources.openstack import client_mapping

    class Context:
        pass

    context = Context()
    clients = {name: cls(context, name=name) for name, cls in client_mapping().items()}
    harness = PluginHarness(Server, {"flavor": "m1.tiny", "image": "stoker-tiny"}, clients=clients, stack_name=f"found-{secrets.token_hex(3)}")
    name = harness.resource.physical_resource_name()
    connection = admin_cloud.connect("admin")
    flavor, image = admin_cloud.flavors["m1.tiny"], admin_cloud.image_id
    assert harness.resource.find_created() is None
    lookalike = connection.compute.create_server(name=name + "x", flavor_id=flavor, image_id=image, networks="none")
    made = connection.compute.create_server(name=name, flavor_id=flavor, image_id=image, networks="none")
    try:
        assert harness.resource.find_created() == made.id
    finally:
        for server_ in (made, lookalike):
            connection.compute.delete_server(server_)
        for server_ in (made, lookalike):
            connection.compute.wait_for_delete(server_, wait=60)


def test_nova_server_metadata_beyond_the_clouds_limit_fails_validation(admin_cloud, service):
    maximum = admin_cloud.connect("admin").compute.get_limits().absolute.server_meta
    resources = {
        "vm": {
            "type": "OS::Nova::Server",
            "properties": {"flavor": "m1.tiny", "image": "stoker-tiny", "metadata": {f"k{i}": "v" for i in range(maximum + 1)}},
        }
    }
    with pytest.raises(Exception) as raised:
        service.create_stack(f"meta-{secrets.token_hex(3)}", from_data(template(resources)))
    assert (
        f"Instance metadata must not contain greater than {maximum} entries.  This is the maximum number "
        "allowed by your service provider"
    ) in str(raised.value)


def test_nova_server_replaced_keeps_its_given_port_and_fixed_address(admin_cloud, service):
    """A replacement takes over the port the old server was given and the address it
    named (the old one gives them up first: prepare_for_replace), then the old server is
    deleted."""
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    keys = [connection.compute.create_keypair(name=f"key-{suffix}-{n}") for n in (1, 2)]
    try:
        resources = {
            **network_resources(suffix, "10.35.0.0/24"),
            "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "net"}}},
            "vm": server(
                [{"port": {"get_resource": "port"}}, {"network": {"get_resource": "net"}, "fixed_ip": "10.35.0.77"}],
                key_name=keys[0].name,
            ),
        }
        stack = service.create_stack(f"replace-{suffix}", from_data(template(resources)))
        assert stack.state == "CREATE_COMPLETE", stack.status_reason
        before = ids_of(service, stack.name)
        resources["vm"]["properties"]["key_name"] = keys[1].name  # not updatable: replaced

        stack = service.update_stack(stack.name, from_data(template(resources)))

        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        after = ids_of(service, stack.name)
        assert after["vm"] != before["vm"] and after["port"] == before["port"]
        wait_gone(lambda server_id: None if server_gone(connection, server_id) else server_id, before["vm"])
        interfaces = list(connection.compute.server_interfaces(after["vm"]))
        assert before["port"] in {interface.port_id for interface in interfaces}
        addresses = {ip["ip_address"] for interface in interfaces for ip in interface.fixed_ips}
        assert "10.35.0.77" in addresses
        assert connection.compute.get_server(after["vm"]).key_name == keys[1].name
        assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"
    finally:
        for key in keys:
            connection.compute.delete_keypair(key, ignore_missing=True)
