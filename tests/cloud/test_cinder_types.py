"""OS::Cinder::Volume, OS::Cinder::VolumeAttachment and OS::Cinder::VolumeType against the
real Cinder (and Nova, for attachments) of the test cloud: create, update in place,
extend, retype, replacement, check (and check failing when an object is deleted behind
the stack's back), delete tolerating what is already gone; openstacksdk is the witness
and nothing may be left in the cloud."""

from __future__ import annotations

import secrets
import time

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.resources.openstack.cinder.client_plugin import CinderClientPlugin
from stoker.resources.openstack.cinder.volume import CinderVolume
from stoker.sdk.testing import PluginHarness
from tests.cloud.fixture import server_outside_stoker
from tests.support.stacks import from_data, states


@pytest.fixture
def admin_cloud(openstack_cloud):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    yield openstack_cloud
    set_cloud_source(None)


def physical_ids(service, stack_name: str) -> dict[str, str]:
    return {record.name: record.physical_resource_id for record in service.list_resources(stack_name)}


def outputs(service, stack_name: str) -> dict:
    return {output["output_key"]: output.get("output_value") for output in service.outputs(stack_name)}


def volume_template(size: int = 1, **data_volume: object) -> dict:
    data = {"size": size, "metadata": {"purpose": "data"}}
    data.update(data_volume)
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "data": {"type": "OS::Cinder::Volume", "properties": data},
        },
        "outputs": {
            "size": {"value": {"get_attr": ["data", "size"]}},
            "name": {"value": {"get_attr": ["data", "display_name"]}},
            "metadata": {"value": {"get_attr": ["data", "metadata_values"]}},
            "status": {"value": {"get_attr": ["data", "status"]}},
            "show_id": {"value": {"get_attr": ["data", "show", "id"]}},
        },
    }


def wait_gone(find, identifier: str, timeout_s: float = 60) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if find(identifier) is None:
            return True
        time.sleep(1)
    return False


@pytest.fixture
def stacks(make_service, admin_cloud):
    """A service, and the stacks a test makes deleted at the end whatever happened."""
    service = make_service()
    names: list[str] = []
    yield service, names
    for name in names:
        if service.store.find_stack(name) is not None:
            service.delete_stack(name)


def test_cinder_volume_create_update_extend_replace_check_delete(admin_cloud, stacks):
    service, names = stacks
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    stack_name = f"volume-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(volume_template()))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    volume_id = physical_ids(service, stack_name)["data"]
    volume = connection.block_storage.get_volume(volume_id)
    # No name in the template: the physical resource name, and the description too (Heat).
    assert volume.name.startswith(f"{stack_name}-data-")
    assert volume.description == volume.name
    assert (volume.size, volume.status, volume.metadata) == (1, "available", {"purpose": "data"})
    assert outputs(service, stack_name) == {
        "size": "1",
        "name": volume.name,
        "metadata": {"purpose": "data"},
        "status": "available",
        "show_id": volume_id,
    }
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: name, description, metadata, extend 1 -> 2, read-only flag.
    renamed = volume_template(
        size=2, name=f"renamed-{suffix}", description="grown", metadata={"purpose": "logs"}, read_only=True
    )
    stack = service.update_stack(stack_name, from_data(renamed))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["data"] == volume_id
    volume = connection.block_storage.get_volume(volume_id)
    assert (volume.name, volume.description, volume.size, volume.status) == (f"renamed-{suffix}", "grown", 2, "available")
    assert volume.metadata.get("purpose") == "logs"
    assert volume.metadata.get("readonly") in ("True", "true", True)
    assert outputs(service, stack_name)["size"] == "2"

    # Shrinking is refused with Heat's message, and leaves the volume as it was.
    shrunk = service.update_stack(stack_name, from_data(volume_template(size=1, name=f"renamed-{suffix}")))
    assert shrunk.state == "UPDATE_FAILED"
    assert "Shrinking volume is not supported." in shrunk.status_reason
    assert connection.block_storage.get_volume(volume_id).size == 2

    # Replacement: a property Heat does not update in place. (Not the image: this cloud's
    # fake volume driver cannot copy an image, it has no sudo.)
    zoned = volume_template(size=2, name=f"zoned-{suffix}", availability_zone="nova")
    stack = service.update_stack(stack_name, from_data(zoned))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    replacement_id = physical_ids(service, stack_name)["data"]
    assert replacement_id != volume_id
    assert wait_gone(connection.block_storage.find_volume, volume_id)
    replacement = connection.block_storage.get_volume(replacement_id)
    assert (replacement.name, replacement.size, replacement.availability_zone) == (f"zoned-{suffix}", 2, "nova")

    # Check reads the live volume: deleted behind the stack's back, the check fails...
    connection.block_storage.delete_volume(replacement_id)
    assert wait_gone(connection.block_storage.find_volume, replacement_id)
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert states(service, stack_name)["data"] == "CHECK_FAILED"

    # ...and deleting the stack tolerates the volume already gone.
    deleted = service.delete_stack(stack_name)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert connection.block_storage.find_volume(volume_id) is None
    assert connection.block_storage.find_volume(replacement_id) is None


