"""OS::Nova::Server against the real Nova, Neutron, Glance and Cinder of the test cloud:
servers on a network by network, subnet, port and fixed IP, with a key pair; attributes;
updates in place (name, metadata, networks, image rebuild, flavor resize) and replacement;
suspend, resume, check; boot from volume; "allocate_network"; delete that tolerates a
server already gone. openstacksdk is the witness, and nothing is left in the cloud."""

from __future__ import annotations

import base64
import configparser
import email
import secrets
import time
from pathlib import Path

import pytest
import yaml

from stoker.resources.openstack.cloud import EnvironmentCloudSource, set_cloud_source
from stoker.resources.openstack.nova.server import Server
from stoker.sdk.testing import PluginHarness
from tests.cloud.capping import capped_environ
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
    return {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"srv-net-{suffix}"}},
        "subnet": {"type": "OS::Neutron::Subnet", "properties": {"network": {"get_resource": "net"}, "cidr": cidr}},
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


def test_nova_server_refuses_a_nova_feature_from_the_future_with_the_seed_message(admin_cloud, service):
    maximum = admin_cloud.connect("admin").compute.get_endpoint_data().max_microversion
    assert maximum >= (2, 37)
    resources = {
        "vm": {
            "type": "OS::Nova::Server",
            "properties": {"flavor": "m1.tiny", "image": "stoker-tiny", "personality": {"/etc/motd": "hello"}},
        }
    }
    with pytest.raises(Exception) as raised:
        service.create_stack(f"future-{secrets.token_hex(3)}", from_data(template(resources)))
    assert "Cannot use the personality parameter as nova no longer supports it. Use user_data instead." in str(raised.value)


@pytest.fixture
def own_project(openstack_cloud):
    """A project of its own and a member of it (name, password, project id): "auto" looks
    at every network a project sees, and other tests make networks in demo and admin."""
    admin = openstack_cloud.connect("admin")
    suffix = secrets.token_hex(3)
    password = secrets.token_hex(12)
    project = admin.identity.create_project(name=f"auto-{suffix}", domain_id="default")
    user = admin.identity.create_user(name=f"auto-{suffix}", password=password, domain_id="default", default_project_id=project.id)
    admin.identity.assign_project_role_to_user(project, user, admin.identity.find_role("member"))
    yield user.name, password, project.id
    for network in admin.network.networks(project_id=project.id):
        admin.network.delete_network(network, ignore_missing=True)
    admin.identity.delete_user(user, ignore_missing=True)
    admin.identity.delete_project(project, ignore_missing=True)


def _as_member_of(environ: dict, own: tuple, directory) -> dict:
    """The capped cloud of ``environ`` as the member of ``own`` (another clouds.yaml)."""
    configuration = yaml.safe_load(Path(environ["OS_CLIENT_CONFIG_FILE"]).read_text())
    entry = configuration["clouds"][environ["OS_CLOUD"]]
    entry["auth"].update(username=own[0], password=own[1], project_name=own[0])
    clouds_yaml = directory / "clouds.yaml"
    clouds_yaml.write_text(yaml.safe_dump(configuration))
    return {"OS_CLIENT_CONFIG_FILE": str(clouds_yaml), "OS_CLOUD": environ["OS_CLOUD"]}


