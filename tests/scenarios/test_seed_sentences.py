"""Sentences of seeds 000 (support status, translation), 001 (plugin guide) and 002
(properties groups) that a plugin author copies, working as written (issue 14)."""

from __future__ import annotations

import textwrap

import pytest

from stoker.sdk import support
from stoker.template.errors import TemplateErrors
from tests.support.stacks import event_states, template

# Written as for Heat (seed 001 imports heat.engine.*): the compat layer serves them.
PLUGIN = '''
from heat.engine import attributes
from heat.engine import properties
from heat.engine import properties_group
from heat.engine import resource
from heat.engine import support


class NewThing(resource.Resource):
    """The type that replaces Old::Thing."""

    support_status = support.SupportStatus(version='6.0.0')
    properties_schema = {
        'size': properties.Schema(
            properties.Schema.INTEGER, 'Size.', update_allowed=True,
            support_status=support.SupportStatus(version='7.0.0', message='Sizes came in 7.0.0.')),
    }
    attributes_schema = {'size': attributes.Schema('Size.')}

    def handle_create(self):
        self.resource_id_set(self.physical_resource_name())

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        pass

    def _resolve_attribute(self, name):
        return self.properties['size']


class NewerThing(NewThing):
    """Extends the substitute."""


class OtherThing(resource.Resource):
    """Not a substitute of Old::Thing."""

    properties_schema = NewThing.properties_schema

    def handle_create(self):
        self.resource_id_set(self.physical_resource_name())


class OldThing(resource.Resource):
    """Deprecated: use New::Thing."""

    support_status = support.SupportStatus(
        status=support.DEPRECATED,
        version='6.0.0',
        message='Use New::Thing instead.',
        substitute_class=NewThing,
        previous_status=support.SupportStatus(version='2014.2'),
    )
    properties_schema = NewThing.properties_schema
    attributes_schema = NewThing.attributes_schema

    def handle_create(self):
        self.resource_id_set(self.physical_resource_name())

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        pass


class Versioned(resource.Resource):
    """Gives its version where Heat's SupportStatus takes the status."""

    support_status = support.SupportStatus('5.0.0')

    def handle_create(self):
        self.resource_id_set('versioned')


class Gone(resource.Resource):
    """Kept for old stacks."""

    support_status = support.SupportStatus(
        status=support.HIDDEN, version='7.0.0',
        previous_status=support.SupportStatus(status=support.DEPRECATED, version='6.0.0'))


class Server(resource.Resource):
    """Seed 000's translation example: translation_rules without a props argument."""

    NETWORKS, NETWORK, NETWORK_ID = 'networks', 'network', 'network_id'
    properties_schema = {
        NETWORKS: properties.Schema(
            properties.Schema.LIST,
            'Networks.',
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    NETWORK: properties.Schema(properties.Schema.STRING, 'Network.'),
                    NETWORK_ID: properties.Schema(
                        properties.Schema.STRING, 'Network id.',
                        support_status=support.SupportStatus(
                            status=support.HIDDEN, version='5.0.0',
                            previous_status=support.SupportStatus(status=support.DEPRECATED, version='2014.2'))),
                },
            ),
        ),
    }
    attributes_schema = {'networks': attributes.Schema('The networks.')}

    def translation_rules(self):
        return [properties.TranslationRule(
            self.properties,
            properties.TranslationRule.REPLACE,
            translation_path=[self.NETWORKS, self.NETWORK],
            value_name=self.NETWORK_ID)]

    def handle_create(self):
        self.resource_id_set('server')

    def _resolve_attribute(self, name):
        return self.properties[self.NETWORKS]


class Lookup(resource.Resource):
    """Resolves its attributes itself (seed 001: a plugin may override FnGetAtt)."""

    attributes_schema = {
        'table': attributes.Schema('Any path into a table.'),
        'plain': attributes.Schema('A map.'),
    }

    def handle_create(self):
        self.resource_id_set('lookup')

    def _resolve_attribute(self, name):
        return {'a': {'b': 'from the map'}}

    def FnGetAtt(self, key, *path):
        if key == 'plain':
            return super(Lookup, self).FnGetAtt(key, *path)
        return '%s:%s' % (key, '/'.join(str(step) for step in path))


class Grouped(resource.Resource):
    """Two properties groups (seed 002)."""

    properties_schema = {
        name: properties.Schema(properties.Schema.STRING, name) for name in ('a', 'b', 'c', 'd')
    }
    properties_groups_schema = [
        {properties_group.XOR: [['a'], ['b']]},
        {properties_group.AND: [['c'], ['d']]},
    ]

    def handle_create(self):
        self.resource_id_set('grouped')


def resource_mapping():
    return {
        'Old::Thing': OldThing,
        'New::Thing': NewThing,
        'Newer::Thing': NewerThing,
        'Other::Thing': OtherThing,
        'Demo::Versioned': Versioned,
        'Demo::Server': Server,
        'Demo::Lookup': Lookup,
        'Demo::Grouped': Grouped,
        'Demo::Gone': Gone,
    }
'''


