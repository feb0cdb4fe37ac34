"""stoker.template.functions: parsing, resolving and inspecting intrinsic functions."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stoker.sdk.properties import UNRESOLVED
from stoker.template import versions
from stoker.template.errors import TemplateError
from stoker.template.functions import base
from stoker.template.functions.access import GetAttr, GetParam, GetResource
from stoker.template.functions.base import (
    Function,
    dependencies,
    referenced_attributes,
    resolve,
    to_template,
)
from stoker.template.functions.strings import ListJoin, StrReplace
from tests.unit.template.fakes import FakeContext

LATEST = "2021-04-16"
PATH = ("resources", "server", "properties")


def parse(data: Any, version: str = LATEST) -> tuple[Any, list[TemplateError]]:
    table = versions.get(version)
    errors: list[TemplateError] = []
    parsed = base.parse(data, table.functions, PATH, errors, table.unknown_functions, table.removed_functions)
    return parsed, errors


def parse_ok(data: Any, version: str = LATEST) -> Any:
    parsed, errors = parse(data, version)
    assert errors == []
    return parsed


def parse_error(data: Any, version: str = LATEST) -> TemplateError:
    _, errors = parse(data, version)
    assert len(errors) == 1, errors
    return errors[0]


def evaluate(data: Any, context: FakeContext | None = None, version: str = LATEST) -> Any:
    return resolve(parse_ok(data, version), context or FakeContext())


def evaluate_error(data: Any, context: FakeContext | None = None, version: str = LATEST) -> TemplateError:
    parsed = parse_ok(data, version)
    with pytest.raises(TemplateError) as caught:
        resolve(parsed, context or FakeContext())
    return caught.value


STACK = FakeContext(
    parameters={
        "flavor": "m1.small",
        "config": {"db": {"host": "db.example", "ports": [5432, 5433]}},
        "zones": ["az1", "az2", "az3"],
    },
    resources={
        "port": {"reference": "port-id-1", "attributes": {"fixed_ips": [{"ip_address": "10.0.0.5"}], "name": "p"}},
        "pending": None,
    },
)


# -- parsing ---------------------------------------------------------------------


def test_parse_replaces_calls_by_function_objects():
    parsed = parse_ok({"a": {"get_param": "flavor"}, "b": [{"get_resource": "port"}], "c": 1})

    assert isinstance(parsed["a"], GetParam)
    assert isinstance(parsed["b"][0], GetResource)
    assert parsed["c"] == 1
    assert parsed["a"].path == PATH + ("a",)
    assert parsed["b"][0].path == PATH + ("b", 0)


def test_parse_leaves_maps_with_more_keys_alone():
    data = {"get_param": "flavor", "other": 1}

    assert parse_ok(data) == data


def test_parse_leaves_unknown_single_key_maps_alone():
    assert parse_ok({"not_a_function": [1, 2]}) == {"not_a_function": [1, 2]}


def test_parse_nested_calls():
    parsed = parse_ok({"str_replace": {"template": "x", "params": {"x": {"get_attr": ["port", "name"]}}}})

    assert isinstance(parsed, StrReplace)
    assert isinstance(parsed.args["params"]["x"], GetAttr)


def test_parse_collects_every_argument_error_with_its_path():
    _, errors = parse({"a": {"get_param": 5}, "b": [{"get_resource": ["x"]}], "c": {"get_attr": "port"}})

    assert [(error.path, error.message) for error in errors] == [
        ("resources.server.properties.a", "Arguments to get_param must be a parameter name or a list [name, path...]"),
        ("resources.server.properties.b[0]", "Argument to get_resource must be a resource name (a string)"),
        ("resources.server.properties.c", "Arguments to get_attr must be a list [resource_name, attribute, path...]"),
    ]


def test_parse_keeps_a_call_with_bad_arguments_as_plain_data():
    parsed, errors = parse({"a": {"get_param": 5}})

    assert parsed == {"a": {"get_param": 5}}
    assert len(errors) == 1


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ({"get_param": []}, "Arguments to get_param"),
        ({"get_param": {"a": 1}}, "Arguments to get_param"),
        ({"get_resource": 1}, "Argument to get_resource must be a resource name"),
        ({"get_attr": []}, "Arguments to get_attr must be a list"),
        ({"get_attr": [1, "a"]}, "Arguments to get_attr must be a list"),
        ({"get_attr": ["port", 5]}, "attribute name given to get_attr must be a string"),
        ({"str_replace": "text"}, "must be a map with the keys template and params"),
        ({"str_replace": {"template": "x"}}, "must be a map with the keys template and params"),
        ({"str_replace": {"template": "x", "params": {}, "extra": 1}}, "must be a map with the keys template and params"),
        ({"str_replace": {"template": "x", "params": [1]}}, '"params" given to str_replace must be a map'),
        ({"str_replace": {"template": 5, "params": {}}}, '"template" given to str_replace must be a string'),
        ({"list_join": ","}, "Arguments to list_join must be a list [delimiter, list, ...]"),
        ({"list_join": [","]}, "Arguments to list_join must be a list [delimiter, list, ...]"),
        ({"list_join": [1, ["a"]]}, "delimiter given to list_join must be a string"),
    ],
)
def test_parse_argument_shape_errors_carry_the_template_path(data, words):
    error = parse_error({"value": data})

    assert words in error.message
    assert error.path == "resources.server.properties.value"


def test_parse_str_replace_shape_error_gives_an_example():
    error = parse_error({"str_replace": {"template": "x"}})

    assert "str_replace" in error.hint


# -- versions --------------------------------------------------------------------


def test_parse_list_join_in_2013_05_23_joins_one_list_of_strings():
    # Heat has list_join (its "Join") from the first HOT version.
    assert evaluate({"list_join": ["-", ["a", "b"]]}, version="2013-05-23") == "a-b"


def test_parse_list_join_before_2015_10_15_takes_a_single_list():
    error = parse_error({"list_join": [",", ["a"], ["b"]]}, version="2015-04-30")

    assert "[delimiter, list]" in error.message
    assert "2015-10-15" in error.hint


@pytest.mark.parametrize("version", ["2014-10-16", "2015-04-30", "2016-10-14", LATEST, "wallaby"])
def test_parse_removed_cfn_function_is_not_supported(version):
    error = parse_error({"value": {"Fn::Join": ["", ["a"]]}}, version=version)

    date = versions.get(version).date
    assert error.message == (
        f"The function Fn::Join is not supported in heat_template_version {date}: "
        "it was removed in 2014-10-16; use list_join instead"
    )
    assert error.path == "resources.server.properties.value.Fn::Join"


def test_parse_fn_select_is_removed_from_2015_10_15():
    assert parse({"Fn::Select": [0, ["a"]]}, version="2015-04-30")[1] == []

    error = parse_error({"Fn::Select": [0, ["a"]]}, version="2015-10-15")
    assert "not supported in heat_template_version 2015-10-15" in error.message


def test_parse_get_attr_without_attribute_needs_2015_10_15():
    error = parse_error({"get_attr": ["port"]}, version="2015-04-30")

    assert "2015-10-15" in error.hint
    assert isinstance(parse_ok({"get_attr": ["port"]}, version="2015-10-15"), GetAttr)


def test_version_tables_are_read_only():
    table = versions.get(LATEST)

    with pytest.raises(TypeError):
        table.functions["evil"] = Function  # type: ignore[index]


# -- get_param -------------------------------------------------------------------


def test_get_param_returns_the_value():
    assert evaluate({"get_param": "flavor"}, STACK) == "m1.small"


def test_get_param_follows_a_path_into_json():
    assert evaluate({"get_param": ["config", "db", "host"]}, STACK) == "db.example"
    assert evaluate({"get_param": ["config", "db", "ports", 1]}, STACK) == 5433


def test_get_param_follows_a_path_into_a_list():
    assert evaluate({"get_param": ["zones", 2]}, STACK) == "az3"
    assert evaluate({"get_param": ["zones", "0"]}, STACK) == "az1"


@pytest.mark.parametrize(
    "args",
    [
        ["config", "nope"],
        ["zones", 9],
        ["zones", "x"],
        ["flavor", 99],
        ["flavor", "x"],
        ["config", "db", "host", "deeper"],
        ["config", "db", "ports", 0, 0],
        ["config", 0],
        ["zones", 1.5],
    ],
)
def test_get_param_path_that_cannot_be_followed_gives_empty_string(args):
    # Heat's GetParam.result: any KeyError, IndexError or TypeError on the way gives "":
    # a missing key or index, a step into a number, a step that is no string or integer.
    assert evaluate({"get_param": args}, STACK) == ""


@pytest.mark.parametrize(("args", "value"), [(["flavor", 0], "m"), (["flavor", "1"], "1"), (["flavor", -1], "l")])
def test_get_param_path_indexes_into_a_string_as_heat_does(args, value):
    # Heat: a str is a collections.abc.Sequence, so get_path_component indexes into it
    # (a string step read as an integer first): {get_param: [flavor, 0]} of "m1.small" is "m".
    assert evaluate({"get_param": args}, STACK) == value


def test_get_param_path_with_a_boolean_step_indexes_as_heat_does():
    # bool is an int in Python: Heat's check lets True through as index 1.
    assert evaluate({"get_param": ["zones", True]}, STACK) == "az2"


def test_get_param_path_can_be_computed():
    data = {"get_param": ["config", {"get_param": "key"}, "host"]}
    context = FakeContext(parameters={"config": {"db": {"host": "h"}}, "key": "db"})

    assert evaluate(data, context) == "h"


def test_get_param_of_an_unresolved_value_is_unresolved():
    context = FakeContext(parameters={"config": UNRESOLVED})

    assert evaluate({"get_param": "config"}, context) is UNRESOLVED
    assert evaluate({"get_param": ["config", "db", "host"]}, context) is UNRESOLVED


def test_get_param_has_no_dependencies():
    assert list(dependencies(parse_ok({"get_param": "flavor"}))) == []


def test_get_param_names_its_parameter():
    assert parse_ok({"get_param": "flavor"}).parameter_name() == "flavor"
    assert parse_ok({"get_param": ["config", "db"]}).parameter_name() == "config"


# -- get_resource ----------------------------------------------------------------


def test_get_resource_returns_the_reference():
    assert evaluate({"get_resource": "port"}, STACK) == "port-id-1"


def test_get_resource_of_a_resource_not_created_is_unresolved():
    assert evaluate({"get_resource": "pending"}, STACK) is UNRESOLVED


def test_get_resource_depends_on_its_resource():
    assert list(dependencies(parse_ok({"get_resource": "port"}))) == ["port"]


# -- get_attr --------------------------------------------------------------------


def test_get_attr_returns_the_attribute():
    assert evaluate({"get_attr": ["port", "name"]}, STACK) == "p"


def test_get_attr_passes_the_path_to_the_stack():
    context = FakeContext(resources=STACK.resources)

    assert evaluate({"get_attr": ["port", "fixed_ips", 0, "ip_address"]}, context) == "10.0.0.5"
    assert context.attribute_reads == [("port", "fixed_ips", (0, "ip_address"))]


def test_get_attr_with_only_a_resource_gives_every_attribute():
    assert evaluate({"get_attr": ["port"]}, STACK) == STACK.resources["port"]["attributes"]


def test_get_attr_attribute_name_can_be_computed():
    context = FakeContext(parameters={"which": "name"}, resources=STACK.resources)

    assert evaluate({"get_attr": ["port", {"get_param": "which"}]}, context) == "p"


def test_get_attr_computed_attribute_name_must_be_a_string():
    context = FakeContext(parameters={"which": 5}, resources=STACK.resources)

    error = evaluate_error({"get_attr": ["port", {"get_param": "which"}]}, context)
    assert "attribute name given to get_attr must be a string" in error.message


def test_get_attr_of_a_resource_not_created_is_unresolved():
    assert evaluate({"get_attr": ["pending", "name"]}, STACK) is UNRESOLVED
    assert evaluate({"get_attr": ["pending"]}, STACK) is UNRESOLVED


def test_get_attr_with_an_unresolved_path_is_unresolved():
    data = {"get_attr": ["port", "fixed_ips", {"get_resource": "pending"}]}

    assert evaluate(data, FakeContext(resources=STACK.resources)) is UNRESOLVED


def test_get_attr_depends_on_its_resource_and_its_arguments():
    parsed = parse_ok({"get_attr": ["port", {"get_param": "x"}, {"get_resource": "other"}]})

    assert list(dependencies(parsed)) == ["port", "other"]


# -- str_replace -----------------------------------------------------------------


def str_replace(template: Any, params: Any) -> dict[str, Any]:
    return {"str_replace": {"template": template, "params": params}}


def test_str_replace_replaces_every_occurrence():
    assert evaluate(str_replace("Hello NAME, NAME!", {"NAME": "world"})) == "Hello world, world!"


def test_str_replace_prefers_the_longest_key():
    assert evaluate(str_replace("$var1 $var10", {"$var1": "a", "$var10": "b"})) == "a b"


def test_str_replace_longest_key_wins_over_an_earlier_shorter_match():
    # Heat splits on the longest key first, wherever the shorter key starts.
    assert evaluate(str_replace("abcd", {"ab": "X", "bcd": "Y"})) == "aY"


def test_str_replace_equal_length_keys_go_in_alphabetical_order():
    assert evaluate(str_replace("abc", {"bc": "Y", "ab": "X"})) == "Xc"


def test_str_replace_does_not_rescan_replaced_text():
    params = {"A": "B", "B": "A", "%host%": "%port%", "%port%": "80"}

    assert evaluate(str_replace("A B %host%", params)) == "B A %port%"


def test_str_replace_value_never_joins_with_the_text_around_it():
    assert evaluate(str_replace("xAy", {"A": "B", "xB": "bad"})) == "xBy"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (5, "5"),
        (2.5, "2.5"),
        (None, ""),
        (True, "True"),
        ({"b": 1, "a": [1, 2]}, '{"a": [1, 2], "b": 1}'),
        ([1, "x"], '[1, "x"]'),
        ("", ""),
    ],
)
def test_str_replace_non_string_values(value, text):
    assert evaluate(str_replace("<V>", {"V": value})) == f"<{text}>"


def test_str_replace_maps_and_lists_are_refused_before_2015_10_15():
    error = evaluate_error(str_replace("V", {"V": {"a": 1}}), version="2015-04-30")

    assert "must be strings or numbers" in error.message
    assert evaluate(str_replace("V", {"V": 1}), version="2015-04-30") == "1"


def test_str_replace_params_and_template_can_be_computed():
    context = FakeContext(parameters={"params": {"X": "1"}, "template": "X-X"})
    data = str_replace({"get_param": "template"}, {"get_param": "params"})

    assert evaluate(data, context) == "1-1"


def test_str_replace_computed_template_must_be_a_string():
    error = evaluate_error(str_replace({"get_param": "t"}, {}), FakeContext(parameters={"t": [1]}))

    assert '"template" given to str_replace must be a string' in error.message
    assert error.path == "resources.server.properties"


def test_str_replace_computed_params_must_be_a_map():
    error = evaluate_error(str_replace("x", {"get_param": "p"}), FakeContext(parameters={"p": [1]}))

    assert '"params" given to str_replace must be a map' in error.message


def test_str_replace_with_an_unresolved_value_is_unresolved():
    data = str_replace("ip=IP", {"IP": {"get_attr": ["pending", "first_address"]}})

    assert evaluate(data, STACK) is UNRESOLVED


def test_str_replace_with_an_unresolved_value_inside_a_list_is_unresolved():
    data = str_replace("ips=IPS", {"IPS": [{"get_attr": ["pending", "first_address"]}]})

    assert evaluate(data, STACK) is UNRESOLVED


def test_str_replace_with_an_unresolved_template_is_unresolved():
    data = str_replace({"get_attr": ["pending", "name"]}, {"a": "b"})

    assert evaluate(data, STACK) is UNRESOLVED


def test_str_replace_without_params_returns_the_template():
    assert evaluate(str_replace("unchanged", {})) == "unchanged"


def test_str_replace_dependencies_come_from_its_arguments():
    data = str_replace({"get_attr": ["a", "x"]}, {"K": {"get_resource": "b"}, "L": {"get_param": "p"}})

    assert set(dependencies(parse_ok(data))) == {"a", "b"}


# -- list_join -------------------------------------------------------------------


def test_list_join_joins_one_list():
    assert evaluate({"list_join": [", ", ["a", "b", "c"]]}) == "a, b, c"


def test_list_join_joins_several_lists():
    assert evaluate({"list_join": ["-", ["a", "b"], ["c"], []]}) == "a-b-c"


def test_list_join_encodes_maps_and_lists_as_json():
    data = {"list_join": [";", ["a", {"y": 1, "x": [2]}, ["z", 3]]]}

    assert evaluate(data) == 'a;{"x": [2], "y": 1};["z", 3]'


def test_list_join_none_items_are_empty_and_none_lists_are_skipped():
    context = FakeContext(parameters={"nothing": None})

    assert evaluate({"list_join": [",", ["a", None, "b"], {"get_param": "nothing"}]}, context) == "a,,b"


@pytest.mark.parametrize("item", [1, 2.5, True])
def test_list_join_numbers_are_an_error(item):
    error = evaluate_error({"list_join": [",", ["a", item]]})

    assert "Items to join must be string, map or list" in error.message


def test_list_join_argument_that_is_not_a_list_is_an_error():
    error = evaluate_error({"list_join": [",", {"get_param": "s"}]}, FakeContext(parameters={"s": "a,b"}))

    assert "Argument 1 of list_join must be a list" in error.message


def test_list_join_computed_delimiter_must_be_a_string():
    error = evaluate_error({"list_join": [{"get_param": "d"}, ["a"]]}, FakeContext(parameters={"d": 1}))

    assert "delimiter given to list_join must be a string" in error.message


@pytest.mark.parametrize("item", [{"a": 1}, ["a"], 1])
def test_list_join_accepts_only_strings_before_2015_10_15(item):
    error = evaluate_error({"list_join": [",", ["a", item]]}, version="2015-04-30")

    assert "must be strings in this template version" in error.message


def test_list_join_lists_can_be_computed():
    context = FakeContext(parameters={"zones": ["az1", "az2"]})

    assert evaluate({"list_join": [",", {"get_param": "zones"}, ["az3"]]}, context) == "az1,az2,az3"


def test_list_join_with_an_unresolved_item_is_unresolved():
    data = {"list_join": [",", ["a", {"get_resource": "pending"}]]}

    assert evaluate(data, STACK) is UNRESOLVED


def test_list_join_with_an_unresolved_list_is_unresolved():
    data = {"list_join": [",", {"get_attr": ["pending", "names"]}]}

    assert evaluate(data, STACK) is UNRESOLVED


def test_list_join_with_an_unresolved_value_inside_a_map_item_is_unresolved():
    data = {"list_join": [",", [{"k": {"get_resource": "pending"}}]]}

    assert evaluate(data, STACK) is UNRESOLVED


# -- dependencies and referenced attributes --------------------------------------


def test_dependencies_walk_the_whole_value():
    data = {
        "a": {"get_resource": "r1"},
        "b": [{"list_join": [",", [{"get_attr": ["r2", "x"]}, {"get_param": "p"}]]}],
        "c": {"plain": {"get_resource": "r3"}},
        "d": "get_resource",
    }

    assert sorted(dependencies(parse_ok(data))) == ["r1", "r2", "r3"]


def test_dependencies_of_plain_data_are_empty():
    assert list(dependencies({"a": [1, {"b": "c"}]})) == []


def test_referenced_attributes_name_resource_and_attribute():
    data = {
        "a": {"get_attr": ["r1", "first_address"]},
        "b": {"get_attr": ["r2"]},
        "c": {"get_attr": ["r3", {"get_param": "which"}]},
        "d": {"get_resource": "r4"},
    }

    assert set(referenced_attributes(parse_ok(data))) == {
        ("r1", "first_address"),
        ("r2", None),
        ("r3", None),
    }


def test_referenced_attributes_inside_other_functions_are_found():
    data = {"str_replace": {"template": "T", "params": {"T": {"get_attr": ["r1", "name"]}}}}

    assert list(referenced_attributes(parse_ok(data))) == [("r1", "name")]


def test_referenced_attributes_inside_get_attr_arguments_are_found():
    data = {"get_attr": ["r1", "addresses", {"get_attr": ["r2", "network"]}]}

    assert set(referenced_attributes(parse_ok(data))) == {("r1", "addresses"), ("r2", "network")}


# -- tree helpers ----------------------------------------------------------------


def test_resolve_leaves_plain_data_alone():
    data = {"a": [1, "b", None, {"c": True}], "d": {}}

    assert resolve(data, FakeContext()) == data


def test_has_functions_finds_nested_calls():
    assert base.has_functions(parse_ok({"a": [{"b": {"get_param": "x"}}]}))
    assert not base.has_functions({"a": [{"b": {"get_param_not": "x"}}]})


def test_function_compares_by_name_and_arguments():
    first = parse_ok({"get_param": "x"})

    assert first == parse_ok({"get_param": "x"})
    assert first != parse_ok({"get_param": "y"})
    assert first != parse_ok({"get_resource": "x"})
    assert repr(first) == "{get_param: 'x'}"


def test_to_template_gives_back_the_template_form():
    data = {"a": [{"get_attr": ["r", "x", {"get_param": "p"}]}], "b": {"list_join": [",", ["a"]]}}

    assert to_template(parse_ok(data)) == data


def test_list_join_and_str_replace_classes_per_version():
    assert versions.get("2015-10-15").functions["list_join"] is ListJoin
    assert versions.get("2015-10-15").functions["str_replace"] is StrReplace
    assert versions.get("2015-04-30").functions["list_join"] is not ListJoin


# -- properties ------------------------------------------------------------------


def heat_str_replace(template: str, params: dict[str, str]) -> str:
    """Heat's own algorithm (heat.engine.hot.functions.Replace), as a reference."""

    def replace(strings: list[str], keys: list[str]) -> list[str]:
        if not keys:
            return strings
        placeholder, rest = keys[0], keys[1:]
        return [params[placeholder].join(replace(text.split(placeholder), rest)) for text in strings]

    return replace([template], sorted(sorted(params), key=len, reverse=True))[0]


