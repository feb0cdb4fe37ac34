"""Combining environment files: each case is Heat's (heat/tests/test_common_env_util.py
and heat/common/environment_util.py), run through stoker's merge."""

from __future__ import annotations

import json

import pytest

from stoker.environment import merge
from stoker.environment.environment import Environment, parse
from stoker.template.errors import TemplateError

TYPES = {
    "str_value1": "string",
    "str_value2": "string",
    "del_lst_value1": "comma_delimited_list",
    "del_lst_value2": "comma_delimited_list",
    "lst_value1": "comma_delimited_list",
    "lst_value2": "comma_delimited_list",
    "json_value1": "json",
    "json_value2": "json",
}


def env_1() -> dict:
    return {
        "parameters": {
            "str_value1": "string1",
            "str_value2": "string2",
            "del_lst_value1": "1,2",
            "del_lst_value2": "3,4",
            "lst_value1": [1, 2],
            "json_value1": {"1": ["str1", "str2"]},
            "json_value2": {"2": ["test1", "test2"]},
        },
        "resource_registry": {"test::R1": "OS::Heat::RandomString", "test::R2": "BROKEN"},
        "parameter_defaults": {"lst_value2": [3, 4]},
    }


def env_2() -> dict:
    return {
        "parameters": {
            "str_value1": "string3",
            "str_value2": "string4",
            "del_lst_value1": "5,6",
            "del_lst_value2": "7,8",
            "lst_value1": [5, 6],
            "json_value1": {"3": ["str3", "str4"]},
            "json_value2": {"4": ["test3", "test4"]},
        },
        "resource_registry": {"test::R2": "OS::Heat::None"},
        "parameter_defaults": {"lst_value2": [7, 8]},
    }


def combine(*bodies: dict, types=TYPES) -> Environment:
    """Each body as the text of one file, read and combined in order."""
    named = [(f"env_{number}", parse(json.dumps(body), f"env_{number}")) for number, body in enumerate(bodies, 1)]
    return merge.merge_environments(named, types)


def test_merge_strategy_default_is_overwrite():
    assert merge.merge_strategy({}, "param1") == merge.OVERWRITE
    assert merge.merge_strategy(None, "param1") == merge.OVERWRITE


def test_merge_strategy_file_default_and_per_parameter():
    assert merge.merge_strategy({"default": "deep_merge"}, "param1") == merge.DEEP_MERGE
    assert merge.merge_strategy({"default": "merge", "param1": "deep_merge"}, "param1") == merge.DEEP_MERGE


def test_merge_strategy_unknown_falls_back_to_the_file_default():
    assert merge.merge_strategy({"default": "merge", "param1": "unknown"}, "param1") == merge.MERGE


def test_merge_environments_overwrite_by_default():
    environment = combine(env_1(), env_2())
    assert environment.parameters == {
        "json_value1": {"3": ["str3", "str4"]},
        "json_value2": {"4": ["test3", "test4"]},
        "del_lst_value1": "5,6",
        "del_lst_value2": "7,8",
        "lst_value1": [5, 6],
        "str_value1": "string3",
        "str_value2": "string4",
    }
    assert environment.resource_registry == {"test::R1": "OS::Heat::RandomString", "test::R2": "OS::Heat::None"}
    assert environment.parameter_defaults == {"lst_value2": [7, 8]}


def test_merge_environments_file_default_deep_merge_applies_to_later_files():
    first = {**env_1(), "parameter_merge_strategies": {"default": "deep_merge"}}
    environment = combine(first, env_2())
    assert environment.parameters == {
        "json_value1": {"3": ["str3", "str4"], "1": ["str1", "str2"]},
        "json_value2": {"4": ["test3", "test4"], "2": ["test1", "test2"]},
        "del_lst_value1": "1,2,5,6",
        "del_lst_value2": "3,4,7,8",
        "lst_value1": [1, 2, 5, 6],
        "str_value1": "string1string3",
        "str_value2": "string2string4",
    }
    assert environment.parameter_defaults == {"lst_value2": [3, 4, 7, 8]}
    # The strategies are spent in the combining; the stored environment has none (Heat).
    assert environment.parameter_merge_strategies == {}


