"""Plugins for services stoker has no types for, written the way Heat's are (Heat's module
names, Heat's base classes), loaded from a plugin directory and run against the real
services: a client plugin for Placement on Heat's ``OpenStackSDKPlugin`` with a resource
class type, and a Neutron type on Heat's ``NeutronResource``."""

from __future__ import annotations

import secrets
import textwrap

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from tests.support.stacks import from_data

PLUGIN = '''
from heat.common.i18n import _
from heat.engine import attributes, properties, resource
from heat.engine.clients.os import openstacksdk
from heat.engine.resources.openstack.neutron import neutron


class PlacementPlugin(openstacksdk.OpenStackSDKPlugin):
    """Placement through openstacksdk, as another service's plugin would be."""

    service_types = ["placement"]

    def is_not_found(self, error):
        return super().is_not_found(error)


class ResourceClass(resource.Resource):
    """A custom resource class of Placement."""

    default_client_name = "demo_placement"
    properties_schema = {
        "name": properties.Schema(properties.Schema.STRING, _("CUSTOM_ name."), required=True),
    }

    def handle_create(self):
        created = self.client().create_resource_class(name=self.properties["name"])
        self.resource_id_set(created.name)

    def handle_delete(self):
        if self.resource_id is None:
            return
        try:
            self.client().delete_resource_class(self.resource_id)
        except Exception as error:
            self.client_plugin().ignore_not_found(error)

    def handle_check(self):
        self.client().get_resource_class(self.resource_id)


class AddressScope(neutron.NeutronResource):
    """Heat's OS::Neutron::AddressScope, written on Heat's Neutron base class."""

    entity = "address_scope"
    properties_schema = {
        "name": properties.Schema(properties.Schema.STRING, _("The name."), update_allowed=True),
        "ip_version": properties.Schema(properties.Schema.INTEGER, _("4 or 6."), default=4),
    }
    attributes_schema = {"ip_version": attributes.Schema(_("The IP version."))}

    def handle_create(self):
        scope = self.client().create_address_scope(**self.prepare_properties())
        self.resource_id_set(scope.id)

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        self.prepare_update_properties(prop_diff)
        self.client().update_address_scope(self.resource_id, **prop_diff)


def resource_mapping():
    return {"Demo::Placement::ResourceClass": ResourceClass, "Demo::Neutron::AddressScope": AddressScope}


def client_mapping():
    return {"demo_placement": PlacementPlugin}
'''


@pytest.fixture
def plugins(tmp_path):
    directory = tmp_path / "plugins"
    directory.mkdir()
    (directory / "heat_style.py").write_text(textwrap.dedent(PLUGIN))
    return directory


def test_heat_style_plugins_for_other_services_run_against_the_cloud(openstack_cloud, plugins, make_service):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    try:
        suffix = secrets.token_hex(3)
        service = make_service(plugin_dirs=[str(plugins)])
        admin = openstack_cloud.connect("admin")
        template = {
            "heat_template_version": "2021-04-16",
            "resources": {
                "gpu": {"type": "Demo::Placement::ResourceClass", "properties": {"name": f"CUSTOM_GPU_{suffix.upper()}"}},
                "scope": {"type": "Demo::Neutron::AddressScope", "properties": {"name": f"scope-{suffix}"}},
            },
            "outputs": {"version": {"value": {"get_attr": ["scope", "ip_version"]}}},
        }

        stack = service.create_stack(f"heat-style-{suffix}", from_data(template))

        assert stack.state == "CREATE_COMPLETE", stack.status_reason
        ids = {row.name: row.physical_resource_id for row in service.list_resources(stack.name)}
        assert admin.placement.get_resource_class(ids["gpu"]).name == f"CUSTOM_GPU_{suffix.upper()}"
        assert admin.network.get_address_scope(ids["scope"]).name == f"scope-{suffix}"
        assert [o["output_value"] for o in service.outputs(stack.name)] == [4]
        template["resources"]["scope"]["properties"]["name"] = f"renamed-{suffix}"
        assert service.update_stack(stack.name, from_data(template)).state == "UPDATE_COMPLETE"
        assert admin.network.get_address_scope(ids["scope"]).name == f"renamed-{suffix}"
        assert service.stack_action(stack.name, "CHECK").state == "CHECK_COMPLETE"

        assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"
        assert admin.network.find_address_scope(ids["scope"]) is None
        assert ids["gpu"] not in {found.name for found in admin.placement.resource_classes()}
    finally:
        set_cloud_source(None)