# Small alphabets so that keys overlap each other, the template and the values.
keys = st.text(alphabet="abc$", min_size=1, max_size=3)
texts = st.text(alphabet="abc$ X", max_size=24)


@given(template=texts, params=st.dictionaries(keys, st.text(alphabet="abcXY$", max_size=4), max_size=5))
def test_str_replace_matches_heat_for_any_keys(template, params):
    assert evaluate(str_replace(template, params)) == heat_str_replace(template, params)


@given(template=texts, params=st.dictionaries(keys, st.integers() | st.none() | st.floats(allow_nan=False), max_size=4))
def test_str_replace_non_string_values_match_heat(template, params):
    as_text = {key: "" if value is None else str(value) for key, value in params.items()}

    assert evaluate(str_replace(template, params)) == heat_str_replace(template, as_text)


@given(delimiter=st.text(max_size=3), items=st.lists(st.text(max_size=6), max_size=8))
def test_list_join_of_strings_equals_str_join(delimiter, items):
    assert evaluate({"list_join": [delimiter, items]}) == delimiter.join(items)


@given(delimiter=st.text(max_size=3), lists=st.lists(st.lists(st.text(max_size=4), max_size=4), min_size=1, max_size=4))
def test_list_join_of_several_lists_equals_joining_them_concatenated(delimiter, lists):
    assert evaluate({"list_join": [delimiter, *lists]}) == delimiter.join(item for items in lists for item in items)


