"""A plugin written for Heat, as the seed guide (001) shows it, loads unmodified."""

from __future__ import annotations

import textwrap

import pytest

from stoker.template.errors import TemplateErrors
from tests.support.stacks import template

HEAT_PLUGIN = '''
from heat.common import exception
from heat.common.i18n import _
from heat.engine import attributes
from heat.engine import constraints
from heat.engine import properties
from heat.engine import resource
from heat.engine import support


class Foo(resource.Resource):
    """A Heat-style resource from the plugin guide.

    It stores foo and bar and exposes them as attributes.
    """

    support_status = support.SupportStatus(version='5.0.0')

    properties_schema = {
        'foo': properties.Schema(
            properties.Schema.STRING,
            _('foo prop description'),
            default='foo',
            required=True
        ),
        'bar': properties.Schema(
            properties.Schema.INTEGER,
            _('bar prop description'),
            required=True,
            constraints=[
                constraints.Range(5, 10)
            ]
        )
    }

    attributes_schema = {
        'Attr_1': attributes.Schema(
            _('The first attribute'),
            support_status=support.Status('5.0.0'),
            type=attributes.Schema.STRING
        ),
        'Attr_2': attributes.Schema(
            _('The second attribute'),
            type=attributes.Schema.MAP
        )
    }

    def handle_create(self):
        self.resource_id_set(self.physical_resource_name())

    def validate(self):
        super(Foo, self).validate()
        if self.properties['foo'] == 'forbidden':
            raise exception.StackValidationFailed(message=_('foo may not be forbidden'))

    def _resolve_attribute(self, name):
        if name == 'Attr_1':
            return self.properties['foo']
        if name == 'Attr_2':
            return {'bar': self.properties['bar'], 'foo': self.properties['foo']}
        raise exception.InvalidTemplateAttribute(resource=self.name, key=name)


def resource_mapping():
    return {'Resource::Foo': Foo}
'''

GUIDE_TEMPLATE = """
heat_template_version: 2015-04-30
resources:
  resource-1:
    type: Resource::Foo
    properties:
      foo: Value of the foo property
      bar: BAR
outputs:
  foo-attrib-1:
    value: { get_attr: [resource-1, Attr_1] }
    description: The first attribute of the foo resource
  foo-attrib-2:
    value: { get_attr: [resource-1, Attr_2] }
    description: The second attribute of the foo resource
"""


@pytest.fixture
def heat_service(make_service, tmp_path):
    plugins = tmp_path / "heat_plugins"
    plugins.mkdir()
    (plugins / "foo.py").write_text(textwrap.dedent(HEAT_PLUGIN))
    service = make_service(plugin_dirs=[str(plugins)])
    assert service.registry.problems == []
    return service


def test_heat_plugin_from_the_guide_runs(heat_service):
    stack = heat_service.create_stack("foo", template(GUIDE_TEMPLATE.replace("BAR", "7")))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    outputs = {o["output_key"]: o["output_value"] for o in heat_service.outputs("foo")}
    assert outputs == {"foo-attrib-1": "Value of the foo property", "foo-attrib-2": {"bar": 7, "foo": "Value of the foo property"}}


def test_heat_plugin_range_error_names_the_property_path(heat_service):
    with pytest.raises(TemplateErrors) as caught:
        heat_service.create_stack("foo", template(GUIDE_TEMPLATE.replace("BAR", "11"), "guide.yaml"))
    assert [str(e) for e in caught.value.errors] == [
        "guide.yaml:8:12: resources.resource-1.properties.bar: 11 is out of range (min: 5, max: 10)"
    ]


def test_heat_plugin_validation_error_is_reported(heat_service):
    body = GUIDE_TEMPLATE.replace("BAR", "7").replace("Value of the foo property", "forbidden")
    with pytest.raises(TemplateErrors) as caught:
        heat_service.create_stack("foo", template(body))
    assert "foo may not be forbidden" in str(caught.value)


HEAT_STACK_PLUGIN = '''
from heat.common.i18n import _
from heat.engine import attributes
from heat.engine import properties
from heat.engine.resources import stack_resource


class Pair(stack_resource.StackResource):
    """A Heat-style nested stack resource: two values in a child stack."""

    properties_schema = {
        'word': properties.Schema(properties.Schema.STRING, _('The word to pair'), required=True, update_allowed=True),
    }
    attributes_schema = {'pair': attributes.Schema(_('Both values'), type=attributes.Schema.LIST)}

    def child_template(self):
        value = {'type': 'OS::Heat::Value', 'properties': {'value': {'get_param': 'word'}}}
        return {
            'heat_template_version': '2016-10-14',
            'parameters': {'word': {'type': 'string'}},
            'resources': {'left': value, 'right': value},
            'outputs': {'pair': {'value': [{'get_attr': ['left', 'value']}, {'get_attr': ['right', 'value']}]}},
        }

    def child_params(self):
        return {'word': self.properties['word']}

    def handle_create(self):
        return self.create_with_template(self.child_template(), self.child_params())

    def _resolve_attribute(self, name):
        if name == 'pair':
            return self.get_output('pair')


def resource_mapping():
    return {'Heat::Pair': Pair}
'''


def test_heat_style_stack_resource_plugin_runs(make_service, tmp_path):
    plugins = tmp_path / "heat_plugins"
    plugins.mkdir()
    (plugins / "pair.py").write_text(textwrap.dedent(HEAT_STACK_PLUGIN))
    service = make_service(plugin_dirs=[str(plugins)])
    assert service.registry.problems == []
    body = """
    heat_template_version: 2016-10-14
    parameters: {word: {type: string, default: hi}}
    resources:
      p: {type: Heat::Pair, properties: {word: {get_param: word}}}
    outputs:
      pair: {value: {get_attr: [p, pair]}}
    """
    stack = service.create_stack("pair", template(body))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert service.outputs("pair")[0]["output_value"] == ["hi", "hi"]
    # The base's update passes the new word down to the child stack.
    assert service.update_stack("pair", template(body), parameters={"word": "yo"}).state == "UPDATE_COMPLETE"
    assert service.outputs("pair")[0]["output_value"] == ["yo", "yo"]
    assert service.delete_stack("pair").state == "DELETE_COMPLETE"
    assert service.list_stacks(nested=True) == []
