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


# -- problems, collected -----------------------------------------------------------


BROKEN = """\
heat_template_version: 2021-04-16
descripton: typo
parameters:
  flavor:
    type: string
resources:
  web:
    type: OS::Nova::Server
    propertis: {}
    deletion_policy: Destroy
    depends_on: [db, net]
  db:
    properties:
      image: {get_param: image}
  port:
    type: OS::Neutron::Port
    properties:
      network: {get_resource: wbe}
      name: {get_attr: [nope, name]}
      flavor: {get_param: flavour}
outputs:
  url:
    description: no value
"""


def test_template_problems_are_reported_together_in_reading_order():
    errors = load_errors(BROKEN, "broken.yaml")

    assert [(error.location.line, error.path) for error in errors] == [
        (2, "descripton"),
        (9, "resources.web.propertis"),
        (10, "resources.web.deletion_policy"),
        (11, "resources.web.depends_on[1]"),
        (13, "resources.db"),
        (18, "resources.port.properties.network.get_resource"),
        (19, "resources.port.properties.name.get_attr"),
        (20, "resources.port.properties.flavor"),
        (23, "outputs.url"),
    ]
    assert all(error.location.file == "broken.yaml" for error in errors)


def test_template_errors_text_lists_each_problem():
    with pytest.raises(TemplateErrors) as caught:
        Template.load(BROKEN, "broken.yaml")

    text = str(caught.value)
    assert text.startswith("9 problems:\n  - broken.yaml:2:13: descripton: The template section is invalid: descripton")
    assert "(did you mean 'description'?)" in text


def test_template_unknown_section_has_a_did_you_mean_hint():
    error = load_error("heat_template_version: 2021-04-16\nresource:\n  r: {type: OS::Heat::None}\n")

    assert error.message == "The template section is invalid: resource"
    assert error.path == "resource"
    assert error.hint == "did you mean 'resources'?"


def test_template_conditions_section_needs_2016_10_14():
    assert Template.load("heat_template_version: 2016-10-14\nconditions: {}\n").problems == []

    error = load_error("heat_template_version: 2016-04-08\nconditions: {}\n")
    assert error.message == "The template section is invalid: conditions"


def test_template_unknown_resource_key_has_a_hint():
    error = load_error(template("  r:\n    type: OS::Heat::None\n    propertie: {}\n"))

    assert error.message == '"propertie" is not a valid keyword inside a resource definition'
    assert error.path == "resources.r.propertie"
    assert error.location == Location("t.yaml", 5, 16)
    assert error.hint == "did you mean 'properties'?"


@pytest.mark.parametrize("key", ["external_id", "condition"])
def test_template_resource_keys_from_2016_10_14(key):
    body = f"  r:\n    type: OS::Heat::None\n    {key}: x\n"
    declared = "conditions:\n  x: true\n" if key == "condition" else ""
    assert Template.load(template(body, version="2016-10-14", extra=declared)).problems == []

    error = load_error(template(body, version="2016-04-08"))
    assert error.path == f"resources.r.{key}"
    assert error.hint == f"'{key}' needs heat_template_version 2016-10-14 or later"


def test_template_output_condition_needs_2016_10_14():
    error = load_error("heat_template_version: 2015-10-15\noutputs:\n  o:\n    value: 1\n    condition: c\n")

    assert error.path == "outputs.o.condition"


def test_template_resource_without_type_is_an_error():
    error = load_error(template("  r:\n    properties: {}\n"))

    assert error.message == "Resource r has no type"
    assert error.path == "resources.r"
    assert error.location == Location("t.yaml", 4, 5)
    assert "OS::Heat::None" in error.hint


def test_template_resource_with_empty_type_is_an_error():
    error = load_error(template("  r:\n    type: ''\n"))

    assert error.path == "resources.r.type"


def test_template_resource_must_be_a_map():
    error = load_error(template("  r: OS::Heat::None\n"))

    assert error.message == "Resource r must be a map with at least a type"


def test_template_references_to_a_resource_without_type_are_not_reported_again():
    text = template("  a:\n    properties: {}\n  b:\n    type: OS::Heat::None\n    depends_on: a\n"
                    "    properties: {x: {get_resource: a}}\n")

    assert [error.message for error in load_errors(text)] == ["Resource a has no type"]


@pytest.mark.parametrize("policy", ["Delete", "Retain", "Snapshot"])
def test_template_deletion_policies(policy):
    body = f"  r:\n    type: OS::Heat::None\n    deletion_policy: {policy}\n"

    assert Template.load(template(body)).resources["r"].deletion_policy == policy