def test_nova_server_allocate_network_auto_is_emulated_below_compute_2_37(openstack_cloud, service, own_project, tmp_path):
    """Seed 004's own example: behind a Nova capped at 2.36, "auto" is done client-side
    (the project's only network, Neutron's auto-allocated topology, or a network stoker
    makes and deletes with the server), with a warning event saying so; no request asks
    Nova for more than 2.36. The project is new: it has no network, and Neutron has no
    default external network to auto-allocate from, so stoker makes one."""
    suffix = secrets.token_hex(3)
    witness = openstack_cloud.connect("admin")
    resources = {
        "vm": {
            "type": "OS::Nova::Server",
            "properties": {"flavor": "m1.tiny", "image": "stoker-tiny", "user_data_format": "RAW", "networks": [{"allocate_network": "auto"}]},
        }
    }
    with capped_environ(openstack_cloud, "compute", "2.36") as environ:
        set_cloud_source(EnvironmentCloudSource(_as_member_of(environ, own_project, tmp_path)))
        try:
            stack = service.create_stack(f"emulated-{suffix}", from_data(template(resources)))
            assert stack.state == "CREATE_COMPLETE", stack.status_reason
            server_id = ids_of(service, stack.name)["vm"]
            warnings = [
                event.resource_status_reason
                for event in service.list_events(stack.name)
                if (event.resource_status_reason or "").startswith("Warning:")
            ]
            (network,) = witness.network.networks(project_id=own_project[2])
            booted_on = list(witness.compute.get_server(server_id).addresses)
            deleted = service.delete_stack(stack.name)
        finally:
            set_cloud_source(None)
        asked = [version for _, _, version in environ.proxy.requests if version not in (None, "latest")]

    assert len(warnings) == 1, warnings
    assert "supports microversions up to 2.36" in warnings[0]
    assert '"allocate_network: auto" needs 2.37: stoker emulated it client-side' in warnings[0]
    assert f"using network {network.id} (made by stoker for this server)" in warnings[0]
    assert network.name.startswith(f"emulated-{suffix}-vm-") and booted_on == [network.name]
    assert asked and all(tuple(map(int, version.split("."))) <= (2, 36) for version in asked), asked
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert server_gone(witness, server_id)
    assert witness.network.find_network(network.id) is None


def test_nova_server_allocate_network_auto_goes_to_nova_natively(openstack_cloud, service, own_project, tmp_path):
    """The real Nova offers 2.37: "auto" is Nova's to resolve, nothing is emulated. The
    project is new (no network) and Neutron has no default external network to
    auto-allocate from, so Nova refuses with its own reason."""
    suffix = secrets.token_hex(3)
    witness = openstack_cloud.connect("admin")
    resources = {
        "vm": {
            "type": "OS::Nova::Server",
            "properties": {"flavor": "m1.tiny", "image": "stoker-tiny", "networks": [{"allocate_network": "auto"}]},
        }
    }
    set_cloud_source(EnvironmentCloudSource(_as_member_of(openstack_cloud.cloud_environ("admin"), own_project, tmp_path)))
    try:
        stack = service.create_stack(f"auto-{suffix}", from_data(template(resources)))
        server_id = ids_of(service, stack.name).get("vm")
        events = [event.resource_status_reason or "" for event in service.list_events(stack.name)]
        deleted = service.delete_stack(stack.name)
    finally:
        set_cloud_source(None)

    assert not any(reason.startswith("Warning:") for reason in events)
    if stack.state == "CREATE_COMPLETE":  # a cloud that can auto-allocate
        assert server_id
    else:
        assert f"Unable to automatically allocate a network for project {own_project[2]}" in stack.status_reason, stack.status_reason
    assert deleted.state == "DELETE_COMPLETE"
    if server_id:
        assert server_gone(witness, server_id)


def test_nova_server_allocate_network_none_below_compute_2_37_fails_with_the_seed_message(openstack_cloud, service):
    resources = {
        "vm": {
            "type": "OS::Nova::Server",
            "properties": {"flavor": "m1.tiny", "image": "stoker-tiny", "networks": [{"allocate_network": "none"}]},
        }
    }
    with capped_environ(openstack_cloud, "compute", "2.36") as environ:
        set_cloud_source(EnvironmentCloudSource(environ))
        try:
            with pytest.raises(Exception) as raised:
                service.create_stack(f"none-{secrets.token_hex(3)}", from_data(template(resources)))
        finally:
            set_cloud_source(None)
    assert (
        "This cloud supports a maximum microversion of 2.36 for service compute and this feature only "
        "exists on clouds with microversion 2.37. Please contact your cloud provider for information "
        "about when this feature might be available"
    ) in str(raised.value)


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


