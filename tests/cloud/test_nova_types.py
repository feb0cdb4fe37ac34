"""OS::Nova::KeyPair, OS::Nova::Flavor and OS::Nova::ServerGroup against the real Nova of
the test cloud: create, update in place where Heat updates, replacement, check (and check
failing when the object is deleted behind the stack's back), delete tolerating what is
already gone; openstacksdk is the witness and nothing may be left in the cloud."""

from __future__ import annotations

import secrets

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.resources.openstack.nova.client_plugin import NovaClientPlugin
from stoker.resources.openstack.nova.flavor import NovaFlavor
from stoker.resources.openstack.nova.server_group import ServerGroup
from stoker.sdk.testing import PluginHarness
from tests.support.stacks import from_data, states


@pytest.fixture
def admin_cloud(openstack_cloud):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    yield openstack_cloud
    set_cloud_source(None)


@pytest.fixture
def stacks(make_service, admin_cloud):
    """A service, and the stacks a test makes deleted at the end whatever happened."""
    service = make_service()
    names: list[str] = []
    yield service, names
    for name in names:
        if service.store.find_stack(name) is not None:
            service.delete_stack(name)


def physical_ids(service, stack_name: str) -> dict[str, str]:
    return {record.name: record.physical_resource_id for record in service.list_resources(stack_name)}


def outputs(service, stack_name: str) -> dict:
    return {output["output_key"]: output.get("output_value") for output in service.outputs(stack_name)}


def new_public_key() -> str:
    key = ed25519.Ed25519PrivateKey.generate().public_key()
    return key.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()


def keypair_template(suffix: str, generated_name: str | None = None) -> dict:
    return {
        "heat_template_version": "2021-04-16",
        "parameters": {"public_key": {"type": "string"}},
        "resources": {
            "generated": {
                "type": "OS::Nova::KeyPair",
                "properties": {"name": generated_name or f"generated-{suffix}", "save_private_key": True},
            },
            "imported": {
                "type": "OS::Nova::KeyPair",
                "properties": {
                    "name": f"imported-{suffix}",
                    "public_key": {"get_param": "public_key"},
                    "type": "ssh",
                },
            },
            "for_demo": {
                "type": "OS::Nova::KeyPair",
                "properties": {"name": f"demo-{suffix}", "public_key": {"get_param": "public_key"}, "user": "demo"},
            },
        },
        "outputs": {
            "private_key": {"value": {"get_attr": ["generated", "private_key"]}},
            "generated_public_key": {"value": {"get_attr": ["generated", "public_key"]}},
            "imported_public_key": {"value": {"get_attr": ["imported", "public_key"]}},
            "imported_private_key": {"value": {"get_attr": ["imported", "private_key"]}},
            "reference": {"value": {"get_resource": "imported"}},
        },
    }


def test_nova_keypair_generate_import_user_check_replace_delete(admin_cloud, stacks):
    service, names = stacks
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    demo_user = connection.identity.find_user("demo")
    public_key = new_public_key()
    stack_name = f"keys-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(keypair_template(suffix)), parameters={"public_key": public_key})

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    # The physical id is the key pair's name (Heat).
    assert physical_ids(service, stack_name) == {
        "generated": f"generated-{suffix}",
        "imported": f"imported-{suffix}",
        "for_demo": f"demo-{suffix}",
    }
    generated = connection.compute.get_keypair(f"generated-{suffix}")
    imported = connection.compute.get_keypair(f"imported-{suffix}")
    assert (imported.public_key.strip(), imported.type) == (public_key, "ssh")
    assert connection.compute.get_keypair(f"demo-{suffix}", user_id=demo_user.id).user_id == demo_user.id
    assert connection.compute.find_keypair(f"demo-{suffix}") is None  # not the admin's
    values = outputs(service, stack_name)
    assert values["private_key"].startswith("-----BEGIN")
    assert values["generated_public_key"] == generated.public_key
    assert values["imported_public_key"] == public_key
    assert values["imported_private_key"] == ""
    assert values["reference"] == f"imported-{suffix}"
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # Any change replaces a key pair (Heat updates none in place): a new name here.
    stack = service.update_stack(
        stack_name,
        from_data(keypair_template(suffix, generated_name=f"regenerated-{suffix}")),
        parameters={"public_key": public_key},
    )

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["generated"] == f"regenerated-{suffix}"
    assert connection.compute.find_keypair(f"generated-{suffix}") is None
    assert outputs(service, stack_name)["private_key"] != values["private_key"]

    # Deleted behind the stack's back: check fails; delete tolerates it.
    connection.compute.delete_keypair(f"imported-{suffix}")
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert states(service, stack_name)["imported"] == "CHECK_FAILED"

    deleted = service.delete_stack(stack_name)

    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    for name in (f"regenerated-{suffix}", f"imported-{suffix}"):
        assert connection.compute.find_keypair(name) is None
    assert connection.compute.find_keypair(f"demo-{suffix}", user_id=demo_user.id) is None


def test_nova_keypair_private_key_is_not_kept_unless_asked(admin_cloud, stacks):
    service, names = stacks
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    stack_name = f"nokeep-{suffix}"
    names.append(stack_name)
    template = {
        "heat_template_version": "2021-04-16",
        "resources": {"key": {"type": "OS::Nova::KeyPair", "properties": {"name": f"nokeep-{suffix}"}}},
        "outputs": {"private_key": {"value": {"get_attr": ["key", "private_key"]}}},
    }

    stack = service.create_stack(stack_name, from_data(template))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert outputs(service, stack_name)["private_key"] == ""
    assert [record.data for record in service.list_resources(stack_name)] in ([{}], [None])
    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert connection.compute.find_keypair(f"nokeep-{suffix}") is None