def function_calls(children: st.SearchStrategy) -> st.SearchStrategy:
    names = st.text(alphabet="abcxyz_", min_size=1, max_size=6)
    return st.one_of(
        st.builds(lambda name: {"get_param": name}, names),
        st.builds(lambda name, path: {"get_param": [name, *path]}, names, st.lists(names | st.integers(0, 3), max_size=2)),
        st.builds(lambda name: {"get_resource": name}, names),
        st.builds(lambda name, rest: {"get_attr": [name, *rest]}, names, st.lists(names | children, max_size=2)),
        st.builds(
            lambda template, params: {"str_replace": {"template": template, "params": params}},
            st.text(max_size=8) | children,
            st.dictionaries(names, children, max_size=3),
        ),
        st.builds(lambda delimiter, lists: {"list_join": [delimiter, *lists]}, st.text(max_size=2), st.lists(st.lists(children, max_size=3) | children, min_size=1, max_size=3)),
    )


scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
template_data = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=8), children, max_size=4),
        function_calls(children),
    ),
    max_leaves=25,
)


@given(template_data)
def test_to_template_of_parse_is_the_original_data(data):
    parsed, _ = parse(data)

    assert to_template(parsed) == data
    assert json.dumps(to_template(parsed), sort_keys=True) == json.dumps(data, sort_keys=True)
