"""OS::Cinder::Volume, VolumeAttachment and VolumeType without a cloud: Heat's validation
rules, the requests built from properties, what updates in place and what replaces, and
the tokens and definitions the handlers hand the engine (no client is called here; the
cloud tests in tests/cloud/test_cinder_types.py drive the real Cinder)."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from stoker.resources.openstack import resource_mapping
from stoker.resources.openstack.cinder.volume import CinderVolume
from stoker.resources.openstack.cinder.volume_attachment import CinderVolumeAttachment
from stoker.resources.openstack.cinder.volume_type import CinderVolumeType
from stoker.sdk.exceptions import ResourceFailure, UpdateReplace, ValidationError
from stoker.sdk.testing import PluginHarness
from stoker.template.definitions import ResourceDefinition

# The lookup constraints (cinder.volume...) ask the cloud; the cloud tests cover them.
# Here a value only has to be a name or id, so the rules around them can be tested alone.
NAMES = {
    name: (lambda value: isinstance(value, str) and bool(value))
    for name in ("cinder.volume", "cinder.snapshot", "cinder.backup", "cinder.vtype", "glance.image")
}


def volume(**properties) -> PluginHarness:
    return PluginHarness(CinderVolume, properties, name="data", stack_name="web", constraints=NAMES)


def test_cinder_types_are_registered_under_heat_names():
    mapping = resource_mapping()
    assert mapping["OS::Cinder::Volume"] is CinderVolume
    assert mapping["OS::Cinder::VolumeAttachment"] is CinderVolumeAttachment
    assert mapping["OS::Cinder::VolumeType"] is CinderVolumeType


@pytest.mark.parametrize(
    "properties",
    [{"size": 1}, {"source_volid": "v"}, {"snapshot_id": "s"}, {"backup_id": "b"}, {"size": 2, "image": "cirros"}],
)
def test_cinder_volume_validate_accepts_one_source(properties):
    volume(**properties).validate()


def test_cinder_volume_validate_without_size_needs_exactly_one_sizing_source():
    with pytest.raises(ValidationError) as raised:
        volume(image="cirros").validate()
    assert raised.value.message == (
        'If neither "backup_id" nor "size" is provided, one and only one of "source_volid", '
        "\"snapshot_id\" must be specified, but currently specified options: ['image']."
    )
    with pytest.raises(ValidationError, match="one and only one"):
        volume(source_volid="v", snapshot_id="s").validate()
    with pytest.raises(ValidationError, match="one and only one"):
        volume().validate()


def test_cinder_volume_validate_with_size_refuses_two_sources():
    with pytest.raises(ValidationError) as raised:
        volume(size=1, image="cirros", source_volid="v").validate()
    assert "only one of" in raised.value.message
    assert "['source_volid', 'image']" in raised.value.message


def test_cinder_volume_validate_refuses_size_below_one():
    with pytest.raises(ValidationError):
        volume(size=0).validate()


def test_cinder_volume_create_arguments_default_name_and_description_to_physical_name():
    harness = volume(size=3, metadata={"tier": 1, "ssd": True})
    physical = harness.resource.physical_resource_name()

    arguments = harness.resource.create_arguments()

    assert physical.startswith("web-data-")
    assert arguments == {
        "name": physical,
        "description": physical,
        "size": 3,
        "metadata": {"tier": "1", "ssd": "True"},
    }


def test_cinder_volume_create_arguments_carry_sources_with_openstacksdk_names():
    harness = volume(
        name="db",
        description="database",
        source_volid="src",
        volume_type="fast",
        availability_zone="az1",
        scheduler_hints={"same_host": "x"},
    )

    arguments = harness.resource.create_arguments()

    assert arguments == {
        "name": "db",
        "description": "database",
        "size": None,
        "source_volume_id": "src",
        "volume_type": "fast",
        "availability_zone": "az1",
        "scheduler_hints": {"same_host": "x"},
    }
    assert volume(size=1).resource.create_arguments("image-id")["image_id"] == "image-id"


def test_cinder_volume_image_ref_is_translated_to_image():
    harness = volume(size=1, imageRef="old-style")

    assert harness.resource.properties["image"] == "old-style"
    assert harness.resource.given("imageRef") is None


def test_cinder_volume_replaces_for_properties_heat_does_not_update():
    harness = volume(size=1)
    for changed in ({"size": 1, "availability_zone": "az2"}, {"size": 1, "scheduler_hints": {"a": "b"}}, {"size": 1, "image": "x"}):
        with pytest.raises(UpdateReplace):
            harness.update(changed)


def test_cinder_volume_find_created_is_none_when_the_template_names_the_volume():
    # A template name is not unique to this resource: nothing may be adopted by it.
    assert volume(size=1, name="shared").resource.find_created() is None


def test_cinder_volume_snapshot_delete_backs_up_unless_create_or_update_failed():
    harness = volume(size=1)
    harness.resource.resource_id = "vol"

    assert harness.resource.handle_snapshot_delete(("CREATE", "COMPLETE")) == {"backup": True}
    assert harness.resource.handle_snapshot_delete(("UPDATE", "FAILED")) == {"backup": False}
    assert harness.resource.handle_snapshot_delete(("CREATE", "FAILED")) == {"backup": False}
    assert harness.resource.handle_delete() == {"backup": False}
    json.dumps(harness.resource.handle_delete())  # tokens are stored as JSON


def test_cinder_volume_delete_without_physical_id_has_nothing_to_wait_for():
    harness = volume(size=1)

    assert harness.resource.handle_delete() is None
    assert harness.resource.check_delete_complete(None) is True


def test_cinder_volume_restore_rewrites_the_definition_to_the_backup():
    harness = volume(size=2, image="cirros", name="db")
    definition = ResourceDefinition("data", "OS::Cinder::Volume", {"size": 2, "image": "cirros", "name": "db"})

    restored = harness.resource.handle_restore(definition, {"resource_data": {"backup_id": "backup-1"}})

    assert restored.properties_data == {"size": 2, "name": "db", "backup_id": "backup-1"}
    assert harness.resource.handle_restore(definition, {"resource_data": {}}) is definition


class FakeVolumes:
    """Cinder as a volume update's reattach sees it: one volume, attached when Nova says so."""

    def __init__(self):
        self.volume = SimpleNamespace(id="vol", status="available", attachments=[], volume_type=None)

    def client(self):
        return self

    def get_volume(self, volume_id):
        return self.volume

    def check_attach_volume_complete(self, volume_id):
        return self.volume.status == "in-use"