def flavor_template(**private: object) -> dict:
    values: dict = {"ram": 256, "vcpus": 1, "disk": 1, "is_public": False, "extra_specs": {"hw:cpu_policy": "shared"}}
    values.update(private)
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "private": {"type": "OS::Nova::Flavor", "properties": values},
        },
        "outputs": {
            "public": {"value": {"get_attr": ["private", "is_public"]}},
            "specs": {"value": {"get_attr": ["private", "extra_specs"]}},
        },
    }


def flavor_tenants(connection, flavor_id: str) -> set[str]:
    return {access["tenant_id"] for access in connection.compute.get_flavor_access(flavor_id)}


def test_nova_flavor_create_update_replace_check_delete(admin_cloud, stacks):
    service, names = stacks
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    demo = connection.identity.find_project("demo")
    admin_project = connection.identity.find_project("admin")
    stack_name = f"flavor-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(flavor_template()))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    flavor_id = physical_ids(service, stack_name)["private"]
    flavor = connection.compute.get_flavor(flavor_id)
    assert flavor.name.startswith(f"{stack_name}-private-")
    assert (flavor.ram, flavor.vcpus, flavor.disk, flavor.is_public) == (256, 1, 1, False)
    # Private with no tenants: the stack's own project gets access (Heat).
    assert flavor_tenants(connection, flavor_id) == {admin_project.id}
    assert outputs(service, stack_name) == {"public": False, "specs": {"hw:cpu_policy": "shared"}}
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: extra specs and tenants.
    updated = flavor_template(extra_specs={"hw:mem_page_size": "small"}, tenants=["demo"])
    stack = service.update_stack(stack_name, from_data(updated))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["private"] == flavor_id
    assert connection.compute.fetch_flavor_extra_specs(flavor_id).extra_specs == {"hw:mem_page_size": "small"}
    assert flavor_tenants(connection, flavor_id) == {demo.id}

    # Replacement: ram is not updated in place.
    stack = service.update_stack(stack_name, from_data(flavor_template(ram=512, tenants=["demo"])))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    replacement_id = physical_ids(service, stack_name)["private"]
    assert replacement_id != flavor_id
    assert connection.compute.find_flavor(flavor_id) is None
    assert connection.compute.get_flavor(replacement_id).ram == 512

    connection.compute.delete_flavor(replacement_id)
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert states(service, stack_name)["private"] == "CHECK_FAILED"

    deleted = service.delete_stack(stack_name)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert connection.compute.find_flavor(replacement_id) is None


def server_group_template(suffix: str, spread_policy: str = "anti-affinity") -> dict:
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "spread": {
                "type": "OS::Nova::ServerGroup",
                "properties": {"name": f"spread-{suffix}", "policies": [spread_policy], "rules": {"max_server_per_host": 2}}
                if spread_policy == "anti-affinity"
                else {"name": f"spread-{suffix}", "policies": [spread_policy]},
            },
            "default": {"type": "OS::Nova::ServerGroup"},
        },
    }


def test_nova_server_group_create_replace_check_delete(admin_cloud, stacks):
    service, names = stacks
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    stack_name = f"groups-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(server_group_template(suffix)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    spread = connection.compute.get_server_group(ids["spread"])
    assert (spread.name, spread.policy, spread.rules) == (f"spread-{suffix}", "anti-affinity", {"max_server_per_host": 2})
    default = connection.compute.get_server_group(ids["default"])
    assert default.name.startswith(f"{stack_name}-default-")
    assert default.policy == "anti-affinity"
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # Nothing updates in place: another policy (a soft one, microversion 2.15) replaces.
    stack = service.update_stack(stack_name, from_data(server_group_template(suffix, "soft-affinity")))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = physical_ids(service, stack_name)
    assert after["default"] == ids["default"]
    assert after["spread"] != ids["spread"]
    assert connection.compute.get_server_group(after["spread"]).policy == "soft-affinity"
    assert connection.compute.find_server_group(ids["spread"]) is None

    connection.compute.delete_server_group(after["default"])
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert states(service, stack_name)["default"] == "CHECK_FAILED"

    deleted = service.delete_stack(stack_name)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    for group_id in after.values():
        assert connection.compute.find_server_group(group_id) is None


class Context:
    """A request context for client plugins used outside a stack."""


def harness(plugin, properties: dict, stack_name: str) -> PluginHarness:
    context = Context()
    return PluginHarness(
        plugin, properties, name="made", stack_name=stack_name, clients={"nova": NovaClientPlugin(context)}
    )


def test_nova_find_created_finds_by_physical_name_only(admin_cloud):
    """What an interrupted create left (made, id never recorded) is found by the physical
    resource name, exactly; a name the template gave is never claimed."""
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    flavor = harness(NovaFlavor, {"ram": 128, "vcpus": 1}, f"orphans-{suffix}")
    group = harness(ServerGroup, {}, f"orphans-{suffix}")
    assert flavor.resource.find_created() is None
    assert group.resource.find_created() is None

    made_flavor = connection.compute.create_flavor(name=flavor.resource.physical_resource_name(), ram=128, vcpus=1, disk=0)
    made_group = connection.compute.create_server_group(name=group.resource.physical_resource_name(), policies=["affinity"])
    # Near misses (a longer name) are not claimed.
    decoy = connection.compute.create_server_group(name=group.resource.physical_resource_name() + "x", policies=["affinity"])
    try:
        assert flavor.resource.find_created() == made_flavor.id
        assert group.resource.find_created() == made_group.id
        named = harness(ServerGroup, {"name": group.resource.physical_resource_name()}, f"orphans-{suffix}")
        assert named.resource.find_created() is None
    finally:
        connection.compute.delete_flavor(made_flavor)
        connection.compute.delete_server_group(made_group)
        connection.compute.delete_server_group(decoy)