@pytest.mark.parametrize(("policy", "normalised"), [("delete", "Delete"), ("retain", "Retain"), ("snapshot", "Snapshot")])
def test_template_lowercase_deletion_policies_are_normalised(policy, normalised):
    body = f"  r:\n    type: OS::Heat::None\n    deletion_policy: {policy}\n"

    assert Template.load(template(body, version="2016-10-14")).resources["r"].deletion_policy == normalised


def test_template_lowercase_deletion_policy_needs_2016_10_14():
    # As in Heat: the lower-case aliases arrived with 2016-10-14.
    body = "  r:\n    type: OS::Heat::None\n    deletion_policy: retain\n"

    error = load_error(template(body, version="2016-04-08"))

    assert error.message == 'Invalid deletion policy "retain"'
    assert "2016-10-14" in error.hint


@pytest.mark.parametrize("policy", ["Destroy", "RETAIN", "1"])
def test_template_bad_deletion_policy_is_an_error(policy):
    body = f"  r:\n    type: OS::Heat::None\n    deletion_policy: '{policy}'\n"

    error = load_error(template(body))

    assert error.message == f'Invalid deletion policy "{policy}"'
    assert error.path == "resources.r.deletion_policy"
    assert error.location == Location("t.yaml", 5, 22)
    assert error.hint.startswith("use Delete, Retain or Snapshot")


def test_template_depends_on_unknown_resource_has_a_hint():
    text = template("  server:\n    type: OS::Heat::None\n  web:\n    type: OS::Heat::None\n    depends_on: [server, sever]\n")

    error = load_error(text)

    assert error.message == '"sever" (in depends_on) is not a resource in the template'
    assert error.path == "resources.web.depends_on[1]"
    assert error.location == Location("t.yaml", 7, 26)
    assert error.hint == "did you mean 'server'?"


def test_template_depends_on_a_single_name():
    text = template("  a:\n    type: OS::Heat::None\n  b:\n    type: OS::Heat::None\n    depends_on: a\n")

    assert Template.load(text).resources["b"].depends_on == ("a",)


def test_template_depends_on_itself_is_an_error():
    error = load_error(template("  a:\n    type: OS::Heat::None\n    depends_on: [a]\n"))

    assert error.message == "A resource cannot depend on itself"
    assert error.path == "resources.a.depends_on[0]"


def test_template_depends_on_must_name_resources():
    error = load_error(template("  a:\n    type: OS::Heat::None\n    depends_on: {x: 1}\n"))

    assert error.message == "depends_on must be a resource name or a list of names"


def test_template_get_resource_of_unknown_resource_is_an_error():
    text = template("  port:\n    type: OS::Heat::None\n  server:\n    type: OS::Heat::None\n"
                    "    properties:\n      port: {get_resource: prot}\n")

    error = load_error(text)

    assert error.message == 'The specified reference "prot" (in get_resource) is not a resource in the template'
    assert error.path == "resources.server.properties.port.get_resource"
    assert error.location == Location("t.yaml", 8, 28)
    assert error.hint == "did you mean 'port'?"


def test_template_get_attr_of_unknown_resource_in_an_output_is_an_error():
    text = template("  port:\n    type: OS::Heat::None\n", extra="outputs:\n  o:\n    value: {get_attr: [prt, name]}\n")

    error = load_error(text)

    assert error.path == "outputs.o.value.get_attr"
    assert error.hint == "did you mean 'port'?"


@pytest.mark.parametrize("call", ["{get_resource: a}", "{get_attr: [a, name]}", "{get_attr: [a]}"])
def test_template_resource_referring_to_itself_is_an_error(call):
    error = load_error(template(f"  a:\n    type: OS::Heat::None\n    properties:\n      x: {call}\n"))

    assert error.message.startswith("Circular dependency: resource a refers to itself")


def test_template_get_param_of_undeclared_parameter_is_an_error():
    text = template(
        "  r:\n    type: OS::Heat::None\n    properties:\n      flavor: {get_param: flavour}\n",
        extra="parameters:\n  flavor:\n    type: string\n",
    )

    error = load_error(text)

    assert error.message == "The Parameter (flavour) was not defined in template."
    assert error.path == "resources.r.properties.flavor"
    assert error.location == Location("t.yaml", 9, 15)
    assert error.hint == "did you mean 'flavor'?"


def test_template_get_param_of_pseudo_parameters_is_allowed():
    body = "  r:\n    type: OS::Heat::None\n    properties:\n      a: {get_param: OS::stack_name}\n" \
           "      b: {get_param: OS::stack_id}\n      c: {get_param: OS::project_id}\n"

    assert Template.load(template(body)).problems == []


