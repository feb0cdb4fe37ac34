"""Condition functions (equals, not, and, or, and yaql/contains in conditions) and if,
including the nullable if of 2021-04-16."""

from __future__ import annotations

import pytest

from stoker.sdk.properties import UNRESOLVED
from stoker.template.functions.base import OMITTED, resolve, to_template
from stoker.template.functions.conditions import And, Equals, If, IfNullable, Not, Or
from tests.unit.template.fakes import (
    VERSIONS_BEFORE,
    VERSIONS_FROM,
    FakeContext,
    data_warning,
    evaluate,
    evaluate_error,
    parse,
    parse_condition,
    parse_error,
    parse_ok,
)

CONTEXT = FakeContext(parameters={"env": "prod", "zones": ["a", "b"]}, conditions={"prod": True, "test": False})


def condition(data, context=CONTEXT, version="2021-04-16"):
    parsed, errors = parse_condition(data, version)
    assert errors == [], [str(error) for error in errors]
    return resolve(parsed, context)


def condition_error(data, version="2021-04-16"):
    _, errors = parse_condition(data, version)
    assert len(errors) == 1, [str(error) for error in errors]
    return errors[0]


# -- the condition table ----------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS_FROM["2016-10-14"])
def test_condition_functions_per_version(version):
    parsed, errors = parse_condition(
        {"and": [{"equals": [{"get_param": "env"}, "prod"]}, {"not": "test"}, {"or": ["prod", False]}]}, version
    )

    assert errors == []
    assert isinstance(parsed, And)
    assert isinstance(parsed.args[0], Equals)
    assert isinstance(parsed.args[1], Not)
    assert isinstance(parsed.args[2], Or)


@pytest.mark.parametrize("name", ["get_attr", "get_resource", "list_join", "if", "str_replace"])
def test_condition_refuses_functions_outside_the_condition_table(name):
    error = condition_error({"equals": [{name: ["r", "a"]}, "x"]})

    assert error.message == f'The function "{name}" is invalid in this context'
    assert error.path == f"conditions.c.equals[0].{name}"
    assert "conditions may use" in error.hint


@pytest.mark.parametrize("version", ["2016-10-14", "2017-02-24"])
def test_yaql_and_contains_in_conditions_need_2017_09_01(version):
    # yaql exists there, but not as a condition function; contains does not exist yet.
    assert condition_error({"yaql": {"expression": "true"}}, version).message == 'The function "yaql" is invalid in this context'
    # contains is no function there: a plain map (which is no condition, see test_hot).
    assert data_warning({"contains": ["a", ["a"]]}, version, condition=True).message == (
        f"'contains' is not a function in heat_template_version {version} (it appears in "
        "heat_template_version 2017-09-01), so this is read as a plain map, as Heat reads it"
    )


@pytest.mark.parametrize("version", VERSIONS_FROM["2017-09-01"])
def test_yaql_and_contains_as_conditions(version):
    expression = {"yaql": {"expression": '$.data.zones.contains("a")', "data": {"zones": {"get_param": "zones"}}}}

    assert condition(expression, version=version) is True
    assert condition({"contains": ["c", {"get_param": "zones"}]}, version=version) is False


def test_removed_function_in_a_condition_says_it_was_removed():
    assert "it was removed in 2014-10-16" in condition_error({"Fn::Join": [",", ["a"]]}).message


@pytest.mark.parametrize("name", ["equals", "not", "and", "or"])
def test_condition_functions_are_plain_data_outside_conditions(name):
    # As Heat: they are only in the condition table.
    assert parse_ok({"value": {name: ["a", "b"]}}) == {"value": {name: ["a", "b"]}}


# -- equals ----------------------------------------------------------------------


def test_equals():
    assert condition({"equals": [{"get_param": "env"}, "prod"]}) is True
    assert condition({"equals": [{"get_param": "env"}, "test"]}) is False
    assert condition({"equals": [[1, {"a": 2}], [1, {"a": 2}]]}) is True


@pytest.mark.parametrize("args", [["a", "b", "c"], "invalid condition", [], ["a"]])
def test_equals_argument_shape(args):
    assert condition_error({"equals": args}).message == 'Arguments to "equals" must be of the form: [value_1, value_2]'


def test_equals_of_an_unresolved_value_is_unresolved():
    assert condition({"equals": [{"get_param": "env"}, "x"]}, FakeContext(parameters={"env": UNRESOLVED})) is UNRESOLVED


# -- not / and / or ---------------------------------------------------------------


@pytest.mark.parametrize(("argument", "value"), [(True, False), (False, True), ("prod", False), ("test", True)])
def test_not(argument, value):
    assert condition({"not": argument}) is value


def test_not_of_a_condition_function():
    assert condition({"not": {"equals": [{"get_param": "env"}, "prod"]}}) is False


def test_not_needs_an_argument():
    assert condition_error({"not": None}).message == 'Argument to "not" must be a condition'


@pytest.mark.parametrize(
    ("args", "value_and", "value_or"),
    [
        ([True, True], True, True),
        ([True, False], False, True),
        (["prod", "test"], False, True),
        (["test", {"equals": [1, 2]}], False, False),
        (["prod", True, {"not": "test"}], True, True),
    ],
)
def test_and_or(args, value_and, value_or):
    assert condition({"and": args}) is value_and
    assert condition({"or": args}) is value_or


@pytest.mark.parametrize("name", ["and", "or"])
def test_and_or_argument_shape(name):
    assert condition_error({name: "prod"}).message == f'Arguments to "{name}" must be a list of conditions'
    assert condition_error({name: ["prod"]}).message == f'The minimum number of condition arguments to "{name}" is 2.'