class FakeNova:
    """Nova answering 409 to the first ``refusals`` attach requests, with the server in
    ``server_status`` meanwhile."""

    def __init__(self, volumes: FakeVolumes, refusals: int, server_status: str):
        self.volumes, self.refusals, self.server_status = volumes, refusals, server_status
        self.requests = 0

    def client(self):
        return self

    def get_server(self, server_id):
        return SimpleNamespace(id=server_id, status=self.server_status)

    def is_not_found(self, error):
        return False

    def attach_volume(self, server_id, volume_id, device):
        self.requests += 1
        if self.requests <= self.refusals:
            return None
        self.volumes.volume.status = "in-use"
        self.volumes.volume.attachments = [{"server_id": server_id}]
        return "attachment-1"


def reattaching(refusals: int, server_status: str) -> tuple[PluginHarness, FakeNova, dict]:
    """A volume update past its detach and restore, to be attached back to server-1."""
    volumes = FakeVolumes()
    nova = FakeNova(volumes, refusals, server_status)
    harness = PluginHarness(CinderVolume, {"size": 1}, name="data", constraints=NAMES, clients={"cinder": volumes, "nova": nova})
    harness.resource.resource_id = "vol"
    return harness, nova, {"reattach": {"server": "server-1", "device": "/dev/sdb"}, "phase": "work"}


def test_cinder_volume_reattach_asks_again_while_nova_answers_409():
    """A stack restore rebuilds the server while its volume is restored: Nova refuses the
    attach (409) until the rebuild ends, and the volume asks again instead of waiting for
    an attachment nobody made."""
    harness, nova, token = reattaching(refusals=2, server_status="REBUILD")

    polls = [harness.resource.check_update_complete(token) for _ in range(4)]

    assert polls == [False, False, False, True]
    assert nova.requests == 3


