"""list_concat, list_concat_unique, filter, contains and repeat, per template version."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stoker.sdk.properties import UNRESOLVED
from stoker.template.functions.lists import Repeat, RepeatWithMaps, RepeatWithPermutations
from tests.unit.template.fakes import (
    PENDING,
    VERSIONS_BEFORE,
    VERSIONS_FROM,
    FakeContext,
    data_warning,
    evaluate,
    evaluate_error,
    parse_error,
    parse_ok,
)

# -- list_concat / list_concat_unique ----------------------------------------------


@pytest.mark.parametrize("version", VERSIONS_FROM["2017-09-01"])
def test_list_concat_concatenates(version):
    assert evaluate({"list_concat": [["v1", "v2"], ["v3", "v4"]]}, version=version) == ["v1", "v2", "v3", "v4"]


def test_list_concat_skips_none_and_keeps_duplicates():
    assert evaluate({"list_concat": [[{"v1": "v2"}], None, [{"v1": "v2"}]]}) == [{"v1": "v2"}, {"v1": "v2"}]


def test_list_concat_unique_keeps_the_first_of_equal_items():
    data = {"list_concat_unique": [["v1", {"a": 1}], ["v1", "v2", {"a": 1}], [1, 1.0, True]]}

    # equality, as Heat: 1, 1.0 and True are one item
    assert evaluate(data) == ["v1", {"a": 1}, "v2", 1]


def test_list_concat_item_that_is_not_a_list():
    error = evaluate_error({"list_concat": [["a"], "b"]})

    assert error.message == (
        'Incorrect arguments: Items to concat must be lists. [["a"], "b"] contains an item that is not a list: "b"'
    )


@pytest.mark.parametrize("args", ["abc", {"a": 1}, 5])
def test_list_concat_arguments_must_be_a_list(args):
    error = parse_error({"list_concat": args})

    assert error.message == (
        'Incorrect arguments to "list_concat" should be: "list_concat" : [ [ <value 1>, <value 2> ], [ <value 3>, <value 4> ] ]'
    )


@pytest.mark.parametrize("name", ["list_concat", "list_concat_unique"])
@pytest.mark.parametrize("version", VERSIONS_BEFORE["2017-09-01"])
def test_list_concat_before_2017_09_01_says_where_it_appears(name, version):
    # Heat has no entry for it there: a plain map, with a warning saying where it appears.
    assert "it appears in heat_template_version 2017-09-01" in data_warning({name: [[1]]}, version).message


def test_list_concat_with_an_unresolved_list_is_unresolved():
    assert evaluate({"list_concat": [["a"], {"get_attr": ["pending", "x"]}]}, PENDING) is UNRESOLVED


lists = st.lists(st.lists(st.integers(0, 5) | st.text(alphabet="ab", max_size=2), max_size=4), max_size=5)


@given(lists)
def test_list_concat_equals_chaining_the_lists(parts):
    assert evaluate({"list_concat": parts}) == [item for part in parts for item in part]


@given(lists)
def test_list_concat_unique_has_each_item_once_in_first_order(parts):
    result = evaluate({"list_concat_unique": parts})
    flat = [item for part in parts for item in part]

    assert len(result) == len({repr(item) for item in flat})
    assert result == sorted(set(result), key=flat.index)


@given(lists)
def test_list_concat_is_associative(parts):
    nested = evaluate({"list_concat": [{"list_concat": parts[:2]}, *parts[2:]]})

    assert nested == evaluate({"list_concat": parts})


# -- filter ----------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS_FROM["2017-02-24"])
def test_filter_removes_the_values(version):
    assert evaluate({"filter": [[3, "b"], [1, "b", 3, 2, "b"]]}, version=version) == [1, 2]


@pytest.mark.parametrize(("values", "sequence", "result"), [(None, [1], [1]), ([], [1], [1]), ([1], None, None), ([1], [], [])])
def test_filter_empty_arguments(values, sequence, result):
    assert evaluate({"filter": [values, sequence]}) == result


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("x", 'Argument to "filter" must be a list'),
        ([[1]], '"filter" expected 2 arguments of the form [values, sequence] but got 1 arguments instead'),
    ],
)
def test_filter_argument_shape(args, message):
    assert parse_error({"filter": args}).message == message


def test_filter_works_with_lists_only():
    assert evaluate_error({"filter": [[1], "abc"]}).message == '"filter" only works with lists'
    assert evaluate_error({"filter": ["a", [1]]}).message == '"filter" filters a list of values'


def test_filter_before_2017_02_24_says_where_it_appears():
    warning = data_warning({"filter": [[1], [1]]}, "2016-10-14")

    assert warning.message == (
        "'filter' is not a function in heat_template_version 2016-10-14 (it appears in heat_template_version "
        "2017-02-24), so this is read as a plain map, as Heat reads it"
    )
    assert warning.path == "resources.server.properties.filter"


# -- contains --------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS_FROM["2017-09-01"])
def test_contains(version):
    assert evaluate({"contains": ["a", ["a", "b"]]}, version=version) is True
    assert evaluate({"contains": ["c", ["a", "b"]]}, version=version) is False


def test_contains_in_a_string_is_a_substring_test_as_heat():
    assert evaluate({"contains": ["ell", "hello"]}) is True


def test_contains_second_argument_must_be_a_sequence():
    assert evaluate_error({"contains": ["a", {"a": 1}]}).message == 'Second argument to "contains" should be a sequence.'


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("a", 'Incorrect arguments to "contains" should be: "contains" : [ "value1", [ "value1", "value2"]]'),
        (["a"], 'Arguments to "contains" must be of the form: [value1, [value1, value2]]'),
    ],
)
def test_contains_argument_shape(args, message):
    assert parse_error({"contains": args}).message == message


def test_contains_of_unresolved_is_unresolved():
    assert evaluate({"contains": [{"get_resource": "pending"}, ["a"]]}, PENDING) is UNRESOLVED


# -- repeat ----------------------------------------------------------------------


def repeat(template, for_each, **extra):
    return {"repeat": {"template": template, "for_each": for_each, **extra}}


@pytest.mark.parametrize("version", VERSIONS_FROM["2015-04-30"])
def test_repeat_copies_the_template_for_each_value(version):
    assert evaluate(repeat("this is %var%", {"%var%": ["a", "b", "c"]}), version=version) == [
        "this is a",
        "this is b",
        "this is c",
    ]


def test_repeat_classes_per_version():
    assert type(parse_ok(repeat("x", {"x": ["a"]}), "2015-04-30")) is Repeat
    assert type(parse_ok(repeat("x", {"x": ["a"]}), "2016-10-14")) is RepeatWithMaps
    assert type(parse_ok(repeat("x", {"x": ["a"]}), "2017-09-01")) is RepeatWithPermutations


def test_repeat_replaces_in_keys_and_nested_values():
    data = repeat({"key-%var%": ["this is %var%", 5], "SERVICE_enabled": True}, {"%var%": ["a", "b"]})

    assert evaluate(data) == [
        {"key-a": ["this is a", 5], "SERVICE_enabled": True},
        {"key-b": ["this is b", 5], "SERVICE_enabled": True},
    ]


def test_repeat_several_variables_take_every_combination():
    data = repeat({"port": "%port%", "net": "%net%"}, {"%port%": ["80", "443"], "%net%": ["n1", "n2"]})

    assert evaluate(data) == [
        {"port": "80", "net": "n1"},
        {"port": "80", "net": "n2"},
        {"port": "443", "net": "n1"},
        {"port": "443", "net": "n2"},
    ]


def test_repeat_for_each_can_be_computed():
    context = FakeContext(parameters={"param": ["a", "b", "c"]})

    assert evaluate(repeat("this is var%", {"var%": {"get_param": "param"}}), context, version="2015-04-30") == [
        "this is a",
        "this is b",
        "this is c",
    ]


def test_repeat_none_values_give_an_empty_list():
    context = FakeContext(parameters={"p": None})

    assert evaluate(repeat("x%v%", {"%v%": {"get_param": "p"}}), context) == []


@pytest.mark.parametrize("version", ["2015-04-30", "2015-10-15", "2016-04-08"])
def test_repeat_over_a_map_needs_2016_10_14(version):
    # As Heat, judged when resolved (an output's error, not the template's).
    error = evaluate_error(repeat("%k%", {"%k%": {"a": 1}}), version=version)

    assert error.message == 'The values of the "for_each" argument to "repeat" must be lists'


@pytest.mark.parametrize("version", VERSIONS_FROM["2016-10-14"])
def test_repeat_over_a_map_uses_its_keys(version):
    assert evaluate(repeat("%k%!", {"%k%": {"a": 1, "b": 2}}), version=version) == ["a!", "b!"]


@pytest.mark.parametrize("version", VERSIONS_FROM["2017-09-01"])
def test_repeat_without_permutations_pairs_the_lists(version):
    data = repeat({"a": "%a%", "b": "%b%"}, {"%a%": ["1", "2"], "%b%": ["x", "y"]}, permutations=False)

    assert evaluate(data, version=version) == [{"a": "1", "b": "x"}, {"a": "2", "b": "y"}]


def test_repeat_without_permutations_needs_lists_of_one_length():
    data = repeat("%a%%b%", {"%a%": ["1", "2"], "%b%": ["x"]}, permutations=False)

    assert evaluate_error(data).message == "For repeat, the length of for_each values should be equal if no nested loop."


def test_repeat_without_permutations_refuses_maps():
    error = evaluate_error(repeat("%a%", {"%a%": {"k": "v"}}, permutations=False))

    assert error.message == 'The values of the "for_each" argument to "repeat" must be lists'


def test_repeat_permutations_must_be_a_boolean():
    error = parse_error(repeat("%a%", {"%a%": ["x"]}, permutations="no"))

    assert error.message == '"permutations" should be boolean type for repeat function.'


def test_repeat_permutations_flag_is_ignored_before_2017_09_01():
    # Heat reads no other key of repeat before 2017-09-01.
    data = repeat("%a%%b%", {"%a%": ["1", "2"], "%b%": ["x", "y"]}, permutations=False)

    assert evaluate(data, version="2016-10-14") == ["1x", "1y", "2x", "2y"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("x", 'Arguments to "repeat" must be a map'),
        ({"template": "x"}, '"repeat" syntax should be'),
        ({"template": "x", "for_each": ["a"]}, 'The "for_each" argument to "repeat" must contain a map'),
    ],
)
def test_repeat_argument_errors(args, message):
    assert parse_error({"repeat": args}).message.startswith(message)


def test_repeat_values_that_are_no_lists_are_refused_when_resolved():
    data = {"repeat": {"template": "x", "for_each": {"x": "abc"}}}

    assert evaluate_error(data).message == 'The values of the "for_each" argument to "repeat" must be lists or maps'


def test_repeat_number_replacing_text_is_refused():
    assert "must be strings" in evaluate_error(repeat("n=%n%", {"%n%": [1, 2]})).message


def test_repeat_resolves_the_template_before_copying():
    context = FakeContext(parameters={"name": "web-%i%"})

    assert evaluate(repeat({"get_param": "name"}, {"%i%": ["1", "2"]}), context) == ["web-1", "web-2"]


@pytest.mark.parametrize("version", ["2013-05-23", "2014-10-16"])
def test_repeat_before_2015_04_30_says_where_it_appears(version):
    assert "it appears in heat_template_version 2015-04-30" in data_warning(repeat("x", {"x": ["a"]}), version).message


def test_repeat_over_an_unresolved_list_is_unresolved():
    assert evaluate(repeat("x", {"x": {"get_attr": ["pending", "names"]}}), PENDING) is UNRESOLVED


# Heat's Repeat._do_replacement calls ``template.replace(key, value)`` for every variable
# on every string of the template: a placeholder or value that is not a string is
# Python's TypeError there, whether it appears in that string or not.


def test_repeat_non_string_placeholder_is_heats_error():
    error = evaluate_error(repeat("n=%n%", {1: ["a", "b"]}))

    assert error.message == (
        'The placeholder 1 in the "for_each" argument to "repeat" must be a string: '
        "replace() argument 1 must be str, not int"
    )
    assert error.hint == 'quote it: "1"'


def test_repeat_non_string_value_fails_even_where_the_placeholder_is_absent():
    error = evaluate_error(repeat("no placeholder", {"%n%": [1, 2]}))

    assert error.message.endswith("replace() argument 2 must be str, not int")


def test_repeat_without_strings_in_the_template_takes_any_placeholder():
    # No string, no replace(): Heat returns the template as it is for each value.
    assert evaluate(repeat([5, True], {1: ["a", "b"]})) == [[5, True], [5, True]]
