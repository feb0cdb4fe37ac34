"""Support status (seed 000): lifecycle checked at registration, warnings when used."""

from __future__ import annotations

import textwrap

import pytest

from stoker.environment.registry import ResourceRegistry
from stoker.sdk import attributes, properties, resource, support
from tests.support.stacks import template

PLUGIN = '''
from stoker.sdk import attributes, properties, resource, support


class Old(resource.Resource):
    """An old resource type."""

    support_status = support.SupportStatus(
        status=support.DEPRECATED,
        version='5.0.0',
        message='Use New::Thing instead.',
        previous_status=support.SupportStatus(version='2014.2'),
    )
    properties_schema = {
        'old_property': properties.Schema(
            properties.Schema.STRING, 'Old.',
            support_status=support.SupportStatus(status=support.DEPRECATED, version='6.0.0',
                                                 message='Use property new_property instead.')),
        'new_property': properties.Schema(properties.Schema.STRING, 'New.'),
    }
    attributes_schema = {
        'old_attr': attributes.Schema(
            'Old attribute.',
            support_status=support.SupportStatus(
                status=support.DEPRECATED, version='5.0.0', message='Use attribute new_attr',
                previous_status=support.SupportStatus(version='2014.2', message='Feature available since 2014.2'))),
        'new_attr': attributes.Schema('New attribute.'),
    }

    def handle_create(self):
        self.resource_id_set('old')

    def _resolve_attribute(self, name):
        return name


def resource_mapping():
    return {'Old::Thing': Old}
'''

BODY = """
heat_template_version: 2021-04-16
resources:
  thing:
    type: Old::Thing
    properties: {old_property: x}
outputs:
  attr: {value: {get_attr: [thing, old_attr]}}
"""

EXPECTED = [
    "resources.thing.type: resource type Old::Thing is DEPRECATED since 5.0.0: Use New::Thing instead.",
    "resources.thing.properties.old_property: property old_property is DEPRECATED since 6.0.0: Use property new_property instead.",
    "outputs.attr.value: attribute thing.old_attr is DEPRECATED since 5.0.0: Use attribute new_attr",
]


@pytest.fixture
def old_service(make_service, tmp_path):
    (tmp_path / "old.py").write_text(textwrap.dedent(PLUGIN))
    return make_service(plugin_dirs=[str(tmp_path)])


def test_deprecated_use_warns_in_validate(old_service):
    _, warnings = old_service.validate_template(template(BODY))
    assert warnings == EXPECTED


def test_deprecated_use_warns_in_stack_events(old_service):
    stack = old_service.create_stack("old", template(BODY))
    assert stack.state == "CREATE_COMPLETE"
    reasons = [e.resource_status_reason for e in old_service.list_events("old", "old")]
    assert reasons[1:4] == [f"Warning: {w}" for w in EXPECTED]


def test_support_status_to_dict_nests_previous_status():
    status = support.SupportStatus(
        status=support.HIDDEN,
        version="5.0.0",
        message="Some message",
        previous_status=support.SupportStatus(status=support.DEPRECATED, version="2015.1", previous_status=support.SupportStatus(version="2014.2")),
    )
    assert status.to_dict() == {
        "status": "HIDDEN",
        "message": "Some message",
        "version": "5.0.0",
        "previous_status": {
            "status": "DEPRECATED",
            "message": None,
            "version": "2015.1",
            "previous_status": {"status": "SUPPORTED", "message": None, "version": "2014.2", "previous_status": None},
        },
    }


