"""Stack snapshots where Heat has them, against the real services of the test cloud: a
server's snapshot is a Nova image snapshot (``snapshot_image_id``), restored by rebuilding
the server from that image; a volume's is a Cinder backup (``backup_id``), restored onto
the volume from the backup. Deleting a snapshot deletes its image or backup, and so does
deleting the stack. openstacksdk is the witness, and nothing is left in the cloud.

The cloud's Nova and Cinder run our drivers (``drivers/``): Nova's fake virt driver
uploads no image for a snapshot and Cinder's fake volume driver keeps no bytes. Ours
upload a 64 KiB image and keep each volume as a sparse file under the cloud's state
directory, which is how a test writes into a volume and sees the restore bring the
snapshot's bytes back.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from tests.cloud import test_nova_server as nova
from tests.cloud.fixture import server_outside_stoker
from tests.cloud.test_nova_server import ids_of, network_resources, server, server_gone, template
from tests.support.stacks import from_data
from tests.support.waiting import wait_until

# The fixtures of the server tests: the admin's cloud, and a service whose stacks are
# deleted at the end whatever the test did.
admin_cloud = nova.admin_cloud
service = nova.service

# Bytes of the image the test cloud's Nova uploads for a server snapshot.
SNAPSHOT_IMAGE_BYTES = 64 * 1024


def image_gone(connection, image_id: str) -> bool:
    found = connection.image.find_image(image_id)
    return found is None or found.status == "deleted"


def volume_file(cloud, volume_id: str) -> Path:
    """Where the test cloud's volume driver keeps the volume's bytes."""
    return cloud.data / "cinder" / "volumes" / f"volume-{volume_id}"


def write_at(path: Path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as device:
        device.seek(offset)
        device.write(data)


def read_at(path: Path, offset: int, length: int) -> bytes:
    with open(path, "rb") as device:
        device.seek(offset)
        return device.read(length)


def test_snapshot_of_a_server_is_an_image_that_restore_rebuilds_it_from(admin_cloud, service):
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    resources = {
        **network_resources(suffix, "10.41.0.0/24"),
        "vm": server([{"network": {"get_resource": "net"}}], metadata={"phase": "snapshotted"}),
    }
    stack = service.create_stack(f"snap-srv-{suffix}", from_data(template(resources)))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = ids_of(service, stack.name)
    server_id = ids["vm"]
    images: list[str] = []
    try:
        snapshot = service.create_snapshot(stack.name, f"first-{suffix}")

        assert snapshot.status == "COMPLETE", snapshot.status_reason
        assert service.get_stack(stack.name).state == "SNAPSHOT_COMPLETE"
        saved = snapshot.data["resources"]["vm"]
        assert saved["resource_id"] == server_id
        image_id = saved["resource_data"]["snapshot_image_id"]
        images.append(image_id)
        image = connection.image.get_image(image_id)
        live = connection.compute.get_server(server_id)
        # Nova's image of this server, named as Heat names it, uploaded and done with.
        assert (image.status, image.instance_uuid, image.name) == ("active", server_id, live.name)
        assert image.size == SNAPSHOT_IMAGE_BYTES
        assert (live.status, live.task_state) == ("ACTIVE", None)

        # The stack moves on: the server changes in place.
        resources["vm"]["properties"]["metadata"] = {"phase": "changed"}
        stack = service.update_stack(stack.name, from_data(template(resources)))
        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        assert connection.compute.get_server(server_id).metadata == {"phase": "changed"}

        restored = service.restore_snapshot(stack.name, snapshot.id)

        # Restored by a rebuild from the snapshot's image: the same server, its metadata
        # as it was when the snapshot was taken.
        assert restored.state == "RESTORE_COMPLETE", restored.status_reason
        assert ids_of(service, stack.name) == ids
        live = connection.compute.get_server(server_id)
        assert (live.image.id, live.status, live.metadata) == (image_id, "ACTIVE", {"phase": "snapshotted"})
        assert [record.name for record in service.list_snapshots(stack.name)] == [f"first-{suffix}"]

        # A second snapshot of the restored stack: another image.
        second = service.create_snapshot(stack.name, f"second-{suffix}")
        assert second.status == "COMPLETE", second.status_reason
        second_image = second.data["resources"]["vm"]["resource_data"]["snapshot_image_id"]
        images.append(second_image)
        assert second_image != image_id
        assert connection.image.get_image(second_image).status == "active"

        # Deleting a snapshot deletes its image, and only its image.
        service.delete_snapshot(stack.name, snapshot.id)

        assert image_gone(connection, image_id)
        assert [record.name for record in service.list_snapshots(stack.name)] == [f"second-{suffix}"]
        assert connection.image.get_image(second_image).status == "active"

        # Deleting the stack deletes the snapshots it still has, with their images.
        deleted = service.delete_stack(stack.name)

        assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
        assert image_gone(connection, second_image)
        assert server_gone(connection, server_id)
        assert connection.network.find_network(ids["net"]) is None
    finally:
        for leftover in images:
            connection.image.delete_image(leftover, ignore_missing=True)


def volume_stack(size: int = 1, **properties: object) -> dict:
    return {
        "heat_template_version": "2021-04-16",
        "resources": {"data": {"type": "OS::Cinder::Volume", "properties": {"size": size, **properties}}},
    }


def test_snapshot_of_a_volume_is_a_backup_that_restore_brings_back(admin_cloud, service):
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    stack_name = f"snap-vol-{suffix}"
    stack = service.create_stack(stack_name, from_data(volume_stack(metadata={"phase": "snapshotted"})))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    volume_id = ids_of(service, stack_name)["data"]
    device = volume_file(admin_cloud, volume_id)
    # Bytes at the start and half-way: a backup that kept only its first chunk would lose
    # the second.
    middle = 512 * 1024 * 1024
    write_at(device, 0, b"snapshotted start")
    write_at(device, middle, b"snapshotted middle")
    backups: list[str] = []
    try:
        snapshot = service.create_snapshot(stack_name, f"first-{suffix}")

        assert snapshot.status == "COMPLETE", snapshot.status_reason
        backup_id = snapshot.data["resources"]["data"]["resource_data"]["backup_id"]
        backups.append(backup_id)
        backup = connection.block_storage.get_backup(backup_id)
        assert (backup.status, backup.volume_id, backup.size) == ("available", volume_id, 1)
        assert connection.block_storage.get_volume(volume_id).status == "available"

        # The stack and the volume move on: new metadata, new bytes.
        stack = service.update_stack(stack_name, from_data(volume_stack(metadata={"phase": "changed"})))
        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        write_at(device, 0, b"overwritten start")
        write_at(device, middle, b"overwritten middle")

        restored = service.restore_snapshot(stack_name, snapshot.id)

        # Restored in place from the backup (as Heat does: the backup onto the volume).
        assert restored.state == "RESTORE_COMPLETE", restored.status_reason
        assert ids_of(service, stack_name)["data"] == volume_id
        volume = connection.block_storage.get_volume(volume_id)
        assert (volume.status, volume.size, volume.metadata) == ("available", 1, {"phase": "snapshotted"})
        assert read_at(device, 0, 17) == b"snapshotted start"
        assert read_at(device, middle, 18) == b"snapshotted middle"

        second = service.create_snapshot(stack_name, f"second-{suffix}")
        assert second.status == "COMPLETE", second.status_reason
        second_backup = second.data["resources"]["data"]["resource_data"]["backup_id"]
        backups.append(second_backup)
        assert second_backup != backup_id

        # Deleting a snapshot deletes its backup, and only its backup.
        service.delete_snapshot(stack_name, snapshot.id)

        assert connection.block_storage.find_backup(backup_id) is None
        assert connection.block_storage.get_backup(second_backup).status == "available"

        # Deleting the stack deletes the snapshots it still has, with their backups.
        deleted = service.delete_stack(stack_name)

        assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
        assert connection.block_storage.find_backup(second_backup) is None
        wait_until(lambda: connection.block_storage.find_volume(volume_id) is None, f"volume {volume_id} to go")
    finally:
        for leftover in backups:
            found = connection.block_storage.find_backup(leftover)
            if found is not None and found.status in ("available", "error"):
                connection.block_storage.delete_backup(found, ignore_missing=True, force=found.status == "error")


@pytest.fixture
def outside_server(admin_cloud):
    """A server booted with openstacksdk on a network of its own (not through stoker)."""
    with server_outside_stoker(admin_cloud, "snap-outside", "10.43.0.0/24") as booted:
        yield booted


def test_snapshot_of_an_attached_volume_restores_it_detached_and_attaches_it_back(admin_cloud, service, outside_server):
    """A volume in use is backed up as Heat asks (force); restoring detaches it from its
    server, restores the backup onto it and attaches it back where it was. The server is
    not the stack's (the next test has both in the stack)."""
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    definition = {
        "heat_template_version": "2021-04-16",
        "parameters": {"server": {"type": "string"}},
        "resources": {
            "data": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
            "attachment": {
                "type": "OS::Cinder::VolumeAttachment",
                "properties": {"instance_uuid": {"get_param": "server"}, "volume_id": {"get_resource": "data"}},
            },
        },
    }
    stack = service.create_stack(f"snap-att-{suffix}", from_data(definition), parameters={"server": outside_server.id})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = ids_of(service, stack.name)
    volume_id = ids["data"]
    (attached,) = connection.compute.volume_attachments(outside_server.id)
    assert attached.volume_id == volume_id
    device = volume_file(admin_cloud, volume_id)
    write_at(device, 0, b"snapshotted")
    backup_id = None
    try:
        snapshot = service.create_snapshot(stack.name, f"attached-{suffix}")

        assert snapshot.status == "COMPLETE", snapshot.status_reason
        backup_id = snapshot.data["resources"]["data"]["resource_data"]["backup_id"]
        assert connection.block_storage.get_backup(backup_id).status == "available"
        assert connection.block_storage.get_volume(volume_id).status == "in-use"  # backed up in use
        write_at(device, 0, b"overwritten")

        restored = service.restore_snapshot(stack.name, snapshot.id)

        assert restored.state == "RESTORE_COMPLETE", restored.status_reason
        assert ids_of(service, stack.name)["data"] == volume_id
        volume = connection.block_storage.get_volume(volume_id)
        assert volume.status == "in-use"
        assert [attachment["server_id"] for attachment in volume.attachments] == [outside_server.id]
        (reattached,) = connection.compute.volume_attachments(outside_server.id)
        assert (reattached.volume_id, reattached.device) == (volume_id, attached.device)
        assert read_at(device, 0, 11) == b"snapshotted"

        deleted = service.delete_stack(stack.name)

        assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
        assert connection.block_storage.find_backup(backup_id) is None
        assert list(connection.compute.volume_attachments(outside_server.id)) == []
        wait_until(lambda: connection.block_storage.find_volume(volume_id) is None, f"volume {volume_id} to go")
    finally:
        found = connection.block_storage.find_backup(backup_id) if backup_id else None
        if found is not None and found.status in ("available", "error"):
            connection.block_storage.delete_backup(found, ignore_missing=True, force=found.status == "error")