@pytest.fixture
def plugin_service(make_service, tmp_path):
    (tmp_path / "seeds.py").write_text(textwrap.dedent(PLUGIN))
    return make_service(plugin_dirs=[str(tmp_path)])


# -- seed 000: a status Heat does not know -------------------------------------------


def test_support_status_unknown_value_defaults_to_unknown_with_a_warning():
    with pytest.warns(
        UserWarning, match=r"Unknown support status '5.0.0' \(did you mean version='5.0.0'\?\)"
    ):
        status = support.SupportStatus("5.0.0")
    # Heat's SupportStatus.validate
    assert status.to_dict() == {
        "status": "UNKNOWN",
        "message": "Specified status is invalid, defaulting to UNKNOWN",
        "version": None,
        "previous_status": None,
    }


def test_plugin_with_version_as_status_loads_with_a_warning(plugin_service, tmp_path):
    assert "Demo::Versioned" in plugin_service.registry.types
    # The rest of the module is not skipped.
    assert "Demo::Server" in plugin_service.registry.types
    assert plugin_service.registry.problems == [
        f"plugin {tmp_path / 'seeds.py'}:{PLUGIN.count(chr(10), 0, PLUGIN.index('SupportStatus(' + repr('5.0.0'))) + 1}: "
        "Unknown support status '5.0.0' (did you mean version='5.0.0'?); "
        "use one of UNKNOWN, SUPPORTED, DEPRECATED, UNSUPPORTED, HIDDEN. Defaulting to UNKNOWN"
    ]
    assert (
        plugin_service.resource_type_schema("Demo::Versioned")["support_status"]["status"]
        == "UNKNOWN"
    )
    assert "Demo::Versioned" in plugin_service.resource_types(support_status="UNKNOWN")
    body = "heat_template_version: 2021-04-16\nresources:\n  v: {type: Demo::Versioned}\n"
    assert plugin_service.create_stack("versioned", template(body)).state == "CREATE_COMPLETE"


# -- seed 000: translation_rules(self) ------------------------------------------------

SERVER = """
heat_template_version: 2021-04-16
resources:
  server:
    type: Demo::Server
    properties:
      networks: [{network_id: private}]
outputs:
  networks: {value: {get_attr: [server, networks]}}
"""


def test_translation_rules_without_props_argument_translate(plugin_service):
    plugin_service.validate_template(template(SERVER))
    assert plugin_service.create_stack("server", template(SERVER)).state == "CREATE_COMPLETE"
    [output] = plugin_service.outputs("server")
    assert [network["network"] for network in output["output_value"]] == ["private"]


# -- seed 000: substitute_class --------------------------------------------------------

THING = """
heat_template_version: 2021-04-16
resources:
  thing:
    type: {type}
    properties: {{size: {size}}}
"""


def _thing(service, stack_name: str):
    [record] = [r for r in service.list_resources(stack_name) if r.name == "thing"]
    return record


@pytest.mark.parametrize("new_type", ["New::Thing", "Newer::Thing"])
def test_update_to_substitute_type_changes_type_in_place(plugin_service, new_type):
    plugin_service.create_stack("things", template(THING.format(type="Old::Thing", size=1)))
    before = _thing(plugin_service, "things")
    stack = plugin_service.update_stack("things", template(THING.format(type=new_type, size=2)))
    assert stack.state == "UPDATE_COMPLETE"
    after = _thing(plugin_service, "things")
    assert (after.id, after.physical_resource_id, after.type) == (
        before.id,
        before.physical_resource_id,
        new_type,
    )
    assert [r.name for r in plugin_service.list_resources("things")] == ["thing"]
    assert event_states(plugin_service, "things", "thing")[-2:] == [
        "UPDATE_IN_PROGRESS",
        "UPDATE_COMPLETE",
    ]


def test_update_to_substitute_type_alone_records_the_type(plugin_service):
    plugin_service.create_stack("things", template(THING.format(type="Old::Thing", size=1)))
    before = _thing(plugin_service, "things")
    assert (
        plugin_service.update_stack(
            "things", template(THING.format(type="New::Thing", size=1))
        ).state
        == "UPDATE_COMPLETE"
    )
    after = _thing(plugin_service, "things")
    assert (after.physical_resource_id, after.type) == (before.physical_resource_id, "New::Thing")
    assert event_states(plugin_service, "things", "thing")[-2:] == [
        "UPDATE_IN_PROGRESS",
        "UPDATE_COMPLETE",
    ]


