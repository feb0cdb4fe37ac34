"""The conditions section, resource and output conditions, and the definitions that
stay active for given parameter values (Template.evaluate_conditions,
active_definitions, with_conditions)."""

from __future__ import annotations

import pytest

from stoker.template.errors import TemplateError, TemplateErrors
from stoker.template.functions.access import GetResource
from stoker.template.functions.base import resolve
from stoker.template.functions.conditions import Equals, Not
from stoker.template.hot import Template
from tests.unit.template.fakes import FakeContext

HEADER = """\
heat_template_version: 2016-10-14
parameters:
  env_type:
    type: string
    default: test
  zone:
    type: string
    default: beijing
conditions:
  prod: {equals: [{get_param: env_type}, prod]}
  test:
    not:
      equals: [{get_param: env_type}, prod]
  beijing_prod:
    and:
      - equals: [{get_param: zone}, beijing]
      - equals: [{get_param: env_type}, prod]
  fujian_zone:
    or:
      - equals: [{get_param: zone}, fuzhou]
      - equals: [{get_param: zone}, xiamen]
  fujian_prod: {and: [fujian_zone, prod]}
  not_fujian: {not: fujian_zone}
"""

RESOURCES = """\
resources:
  test_res:
    type: OS::Heat::None
    properties:
      value: {if: [prod, env_is_prod, env_is_test]}
  prod_res:
    type: OS::Heat::None
    condition: prod
  test_res1:
    type: OS::Heat::None
    condition: test
  beijing_prod_res:
    type: OS::Heat::None
    condition: beijing_prod
  always:
    type: OS::Heat::None
    condition: true
  never:
    type: OS::Heat::None
    condition: false
  inline:
    type: OS::Heat::None
    condition: {not: prod}
    depends_on: [prod_res, test_res]
outputs:
  res_value:
    value: {get_attr: [prod_res, name]}
    condition: prod
  prod_resource:
    value: {if: [prod, {get_resource: prod_res}, no_prod_res]}
  test_res1_value:
    value: {if: [test, {get_attr: [test_res1, name]}, no_test_res1]}
"""


def load(text: str = HEADER + RESOURCES, **kwargs) -> Template:
    return Template.load(text, "t.yaml", **kwargs)


def load_errors(text: str) -> list[TemplateError]:
    with pytest.raises(TemplateErrors) as caught:
        load(text)
    return caught.value.errors


PSEUDO = {"OS::stack_name": "s", "OS::stack_id": "id", "OS::project_id": "p"}


def params(env_type: str = "test", zone: str = "beijing") -> dict:
    return {"env_type": env_type, "zone": zone, **PSEUDO}


# -- reading -----------------------------------------------------------------------


def test_conditions_are_parsed_with_the_condition_table():
    template = load()

    assert isinstance(template.conditions["prod"], Equals)
    assert isinstance(template.conditions["test"], Not)
    assert list(template.conditions) == ["prod", "test", "beijing_prod", "fujian_zone", "fujian_prod", "not_fujian"]


def test_resource_and_output_conditions_are_read():
    template = load()

    assert template.resources["prod_res"].condition == "prod"
    assert template.resources["always"].condition is True
    assert isinstance(template.resources["inline"].condition, Not)
    assert template.outputs["res_value"].condition == "prod"
    assert template.resources["test_res"].condition is None


def test_conditions_section_must_be_a_map():
    errors = load_errors("heat_template_version: 2016-10-14\nconditions: [a, b]\n")

    assert [e.message for e in errors] == ["Condition definitions must be a map. Found a list instead"]


@pytest.mark.parametrize("body", ["prod", "[true]", "5"])
def test_condition_definition_must_be_a_boolean_or_a_function(body):
    errors = load_errors(f"heat_template_version: 2016-10-14\nconditions:\n  prod: true\n  c: {body}\n")

    assert [e.message for e in errors] == [f'The definition of condition "c" is invalid: {__import__("yaml").safe_load(body)!r}']
    assert errors[0].path == "conditions.c"


