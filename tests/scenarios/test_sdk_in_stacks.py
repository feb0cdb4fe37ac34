"""SDK features seen through a real stack: translation, properties groups, client
plugins (default handle_delete and the show attribute)."""

from __future__ import annotations

import sys
import textwrap

import pytest

from stoker.template.errors import TemplateErrors
from tests.support.stacks import template

CLOUD_PLUGIN = '''
from stoker.sdk import clients, properties, properties_group, resource
from stoker.sdk.exceptions import EntityNotFound

SERVERS = {}


class FakeServers:
    def create(self, name):
        SERVERS[name] = {"id": name, "status": "ACTIVE"}
        return name

    def get(self, server_id):
        if server_id not in SERVERS:
            raise EntityNotFound("Server", server_id)
        return dict(SERVERS[server_id])

    def delete(self, server_id):
        if server_id not in SERVERS:
            raise EntityNotFound("Server", server_id)
        del SERVERS[server_id]


class FakeCompute:
    servers = FakeServers()


class ComputePlugin(clients.ClientPlugin):
    service_type = "compute"
    supported_versions = ["2.1", "2.60"]

    def create_client(self, version):
        return FakeCompute()

    def get_max_microversion(self):
        return "2.60"


class Server(resource.Resource):
    """A server on the fake cloud."""

    default_client_name = "compute"
    entity = "servers"
    properties_schema = {
        "network": properties.Schema(properties.Schema.STRING, "A network."),
        "port": properties.Schema(properties.Schema.STRING, "A port."),
        "tags": properties.Schema(properties.Schema.LIST, "Tags (compute 2.60 and later)."),
    }
    properties_groups_schema = [
        {properties_group.XOR: [["network"], ["port"]]},
        {properties_group.API_VERSIONS: {
            properties_group.CLIENT_PLUGIN: "compute",
            properties_group.VERSIONS: ["2.60"],
            properties_group.PROPERTIES: [["tags"]],
        }},
    ]

    def handle_create(self):
        self.resource_id_set(self.client().servers.create(self.physical_resource_name()))


def resource_mapping():
    return {"Cloud::Server": Server}


def client_mapping():
    return {"compute": ComputePlugin}
'''


@pytest.fixture
def cloud(make_service, tmp_path):
    (tmp_path / "cloud.py").write_text(textwrap.dedent(CLOUD_PLUGIN))
    service = make_service(plugin_dirs=[str(tmp_path)])
    assert service.registry.problems == []
    module = next(m for name, m in sys.modules.items() if name.startswith("stoker_plugin_cloud_") and str(tmp_path) in (m.__file__ or ""))
    module.SERVERS.clear()
    return service, module


SERVER = """
heat_template_version: 2021-04-16
resources:
  s:
    type: Cloud::Server
    properties: PROPS
outputs:
  shown: {value: {get_attr: [s, show]}}
  status: {value: {get_attr: [s, show, status]}}
"""


def test_client_plugin_serves_handlers_show_and_default_delete(cloud):
    service, module = cloud
    stack = service.create_stack("srv", template(SERVER.replace("PROPS", "{network: net1, tags: [a]}")))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    server_id = service.list_resources("srv")[0].physical_resource_id
    assert {server_id: {"id": server_id, "status": "ACTIVE"}} == module.SERVERS
    outputs = {o["output_key"]: o["output_value"] for o in service.outputs("srv")}
    assert outputs == {"shown": {"id": server_id, "status": "ACTIVE"}, "status": "ACTIVE"}
    # the default handle_delete deletes through entity and default_client_name
    assert service.delete_stack("srv").state == "DELETE_COMPLETE"
    assert module.SERVERS == {}


def test_default_delete_ignores_an_entity_already_gone(cloud):
    service, module = cloud
    service.create_stack("srv", template(SERVER.replace("PROPS", "{port: p1}")))
    module.SERVERS.clear()
    assert service.delete_stack("srv").state == "DELETE_COMPLETE"


def test_properties_group_errors_state_the_rule(cloud):
    service, _ = cloud
    with pytest.raises(TemplateErrors) as caught:
        service.create_stack("srv", template(SERVER.replace("PROPS", "{network: a, port: b}")))
    assert "resources.s.properties: exactly one of 'network' or 'port' must be given" in str(caught.value)
    with pytest.raises(TemplateErrors) as caught:
        service.create_stack("srv", template(SERVER.replace("PROPS", "{}")))
    assert "exactly one of 'network' or 'port' must be given" in str(caught.value)


def test_api_versions_group_uses_the_negotiated_microversion(cloud):
    service, module = cloud
    plugin = service.registry.clients.get_class("compute")
    plugin.get_max_microversion = lambda self: "2.1"
    try:
        with pytest.raises(TemplateErrors) as caught:
            service.create_stack("srv", template(SERVER.replace("PROPS", "{network: a, tags: [x]}")))
        assert "property 'tags' requires API version 2.60 of client 'compute'; the negotiated version is 2.1" in str(caught.value)
    finally:
        del plugin.get_max_microversion


def test_deprecated_random_string_sequence_is_translated(service):
    body = "heat_template_version: 2021-04-16\nresources:\n  r:\n    type: OS::Heat::RandomString\n    properties: {sequence: digits, length: 40}\n"
    stack = service.create_stack("seq", template(body))
    assert stack.state == "CREATE_COMPLETE"
    stored = next(r for r in service.store.list_resources(stack.id)).data
    value = service.store.sealer.open(stored)[0]["value"]
    assert len(value) == 40 and value.isdigit()


LIVE_PLUGIN = '''
import os
from pathlib import Path

from stoker.sdk import attributes, resource


class Gauge(resource.Resource):
    """Reads a file: ``level`` is always read live, ``first`` is kept from the create."""

    attributes_schema = {
        "level": attributes.Schema("Now.", cache_mode=attributes.Schema.CACHE_NONE),
        "first": attributes.Schema("At create."),
    }

    def handle_create(self):
        self.resource_id_set("gauge")

    def _resolve_attribute(self, name):
        return Path(os.environ["STOKER_TEST_GAUGE"]).read_text()


def resource_mapping():
    return {"Test::Gauge": Gauge}
'''


def test_cache_none_attribute_is_read_live_and_others_are_kept(make_service, tmp_path, monkeypatch):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "gauge.py").write_text(textwrap.dedent(LIVE_PLUGIN))
    gauge = tmp_path / "gauge"
    gauge.write_text("low")
    monkeypatch.setenv("STOKER_TEST_GAUGE", str(gauge))
    service = make_service(plugin_dirs=[str(plugins)])
    body = """
    heat_template_version: 2021-04-16
    resources:
      g: {type: Test::Gauge}
    outputs:
      level: {value: {get_attr: [g, level]}}
      first: {value: {get_attr: [g, first]}}
    """
    assert service.create_stack("gauge", template(body)).state == "CREATE_COMPLETE"

    gauge.write_text("high")

    outputs = {o["output_key"]: o["output_value"] for o in service.outputs("gauge")}
    assert outputs == {"level": "high", "first": "low"}