def test_restoring_a_server_and_its_attached_volume_rebuilds_the_server_then_restores_the_volume(admin_cloud, service):
    """A stack with a server, a volume and the attachment of one to the other: the restore
    rebuilds the server from its image snapshot and, once the rebuild is done, detaches
    the volume, restores its backup and attaches it back (``update_dependencies``). Run
    together, Nova's rebuild meets the detach and leaves the server in ERROR, with the
    volume stuck 'reserved', as Heat, which does not order them, leaves it."""
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    resources = {
        **network_resources(suffix, "10.44.0.0/24"),
        "vm": server([{"network": {"get_resource": "net"}}], metadata={"phase": "snapshotted"}),
        "data": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
        "attachment": {
            "type": "OS::Cinder::VolumeAttachment",
            "properties": {"instance_uuid": {"get_resource": "vm"}, "volume_id": {"get_resource": "data"}},
        },
    }
    stack = service.create_stack(f"snap-both-{suffix}", from_data(template(resources)))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = ids_of(service, stack.name)
    server_id, volume_id = ids["vm"], ids["data"]
    (attached,) = connection.compute.volume_attachments(server_id)
    device = volume_file(admin_cloud, volume_id)
    write_at(device, 0, b"snapshotted")
    image_id = backup_id = None
    try:
        snapshot = service.create_snapshot(stack.name, f"both-{suffix}")

        assert snapshot.status == "COMPLETE", snapshot.status_reason
        image_id = snapshot.data["resources"]["vm"]["resource_data"]["snapshot_image_id"]
        backup_id = snapshot.data["resources"]["data"]["resource_data"]["backup_id"]
        resources["vm"]["properties"]["metadata"] = {"phase": "changed"}
        stack = service.update_stack(stack.name, from_data(template(resources)))
        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        write_at(device, 0, b"overwritten")

        restored = service.restore_snapshot(stack.name, snapshot.id)

        assert restored.state == "RESTORE_COMPLETE", restored.status_reason
        assert ids_of(service, stack.name) == ids
        live = connection.compute.get_server(server_id)
        assert (live.status, live.task_state, live.image.id, live.metadata) == ("ACTIVE", None, image_id, {"phase": "snapshotted"})
        volume = connection.block_storage.get_volume(volume_id)
        assert volume.status == "in-use"
        assert [attachment["server_id"] for attachment in volume.attachments] == [server_id]
        (reattached,) = connection.compute.volume_attachments(server_id)
        assert (reattached.volume_id, reattached.device) == (volume_id, attached.device)
        assert read_at(device, 0, 11) == b"snapshotted"
        # The server's rebuild ended before the volume's restore began.
        events = [(event.resource_name, event.resource_action, event.resource_status) for event in service.list_events(stack.name)]
        restore = events[events.index((stack.name, "RESTORE", "IN_PROGRESS")) :]
        assert restore.index(("vm", "UPDATE", "COMPLETE")) < restore.index(("data", "UPDATE", "IN_PROGRESS")), restore

        deleted = service.delete_stack(stack.name)

        assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
        assert image_gone(connection, image_id)
        assert connection.block_storage.find_backup(backup_id) is None
        assert server_gone(connection, server_id)
        wait_until(lambda: connection.block_storage.find_volume(volume_id) is None, f"volume {volume_id} to go")
    finally:
        if image_id:
            connection.image.delete_image(image_id, ignore_missing=True)
        found = connection.block_storage.find_backup(backup_id) if backup_id else None
        if found is not None and found.status in ("available", "error"):
            connection.block_storage.delete_backup(found, ignore_missing=True, force=found.status == "error")