def test_condition_with_a_resource_function_is_refused():
    errors = load_errors(
        "heat_template_version: 2016-10-14\nconditions:\n  c: {equals: [{get_param: env}, {get_attr: [r, a]}]}\n"
        "parameters:\n  env: {type: string}\nresources:\n  r: {type: OS::Heat::None}\n"
    )

    assert [(e.path, e.message) for e in errors] == [
        ("conditions.c.equals[1].get_attr", 'The function "get_attr" is invalid in this context')
    ]


def test_condition_get_param_must_name_a_parameter():
    errors = load_errors(
        "heat_template_version: 2016-10-14\nconditions:\n  c: {equals: [{get_param: nope}, 1]}\n"
        "resources:\n  r: {type: OS::Heat::None, condition: c}\n"
    )

    assert [e.message for e in errors] == ["The Parameter (nope) was not defined in template."]


def test_condition_nothing_uses_is_never_evaluated_and_only_warned_about():
    # As Heat (TripleO's rendered templates keep such conditions).
    text = (
        "heat_template_version: 2016-10-14\nconditions:\n  c: {equals: [{get_param: nope}, 1]}\n"
        "  d: {not: no_such_condition}\nresources:\n  r: {type: OS::Heat::None}\n"
    )
    parsed = Template.load(text)

    assert parsed.problems == []
    assert [(w.path, w.message.split(". ")[0]) for w in parsed.warnings] == [
        ("conditions.c.equals[0]", "The Parameter (nope) was not defined in template"),
        ("conditions.d.not", 'Invalid condition "no_such_condition"'),
    ]
    assert parsed.with_conditions({}).resources.keys() == {"r"}


@pytest.mark.parametrize("condition", ["[prod]", "5", "{a: b, c: d}"])
def test_resource_condition_type(condition):
    errors = load_errors(HEADER + f"resources:\n  r:\n    type: OS::Heat::None\n    condition: {condition}\n")

    assert [(e.path, e.message) for e in errors] == [
        ("resources.r.condition", "Resource r condition type must be string_or_boolean")
    ]


def test_unknown_condition_names_are_refused_with_a_hint():
    errors = load_errors(
        HEADER
        + "resources:\n  r:\n    type: OS::Heat::None\n    condition: prd\n"
        + "    properties:\n      v: {if: [tset, 1, 2]}\n"
        + "outputs:\n  o:\n    value: 1\n    condition: {not: beijing_prd}\n"
    )

    assert [(e.path, e.message, e.hint) for e in errors] == [
        ("resources.r.condition", 'Invalid condition "prd"', "did you mean 'prod'?"),
        ("resources.r.properties.v.if", 'Invalid condition "tset"', "did you mean 'test'?"),
        ("outputs.o.condition.not", 'Invalid condition "beijing_prd"', "did you mean 'beijing_prod'?"),
    ]


def test_conditions_naming_each_other_in_a_cycle_are_refused():
    errors = load_errors(
        "heat_template_version: 2016-10-14\nconditions:\n"
        "  first_cond: {not: second_cond}\n  second_cond: {not: third_cond}\n  third_cond: {not: first_cond}\n"
    )

    assert [(e.message, e.hint) for e in errors] == [
        ('Circular definition for condition "first_cond"', "first_cond -> second_cond -> third_cond -> first_cond")
    ]


def test_condition_naming_itself_is_a_cycle():
    errors = load_errors("heat_template_version: 2016-10-14\nconditions:\n  a: {and: [true, a]}\n")

    assert errors[0].message == 'Circular definition for condition "a"'


# -- evaluate_conditions -------------------------------------------------------------


