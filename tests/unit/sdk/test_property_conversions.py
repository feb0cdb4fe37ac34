"""Property values converted as strictly (or as leniently) as Heat's
heat/engine/properties.py ``Property._get_bool``, ``_get_list`` and ``_get_map``."""

from __future__ import annotations

import json

import pytest

from stoker.sdk.exceptions import PropertyError
from stoker.sdk.properties import Properties, Schema


def read(schema: Schema, value: object) -> object:
    return Properties({"p": schema}, {"p": value}, path="resources.r.properties")["p"]


def refusal(schema: Schema, value: object) -> PropertyError:
    with pytest.raises(PropertyError) as caught:
        read(schema, value)
    return caught.value


# -- BOOLEAN: _get_bool takes a bool or "true"/"false" in any case, nothing else --------


@pytest.mark.parametrize(("value", "expected"), [(True, True), (False, False), ("true", True), ("TRUE", True), ("False", False)])
def test_boolean_property_takes_a_boolean_or_true_false_text(value, expected):
    assert read(Schema(Schema.BOOLEAN), value) is expected


@pytest.mark.parametrize(("value", "shown"), [("yes", "yes"), ("On", "on"), ("1", "1"), ("t", "t"), (1, "1"), (0, "0")])
def test_boolean_property_refuses_what_parameters_accept(value, shown):
    # strutils' lenient spellings (yes, on, 1) are a boolean *parameter*'s; _get_bool
    # raises '"%s" is not a valid boolean' (the text lower-cased).
    error = refusal(Schema(Schema.BOOLEAN), value)

    assert error.message == f'"{shown}" is not a valid boolean'
    assert error.path == "resources.r.properties.p"
    assert error.hint == "use true or false"


# -- LIST: _get_list splits a string only with allow_conversion ----------------------------


@pytest.mark.parametrize("value", ["a,b", "a", ""])
def test_list_property_refuses_a_comma_separated_string(value):
    error = refusal(Schema(Schema.LIST), value)

    assert error.message == f'"{value!r}" is not a list'


def test_list_property_refuses_a_map():
    assert refusal(Schema(Schema.LIST), {"a": 1}).message == "\"{'a': 1}\" is not a list"


def test_list_property_with_allow_conversion_splits_a_string_as_heat():
    # param_utils.delim_string_to_list: split(','), whitespace kept, "" is [].
    schema = Schema(Schema.LIST, allow_conversion=True)

    assert read(schema, "a, b,c") == ["a", " b", "c"]
    assert read(schema, "") == []
    assert read(schema, ["x"]) == ["x"]


# -- MAP: _get_map takes a map; with allow_conversion a string or a list passes on ---------


@pytest.mark.parametrize("value", ['{"a": 1}', "", ["a"], 5])
def test_map_property_refuses_what_is_not_a_map(value):
    error = refusal(Schema(Schema.MAP), value)

    assert error.message == f'"{value}" is not a map'


def test_map_property_with_allow_conversion_passes_text_and_lists_as_heat():
    schema = Schema(Schema.MAP, allow_conversion=True)

    assert read(schema, '{"a": 1}') == '{"a": 1}'
    assert read(schema, ["a", {"b": 1}]) == json.dumps(["a", {"b": 1}])
    assert read(schema, {"a": 1}) == {"a": 1}
    assert refusal(schema, 5).message == '"5" is not a map'


# -- INTEGER, NUMBER, STRING: _get_integer's int(), str_to_num, _get_string ----------------


@pytest.mark.parametrize(("value", "expected"), [(5, 5), ("12", 12), (" 7 ", 7), (True, 1), (2.5, 2), (-2.9, -2)])
def test_integer_property_converts_as_heats_int(value, expected):
    assert read(Schema(Schema.INTEGER), value) == expected


@pytest.mark.parametrize("value", ["2.5", "x", [1]])
def test_integer_property_refuses_what_int_refuses(value):
    assert refusal(Schema(Schema.INTEGER), value).message == f"Value '{value}' is not an integer"


@pytest.mark.parametrize(("value", "expected"), [(True, True), ("2.5", 2.5), ("3", 3), (1.5, 1.5)])
def test_number_property_keeps_numbers_and_reads_text_as_heat(value, expected):
    assert read(Schema(Schema.NUMBER), value) == expected
    assert type(read(Schema(Schema.NUMBER), value)) is type(expected)


@pytest.mark.parametrize(("value", "expected"), [("x", "x"), (True, "True"), (False, "False"), (5, "5")])
def test_string_property_writes_booleans_and_integers_as_pythons_str(value, expected):
    assert read(Schema(Schema.STRING), value) == expected


@pytest.mark.parametrize("value", [1.5, ["a"], {"a": 1}])
def test_string_property_refuses_floats_and_collections_as_heat(value):
    assert refusal(Schema(Schema.STRING), value).message.startswith("Value must be a string; got ")