def test_cinder_volume_reattach_fails_when_nova_refuses_a_server_in_error():
    harness, nova, token = reattaching(refusals=99, server_status="ERROR")

    with pytest.raises(ResourceFailure, match="server server-1 is in status ERROR"):
        harness.resource.check_update_complete(token)
    assert nova.requests == 1


def test_cinder_volume_left_reserved_by_a_server_in_error_fails_instead_of_waiting():
    """Nova accepted the attach back, then the server went to ERROR (a rebuild that met
    the detach): Cinder keeps the volume 'reserved' for ever, and the update fails with
    Nova's fault instead of waiting out the stack's timeout."""
    harness, nova, token = reattaching(refusals=0, server_status="ACTIVE")
    assert harness.resource.check_update_complete(token) is False  # the attach request
    volume = harness.resource.client().get_volume("vol")
    volume.status, volume.attachments = "reserved", []
    assert harness.resource.check_update_complete(token) is False  # still attaching
    nova.server_status = "ERROR"

    with pytest.raises(ResourceFailure, match="server server-1 is in status ERROR"):
        harness.resource.check_update_complete(token)
    assert nova.requests == 1


def attachment(**properties) -> PluginHarness:
    values = {"instance_uuid": "server-1", "volume_id": "volume-1"}
    values.update(properties)
    return PluginHarness(CinderVolumeAttachment, values, name="attachment", constraints=NAMES)


def test_cinder_volume_attachment_request_uses_nova_default_device_when_unset():
    assert attachment().resource.attachment_request() == {"server": "server-1", "volume": "volume-1", "device": None}
    assert attachment(mountpoint="/dev/vdb").resource.attachment_request()["device"] == "/dev/vdb"


def test_cinder_volume_attachment_request_applies_the_update_diff():
    resource = attachment(mountpoint="/dev/vdb").resource

    request = resource.attachment_request({"volume_id": "volume-2", "mountpoint": ""})

    assert request == {"server": "server-1", "volume": "volume-2", "device": None}


def test_cinder_volume_attachment_requires_server_and_volume():
    with pytest.raises(ValidationError):
        PluginHarness(CinderVolumeAttachment, {"volume_id": "v"}, constraints=NAMES).validate()
    with pytest.raises(ValidationError):
        PluginHarness(CinderVolumeAttachment, {"instance_uuid": "s"}, constraints=NAMES).validate()


def test_cinder_volume_attachment_without_physical_id_deletes_nothing():
    resource = attachment().resource

    assert resource.handle_delete() is None
    assert resource.check_delete_complete(None) is True


def volume_type(**properties) -> PluginHarness:
    return PluginHarness(CinderVolumeType, properties, name="gold", constraints={"keystone.project": lambda value: bool(value)})


def test_cinder_volume_type_validate_refuses_projects_on_a_public_type():
    with pytest.raises(ValidationError) as raised:
        volume_type(name="gold", projects=["demo"]).validate()
    assert raised.value.message == 'Can not specify property "projects" if the volume type is public.'
    volume_type(name="gold", projects=["demo"], is_public=False).validate()


def test_cinder_volume_type_requires_a_name():
    with pytest.raises(ValidationError):
        volume_type(description="no name").validate()


def test_cinder_volume_type_create_arguments_send_extra_specs_as_strings():
    harness = volume_type(name="gold", metadata={"iops": 300, "volume_backend_name": "fake"}, description="fast")

    assert harness.resource.create_arguments() == {
        "name": "gold",
        "is_public": True,
        "description": "fast",
        "extra_specs": {"iops": "300", "volume_backend_name": "fake"},
    }
    assert volume_type(name="plain").resource.create_arguments() == {"name": "plain", "is_public": True}


def test_cinder_volume_type_updates_everything_in_place():
    schema = CinderVolumeType.properties_schema
    assert all(schema[key].update_allowed for key in schema)