def test_update_to_a_type_that_is_not_the_substitute_replaces(plugin_service):
    plugin_service.create_stack("things", template(THING.format(type="Old::Thing", size=1)))
    before = _thing(plugin_service, "things")
    assert (
        plugin_service.update_stack(
            "things", template(THING.format(type="Other::Thing", size=1))
        ).state
        == "UPDATE_COMPLETE"
    )
    after = _thing(plugin_service, "things")
    assert after.physical_resource_id != before.physical_resource_id
    assert after.type == "Other::Thing"


# -- seed 001: a plugin's own FnGetAtt --------------------------------------------------

LOOKUP = """
heat_template_version: 2021-04-16
resources:
  lookup: {type: Demo::Lookup}
outputs:
  path: {value: {get_attr: [lookup, table, a, 1]}}
  bare: {value: {get_attr: [lookup, table]}}
  unlisted: {value: {get_attr: [lookup, anything, x]}}
  plain: {value: {get_attr: [lookup, plain, a, b]}}
"""


def test_plugin_fn_get_att_override_resolves_attribute_and_path(plugin_service):
    plugin_service.validate_template(template(LOOKUP))
    assert plugin_service.create_stack("lookup", template(LOOKUP)).state == "CREATE_COMPLETE"
    values = {o["output_key"]: o["output_value"] for o in plugin_service.outputs("lookup")}
    assert values == {
        "path": "table:a/1",
        "bare": "table:",
        "unlisted": "anything:x",
        "plain": "from the map",
    }


# -- seed 002: every properties group broken is reported ---------------------------------

GROUPED = """
heat_template_version: 2021-04-16
resources:
  grouped:
    type: Demo::Grouped
    properties: {a: x, b: y, c: z}
"""


def test_every_failing_properties_group_is_reported(plugin_service):
    with pytest.raises(TemplateErrors) as caught:
        plugin_service.create_stack("grouped", template(GROUPED))
    assert [(error.path, error.message) for error in caught.value.errors] == [
        (
            "resources.grouped.properties",
            "exactly one of 'a' or 'b' must be given, but 'a' and 'b' were both given",
        ),
        ("resources.grouped.properties", "all of 'c' and 'd' must be given, but 'd' was not"),
    ]
    assert all(error.location is not None for error in caught.value.errors)


# -- seed 000 and Heat's API: resource types -------------------------------------------


@pytest.fixture
def api(tmp_path):
    """A real ``stoker serve`` loading the seed plugin, and an HTTP client of it."""
    import httpx

    from tests.support.server import Server

    (tmp_path / "plugins").mkdir()
    (tmp_path / "plugins" / "seeds.py").write_text(textwrap.dedent(PLUGIN))
    server = Server(f"sqlite:///{tmp_path / 'api.sqlite'}", tmp_path / "api.log", STOKER_PLUGIN_DIRS=str(tmp_path / "plugins")).start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", headers={"X-Auth-Token": "t"}, timeout=60) as client:
            yield client
    finally:
        server.stop()


def test_api_hidden_resource_type_show_is_not_supported(api):
    for path in (
        "/v1/demo/resource_types/Demo::Gone",
        "/v1/demo/resource_types/Demo::Gone/template",
    ):
        response = api.get(path)
        # Heat's resource_schema and generate_template: exception.NotSupported, 400.
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["type"] == "NotSupported"
        assert error["message"].startswith("Demo::Gone is not supported.")


def test_api_resource_types_refuses_an_unknown_support_status(api):
    response = api.get("/v1/demo/resource_types", params={"support_status": "junk"})
    assert response.status_code == 400, response.text
    # Heat's ResourceRegistry.get_types: exception.Invalid.
    assert response.json()["error"] == {
        "type": "Invalid",
        "message": "Data supplied was not valid: Invalid support status and should be one of "
        "('UNKNOWN', 'SUPPORTED', 'DEPRECATED', 'UNSUPPORTED', 'HIDDEN')",
        "traceback": None,
    }
    deprecated = api.get("/v1/demo/resource_types", params={"support_status": "DEPRECATED"}).json()[
        "resource_types"
    ]
    assert "Old::Thing" in deprecated and "New::Thing" not in deprecated


def test_api_resource_type_show_gives_a_supported_property_its_version(api):
    schema = api.get("/v1/demo/resource_types/New::Thing").json()
    assert schema["properties"]["size"]["support_status"] == {
        "status": "SUPPORTED",
        "message": "Sizes came in 7.0.0.",
        "version": "7.0.0",
        "previous_status": None,
    }
    # The type's own status is always there, as in Heat.
    assert schema["support_status"] == {
        "status": "SUPPORTED",
        "message": None,
        "version": "6.0.0",
        "previous_status": None,
    }
