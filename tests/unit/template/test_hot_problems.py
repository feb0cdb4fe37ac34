"""stoker.template.hot: the problems a HOT template can have, collected and reported
together with their places (the rest of the reader: test_hot.py)."""

from __future__ import annotations

import pytest

from stoker.template.errors import Location, TemplateErrors
from stoker.template.hot import Template
from tests.unit.template.test_hot import load_error, load_errors, template

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
    # Heat ignores keys of an output it does not read: a warning, with the reason.
    (warning,) = Template.load("heat_template_version: 2015-10-15\noutputs:\n  o:\n    value: 1\n    condition: c\n").warnings

    assert warning.path == "outputs.o.condition"
    assert warning.hint == "'condition' needs heat_template_version 2016-10-14 or later"


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


def test_template_unknown_output_key_is_ignored_with_a_warning_and_a_hint():
    (warning,) = Template.load("heat_template_version: 2021-04-16\noutputs:\n  url:\n    value: 1\n    descripion: x\n").warnings

    assert warning.message == '"descripion" is not a keyword of an output definition: it is ignored'
    assert warning.hint == "did you mean 'description'?"


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
