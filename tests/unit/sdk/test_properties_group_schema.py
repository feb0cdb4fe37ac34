"""Properties groups (seed 002): the registration check of the declarations
(``check_schema``), which names every mistake with its place and the fix."""

from __future__ import annotations

from typing import Any

from stoker.sdk.properties import Schema
from stoker.sdk.properties_group import (
    AND,
    API_VERSIONS,
    CLIENT_PLUGIN,
    OR,
    PROPERTIES,
    VERSIONS,
    XOR,
    check_schema,
)
from tests.unit.sdk.properties_group_cases import (
    ITEM_XOR,
    NESTED_SCHEMA,
    SERVER_SCHEMA,
    FakeKeystonePlugin,
    PropertyA,
)

# -- check_schema: mistakes in the declarations ---------------------------------------------------


def one_problem(groups: Any, schema: dict = SERVER_SCHEMA, **kwargs: Any) -> str:
    problems = check_schema(groups, schema, **kwargs)
    assert len(problems) == 1, problems
    return problems[0]


def test_check_schema_groups_must_be_a_list():
    assert one_problem({XOR: [["network"]]}) == "properties_groups_schema must be a list of groups, not dict"


def test_check_schema_group_must_be_a_dict():
    assert one_problem([[["network"]]]) == (
        "properties_groups_schema[0]: a group is a one-key dict like {'xor': [['a'], ['b']]}; "
        "got [['network']]"
    )


def test_check_schema_group_must_have_one_key():
    assert one_problem([{AND: [["network"]], OR: [["port"]]}]) == (
        "properties_groups_schema[0]: a group must have exactly one key (one of and, or, xor, "
        "api_versions); got ['and', 'or']"
    )


def test_check_schema_unknown_operator_suggests_lower_case():
    assert one_problem([{"AND": [["network"]]}]) == (
        "properties_groups_schema[0]: unknown operator 'AND'; use one of and, or, xor, "
        "api_versions (did you mean 'and'?)"
    )


def test_check_schema_value_must_be_a_non_empty_list():
    assert one_problem([{OR: {"network": True}}]) == (
        "properties_groups_schema[0].or: must be a list of property paths and groups; got dict"
    )
    assert one_problem([{OR: []}]) == "properties_groups_schema[0].or: lists nothing"


def test_check_schema_entry_given_as_string_shows_the_list_form():
    assert one_problem([{XOR: ["network", ["port"]]}]) == (
        "properties_groups_schema[0].xor[0]: 'network': a property path is a list of names, "
        "like ['network']"
    )


def test_check_schema_entry_of_other_type():
    assert one_problem([{XOR: [["network"], 7]}]) == (
        "properties_groups_schema[0].xor[1]: 7 is neither a property path (a list of names) "
        "nor a group (a one-key dict)"
    )


def test_check_schema_empty_path_and_non_string_names():
    assert one_problem([{XOR: [["network"], []]}]) == "properties_groups_schema[0].xor[1]: an empty property path"
    assert one_problem([{XOR: [["network"], ["networks", 0]]}]) == (
        "properties_groups_schema[0].xor[1]: ['networks', 0]: property names must be strings"
    )


def test_check_schema_unknown_property_suggests_a_close_one():
    assert one_problem([{XOR: [["netwrk"], ["port"]]}]) == (
        "properties_groups_schema[0].xor[0]: ['netwrk']: unknown property 'netwrk' "
        "(did you mean 'network'?)"
    )


def test_check_schema_unknown_sub_property():
    assert one_problem([{AND: [[PropertyA, "PropertySubAA"]]}], NESTED_SCHEMA) == (
        "properties_groups_schema[0].and[0]: ['PropertyA', 'PropertySubAA']: 'PropertyA' has no "
        "sub-property 'PropertySubAA' (did you mean 'PropertySubA'?)"
    )


def test_check_schema_path_into_a_string():
    assert one_problem([{AND: [["name", "first"]]}]) == (
        "properties_groups_schema[0].and[0]: ['name', 'first']: 'name' is a String; it has no "
        "sub-properties"
    )


def test_check_schema_path_into_a_map_without_schema():
    assert one_problem([{AND: [["metadata", "owner"]]}]) == (
        "properties_groups_schema[0].and[0]: ['metadata', 'owner']: 'metadata' is a Map without "
        "a declared schema, so its sub-properties cannot be named"
    )


def test_check_schema_path_into_list_of_maps_is_accepted():
    assert check_schema(ITEM_XOR, SERVER_SCHEMA) == []


def test_check_schema_path_into_a_list_of_strings():
    assert one_problem([{AND: [["tags", "first"]]}]) == (
        "properties_groups_schema[0].and[0]: ['tags', 'first']: 'tags' is a List whose items "
        "are not Maps with a declared schema, so it has no sub-properties"
    )


