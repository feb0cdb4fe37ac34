"""stoker.template.hot: reading a HOT template into definitions, and every problem found."""

from __future__ import annotations

import pytest

from stoker.template import versions
from stoker.template.definitions import OutputDefinition, ResourceDefinition
from stoker.template.errors import Location, TemplateError, TemplateErrors, TemplateSyntaxError
from stoker.template.functions.access import GetAttr, GetParam, GetResource
from stoker.template.hot import Template
from stoker.template.loader import Limits

GOOD = """\
heat_template_version: 2021-04-16
description: A server with a port
parameter_groups:
  - label: Sizing
    parameters: [flavor]
parameters:
  flavor:
    type: string
    default: m1.small
    constraints:
      - allowed_values: [m1.small, m1.large]
  key_name:
    type: string
    hidden: true
resources:
  port:
    type: OS::Neutron::Port
    properties:
      network: private
  server:
    type: OS::Nova::Server
    properties:
      flavor: {get_param: flavor}
      key_name: {get_param: key_name}
      networks:
        - port: {get_resource: port}
      name: {get_param: OS::stack_name}
    metadata:
      role: {get_attr: [port, name]}
    depends_on: port
    update_policy:
      pause_time: 10
    deletion_policy: Retain
    description: The server
    external_id: abc-123
    condition: true
outputs:
  address:
    description: The server's address
    value: {get_attr: [server, first_address]}
  everything:
    value: {get_attr: [port]}
    condition: true
"""


def load_errors(text: str, file: str = "t.yaml") -> list[TemplateError]:
    with pytest.raises(TemplateErrors) as caught:
        Template.load(text, file)
    return caught.value.errors


def load_error(text: str, file: str = "t.yaml") -> TemplateError:
    errors = load_errors(text, file)
    assert len(errors) == 1, [str(error) for error in errors]
    return errors[0]


def template(resources: str = "", *, version: str = "2021-04-16", extra: str = "") -> str:
    """A template with the given (indented) resources section body."""
    return f"heat_template_version: {version}\n{extra}resources:\n{resources}"


# -- a good template -------------------------------------------------------------


def test_template_load_reads_every_section():
    loaded = Template.load(GOOD, "good.yaml")

    assert loaded.version is versions.get("2021-04-16")
    assert loaded.description == "A server with a port"
    assert loaded.parameter_groups == [{"label": "Sizing", "parameters": ["flavor"]}]
    assert list(loaded.parameters) == ["flavor", "key_name"]
    assert loaded.parameters["flavor"].default == "m1.small"
    assert loaded.parameters["key_name"].hidden is True
    assert list(loaded.resources) == ["port", "server"]
    assert list(loaded.outputs) == ["address", "everything"]
    assert loaded.problems == []
    assert loaded.document.file == "good.yaml"


def test_template_load_reads_every_resource_key():
    server = Template.load(GOOD).resources["server"]

    assert isinstance(server, ResourceDefinition)
    assert server.name == "server"
    assert server.resource_type == "OS::Nova::Server"
    assert isinstance(server.properties_data["flavor"], GetParam)
    assert isinstance(server.properties_data["networks"][0]["port"], GetResource)
    assert isinstance(server.metadata["role"], GetAttr)
    assert server.depends_on == ("port",)
    assert server.update_policy == {"pause_time": 10}
    assert server.deletion_policy == "Retain"
    assert server.description == "The server"
    assert server.external_id == "abc-123"
    assert server.condition is True


def test_template_load_defaults_for_a_minimal_resource():
    port = Template.load(GOOD).resources["port"]

    assert port.properties_data == {"network": "private"}
    assert port.metadata is None
    assert port.depends_on == ()
    assert port.deletion_policy == "Delete"
    assert port.update_policy is None
    assert port.description == ""


def test_template_load_reads_outputs():
    outputs = Template.load(GOOD).outputs

    assert isinstance(outputs["address"], OutputDefinition)
    assert outputs["address"].description == "The server's address"
    assert isinstance(outputs["address"].value, GetAttr)
    assert outputs["everything"].condition is True
    assert outputs["address"].required_resource_names() == {"server"}
    assert outputs["address"].referenced_attributes() == {("server", "first_address")}
    assert outputs["everything"].referenced_attributes() == {("port", None)}


def test_template_load_of_json_text():
    text = '{"heat_template_version": "2015-10-15", "resources": {"r": {"type": "OS::Heat::None"}}}'

    assert list(Template.load(text).resources) == ["r"]


def test_template_load_empty_sections_are_empty():
    loaded = Template.load("heat_template_version: 2021-04-16\nparameters:\nresources:\noutputs:\n")

    assert (loaded.parameters, loaded.resources, loaded.outputs) == ({}, {}, {})


def test_template_from_data_has_no_positions():
    data = {"heat_template_version": "2021-04-16", "resources": {"r": {"type": "OS::Heat::None"}}}

    loaded = Template.from_data(data)

    assert list(loaded.resources) == ["r"]
    with pytest.raises(TemplateErrors) as caught:
        Template.from_data({**data, "resources": {"r": {}}})
    assert caught.value.errors[0].location is None


def test_template_load_passes_limits_to_the_loader():
    with pytest.raises(TemplateSyntaxError):
        Template.load("heat_template_version: [", "t.yaml")
    with pytest.raises(TemplateError, match="exceeds maximum allowed size"):
        Template.load(GOOD, limits=Limits(max_bytes=100))


# -- versions --------------------------------------------------------------------


def test_template_missing_version_is_an_error():
    error = load_error("resources: {}\n")

    assert error.message == "The template has no heat_template_version"
    assert error.hint == "add a first line such as 'heat_template_version: 2021-04-16'"


