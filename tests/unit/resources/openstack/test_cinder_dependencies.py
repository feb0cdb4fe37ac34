"""The update order of a volume and the server it is attached to, read from templates: a
volume's update follows the update of the servers a VolumeAttachment of the stack
attaches it to (a restore rebuilds the server before the volume leaves it), never the
create, and never when the server itself needs the volume."""

from __future__ import annotations

from stoker.engine.implicit import RULES, implicit_dependencies
from stoker.engine.stack import dependency_graph
from stoker.environment.registry import ResourceRegistry
from stoker.resources import builtin_mapping
from stoker.template.hot import Template

REGISTRY = ResourceRegistry()
REGISTRY.register_mapping(builtin_mapping(), "stoker.resources")

SERVER = {"type": "OS::Nova::Server", "properties": {"flavor": "m1.tiny", "image": "cirros", "networks": [{"network": "private"}]}}


def attachment(server, volume) -> dict:
    return {"type": "OS::Cinder::VolumeAttachment", "properties": {"instance_uuid": server, "volume_id": volume}}


def graphs(resources: dict):
    template = Template.from_data({"heat_template_version": "2021-04-16", "parameters": {"outside": {"type": "string"}}, "resources": resources})
    parameter = {"outside": "a-server-id"}.__getitem__
    every_action = dependency_graph(template.resources, implicit_dependencies(template.resources, REGISTRY.get_class, parameter))
    update = dependency_graph(template.resources, implicit_dependencies(template.resources, REGISTRY.get_class, parameter, RULES))
    return every_action, update


def test_attached_volume_updates_after_its_server_and_creates_beside_it():
    resources = {
        "vm": SERVER,
        "spare": SERVER,
        "data": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
        "attachment": attachment({"get_resource": "vm"}, {"get_resource": "data"}),
    }

    every_action, update = graphs(resources)

    assert every_action.requires("data") == set()
    assert update.requires("data") == {"vm"}
    assert update.requires("attachment") == {"vm", "data"}


def test_volume_attached_to_a_server_outside_the_stack_follows_nothing():
    resources = {
        "data": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
        "attachment": attachment({"get_param": "outside"}, {"get_resource": "data"}),
    }

    _, update = graphs(resources)

    assert update.requires("data") == set()


def test_volume_a_server_boots_from_keeps_the_stated_order():
    # The server needs the volume: the update edge would close a cycle and is left out.
    booting = {
        "type": "OS::Nova::Server",
        "properties": {
            "flavor": "m1.tiny",
            "networks": [{"network": "private"}],
            "block_device_mapping_v2": [{"volume_id": {"get_resource": "data"}, "boot_index": 0}],
        },
    }
    resources = {
        "vm": booting,
        "data": {"type": "OS::Cinder::Volume", "properties": {"size": 1}},
        "attachment": attachment({"get_resource": "vm"}, {"get_resource": "data"}),
    }

    _, update = graphs(resources)

    assert update.requires("vm") == {"data"}
    assert update.requires("data") == set()