def test_cinder_volume_from_volume_and_retype(admin_cloud, make_service):
    """A volume cloned from another (no size: the source's), and one retyped in place."""
    suffix = secrets.token_hex(3)
    service = make_service()
    connection = admin_cloud.connect("admin")
    other_type = connection.block_storage.create_type(name=f"other-{suffix}", extra_specs={"volume_backend_name": "fake"})
    stack_name = f"clone-{suffix}"
    try:
        template = {
            "heat_template_version": "2021-04-16",
            "resources": {
                "source": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
                "clone": {
                    "type": "OS::Cinder::Volume",
                    "properties": {"source_volid": {"get_resource": "source"}},
                },
            },
        }
        stack = service.create_stack(stack_name, from_data(template))
        assert stack.state == "CREATE_COMPLETE", stack.status_reason
        ids = physical_ids(service, stack_name)
        clone = connection.block_storage.get_volume(ids["clone"])
        assert (clone.source_volume_id, clone.size) == (ids["source"], 1)

        template["resources"]["source"]["properties"]["volume_type"] = other_type.name
        stack = service.update_stack(stack_name, from_data(template))

        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        assert physical_ids(service, stack_name) == ids
        assert connection.block_storage.get_volume(ids["source"]).volume_type == other_type.name

        assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
        for volume_id in ids.values():
            assert connection.block_storage.find_volume(volume_id) is None
    finally:
        if service.store.find_stack(stack_name) is not None:
            service.delete_stack(stack_name)
        connection.block_storage.delete_type(other_type)


@pytest.fixture
def server(admin_cloud):
    """A server booted with openstacksdk on a network of its own (not through stoker)."""
    with server_outside_stoker(admin_cloud, "attach", "10.31.0.0/24") as booted:
        yield booted


def attachment_template(mountpoint: str | None = None, volume: str = "first", **first: object) -> dict:
    attachment: dict = {"instance_uuid": {"get_param": "server"}, "volume_id": {"get_resource": volume}}
    if mountpoint:
        attachment["mountpoint"] = mountpoint
    return {
        "heat_template_version": "2021-04-16",
        "parameters": {"server": {"type": "string"}},
        "resources": {
            "first": {"type": "OS::Cinder::Volume", "properties": {"size": 1, **first}},
            "second": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
            "attachment": {"type": "OS::Cinder::VolumeAttachment", "properties": attachment},
        },
    }


def attached_volumes(connection, server_id: str) -> set[str]:
    return {attachment.volume_id for attachment in connection.compute.volume_attachments(server_id)}


def test_cinder_volume_attachment_attach_reattach_check_detach(admin_cloud, stacks, server):
    service, names = stacks
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    stack_name = f"attach-{suffix}"
    names.append(stack_name)
    parameters = {"server": server.id}

    stack = service.create_stack(stack_name, from_data(attachment_template()), parameters=parameters)

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    assert attached_volumes(connection, server.id) == {ids["first"]}
    first = connection.block_storage.get_volume(ids["first"])
    assert first.status == "in-use"
    assert [attachment["server_id"] for attachment in first.attachments] == [server.id]
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"
    device = first.attachments[0]["device"]

    # The attached volume in place: extended while in-use (Cinder 3.42), and read-only,
    # which Cinder sets on an available volume only: detached, then attached back (Heat).
    stack = service.update_stack(stack_name, from_data(attachment_template(size=2, read_only=True)), parameters=parameters)

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name) == ids
    first = connection.block_storage.get_volume(ids["first"])
    assert (first.size, first.status, first.metadata.get("readonly")) == (2, "in-use", "True")
    assert [(item["server_id"], item["device"]) for item in first.attachments] == [(server.id, device)]
    assert attached_volumes(connection, server.id) == {ids["first"]}

    # Update re-attaches (Heat's rule): another volume, on another device.
    stack = service.update_stack(
        stack_name, from_data(attachment_template("/dev/vdc", volume="second", size=2, read_only=True)), parameters=parameters
    )

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert attached_volumes(connection, server.id) == {ids["second"]}
    assert connection.block_storage.get_volume(ids["first"]).status == "available"
    assert physical_ids(service, stack_name)["attachment"] == ids["second"]

    # Detached behind the stack's back: check fails; delete tolerates it.
    connection.compute.delete_volume_attachment(server.id, ids["second"])
    deadline = time.monotonic() + 60
    while connection.block_storage.get_volume(ids["second"]).status != "available" and time.monotonic() < deadline:
        time.sleep(1)
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert f"is not attached to server {server.id}" in checked.status_reason
    assert states(service, stack_name)["attachment"] == "CHECK_FAILED"

    deleted = service.delete_stack(stack_name)

    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert attached_volumes(connection, server.id) == set()
    for name in ("first", "second"):
        assert connection.block_storage.find_volume(ids[name]) is None


