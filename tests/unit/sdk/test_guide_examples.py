"""The code examples of the plugin guide (seed 001), each showing what the guide says."""

from __future__ import annotations

import pytest

from stoker.environment.registry import ResourceRegistry
from stoker.sdk import attributes, constraints, properties, resource, support
from stoker.sdk.exceptions import InvalidTemplateAttribute, PropertyError
from stoker.sdk.properties import Properties
from stoker.sdk.testing import PluginHarness


class CustomResource(resource.Resource):
    """This custom resource has description.

    Now end-users could understand the meaning of the resource existing
    and will use it correctly without any additional questions.
    """


NESTED_SCHEMA = {
    "foo": properties.Schema(
        properties.Schema.STRING,
        "description of foo field",
        constraints=[constraints.AllowedPattern("(Ba[rc]?)+"), constraints.Length(max=10, description="don't go crazy")],
    )
}
PROPERTIES_SCHEMA = {
    "property_name": properties.Schema(
        properties.Schema.MAP, "Internationalized description of property", required=True, default={"Foo": "Bar"}, schema=NESTED_SCHEMA
    )
}


def test_guide_docstring_is_the_type_description(make_service):
    service = make_service()
    service.registry.register("My::Custom::Plugin", CustomResource)
    description = service.resource_type_schema("My::Custom::Plugin")["description"]
    assert description == (
        "This custom resource has description.\n\n"
        "Now end-users could understand the meaning of the resource existing\n"
        "and will use it correctly without any additional questions."
    )


def test_guide_nested_schema_constraints_apply_to_map_members():
    good = Properties(PROPERTIES_SCHEMA, {"property_name": {"foo": "BarBac"}})
    assert good["property_name"] == {"foo": "BarBac"}
    pattern = Properties(PROPERTIES_SCHEMA, {"property_name": {"foo": "Bax"}})
    with pytest.raises(PropertyError, match=r"properties.property_name.foo: \"Bax\" does not match pattern"):
        pattern["property_name"]
    length = Properties(PROPERTIES_SCHEMA, {"property_name": {"foo": "BarBarBarBar"}})
    with pytest.raises(PropertyError) as caught:
        length["property_name"]
    assert str(caught.value) == "properties.property_name.foo: don't go crazy"


def test_guide_schema_defaults():
    schema = properties.Schema(properties.Schema.STRING)
    assert (schema.description, schema.default, schema.schema, schema.required, schema.update_allowed, schema.immutable) == (
        None, None, None, False, False, False,
    )  # fmt: skip
    assert properties.Schema.TYPES == ("Integer", "String", "Number", "Boolean", "Map", "List", "Any")


@pytest.mark.parametrize(
    ("kind", "empty"),
    [("String", ""), ("Number", 0), ("Integer", 0), ("List", []), ("Map", {}), ("Boolean", False)],
)
def test_guide_unset_property_gives_the_empty_value_of_its_type(kind, empty):
    values = Properties({"p": properties.Schema(kind)}, {})
    assert values["p"] == empty
    assert values.data == {}


def test_guide_properties_convert_as_heat_does():
    schema = {
        "count": properties.Schema(properties.Schema.INTEGER),
        "flag": properties.Schema(properties.Schema.BOOLEAN),
        "ratio": properties.Schema(properties.Schema.NUMBER),
        "name": properties.Schema(properties.Schema.STRING),
    }
    values = Properties(schema, {"count": "5", "flag": "true", "ratio": "0.5", "name": 7})
    assert (values["count"], values["flag"], values["ratio"], values["name"]) == (5, True, 0.5, "7")
    assert values.data == {"count": "5", "flag": "true", "ratio": "0.5", "name": 7}
    with pytest.raises(PropertyError, match="Value 'five' is not an integer"):
        Properties(schema, {"count": "five"})["count"]
    with pytest.raises(PropertyError, match='"yes please" is not a valid boolean'):
        Properties(schema, {"flag": "yes please"})["flag"]


class Foo(resource.Resource):
    """The guide's properties and attributes example."""

    properties_schema = {
        "foo": properties.Schema(properties.Schema.STRING, "foo prop description", default="foo", required=True),
        "bar": properties.Schema(properties.Schema.INTEGER, "bar prop description", required=True, constraints=[constraints.Range(5, 10)]),
    }
    attributes_schema = {
        "Attr_1": attributes.Schema("The first attribute", support_status=support.Status("5.0.0"), type=attributes.Schema.STRING),
        "Attr_2": attributes.Schema("The second attribute", type=attributes.Schema.MAP),
    }

    def handle_create(self):
        self.resource_id_set("foo-1")

    def _resolve_attribute(self, name):
        # The guide's pattern: look at the physical resource, refuse unknown names.
        physical = {"Attr_1": self.properties["foo"], "Attr_2": {"bar": self.properties["bar"]}}
        if name not in physical:
            raise InvalidTemplateAttribute(self.name, name)
        return physical[name]


def test_guide_foo_example_validates_range_with_property_path():
    harness = PluginHarness(Foo, {"foo": "Value of the foo property", "bar": 11}, name="resource-1")
    with pytest.raises(PropertyError) as caught:
        harness.validate()
    assert str(caught.value) == "resources.resource-1.properties.bar: 11 is out of range (min: 5, max: 10)"


def test_guide_foo_example_attributes():
    harness = PluginHarness(Foo, {"bar": 7}, name="resource-1")
    harness.create()
    assert harness.attribute("Attr_1") == "foo"
    assert harness.attribute("Attr_2") == {"bar": 7}
    assert harness.attribute("Attr_2", "bar") == 7
    assert Foo.attributes_schema["Attr_1"].support_status.version == "5.0.0"
    with pytest.raises(InvalidTemplateAttribute):
        harness.resource.get_attribute("Attr_3")


def test_guide_default_handlers():
    """Without overrides: update means replacement, delete without entity does nothing,
    a failed resource is replaced."""
    from stoker.sdk.exceptions import UpdateReplace

    harness = PluginHarness(CustomResource)
    harness.create()
    with pytest.raises(UpdateReplace):
        harness.resource.handle_update(None, {}, {})
    assert harness.resource.handle_delete() is None
    assert harness.resource.needs_replace_failed() is True


def test_guide_resource_mapping_registers_one_class_under_several_names():
    registry = ResourceRegistry()
    registry.register_mapping({"My::Custom::Plugin": Foo, "My::Old::Name": Foo}, "example")
    assert registry.get_class("My::Custom::Plugin") is registry.get_class("My::Old::Name") is Foo