@pytest.mark.parametrize(
    ("env_type", "zone", "expected"),
    [
        ("test", "beijing", {"prod": False, "test": True, "beijing_prod": False, "fujian_zone": False, "fujian_prod": False, "not_fujian": True}),
        ("prod", "beijing", {"prod": True, "test": False, "beijing_prod": True, "fujian_zone": False, "fujian_prod": False, "not_fujian": True}),
        ("prod", "xiamen", {"prod": True, "test": False, "beijing_prod": False, "fujian_zone": True, "fujian_prod": True, "not_fujian": False}),
    ],
)
def test_evaluate_conditions(env_type, zone, expected):
    assert load().evaluate_conditions(params(env_type, zone)) == expected


def test_condition_that_is_not_a_boolean_is_invalid():
    template = load("heat_template_version: 2016-10-14\nparameters:\n  p: {type: string}\nconditions:\n  c: {get_param: p}\n")

    with pytest.raises(TemplateError) as caught:
        template.evaluate_conditions({"p": "yes"})
    assert caught.value.message == "The definition of condition \"c\" is invalid: {'get_param': 'p'}"
    assert caught.value.path == "conditions.c"


def test_condition_from_a_boolean_parameter():
    template = load("heat_template_version: 2016-10-14\nparameters:\n  p: {type: boolean}\nconditions:\n  c: {get_param: p}\n")

    assert template.evaluate_conditions({"p": True}) == {"c": True}


def test_cycle_through_a_computed_name_is_found_when_evaluated():
    template = load("heat_template_version: 2016-10-14\nparameters:\n  p: {type: string}\nconditions:\n  a: {not: {get_param: p}}\n")

    with pytest.raises(TemplateError) as caught:
        template.evaluate_conditions({"p": "a"})
    assert caught.value.message == 'Circular definition for condition "a"'


def test_missing_parameter_value_is_an_error():
    with pytest.raises(TemplateError, match=r"The Parameter \(env_type\) was not provided."):
        load().evaluate_conditions({"zone": "x"})


def test_template_without_conditions_evaluates_to_nothing():
    assert load("heat_template_version: 2015-10-15\n").evaluate_conditions({}) == {}


# -- active_definitions ---------------------------------------------------------------


def test_active_definitions_drop_resources_whose_condition_is_false():
    active = load().active_definitions(params("test"))

    assert sorted(active.resources) == ["always", "inline", "test_res", "test_res1"]
    assert active.inactive_resources == {"prod_res": "prod", "beijing_prod_res": "beijing_prod", "never": False}

    active = load().active_definitions(params("prod"))
    assert sorted(active.resources) == ["always", "beijing_prod_res", "prod_res", "test_res"]


def test_active_definitions_expand_if_to_the_chosen_value():
    assert load().active_definitions(params("prod")).resources["test_res"].properties_data == {"value": "env_is_prod"}
    assert load().active_definitions(params("test")).resources["test_res"].properties_data == {"value": "env_is_test"}


def test_depends_on_an_inactive_resource_is_dropped():
    # Heat's test_depends_condition
    active = load().active_definitions(params("test"))

    assert active.resources["inline"].depends_on == ("test_res",)
    assert active.resources["inline"].required_resource_names() == {"test_res"}


def test_outputs_whose_condition_is_false_have_no_value():
    active = load().active_definitions(params("test"))

    assert active.outputs["res_value"].value is None
    assert active.inactive_outputs == ("res_value",)
    assert resolve(active.outputs["prod_resource"].value, FakeContext()) == "no_prod_res"


def test_references_in_the_branch_not_chosen_are_no_dependencies():
    active = load().active_definitions(params("prod"))

    assert active.outputs["prod_resource"].required_resource_names() == {"prod_res"}
    assert active.outputs["test_res1_value"].required_resource_names() == set()
    assert isinstance(active.outputs["prod_resource"].value, GetResource)