def test_cinder_volume_attachment_delete_detaches_and_waits(admin_cloud, stacks, server):
    """Deleting the stack detaches first (the attachment waits until the volume is
    'available'), so the volume can be deleted after it."""
    service, names = stacks
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    stack_name = f"detach-{suffix}"
    names.append(stack_name)
    stack = service.create_stack(stack_name, from_data(attachment_template("/dev/vdb")), parameters={"server": server.id})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)

    deleted = service.delete_stack(stack_name)

    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert attached_volumes(connection, server.id) == set()
    assert connection.block_storage.find_volume(ids["first"]) is None


def volume_type_template(suffix: str, **changes: object) -> dict:
    values: dict = {
        "name": f"gold-{suffix}",
        "description": "fast disks",
        "metadata": {"volume_backend_name": "fake", "tier": "gold"},
        "is_public": False,
        "projects": ["demo"],
    }
    values.update(changes)
    return {
        "heat_template_version": "2021-04-16",
        "resources": {"gold": {"type": "OS::Cinder::VolumeType", "properties": values}},
    }


def type_projects(connection, type_id: str) -> set[str]:
    return {access["project_id"] for access in connection.block_storage.get_type_access(type_id)}


def test_cinder_volume_type_create_update_check_delete(admin_cloud, stacks):
    service, names = stacks
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    demo = connection.identity.find_project("demo")
    admin = connection.identity.find_project("admin")
    stack_name = f"vtype-{suffix}"
    names.append(stack_name)

    stack = service.create_stack(stack_name, from_data(volume_type_template(suffix)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    type_id = physical_ids(service, stack_name)["gold"]
    found = connection.block_storage.get_type(type_id)
    assert (found.name, found.description, found.is_public) == (f"gold-{suffix}", "fast disks", False)
    assert found.extra_specs == {"volume_backend_name": "fake", "tier": "gold"}
    assert type_projects(connection, type_id) == {demo.id}
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # All in place: name, description, extra specs (one removed), projects.
    changed = volume_type_template(
        suffix, name=f"platinum-{suffix}", description="faster", metadata={"volume_backend_name": "fake"}, projects=["admin"]
    )
    stack = service.update_stack(stack_name, from_data(changed))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name)["gold"] == type_id
    found = connection.block_storage.get_type(type_id)
    assert (found.name, found.description, found.extra_specs) == (f"platinum-{suffix}", "faster", {"volume_backend_name": "fake"})
    assert type_projects(connection, type_id) == {admin.id}

    # Public: no projects allowed with it (Heat's rule), then visibility in place.
    refused = volume_type_template(suffix, is_public=True)
    with pytest.raises(Exception, match='Can not specify property "projects" if the volume type is public.'):
        service.update_stack(stack_name, from_data(refused))
    stack = service.update_stack(stack_name, from_data(volume_type_template(suffix, is_public=True, projects=[])))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert connection.block_storage.get_type(type_id).is_public is True

    connection.block_storage.delete_type(type_id)
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert states(service, stack_name)["gold"] == "CHECK_FAILED"

    deleted = service.delete_stack(stack_name)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert connection.block_storage.find_type(type_id) is None


class Context:
    """A request context for client plugins used outside a stack."""


def test_cinder_volume_find_created_finds_by_physical_name_only(admin_cloud):
    """A volume an interrupted create left (made, id never recorded) is found by the
    physical resource name, exactly; a name the template gave is never claimed."""
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    clients = {"cinder": CinderClientPlugin(Context())}
    harness = PluginHarness(CinderVolume, {"size": 1}, name="made", stack_name=f"orphans-{suffix}", clients=clients)
    physical = harness.resource.physical_resource_name()
    assert harness.resource.find_created() is None

    made = connection.block_storage.create_volume(name=physical, size=1)
    decoy = connection.block_storage.create_volume(name=physical + "x", size=1)
    try:
        assert harness.resource.find_created() == made.id
        named = PluginHarness(CinderVolume, {"size": 1, "name": physical}, name="made", stack_name=f"orphans-{suffix}", clients=clients)
        assert named.resource.find_created() is None
    finally:
        for volume in (made, decoy):
            connection.block_storage.wait_for_status(volume, "available", failures=["error"], wait=60)
            connection.block_storage.delete_volume(volume)