def test_template_get_param_of_a_badly_declared_parameter_is_not_reported_again():
    text = template(
        "  r:\n    type: OS::Heat::None\n    properties:\n      size: {get_param: size}\n",
        extra="parameters:\n  size:\n    type: integer\n",
    )

    assert [error.path for error in load_errors(text)] == ["parameters.size.type"]


def test_template_output_without_value_is_an_error():
    error = load_error("heat_template_version: 2021-04-16\noutputs:\n  url:\n    description: x\n")

    assert error.message == "Output url has no value"
    assert error.path == "outputs.url"
    assert error.location == Location("t.yaml", 4, 5)


def test_template_unknown_output_key_has_a_hint():
    error = load_error("heat_template_version: 2021-04-16\noutputs:\n  url:\n    value: 1\n    descripion: x\n")

    assert error.hint == "did you mean 'description'?"


def test_template_function_argument_errors_carry_path_and_location():
    error = load_error(template("  r:\n    type: OS::Heat::None\n    properties:\n      name: {get_param: [] }\n"))

    assert error.message.startswith("Arguments to get_param")
    assert error.path == "resources.r.properties.name"
    assert error.location == Location("t.yaml", 6, 13)


def test_template_removed_function_is_reported_with_its_place():
    error = load_error(template("  r:\n    type: OS::Heat::None\n    properties:\n      v: {Ref: x}\n"))

    assert error.message == (
        "The function Ref is not supported in heat_template_version 2021-04-16: "
        "it was removed in 2014-10-16; use get_resource or get_param instead"
    )
    assert error.location == Location("t.yaml", 6, 16)


def test_template_list_join_in_2013_05_23_is_accepted():
    body = "  r:\n    type: OS::Heat::None\n    properties:\n      v: {list_join: [',', [a, b]]}\n"

    assert Template.load(template(body, version="2013-05-23")).problems == []


def test_template_section_must_be_a_map():
    error = load_error("heat_template_version: 2021-04-16\nresources: [a]\n")

    assert error.message == "The resources section must be a map"


def test_template_bad_parameter_declaration_is_reported_with_the_rest():
    text = template("  r:\n    type: OS::Heat::None\n    deletion_policy: x\n", extra="parameters:\n  p:\n    type: strnig\n")

    assert [error.path for error in load_errors(text)] == ["parameters.p.type", "resources.r.deletion_policy"]


def test_template_collect_returns_the_template_with_its_problems():
    loaded = Template.load(BROKEN, "broken.yaml", collect=True)

    assert len(loaded.problems) == 9
    assert loaded.problems[0].location == Location("broken.yaml", 2, 13)
    assert list(loaded.resources) == ["web", "port"]


def test_template_collect_still_raises_when_the_template_is_unreadable():
    with pytest.raises(TemplateErrors):
        Template.load("resources: {}\n", collect=True)


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


# -- names that are no function in the version: data, as Heat reads them ------------------
# Heat looks a one-key map's key up in the version's function table only
# (heat/engine/hot/template.py ``functions``; heat/engine/function.py parse): a name it
# lacks is an ordinary map key. A removed function (hot_funcs.Removed) stays an error.


def test_template_function_of_a_later_version_is_data_with_a_warning():
    text = template(
        "  web:\n"
        "    type: OS::Heat::None\n"
        "    properties:\n"
        "      value: {filter: [[1, 2], {get_param: OS::stack_name}]}\n",
        version="2016-10-14",
    )

    loaded = Template.load(text, "t.yaml")

    value = loaded.resources["web"].properties_data["value"]
    assert list(value) == ["filter"] and isinstance(value["filter"][1], GetParam)  # its value is parsed
    (warning,) = loaded.warnings
    assert warning.path == "resources.web.properties.value.filter"
    assert warning.location == Location("t.yaml", 6, 23)
    assert "'filter' is not a function in heat_template_version 2016-10-14" in warning.message
    assert "it appears in heat_template_version 2017-02-24" in warning.message


@pytest.mark.parametrize(("name", "version", "first"), [("make_url", "2017-02-24", "2017-09-01"), ("yaql", "2016-04-08", "2016-10-14")])
def test_template_later_functions_in_metadata_and_outputs_are_data(name, version, first):
    text = template(
        f"  web:\n    type: OS::Heat::None\n    metadata: {{{name}: {{host: h}}}}\n",
        version=version,
        extra=f"outputs:\n  out:\n    value: {{{name}: {{expression: x}}}}\n",
    )

    loaded = Template.load(text)

    assert loaded.resources["web"].metadata == {name: {"host": "h"}}
    assert loaded.outputs["out"].value == {name: {"expression": "x"}}
    assert [warning.path for warning in loaded.warnings] == ["resources.web.metadata." + name, "outputs.out.value." + name]
    assert all(f"it appears in heat_template_version {first}" in warning.message for warning in loaded.warnings)