def test_nova_server_floating_ip_port_extras_and_security_groups_on_a_port_it_makes(admin_cloud, service):
    """A subnet entry with port_extra_properties and a floating IP: the server makes the
    port (with the server's security groups and the extras), associates the floating IP
    with it, shows it in ``addresses``, updates a port extra in place, and its user data
    (HEAT_CFNTOOLS, the default) reaches Nova as the cloud-init bundle."""
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    group = connection.network.create_security_group(name=f"web-{suffix}")
    try:
        resources = {
            "public": {"type": "OS::Neutron::Net", "properties": {"name": f"pub-{suffix}", "value_specs": {"router:external": True}}},
            "public_subnet": {
                "type": "OS::Neutron::Subnet",
                "properties": {"network": {"get_resource": "public"}, "cidr": "172.25.4.0/24", "enable_dhcp": False},
            },
            **network_resources(suffix, "10.37.0.0/24"),
            "router": {
                "type": "OS::Neutron::Router",
                "depends_on": ["public_subnet"],
                "properties": {"external_gateway_info": {"network": {"get_resource": "public"}}},
            },
            "router_interface": {
                "type": "OS::Neutron::RouterInterface",
                "properties": {"router": {"get_resource": "router"}, "subnet": {"get_resource": "subnet"}},
            },
            "fip": {
                "type": "OS::Neutron::FloatingIP",
                "depends_on": ["router_interface"],
                "properties": {"floating_network": {"get_resource": "public"}},
            },
            "vm": {
                "type": "OS::Nova::Server",
                "depends_on": ["router_interface"],
                "properties": {
                    "flavor": "m1.tiny",
                    "image": "stoker-tiny",
                    "security_groups": [group.name],
                    "user_data": "#!/bin/sh\necho hello\n",
                    "networks": [
                        {
                            "subnet": {"get_resource": "subnet"},
                            "floating_ip": {"get_resource": "fip"},
                            "port_extra_properties": {"value_specs": {"description": f"made-{suffix}"}},
                        }
                    ],
                },
            },
        }
        values = {"addresses": {"get_attr": ["vm", "addresses", f"srv-net-{suffix}"]}}
        stack = service.create_stack(f"fip-{suffix}", from_data(template(resources, values)))
        assert stack.state == "CREATE_COMPLETE", stack.status_reason
        ids = ids_of(service, stack.name)
        (port,) = connection.network.ports(device_id=ids["vm"])
        assert (port.name, port.description, port.security_group_ids) == ("vm-port-0", f"made-{suffix}", [group.id])
        floating = connection.network.get_ip(ids["fip"])
        assert floating.port_id == port.id
        addresses = outputs(service, stack.name)["addresses"]
        assert [(entry["OS-EXT-IPS:type"], entry["addr"]) for entry in addresses] == [
            ("floating", floating.floating_ip_address),
            ("fixed", port.fixed_ips[0]["ip_address"]),
        ]
        assert addresses[1]["port"] == port.id and addresses[1]["network"]["id"] == ids["net"]
        user_data = base64.b64decode(connection.compute.get_server(ids["vm"]).user_data).decode()
        parts = {part.get_filename(): part.get_payload(decode=True).decode() for part in email.message_from_string(user_data).walk() if part.get_filename()}
        assert parts["cfn-userdata"] == "#!/bin/sh\necho hello\n"

        # A port extra Neutron updates in place: same port, same server.
        resources["vm"]["properties"]["networks"][0]["port_extra_properties"]["admin_state_up"] = False
        stack = service.update_stack(stack.name, from_data(template(resources, values)))
        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        assert ids_of(service, stack.name)["vm"] == ids["vm"]
        assert connection.network.get_port(port.id).is_admin_state_up is False

        assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"
        assert connection.network.find_port(port.id) is None
        assert connection.network.find_ip(ids["fip"]) is None
    finally:
        for stack in service.list_stacks():
            service.delete_stack(stack.name)
        connection.network.delete_security_group(group, ignore_missing=True)


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