def test_merge_environments_per_parameter_strategies():
    strategies = {"default": "overwrite", "lst_value1": "merge", "lst_value2": "merge", "json_value1": "deep_merge"}
    environment = combine({**env_1(), "parameter_merge_strategies": strategies}, env_2())
    assert environment.parameters == {
        "json_value1": {"3": ["str3", "str4"], "1": ["str1", "str2"]},
        "json_value2": {"4": ["test3", "test4"]},
        "del_lst_value1": "5,6",
        "del_lst_value2": "7,8",
        "lst_value1": [1, 2, 5, 6],
        "str_value1": "string3",
        "str_value2": "string4",
    }
    assert environment.parameter_defaults == {"lst_value2": [3, 4, 7, 8]}


def test_merge_environments_conflicting_strategy_is_refused():
    first = {**env_1(), "parameter_merge_strategies": {"default": "overwrite", "lst_value1": "merge", "json_value1": "deep_merge"}}
    third = {
        "parameters": {"lst_value1": [9, 10], "json_value1": {"5": ["str5"]}},
        "parameter_merge_strategies": {"default": "overwrite", "lst_value1": "deep_merge", "json_value1": "merge"},
    }
    with pytest.raises(TemplateError) as raised:
        combine(first, env_2(), third)
    assert raised.value.message == "Conflicting merge strategy 'deep_merge' for parameter 'lst_value1' in file 'env_3'."


def test_merge_environments_conflicting_strategy_in_parameter_defaults_is_refused():
    first = {**env_1(), "parameter_merge_strategies": {"default": "overwrite", "lst_value2": "merge"}}
    fourth = {"parameter_defaults": {"lst_value2": [9, 10]}, "parameter_merge_strategies": {"default": "overwrite", "lst_value2": "overwrite"}}
    with pytest.raises(TemplateError, match="Conflicting merge strategy 'overwrite' for parameter 'lst_value2' in file 'env_3'"):
        combine(first, env_2(), fourth)


def test_merge_environments_none_is_empty():
    environment = merge.merge_environments([], TYPES)
    assert (environment.parameters, environment.parameter_defaults, environment.resource_registry) == ({}, {}, {})


def test_merge_environments_zero_overwrites():
    environment = combine({"parameter_defaults": {"value1": 1}}, {"parameter_defaults": {"value1": 0}}, types={"value1": "number"})
    assert environment.parameter_defaults == {"value1": 0}


def test_merge_environments_zero_in_deep_merged_map():
    first = {"parameter_defaults": {"value1": {"foo": 1}}, "parameter_merge_strategies": {"value1": "deep_merge"}}
    environment = combine(first, {"parameter_defaults": {"value1": {"foo": 0}}}, types={"value1": "json"})
    assert environment.parameter_defaults == {"value1": {"foo": 0}}


def test_merge_environments_merge_of_a_boolean_is_refused():
    first = {"parameters": {"flag": "true"}, "parameter_merge_strategies": {"flag": "merge"}}
    with pytest.raises(TemplateError) as raised:
        combine(first, {"parameters": {"flag": "false"}}, types={"flag": "boolean"})
    assert raised.value.message == "Invalid merge strategy 'merge' for parameter 'flag'."


def test_merge_environments_merge_of_a_value_that_is_not_text_or_list_is_refused():
    # Heat's parse_param: a number or boolean as a YAML scalar cannot be merged.
    first = {"parameters": {"count": 1}, "parameter_merge_strategies": {"count": "merge"}}
    with pytest.raises(TemplateError) as raised:
        combine(first, {"parameters": {"count": 2}}, types={"count": "number"})
    assert (raised.value.message, raised.value.path) == ("Invalid parameter in environment .", "parameters.count")