def test_template_removed_function_is_still_an_error():
    # hot_funcs.Removed: "The function Ref is not supported in this version of HOT."
    error = load_error(template("  web:\n    type: OS::Heat::None\n    properties:\n      a: {Ref: x}\n", version="2015-10-15"))

    assert error.path == "resources.web.properties.a.Ref"
    assert "removed in 2014-10-16" in error.message


def test_template_hot_function_in_a_cfn_template_is_data():
    text = (
        "AWSTemplateFormatVersion: 2010-09-09\n"
        "Resources:\n"
        "  web:\n"
        "    Type: OS::Heat::None\n"
        "    Metadata: {get_param: x}\n"
    )

    loaded = Template.load(text)

    assert loaded.resources["web"].metadata == {"get_param": "x"}
    assert [warning.path for warning in loaded.warnings] == ["Resources.web.Metadata.get_param"]


def test_template_condition_of_a_later_function_is_refused_as_no_condition():
    # contains is no condition function before 2017-09-01: the map is data, which is no
    # condition (Heat: 'The definition of condition "c" is invalid').
    text = "heat_template_version: 2017-02-24\nconditions:\n  c: {contains: [a, [a]]}\nresources: {}\n"

    errors = load_errors(text)

    assert [error.message for error in errors] == ["The definition of condition \"c\" is invalid: {'contains': ['a', ['a']]}"]


def test_template_duplicate_key_is_a_warning_and_the_last_value_counts():
    text = template("  web:\n    type: OS::Heat::None\n    type: OS::Heat::RandomString\n")

    loaded = Template.load(text, "t.yaml")

    assert loaded.resources["web"].resource_type == "OS::Heat::RandomString"
    assert [str(warning) for warning in loaded.warnings] == [
        "t.yaml:5:5: resources.web.type: Duplicate key 'type' (first on line 4): the last value is used, "
        "as Heat reads it (remove all but one of them)"
    ]


# -- names, parameters (heat/engine/stack.py validate, hot/parameters.py) ----------------


def test_template_resource_named_like_a_parameter_is_heats_duplicate_names_error():
    text = "heat_template_version: 2021-04-16\nparameters:\n  web: {type: string}\nresources:\n  web: {type: OS::Heat::None}\n"

    error = load_error(text)

    assert error.message == "Duplicate names {'web'}"
    assert error.path == "resources.web"
    assert error.location == Location("t.yaml", 5, 8)


def test_template_resource_named_like_a_pseudo_parameter_is_a_duplicate():
    text = "heat_template_version: 2021-04-16\nresources:\n  OS::stack_name: {type: OS::Heat::None}\n"

    assert load_error(text).message == "Duplicate names {'OS::stack_name'}"


def test_cfn_resource_named_like_a_parameter_is_a_duplicate():
    text = (
        "AWSTemplateFormatVersion: 2010-09-09\n"
        "Parameters:\n  web: {Type: String}\n"
        "Resources:\n  web: {Type: OS::Heat::None}\n"
    )

    error = load_error(text)

    assert error.message == "Duplicate names {'web'}"
    assert error.path == "Resources.web"


@pytest.mark.parametrize("version", ["2013-05-23", "2016-10-14", "2017-09-01"])
def test_template_parameter_tags_before_2018_03_02_are_heats_invalid_key(version):
    # HOTParamSchema's KEYS lack 'tags' until HOTParamSchema20180302.
    text = f"heat_template_version: {version}\nparameters:\n  p:\n    type: string\n    tags: [a]\nresources: {{}}\n"

    error = load_error(text)

    assert error.message == "Invalid key 'tags' for parameter (p)"
    assert error.path == "parameters.p.tags"
    assert error.hint == "tags need heat_template_version 2018-03-02 or later"


@pytest.mark.parametrize("version", ["2018-03-02", "queens", "2021-04-16"])
def test_template_parameter_tags_from_2018_03_02(version):
    text = f"heat_template_version: {version}\nparameters:\n  p:\n    type: string\n    tags: [a, b]\nresources: {{}}\n"

    assert Template.load(text).parameters["p"].tags == ["a", "b"]


def test_template_parameter_tags_must_be_a_list():
    text = "heat_template_version: 2018-03-02\nparameters:\n  p:\n    type: string\n    tags: a\nresources: {}\n"

    assert load_error(text).message == "Tags property should be a list for parameter: p"