def test_reference_to_an_inactive_resource_is_an_error():
    text = HEADER + (
        "resources:\n  prod_res:\n    type: OS::Heat::None\n    condition: prod\n"
        "  user:\n    type: OS::Heat::None\n    properties:\n      v: {get_resource: prod_res}\n"
        "outputs:\n  o:\n    value: {get_attr: [prod_res, name]}\n"
    )

    with pytest.raises(TemplateErrors) as caught:
        load(text).active_definitions(params("test"))
    assert [(e.path, e.message) for e in caught.value.errors] == [
        ("resources.user.properties.v.get_resource", 'The specified reference "prod_res" (in user) is incorrect.'),
        ("outputs.o.value.get_attr", 'The specified reference "prod_res" (in o) is incorrect.'),
    ]
    assert "{if: [prod, ..., ...]}" in caught.value.errors[0].hint
    line = next(number for number, row in enumerate(text.splitlines(), 1) if "get_resource: prod_res" in row)
    assert caught.value.errors[0].location.line == line

    assert sorted(load(text).active_definitions(params("prod")).resources) == ["prod_res", "user"]


def test_reference_from_an_inactive_resource_to_an_inactive_one_is_fine():
    text = HEADER + (
        "resources:\n  a:\n    type: OS::Heat::None\n    condition: prod\n"
        "  b:\n    type: OS::Heat::None\n    condition: prod\n    properties:\n      v: {get_resource: a}\n"
    )

    assert load(text).active_definitions(params("test")).resources == {}


def test_nullable_if_drops_properties_and_items_in_2021_04_16():
    text = (
        "heat_template_version: 2021-04-16\nconditions:\n  enabled: false\n"
        "resources:\n  r:\n    type: OS::Heat::None\n    properties:\n"
        "      gone: {if: [enabled, x]}\n      kept: {if: [enabled, x, null]}\n"
        "      items: [a, {if: [enabled, b]}, {if: [{not: enabled}, c]}]\n"
        "      joined: {list_join: [',', [a, {if: [enabled, b]}]]}\n"
    )
    active = load(text).active_definitions({})
    data = active.resources["r"].properties_data

    assert set(data) == {"kept", "items", "joined"}
    assert data["items"] == ["a", "c"]
    assert resolve(data, FakeContext()) == {"kept": None, "items": ["a", "c"], "joined": "a"}
    assert active.resources["r"].render()["properties"] == {"kept": None, "items": ["a", "c"], "joined": {"list_join": [",", ["a"]]}}


def test_errors_in_conditions_are_all_reported_with_their_place():
    text = (
        "heat_template_version: 2016-10-14\nparameters:\n  p: {type: string}\n"
        "conditions:\n  bad: {get_param: p}\n"
        "resources:\n  r:\n    type: OS::Heat::None\n    condition: bad\n"
        "outputs:\n  o:\n    value: 1\n    condition: {get_param: p}\n"
    )

    with pytest.raises(TemplateErrors) as caught:
        load(text).active_definitions({"p": "zzz"})
    assert [(e.path, e.message) for e in caught.value.errors] == [
        ("conditions.bad", "The definition of condition \"bad\" is invalid: {'get_param': 'p'}"),
        ("outputs.o.condition", 'Invalid condition "zzz"'),
    ]


def test_with_conditions_gives_a_template_of_the_active_definitions():
    template = load()
    applied = template.with_conditions(params("prod"))

    assert sorted(applied.resources) == ["always", "beijing_prod_res", "prod_res", "test_res"]
    assert applied.outputs["test_res1_value"].value == "no_test_res1"
    assert applied.version is template.version and applied.conditions is template.conditions
    assert sorted(template.resources) == sorted(load().resources)  # the original is untouched
    assert sorted(applied.with_conditions(params("prod")).resources) == sorted(applied.resources)


def test_templates_before_2016_10_14_are_all_active():
    template = load("heat_template_version: 2015-10-15\nresources:\n  r: {type: OS::Heat::None}\noutputs:\n  o: {value: 1}\n")

    active = template.active_definitions({})
    assert list(active.resources) == ["r"] and active.outputs["o"].value == 1