def test_merge_environments_json_text_is_parsed_before_merging():
    first = {"parameters": {"config": {"a": 1}}, "parameter_merge_strategies": {"config": "merge"}}
    environment = combine(first, {"parameters": {"config": '{"b": 2}'}}, types={"config": "json"})
    assert environment.parameters == {"config": {"a": 1, "b": 2}}
    with pytest.raises(TemplateError, match="Invalid parameter in environment"):
        combine(first, {"parameters": {"config": "{not json"}}, types={"config": "json"})


def test_merge_environments_merge_is_shallow_deep_merge_is_not():
    first = {"parameters": {"config": {"a": {"x": 1}, "l": [1], "s": "p"}}}
    second = {"parameters": {"config": {"a": {"y": 2}, "l": [2], "s": "q"}}}
    shallow = combine({**first, "parameter_merge_strategies": {"config": "merge"}}, second, types={"config": "json"})
    assert shallow.parameters == {"config": {"a": {"y": 2}, "l": [2], "s": "q"}}
    deep = combine({**first, "parameter_merge_strategies": {"config": "deep_merge"}}, second, types={"config": "json"})
    assert deep.parameters == {"config": {"a": {"x": 1, "y": 2}, "l": [1, 2], "s": "pq"}}


def test_merge_environments_later_files_drop_undeclared_parameters():
    # Heat keeps the first file's section whole and, after it, only declared keys.
    environment = combine({"parameters": {"str_value1": "a", "stray": 1}}, {"parameters": {"str_value2": "b", "other": 2}})
    assert environment.parameters == {"str_value1": "a", "stray": 1, "str_value2": "b"}


def test_merge_environments_strategy_is_kept_for_later_files_without_one():
    first = {"parameters": {"lst_value1": "a"}, "parameter_merge_strategies": {"lst_value1": "merge"}}
    environment = combine(first, {"parameters": {"lst_value1": "b"}}, {"parameters": {"lst_value1": "c"}})
    assert environment.parameters == {"lst_value1": "a,b,c"}


def test_merge_environments_registry_merges_key_by_key_and_skips_null():
    first = {"resource_registry": {"My::A": "a.yaml", "My::B": "b.yaml", "resources": {"web": {"hooks": "pre-create"}}}}
    second = {"resource_registry": {"My::B": None, "My::C": "c.yaml", "resources": {"db": {"hooks": "pre-update"}}}}
    environment = combine(first, second)
    # merge_map: a null is skipped, and the later file's resources block replaces the earlier one.
    assert environment.resource_registry == {
        "My::A": "a.yaml",
        "My::B": "b.yaml",
        "My::C": "c.yaml",
        "resources": {"db": {"hooks": "pre-update"}},
    }


def test_parameter_types_of_files_with_the_template_winning():
    nested = "heat_template_version: 2021-04-16\nparameters:\n  shared: {type: json}\n  inner: {type: comma_delimited_list}\n"
    cfn = json.dumps({"AWSTemplateFormatVersion": "2010-09-09", "Parameters": {"cfn": {"Type": "CommaDelimitedList"}}})
    files = {"nested.yaml": nested, "cfn.template": cfn, "env.yaml": "parameters: {shared: x}\n", "script.sh": "#!/bin/sh\n"}

    class Schema:
        def __init__(self, kind):
            self.type = kind

    types = merge.parameter_types({"shared": Schema("string")}, files)
    assert types == {"shared": "string", "inner": "comma_delimited_list", "cfn": "comma_delimited_list"}


def test_merge_environments_merge_of_numbers_follows_heat():
    # param_merge adds to the earlier value, and parse_param lets only text through.
    first = {"parameters": {"count": "1", "str_value1": "x"}, "parameter_merge_strategies": {"count": "merge"}}
    environment = combine(first, {"parameters": {"count": "2"}}, types={**TYPES, "count": "number"})
    assert environment.parameters["count"] == "12"