@pytest.mark.parametrize(
    ("chain", "note"),
    [
        ([support.UNSUPPORTED, support.SUPPORTED, support.DEPRECATED, support.HIDDEN], None),
        ([support.SUPPORTED, support.DEPRECATED, support.UNSUPPORTED], None),
        ([support.SUPPORTED, support.DEPRECATED], None),
        ([support.SUPPORTED, support.HIDDEN], "SUPPORTED -> HIDDEN skips DEPRECATED"),
        ([support.DEPRECATED, support.SUPPORTED], "DEPRECATED -> SUPPORTED goes back"),
        ([support.HIDDEN, support.DEPRECATED], "HIDDEN -> DEPRECATED goes back"),
        ([support.UNSUPPORTED, support.DEPRECATED], "UNSUPPORTED -> DEPRECATED skips SUPPORTED"),
    ],
)
def test_support_status_lifecycle_departure_loads_with_a_note(chain, note):
    """Seed 000: the lifecycle is a process, not a grammar. Heat checks no chain (its
    magnum BayModel hides a property straight from SUPPORTED); a departure is a warning."""
    status = None
    for name in chain:
        status = support.SupportStatus(status=name, previous_status=status)

    class Plugin(resource.Resource):
        """A plugin with a support chain."""

        support_status = status

    registry = ResourceRegistry()
    registry.register_mapping({"Chain::Test": Plugin}, "chain.py")
    assert "Chain::Test" in registry.types
    if note is None:
        assert registry.problems == []
    else:
        [problem] = registry.problems
        assert problem.startswith("plugin chain.py: Chain::Test (") and f"support status {note}" in problem


def test_departing_chain_on_property_and_attribute_loads_with_a_note():
    departing = support.SupportStatus(status=support.SUPPORTED, previous_status=support.SupportStatus(status=support.HIDDEN))

    class WithProperty(resource.Resource):
        """Departing property chain."""

        properties_schema = {"p": properties.Schema(properties.Schema.STRING, "p", support_status=departing)}

    class WithAttribute(resource.Resource):
        """Departing attribute chain."""

        attributes_schema = {"a": attributes.Schema("a", support_status=departing)}

    registry = ResourceRegistry()
    registry.register_mapping({"Old::Property": WithProperty, "Old::Attribute": WithAttribute}, "old.py")
    assert {"Old::Property", "Old::Attribute"} <= set(registry.types)
    assert len(registry.problems) == 2
    assert "property p: support status HIDDEN -> SUPPORTED goes back" in registry.problems[0]
    assert "attribute a: support status HIDDEN -> SUPPORTED goes back" in registry.problems[1]


HIDDEN_PLUGIN = '''
from stoker.sdk import properties, resource, support


class Gone(resource.Resource):
    """Kept for old stacks."""

    support_status = support.SupportStatus(
        status=support.HIDDEN, version="7.0.0",
        previous_status=support.SupportStatus(status=support.DEPRECATED, version="6.0.0"))


def resource_mapping():
    return {"Old::Gone": Gone}
'''


def test_hidden_types_and_properties_are_not_listed_but_still_work(make_service, tmp_path):
    from stoker.engine.errors import NotSupportedError

    (tmp_path / "gone.py").write_text(textwrap.dedent(HIDDEN_PLUGIN))
    service = make_service(plugin_dirs=[str(tmp_path)])
    assert "Old::Gone" not in service.resource_types()
    assert "Old::Gone" in service.resource_types(include_hidden=True)
    with pytest.raises(NotSupportedError, match=r"^Old::Gone is not supported\. \(the type is HIDDEN"):
        service.resource_type_schema("Old::Gone")
    # a known limitation kept from Heat: new stacks can still use a hidden type
    body = "heat_template_version: 2021-04-16\nresources:\n  g: {type: Old::Gone}\n"
    assert service.create_stack("gone", template(body)).state == "CREATE_COMPLETE"
    schema = service.resource_type_schema("OS::Heat::RandomString")
    assert "sequence" not in schema["properties"]
    assert schema["description"].startswith("A resource which generates a random string.")
    assert schema["properties"]["length"]["constraints"] == [{"range": {"min": 1, "max": 512}, "description": None}]
    assert schema["support_status"] == {"status": "SUPPORTED", "message": None, "version": "2014.1", "previous_status": None}
