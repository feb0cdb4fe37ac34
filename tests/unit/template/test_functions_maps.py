"""map_merge and map_replace, per template version."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stoker.sdk.properties import UNRESOLVED
from tests.unit.template.fakes import (
    PENDING,
    VERSIONS_BEFORE,
    VERSIONS_FROM,
    FakeContext,
    data_warning,
    evaluate,
    evaluate_error,
    parse_error,
)

# -- map_merge -------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS_FROM["2016-04-08"])
def test_map_merge_later_maps_win(version):
    data = {"map_merge": [{"k1": "v1", "k2": "v2"}, {"k1": "v3"}]}

    assert evaluate(data, version=version) == {"k1": "v3", "k2": "v2"}


def test_map_merge_is_shallow_and_skips_none():
    data = {"map_merge": [{"a": {"x": 1}}, None, {"a": {"y": 2}}]}

    assert evaluate(data) == {"a": {"y": 2}}


def test_map_merge_item_that_is_not_a_map():
    error = evaluate_error({"map_merge": [{"a": 1}, ["b"]]})

    assert error.message == "Incorrect arguments: Items to merge must be maps. ['b'] is type list instead of a dict"


def test_map_merge_arguments_must_be_a_list():
    error = parse_error({"map_merge": {"a": 1}})

    assert error.message == 'Incorrect arguments to "map_merge" should be: "map_merge" : [ { "key1": "val1" }, { "key2": "val2" } ]'


def test_map_merge_of_computed_maps():
    context = FakeContext(parameters={"extra": {"b": 2}})

    assert evaluate({"map_merge": [{"a": 1}, {"get_param": "extra"}]}, context) == {"a": 1, "b": 2}


@pytest.mark.parametrize("version", VERSIONS_BEFORE["2016-04-08"])
def test_map_merge_before_2016_04_08_says_where_it_appears(version):
    assert "it appears in heat_template_version 2016-04-08" in data_warning({"map_merge": [{}]}, version).message


def test_map_merge_of_an_unresolved_map_is_unresolved():
    assert evaluate({"map_merge": [{"a": 1}, {"get_attr": ["pending", "m"]}]}, PENDING) is UNRESOLVED


maps = st.lists(st.dictionaries(st.text(alphabet="abcd", max_size=2), st.integers(0, 9), max_size=4), max_size=5)


@given(maps)
def test_map_merge_equals_successive_updates(parts):
    expected: dict = {}
    for part in parts:
        expected.update(part)

    assert evaluate({"map_merge": parts}) == expected


@given(maps)
def test_map_merge_keys_are_the_union_and_the_last_value_wins(parts):
    merged = evaluate({"map_merge": parts})

    assert set(merged) == {key for part in parts for key in part}
    for key, value in merged.items():
        assert value == [part[key] for part in parts if key in part][-1]


@given(maps)
def test_map_merge_is_idempotent(parts):
    once = evaluate({"map_merge": parts})

    assert evaluate({"map_merge": [once, once]}) == once


# -- map_replace -----------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS_FROM["2016-10-14"])
def test_map_replace_renames_keys_and_values(version):
    data = {"map_replace": [{"k1": "v1", "k2": "v2"}, {"keys": {"k1": "K1"}, "values": {"v2": "V2"}}]}

    assert evaluate(data, version=version) == {"K1": "v1", "k2": "V2"}


def test_map_replace_keys_or_values_alone():
    assert evaluate({"map_replace": [{"a": "b"}, {"keys": {"a": "c"}}]}) == {"c": "b"}
    assert evaluate({"map_replace": [{"a": "b"}, {"values": {"b": "c"}}]}) == {"a": "c"}


def test_map_replace_leaves_list_and_map_values_alone():
    data = {"map_replace": [{"a": [1], "b": {"x": 1}}, {"values": {"x": "y"}}]}

    assert evaluate(data) == {"a": [1], "b": {"x": 1}}


def test_map_replace_key_colliding_with_an_input_key():
    error = evaluate_error({"map_replace": [{"a": 1, "b": 2}, {"keys": {"a": "b"}}]})

    assert error.message == "key replacement b collides with a key in the input map"


def test_map_replace_keys_colliding_in_the_output():
    error = evaluate_error({"map_replace": [{"a": 1, "b": 2}, {"keys": {"a": "c", "b": "c"}}]})

    assert error.message == "key replacement c collides with a key in the output map"


def test_map_replace_key_renamed_to_itself_is_fine():
    assert evaluate({"map_replace": [{"a": 1}, {"keys": {"a": "a"}}]}) == {"a": 1}


@pytest.mark.parametrize(
    "args",
    [
        {"a": 1},
        [{"a": 1}],
        [{"a": 1}, {"keys": {}}, {}],
        [{"a": 1}, {"keys": {}, "on_conflict": "replace"}],
    ],
)
def test_map_replace_argument_shape(args):
    # As Heat, judged when resolved (an output's error, not the template's).
    error = evaluate_error({"map_replace": args})

    assert error.message.startswith('Incorrect arguments to "map_replace" should be: "map_replace" : [ { "key1": "val1" }')


def test_map_replace_arguments_must_be_maps():
    error = evaluate_error({"map_replace": [["a"], {"keys": {}}]})

    assert error.message.startswith('Incorrect arguments: to "map_replace", arguments must be a list of maps.')


def test_map_replace_none_arguments_are_empty_maps():
    context = FakeContext(parameters={"p": None})

    assert evaluate({"map_replace": [{"get_param": "p"}, {"keys": {"a": "b"}}]}, context) == {}


@pytest.mark.parametrize("version", VERSIONS_BEFORE["2016-10-14"])
def test_map_replace_before_2016_10_14_says_where_it_appears(version):
    assert "it appears in heat_template_version 2016-10-14" in data_warning({"map_replace": [{}, {}]}, version).message


@given(st.dictionaries(st.text(alphabet="abc", max_size=2), st.text(alphabet="xyz", max_size=2), max_size=5))
def test_map_replace_with_a_bijection_is_undone_by_its_inverse(source):
    renames = {key: key.upper() + "!" for key in source}
    renamed = evaluate({"map_replace": [source, {"keys": renames}]})
    inverse = {new: old for old, new in renames.items()}

    assert evaluate({"map_replace": [renamed, {"keys": inverse}]}) == source