def test_check_schema_deep_path_through_maps():
    schema = {
        "prp1": Schema(
            Schema.MAP,
            schema={"child_prp1": Schema(Schema.MAP, schema={"grand_child_prp1": Schema(Schema.STRING)})},
        )
    }
    assert check_schema([{AND: [["prp1", "child_prp1", "grand_child_prp1"]]}], schema) == []
    assert one_problem([{AND: [["prp1", "child_prp1", "grand_child"]]}], schema) == (
        "properties_groups_schema[0].and[0]: ['prp1', 'child_prp1', 'grand_child']: "
        "'prp1.child_prp1' has no sub-property 'grand_child' (did you mean 'grand_child_prp1'?)"
    )


def test_check_schema_duplicate_entry():
    assert one_problem([{XOR: [["network"], ["network"]]}]) == (
        "properties_groups_schema[0].xor[1]: ['network'] is listed twice in this group"
    )


def test_check_schema_names_the_nested_location():
    groups = [{AND: [["name"], {OR: [["network"], ["prot"]]}]}]
    assert one_problem(groups) == (
        "properties_groups_schema[0].and[1].or[1]: ['prot']: unknown property 'prot' "
        "(did you mean 'port'?)"
    )


def test_check_schema_reports_every_problem():
    groups = [{XOR: [["netwrk"], "port"]}, {"nor": [["name"]]}]
    assert len(check_schema(groups, SERVER_SCHEMA)) == 3


def test_check_schema_api_versions_accepts_name_class_and_instance():
    for plugin in ("keystone", FakeKeystonePlugin, FakeKeystonePlugin()):
        groups = [{API_VERSIONS: {CLIENT_PLUGIN: plugin, VERSIONS: ["1.2", "2.0"], PROPERTIES: [["port"]]}}]
        assert check_schema(groups, SERVER_SCHEMA, client_names=["keystone"]) == []


def test_check_schema_api_versions_missing_and_unknown_keys():
    groups = [{API_VERSIONS: {CLIENT_PLUGIN: "keystone", "version": ["2.0"], PROPERTIES: [["port"]]}}]
    assert check_schema(groups, SERVER_SCHEMA) == [
        "properties_groups_schema[0].api_versions: unknown keys ['version']; the keys are "
        "client_plugin, versions, properties",
        "properties_groups_schema[0].api_versions: missing versions",
    ]


def test_check_schema_api_versions_value_must_be_a_dict():
    assert one_problem([{API_VERSIONS: [["port"]]}]) == (
        "properties_groups_schema[0].api_versions: must be a dict with the keys client_plugin, "
        "versions, properties; got [['port']]"
    )


def test_check_schema_api_versions_bad_client_plugin():
    groups = [{API_VERSIONS: {CLIENT_PLUGIN: 42, VERSIONS: ["2.0"], PROPERTIES: [["port"]]}}]
    assert one_problem(groups) == (
        "properties_groups_schema[0].api_versions.client_plugin: must be a client plugin name "
        "or a ClientPlugin; got 42"
    )


def test_check_schema_api_versions_unregistered_client_name():
    groups = [{API_VERSIONS: {CLIENT_PLUGIN: "keystne", VERSIONS: ["2.0"], PROPERTIES: [["port"]]}}]
    assert check_schema(groups, SERVER_SCHEMA) == []
    assert one_problem(groups, client_names=["keystone", "nova"]) == (
        "properties_groups_schema[0].api_versions.client_plugin: no client plugin named "
        "'keystne' is registered (did you mean 'keystone'?)"
    )


def test_check_schema_api_versions_versions_must_be_strings():
    groups = [{API_VERSIONS: {CLIENT_PLUGIN: "nova", VERSIONS: ["2.10", 2.1], PROPERTIES: [["port"]]}}]
    assert one_problem(groups) == (
        "properties_groups_schema[0].api_versions.versions[1]: 2.1 is not a version; write "
        "versions as strings like '2.10'"
    )
    groups = [{API_VERSIONS: {CLIENT_PLUGIN: "nova", VERSIONS: "2.10", PROPERTIES: [["port"]]}}]
    assert one_problem(groups) == (
        "properties_groups_schema[0].api_versions.versions: must be a non-empty list of versions "
        "like ['1.2', '2.0']; got '2.10'"
    )


def test_check_schema_api_versions_properties_are_paths_only():
    groups = [
        {
            API_VERSIONS: {
                CLIENT_PLUGIN: "nova",
                VERSIONS: ["2.0"],
                PROPERTIES: [["port"], {OR: [["network"]]}, ["prot"]],
            }
        }
    ]
    assert check_schema(groups, SERVER_SCHEMA) == [
        "properties_groups_schema[0].api_versions.properties[1]: lists property paths only, not groups",
        "properties_groups_schema[0].api_versions.properties[2]: ['prot']: unknown property "
        "'prot' (did you mean 'port'?)",
    ]
    groups = [{API_VERSIONS: {CLIENT_PLUGIN: "nova", VERSIONS: ["2.0"], PROPERTIES: []}}]
    assert one_problem(groups) == (
        "properties_groups_schema[0].api_versions.properties: must be a non-empty list of "
        "property paths; got []"
    )