def test_template_with_two_version_keys_is_ambiguous():
    error = load_error("heat_template_version: 2021-04-16\nAWSTemplateFormatVersion: '2010-09-09'\nresources: {}\n")

    assert error.message == "Ambiguous versions (heat_template_version, AWSTemplateFormatVersion)"
    assert error.location == Location("t.yaml", 2, 27)


def test_template_unknown_version_is_an_error_with_a_hint():
    error = load_error("heat_template_version: 2021-04-15\nresources: {}\n", "v.yaml")

    assert error.message == 'The template version is invalid: "heat_template_version: 2021-04-15" is not a known version'
    assert error.path == "heat_template_version"
    assert error.location == Location("v.yaml", 1, 24)
    assert error.hint == "did you mean '2021-04-16'?"


def test_template_unknown_version_without_a_close_match_lists_the_versions():
    error = load_error("heat_template_version: 1999\n")

    assert error.hint.startswith("valid versions: 2013-05-23, ")


@pytest.mark.parametrize(
    ("alias", "date"),
    [("newton", "2016-10-14"), ("ocata", "2017-02-24"), ("pike", "2017-09-01"), ("queens", "2018-03-02"),
     ("rocky", "2018-08-31"), ("wallaby", "2021-04-16")],
)
def test_template_release_name_is_accepted_as_version(alias, date):
    loaded = Template.load(f"heat_template_version: {alias}\nresources: {{}}\n")

    assert loaded.version.date == date
    assert alias in loaded.version.aliases


@pytest.mark.parametrize("version", versions.HOT_VERSIONS)
def test_template_every_version_loads(version):
    loaded = Template.load(template("  r:\n    type: OS::Heat::None\n", version=version))

    assert loaded.version.date == version


def test_template_document_must_be_a_map():
    error = load_error("- a\n- b\n")

    assert "must be a map" in error.message


# -- definitions -----------------------------------------------------------------


def test_resource_definition_required_resource_names():
    text = template(
        "  a:\n    type: OS::Heat::None\n  b:\n    type: OS::Heat::None\n  c:\n    type: OS::Heat::None\n"
        "  d:\n    type: OS::Heat::None\n    depends_on: a\n"
        "    properties:\n      x: {str_replace: {template: T, params: {T: {get_attr: [b, name]}}}}\n"
        "      y: {get_param: OS::stack_name}\n"
        "    metadata:\n      z: [{get_resource: c}]\n"
    )

    definition = Template.load(text).resources["d"]

    assert definition.required_resource_names() == {"a", "b", "c"}
    assert definition.referenced_attributes() == {("b", "name")}
    assert Template.load(text).resources["a"].required_resource_names() == set()


def test_resource_definition_render_gives_back_the_template_form():
    loaded = Template.load(GOOD)

    assert loaded.resources["server"].render() == {
        "type": "OS::Nova::Server",
        "properties": {
            "flavor": {"get_param": "flavor"},
            "key_name": {"get_param": "key_name"},
            "networks": [{"port": {"get_resource": "port"}}],
            "name": {"get_param": "OS::stack_name"},
        },
        "metadata": {"role": {"get_attr": ["port", "name"]}},
        "depends_on": ["port"],
        "deletion_policy": "Retain",
        "update_policy": {"pause_time": 10},
        "external_id": "abc-123",
        "description": "The server",
        "condition": True,
    }
    assert loaded.resources["port"].render() == {"type": "OS::Neutron::Port", "properties": {"network": "private"}}


def test_resource_definition_render_normalises_the_deletion_policy():
    body = "  r:\n    type: OS::Heat::None\n    deletion_policy: snapshot\n"

    assert Template.load(template(body)).resources["r"].render()["deletion_policy"] == "Snapshot"


def test_resource_definition_render_then_load_is_the_same_definition():
    loaded = Template.load(GOOD)
    data = {
        "heat_template_version": "2021-04-16",
        "parameters": {"flavor": {"type": "string"}, "key_name": {"type": "string"}},
        "resources": {name: definition.render() for name, definition in loaded.resources.items()},
    }

    again = Template.from_data(data)

    assert again.resources == loaded.resources


def test_resource_definition_unbound_cannot_resolve():
    definition = Template.load(GOOD).resources["server"]

    with pytest.raises(RuntimeError, match="not bound"):
        definition.resolved_metadata()
    assert definition.bind(lambda value: {"role": "p"}).resolved_metadata() == {"role": "p"}


def test_hot_parameter_groups_and_modulo_rules():
    from stoker.template.errors import TemplateErrors

    body = """heat_template_version: 2016-10-14
parameters:
  a: {type: number, default: 2, constraints: [{modulo: {step: 2, offset: 0}}]}
  b: {type: string, default: x}
parameter_groups:
  - label: one
    parameters: [a, b, c]
  - parameters: [b]
  - label: empty
resources: {}
"""
    with pytest.raises(TemplateErrors) as caught:
        Template.load(body, "p.yaml")
    assert [str(e) for e in caught.value.errors] == [
        "p.yaml:3:47: parameters.a.constraints[0]: Invalid constraint: the modulo constraint is not supported in heat_template_version 2016-10-14; it appears in 2017-02-24",
        "p.yaml:7:24: parameter_groups[0].parameters[2]: The grouped parameter c does not reference a valid parameter.",
        "p.yaml:8:18: parameter_groups[1].parameters[0]: The b parameter must be assigned to one parameter group only.",
        "p.yaml:9:5: parameter_groups[2]: Parameters must be provided for each Parameter Group.",
    ]
    assert Template.load(body.replace("2016-10-14", "2017-02-24").replace(", c]", "]").replace("  - parameters: [b]\n  - label: empty\n", "")).parameters["a"].constraints
