"""Snapshots: create, list, delete (with plugin cleanup), restore."""

from __future__ import annotations

import sys
import textwrap

import pytest

from stoker.sdk.exceptions import ValidationError
from tests.support.stacks import template

PLUGIN = '''
from stoker.sdk import properties, resource

BACKUPS = {}


class Disk(resource.Resource):
    """A disk whose snapshot is a backup copy of its content."""

    properties_schema = {"content": properties.Schema(properties.Schema.STRING, "What is on the disk.", update_allowed=True)}

    def handle_create(self):
        self.data_set("content", self.properties["content"])
        self.resource_id_set(self.physical_resource_name())

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        self.data_set("content", prop_diff["content"])

    def handle_snapshot(self):
        BACKUPS[self.resource_id] = self.data()["content"]
        self.data_set("backup", self.resource_id)

    def handle_delete_snapshot(self, snapshot):
        BACKUPS.pop(snapshot["resource_data"]["backup"], None)

    def handle_restore(self, definition, data):
        return definition

    def _resolve_attribute(self, name):
        return self.data().get("content")


def resource_mapping():
    return {"Demo::Disk": Disk}
'''

BODY = """
heat_template_version: 2021-04-16
parameters:
  content: {type: string, default: v1}
resources:
  disk:
    type: Demo::Disk
    properties: {content: {get_param: content}}
  plain:
    type: OS::Heat::RandomString
"""


@pytest.fixture
def disks(make_service, tmp_path):
    (tmp_path / "disk.py").write_text(textwrap.dedent(PLUGIN))
    service = make_service(plugin_dirs=[str(tmp_path)])
    module = next(m for name, m in sys.modules.items() if name.startswith("stoker_plugin_disk_") and str(tmp_path) in (m.__file__ or ""))
    module.BACKUPS.clear()
    return service, module


def test_snapshot_restore_and_delete(disks):
    service, module = disks
    service.create_stack("s", template(BODY))
    snap = service.create_snapshot("s", "first")
    assert (snap.status, snap.name) == ("COMPLETE", "first")
    assert service.get_stack("s").state == "SNAPSHOT_COMPLETE"
    disk_id = next(r.physical_resource_id for r in service.list_resources("s") if r.name == "disk")
    assert {disk_id: "v1"} == module.BACKUPS
    assert snap.data["resources"]["disk"]["resource_data"]["content"] == "v1"
    assert snap.data["parameters"] == {}

    service.update_stack("s", template(BODY), parameters={"content": "v2"})
    stack = service.restore_snapshot("s", "first")
    assert stack.state == "RESTORE_COMPLETE", stack.status_reason
    disk = next(r for r in service.list_resources("s") if r.name == "disk")
    assert disk.data["content"] == "v1" and disk.physical_resource_id == disk_id
    assert [s.name for s in service.list_snapshots("s")] == ["first"]

    service.delete_snapshot("s", snap.id)
    assert service.list_snapshots("s") == []
    assert module.BACKUPS == {}
    with pytest.raises(Exception, match="could not be found"):
        service.get_snapshot("s", snap.id)


def test_stack_delete_removes_its_snapshots(disks):
    service, module = disks
    service.create_stack("s", template(BODY))
    service.create_snapshot("s")
    assert module.BACKUPS
    assert service.delete_stack("s").state == "DELETE_COMPLETE"
    assert module.BACKUPS == {}


def test_snapshot_of_a_failed_stack_is_refused(service):
    service.create_stack("f", template("heat_template_version: 2021-04-16\nresources:\n  r:\n    type: OS::Heat::TestResource\n    properties: {fail: true}\n"))
    with pytest.raises(ValidationError, match="only a stack in a COMPLETE state can be snapshotted"):
        service.create_snapshot("f")