def test_nova_server_user_data_from_a_software_config(admin_cloud, service):
    """RAW user_data that is a stored config's id (get_resource of an OS::Heat::CloudConfig
    or MultipartMime) boots the server with that config, as in Heat."""
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    resources = {
        **network_resources(suffix, "10.38.0.0/24"),
        "boot": {"type": "OS::Heat::CloudConfig", "properties": {"cloud_config": {"runcmd": ["echo booted"]}}},
        "parts": {"type": "OS::Heat::MultipartMime", "properties": {"parts": [{"config": {"get_resource": "boot"}}]}},
        "vm": server([{"network": {"get_resource": "net"}}], user_data={"get_resource": "boot"}),
        "vm2": server([{"network": {"get_resource": "net"}}], user_data={"get_resource": "parts"}, user_data_format="SOFTWARE_CONFIG"),
    }
    stack = service.create_stack(f"ud-{suffix}", from_data(template(resources)))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = ids_of(service, stack.name)
    assert base64.b64decode(connection.compute.get_server(ids["vm"]).user_data).decode() == "#cloud-config\nruncmd:\n- echo booted\n"
    message = email.message_from_string(base64.b64decode(connection.compute.get_server(ids["vm2"]).user_data).decode())
    payloads = [part.get_payload(decode=True).decode() for part in message.walk() if not part.is_multipart()]
    assert "#cloud-config\nruncmd:\n- echo booted\n" in payloads
    assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"


def test_nova_server_with_software_config_gets_its_deployments(admin_cloud, service):
    """user_data_format SOFTWARE_CONFIG: the server boots with its agent's configuration
    (the metadata in cfn-init-data names the URL to poll), the deployments that target
    it are served there, and its signal completes them, as with Heat's POLL_TEMP_URL."""
    import json
    import threading
    from urllib.parse import parse_qs, urlsplit

    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    resources = {
        **network_resources(suffix, "10.39.0.0/24"),
        "config": {"type": "OS::Heat::SoftwareConfig", "properties": {"group": "script", "config": "#!/bin/sh\necho hi", "outputs": [{"name": "result"}]}},
        "vm": server([{"network": {"get_resource": "net"}}], user_data_format="SOFTWARE_CONFIG"),
        "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {"config": {"get_resource": "config"}, "server": {"get_resource": "vm"}}},
    }
    result: dict = {}
    thread = threading.Thread(target=lambda: result.setdefault("stack", service.create_stack(f"sc-{suffix}", from_data(template(resources)))))
    thread.start()

    def capability(url: str) -> tuple[str, str]:
        parts = urlsplit(url)
        return parts.path.rsplit("/", 1)[1], parse_qs(parts.query)["secret"][0]

    deadline = time.monotonic() + 300
    deployments: list = []
    metadata_url = None
    while not deployments:
        assert time.monotonic() < deadline and thread.is_alive(), result
        time.sleep(0.5)
        try:
            ids = ids_of(service, f"sc-{suffix}")
            metadata = service.resource_metadata(service.get_stack(f"sc-{suffix}"), "vm")
        except Exception:  # noqa: BLE001 - not created yet
            continue
        if "vm" not in ids or "request" not in metadata.get("os-collect-config", {}):
            continue
        metadata_url = metadata["os-collect-config"]["request"]["metadata_url"]
        deployments = service.metadata_by_capability(*capability(metadata_url))["deployments"]
    # The server booted knowing where to poll.
    message = email.message_from_string(base64.b64decode(connection.compute.get_server(ids["vm"]).user_data).decode())
    parts = {part.get_filename(): part.get_payload(decode=True).decode() for part in message.walk() if not part.is_multipart()}
    booted_with = json.loads(parts["cfn-init-data"])
    assert booted_with["os-collect-config"]["request"]["metadata_url"] == metadata_url
    assert booted_with["os-collect-config"]["collectors"] == ["ec2", "request", "local"]
    [deployed] = deployments
    values = {entry["name"]: entry.get("value") for entry in deployed["inputs"]}
    assert values["deploy_server_id"] == ids["vm"]
    service.signal_by_capability(*capability(values["deploy_signal_id"]), {"deploy_status_code": 0, "result": "ok"})
    thread.join(120)
    stack = result["stack"]
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"
    with pytest.raises(Exception, match="not valid"):
        service.metadata_by_capability(*capability(metadata_url))
