"""OS::Nova::Server's networks against the test cloud: "allocate_network" (emulated
below compute 2.37, Nova's own from it) and a port it makes with extras, a floating IP
and security groups. Fixtures and template builders: test_nova_server.py."""

from __future__ import annotations

import base64
import email
import secrets
from pathlib import Path

import pytest
import yaml

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from tests.cloud.capping import capped_environ
from tests.cloud.test_nova_server import (  # noqa: F401 - admin_cloud and service are fixtures
    admin_cloud,
    ids_of,
    network_resources,
    outputs,
    server_gone,
    service,
    template,
)
from tests.support.stacks import from_data


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


def test_nova_server_allocate_network_auto_is_emulated_below_compute_2_37(openstack_cloud, service, own_project, tmp_path):  # noqa: F811
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


def test_nova_server_allocate_network_auto_goes_to_nova_natively(openstack_cloud, service, own_project, tmp_path):  # noqa: F811
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


def test_nova_server_allocate_network_none_below_compute_2_37_fails_with_the_seed_message(openstack_cloud, service):  # noqa: F811
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


def test_nova_server_floating_ip_port_extras_and_security_groups_on_a_port_it_makes(admin_cloud, service):  # noqa: F811
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