def test_and_or_stop_at_the_deciding_condition():
    # As Heat (all/any): a later invalid name is never looked up.
    assert condition({"and": ["test", "nope"]}) is False
    assert condition({"or": ["prod", "nope"]}) is True


def test_unknown_condition_name_is_an_error_at_the_function():
    error = evaluate_error({"if": [{"not": "nope"}, 1, 2]}, CONTEXT)

    assert error.message == 'Invalid condition "nope"'


def test_condition_argument_of_another_type_is_invalid():
    error = evaluate_error({"if": [{"not": {"get_param": "n"}}, 1, 2]}, FakeContext(parameters={"n": 5}))

    assert error.message == 'Invalid condition "5"'


def test_condition_name_can_come_from_a_parameter():
    context = FakeContext(parameters={"which": "prod"}, conditions={"prod": True})

    assert evaluate({"if": [{"get_param": "which"}, "yes", "no"]}, context) == "yes"


# -- if ----------------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS_FROM["2016-10-14"])
def test_if_chooses_by_a_named_condition(version):
    assert evaluate({"if": ["prod", "value_if_true", "value_if_false"]}, CONTEXT, version) == "value_if_true"
    assert evaluate({"if": ["test", "value_if_true", "value_if_false"]}, CONTEXT, version) == "value_if_false"


def test_if_with_a_boolean_or_a_condition_function():
    assert evaluate({"if": [True, "a", "b"]}) == "a"
    assert evaluate({"if": [False, "a", "b"]}) == "b"
    assert evaluate({"if": [{"not": "prod"}, "a", "b"]}, CONTEXT) == "b"


def test_if_resolves_only_the_chosen_value():
    data = {"if": [True, {"get_param": "env"}, {"get_param": "missing"}]}

    assert evaluate(data, CONTEXT) == "prod"


def test_if_null_value_is_none():
    assert evaluate({"if": [True, None, "value_if_false"]}) is None


def test_if_classes_per_version():
    assert type(parse_ok({"if": [True, 1, 2]}, "2018-08-31")) is If
    assert type(parse_ok({"if": [True, 1, 2]}, "2021-04-16")) is IfNullable


@pytest.mark.parametrize("version", VERSIONS_FROM["2016-10-14"])
@pytest.mark.parametrize("args", [["c"], ["c", 1, 2, 3], "c", {"c": 1}, []])
def test_if_argument_shape(version, args):
    error = parse_error({"if": args}, version)

    assert error.message == 'Arguments to "if" must be of the form: [condition_name, value_if_true, value_if_false]'


@pytest.mark.parametrize("version", ["2016-10-14", "2018-08-31"])
def test_if_with_two_arguments_needs_2021_04_16(version):
    error = parse_error({"if": ["prod", "one_value"]}, version)

    assert error.message == 'Arguments to "if" must be of the form: [condition_name, value_if_true, value_if_false]'
    assert "2021-04-16" in error.hint


@pytest.mark.parametrize("version", VERSIONS_BEFORE["2016-10-14"])
def test_if_before_2016_10_14_says_where_it_appears(version):
    assert "it appears in heat_template_version 2016-10-14" in data_warning({"if": [True, 1, 2]}, version).message


def test_if_condition_is_parsed_as_a_condition():
    _, errors = parse({"if": [{"get_attr": ["r", "a"]}, 1, 2]})

    assert [error.message for error in errors] == ['The function "get_attr" is invalid in this context']
    assert errors[0].path == "resources.server.properties.if[0].get_attr"


def test_if_values_are_parsed_as_values():
    parsed = parse_ok({"if": [True, {"get_attr": ["r", "a"]}, {"get_resource": "s"}]})

    assert sorted(parsed.dependencies()) == ["r", "s"]


def test_if_without_named_conditions_in_the_context_says_so():
    class Bare(FakeContext):
        condition = None  # type: ignore[assignment]

    error = evaluate_error({"if": ["prod", 1, 2]}, Bare())
    assert error.message == 'The condition "prod" cannot be evaluated here'


def test_if_of_an_unresolved_condition_is_unresolved():
    context = FakeContext(parameters={"env": UNRESOLVED})

    assert evaluate({"if": [{"equals": [{"get_param": "env"}, "a"]}, 1, 2]}, context) is UNRESOLVED


# -- the nullable if (2021-04-16) -------------------------------------------------


def test_if_nullable_drops_the_map_key_or_list_item():
    data = {
        "single": {"if": [False, "value_if_true"]},
        "nested_true": {"if": [True, {"if": [False, "foo"]}, "bar"]},
        "nested_false": {"if": [False, "baz", {"if": [False, "quux"]}]},
        "control": {"if": [False, True, None]},
        "items": ["a", {"if": [False, "b"]}, {"if": [True, "c"]}],
    }

    # Heat's test_if_nullable, plus a list
    assert evaluate(data) == {"control": None, "items": ["a", "c"]}


def test_if_nullable_at_the_top_is_none():
    assert evaluate({"if": [False, "value_if_true"]}) is None
    assert resolve(parse_ok({"if": [False, "x"]}), FakeContext()) is None


def test_if_nullable_true_gives_the_value():
    assert evaluate({"if": [True, "value_if_true"]}) == "value_if_true"


def test_if_nullable_inside_function_arguments_is_dropped_there():
    data = {"list_join": [",", ["a", {"if": [False, "b"]}, "c"]]}

    assert evaluate(data) == "a,c"


def test_if_nullable_keeps_its_template_form():
    data = {"x": {"if": ["prod", "value"]}}
    parsed = parse_ok(data)

    assert parsed["x"].args[2] is OMITTED
    assert to_template(parsed) == data
