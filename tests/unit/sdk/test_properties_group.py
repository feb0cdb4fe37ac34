"""Properties groups (seed 002): every example of the seed, each operator, nested groups,
paths into Maps and Lists of Maps, API_VERSIONS against a fake client plugin, and the
registration check of the declarations."""

from __future__ import annotations

from typing import Any

import pytest

from stoker.sdk import properties_group
from stoker.sdk.clients import ClientPlugin
from stoker.sdk.exceptions import ClientPluginError, SchemaError, UnknownClientPluginError
from stoker.sdk.properties import UNRESOLVED, Properties, Schema
from stoker.sdk.properties_group import (
    AND,
    API_VERSIONS,
    CLIENT_PLUGIN,
    OR,
    PROPERTIES,
    VERSIONS,
    XOR,
    check_schema,
    validate,
)

PATH = "resources.server.properties"

PropertyA, PropertyB, PropertyC = "PropertyA", "PropertyB", "PropertyC"
PropertySubA, PropertySubB = "PropertySubA", "PropertySubB"

FLAT_SCHEMA = {
    PropertyA: Schema(Schema.STRING),
    PropertyB: Schema(Schema.STRING),
    PropertyC: Schema(Schema.STRING, default="from default"),
}

NESTED_SCHEMA = {
    PropertyA: Schema(
        Schema.MAP,
        schema={
            PropertySubA: Schema(Schema.STRING),
            PropertySubB: Schema(Schema.STRING, default="from default"),
        },
    ),
}

SERVER_SCHEMA = {
    "name": Schema(Schema.STRING),
    "network": Schema(Schema.STRING),
    "port": Schema(Schema.STRING),
    "subnet": Schema(Schema.STRING),
    "tags": Schema(Schema.LIST, schema=Schema(Schema.STRING)),
    "metadata": Schema(Schema.MAP),
    "networks": Schema(
        Schema.LIST,
        schema=Schema(
            Schema.MAP,
            schema={
                "network": Schema(Schema.STRING),
                "port": Schema(Schema.STRING),
                "fixed_ip": Schema(Schema.STRING),
            },
        ),
    ),
}


def errors(groups: list, schema: dict, data: dict, lookup: Any = None, **kwargs: Any) -> list[str]:
    properties = Properties(schema, data, path=PATH, **kwargs)
    return [str(error) for error in validate(groups, properties, lookup)]


class FakeKeystonePlugin(ClientPlugin):
    """Speaks identity API versions 1.0, 1.2 and 2.0; the "cloud" offers up to service_max."""

    name = "keystone"
    supported_versions = ("1.0", "1.2", "2.0")

    def __init__(self, service_max: str | None = None):
        super().__init__(environ={})
        self.service_max = service_max

    def create_client(self, version: str | None) -> Any:
        return {"version": version}

    def get_max_microversion(self) -> str | None:
        return self.service_max


class Lookup:
    """Resource.client_plugin stand-in: hands out plugins by name and records the asking."""

    def __init__(self, *plugins: ClientPlugin):
        self.plugins = {plugin.name: plugin for plugin in plugins}
        self.asked: list[str] = []

    def __call__(self, name: str) -> ClientPlugin:
        self.asked.append(name)
        if name not in self.plugins:
            raise UnknownClientPluginError(name, sorted(self.plugins))
        return self.plugins[name]


def test_constants_are_the_seed_names():
    assert properties_group.AND == "and"
    assert properties_group.OPERATORS == (AND, OR, XOR) == ("and", "or", "xor")
    assert API_VERSIONS == "api_versions"
    assert (CLIENT_PLUGIN, VERSIONS, PROPERTIES) == ("client_plugin", "versions", "properties")


# -- seed 002 examples ----------------------------------------------------------------------

SEED_AND = [{AND: [[PropertyA], [PropertyB]]}]
SEED_NESTED = [{AND: [{OR: [[PropertyA], [PropertyB]]}, [PropertyC]]}]
SEED_PATHS = [{AND: [[PropertyA, PropertySubA], [PropertyA, PropertySubB]]}]


def test_validate_seed_and_example_passes_with_both():
    assert errors(SEED_AND, FLAT_SCHEMA, {PropertyA: "a", PropertyB: "b"}) == []


def test_validate_seed_and_example_fails_with_one_missing():
    assert errors(SEED_AND, FLAT_SCHEMA, {PropertyA: "a"}) == [
        f"{PATH}: all of 'PropertyA' and 'PropertyB' must be given, but 'PropertyB' was not"
    ]


def test_validate_seed_nested_example_passes_with_either_and_c():
    assert errors(SEED_NESTED, FLAT_SCHEMA, {PropertyA: "a", PropertyC: "c"}) == []
    assert errors(SEED_NESTED, FLAT_SCHEMA, {PropertyB: "b", PropertyC: "c"}) == []
    assert errors(SEED_NESTED, FLAT_SCHEMA, {PropertyA: "a", PropertyB: "b", PropertyC: "c"}) == []


def test_validate_seed_nested_example_fails_without_c():
    assert errors(SEED_NESTED, FLAT_SCHEMA, {PropertyA: "a"}) == [
        f"{PATH}: all of (at least one of 'PropertyA' or 'PropertyB') and 'PropertyC' must be "
        "given, but 'PropertyC' was not"
    ]


def test_validate_seed_nested_example_fails_without_a_or_b():
    assert errors(SEED_NESTED, FLAT_SCHEMA, {PropertyC: "c"}) == [
        f"{PATH}: all of (at least one of 'PropertyA' or 'PropertyB') and 'PropertyC' must be "
        "given, but (at least one of 'PropertyA' or 'PropertyB') was not"
    ]


def test_check_schema_accepts_seed_examples():
    assert check_schema(SEED_AND, FLAT_SCHEMA) == []
    assert check_schema(SEED_NESTED, FLAT_SCHEMA) == []
    assert check_schema(SEED_PATHS, NESTED_SCHEMA) == []


def test_validate_seed_path_example_passes_with_both_sub_properties():
    data = {PropertyA: {PropertySubA: "x", PropertySubB: "y"}}
    assert errors(SEED_PATHS, NESTED_SCHEMA, data) == []


def test_validate_seed_path_example_fails_when_sub_property_only_has_default():
    data = {PropertyA: {PropertySubA: "x"}}
    assert errors(SEED_PATHS, NESTED_SCHEMA, data) == [
        f"{PATH}: all of 'PropertyA.PropertySubA' and 'PropertyA.PropertySubB' must be given, "
        "but 'PropertyA.PropertySubB' was not"
    ]


def test_validate_seed_path_example_fails_without_the_parent_map():
    assert errors(SEED_PATHS, NESTED_SCHEMA, {}) == [
        f"{PATH}: all of 'PropertyA.PropertySubA' and 'PropertyA.PropertySubB' must be given, "
        "but 'PropertyA.PropertySubA' and 'PropertyA.PropertySubB' were not"
    ]


def seed_api_versions(client_plugin: Any) -> list:
    return [
        {
            API_VERSIONS: {
                CLIENT_PLUGIN: client_plugin,
                VERSIONS: ["1.2", "2.0"],
                PROPERTIES: [[PropertyA], [PropertyB]],
            }
        }
    ]


@pytest.mark.parametrize("service_max", ["1.2", "2.0"])
def test_validate_seed_api_versions_example_passes_on_listed_version(service_max):
    plugin = FakeKeystonePlugin(service_max=service_max)
    assert errors(seed_api_versions(plugin), FLAT_SCHEMA, {PropertyA: "a"}) == []


def test_validate_seed_api_versions_example_fails_on_older_version():
    plugin = FakeKeystonePlugin(service_max="1.1")
    assert plugin.negotiated_version() == "1.0"
    assert errors(seed_api_versions(plugin), FLAT_SCHEMA, {PropertyA: "a", PropertyB: "b"}) == [
        f"{PATH}.PropertyA: property 'PropertyA' requires API version 1.2 or 2.0 of client "
        "'keystone'; the negotiated version is 1.0",
        f"{PATH}.PropertyB: property 'PropertyB' requires API version 1.2 or 2.0 of client "
        "'keystone'; the negotiated version is 1.0",
    ]


def test_validate_api_versions_by_name_asks_the_lookup():
    lookup = Lookup(FakeKeystonePlugin(service_max="1.1"))
    assert errors(seed_api_versions("keystone"), FLAT_SCHEMA, {PropertyB: "b"}, lookup) == [
        f"{PATH}.PropertyB: property 'PropertyB' requires API version 1.2 or 2.0 of client "
        "'keystone'; the negotiated version is 1.0"
    ]
    assert lookup.asked == ["keystone"]


def test_validate_api_versions_by_class_asks_the_lookup_by_its_name():
    lookup = Lookup(FakeKeystonePlugin(service_max="2.0"))
    assert errors(seed_api_versions(FakeKeystonePlugin), FLAT_SCHEMA, {PropertyA: "a"}, lookup) == []
    assert lookup.asked == ["keystone"]


def test_validate_api_versions_does_not_ask_when_nothing_is_given():
    lookup = Lookup()
    assert errors(seed_api_versions("keystone"), FLAT_SCHEMA, {PropertyC: "c"}, lookup) == []
    assert lookup.asked == []


def test_validate_api_versions_reports_a_plugin_that_cannot_be_found():
    lookup = Lookup()
    assert errors(seed_api_versions("keystone"), FLAT_SCHEMA, {PropertyA: "a"}, lookup) == [
        f"{PATH}: cannot check 'PropertyA' against the API versions of client 'keystone': "
        "No client plugin named 'keystone' is registered"
    ]


def test_validate_api_versions_reports_failed_negotiation():
    class NoCommonVersion(FakeKeystonePlugin):
        def get_min_microversion(self) -> str | None:
            return "3.0"

    plugin = NoCommonVersion(service_max="3.5")
    with pytest.raises(ClientPluginError):
        plugin.negotiated_version()
    found = errors(seed_api_versions(plugin), FLAT_SCHEMA, {PropertyA: "a"})
    assert len(found) == 1
    assert "share no version" in found[0]


def test_validate_api_versions_compares_versions_numerically():
    class Compute(FakeKeystonePlugin):
        name = "compute"
        supported_versions = ()
        max_microversion = "2.10"

    groups = [{API_VERSIONS: {CLIENT_PLUGIN: Compute(), VERSIONS: ["2.10"], PROPERTIES: [[PropertyA]]}}]
    assert errors(groups, FLAT_SCHEMA, {PropertyA: "a"}) == []
    groups = [{API_VERSIONS: {CLIENT_PLUGIN: Compute("2.9"), VERSIONS: ["2.10"], PROPERTIES: [[PropertyA]]}}]
    assert errors(groups, FLAT_SCHEMA, {PropertyA: "a"}) == [
        f"{PATH}.PropertyA: property 'PropertyA' requires API version 2.10 of client 'compute'; "
        "the negotiated version is 2.9"
    ]


def test_validate_api_versions_with_unversioned_plugin_says_so():
    class Unversioned(FakeKeystonePlugin):
        supported_versions = ()

    groups = seed_api_versions(Unversioned())
    assert errors(groups, FLAT_SCHEMA, {PropertyA: "a"}) == [
        f"{PATH}.PropertyA: property 'PropertyA' requires API version 1.2 or 2.0 of client "
        "'keystone'; client 'keystone' negotiates no version"
    ]


# -- each operator ----------------------------------------------------------------------------

NETWORK_XOR = [{XOR: [["network"], ["port"]]}]


def test_validate_xor_passes_with_exactly_one():
    assert errors(NETWORK_XOR, SERVER_SCHEMA, {"network": "private"}) == []
    assert errors(NETWORK_XOR, SERVER_SCHEMA, {"port": "p1"}) == []


def test_validate_xor_fails_with_none():
    assert errors(NETWORK_XOR, SERVER_SCHEMA, {}) == [
        f"{PATH}: exactly one of 'network' or 'port' must be given"
    ]


def test_validate_xor_fails_with_both():
    assert errors(NETWORK_XOR, SERVER_SCHEMA, {"network": "private", "port": "p1"}) == [
        f"{PATH}: exactly one of 'network' or 'port' must be given, but 'network' and 'port' "
        "were both given"
    ]


def test_validate_xor_of_three_names_all_given():
    groups = [{XOR: [["network"], ["port"], ["subnet"]]}]
    data = {"network": "n", "port": "p", "subnet": "s"}
    assert errors(groups, SERVER_SCHEMA, data) == [
        f"{PATH}: exactly one of 'network', 'port' or 'subnet' must be given, but 'network', "
        "'port' and 'subnet' were given"
    ]


def test_validate_or_passes_with_one_or_more():
    groups = [{OR: [["network"], ["port"]]}]
    assert errors(groups, SERVER_SCHEMA, {"port": "p1"}) == []
    assert errors(groups, SERVER_SCHEMA, {"network": "n", "port": "p1"}) == []


def test_validate_or_fails_with_none():
    groups = [{OR: [["network"], ["port"], ["subnet"]]}]
    assert errors(groups, SERVER_SCHEMA, {"name": "web"}) == [
        f"{PATH}: at least one of 'network', 'port' or 'subnet' must be given"
    ]


def test_validate_and_of_three_names_the_missing_ones():
    groups = [{AND: [["network"], ["port"], ["subnet"]]}]
    assert errors(groups, SERVER_SCHEMA, {"port": "p"}) == [
        f"{PATH}: all of 'network', 'port' and 'subnet' must be given, but 'network' and "
        "'subnet' were not"
    ]


def test_validate_single_entry_group_reads_as_one_property():
    assert errors([{AND: [["name"]]}], SERVER_SCHEMA, {}) == [f"{PATH}: 'name' must be given"]


def test_validate_checks_every_group_in_order():
    groups = [{AND: [["name"]]}, {XOR: [["network"], ["port"]]}]
    assert errors(groups, SERVER_SCHEMA, {"network": "n", "port": "p"}) == [
        f"{PATH}: 'name' must be given",
        f"{PATH}: exactly one of 'network' or 'port' must be given, but 'network' and 'port' were both given",
    ]


def test_validate_xor_with_nested_and_group():
    groups = [{XOR: [["network"], {AND: [["port"], ["subnet"]]}]}]
    assert errors(groups, SERVER_SCHEMA, {"port": "p", "subnet": "s"}) == []
    assert errors(groups, SERVER_SCHEMA, {"network": "n"}) == []
    assert errors(groups, SERVER_SCHEMA, {"port": "p"}) == [
        f"{PATH}: exactly one of 'network' or (all of 'port' and 'subnet') must be given"
    ]
    assert errors(groups, SERVER_SCHEMA, {"network": "n", "port": "p", "subnet": "s"}) == [
        f"{PATH}: exactly one of 'network' or (all of 'port' and 'subnet') must be given, but "
        "'network' and (all of 'port' and 'subnet') were both given"
    ]


def test_validate_deeply_nested_groups():
    groups = [{OR: [{AND: [["network"], {XOR: [["port"], ["subnet"]]}]}, ["networks"]]}]
    assert errors(groups, SERVER_SCHEMA, {"network": "n", "subnet": "s"}) == []
    assert errors(groups, SERVER_SCHEMA, {"networks": [{"network": "n"}]}) == []
    assert errors(groups, SERVER_SCHEMA, {"network": "n", "port": "p", "subnet": "s"}) == [
        f"{PATH}: at least one of (all of 'network' and (exactly one of 'port' or 'subnet')) "
        "or 'networks' must be given"
    ]


# -- what counts as given -------------------------------------------------------------------------


def test_validate_default_does_not_count_as_given():
    groups = [{XOR: [[PropertyA], [PropertyC]]}]
    assert errors(groups, FLAT_SCHEMA, {PropertyA: "a"}) == []
    assert errors(groups, FLAT_SCHEMA, {}) == [
        f"{PATH}: exactly one of 'PropertyA' or 'PropertyC' must be given"
    ]


def test_validate_null_does_not_count_as_given():
    assert errors(NETWORK_XOR, SERVER_SCHEMA, {"network": "n", "port": None}) == []


def test_validate_empty_values_count_as_given():
    groups = [{XOR: [["tags"], ["metadata"]]}]
    assert errors(groups, SERVER_SCHEMA, {"tags": [], "metadata": {}}) == [
        f"{PATH}: exactly one of 'tags' or 'metadata' must be given, but 'tags' and 'metadata' "
        "were both given"
    ]


def test_validate_resolves_functions_before_checking():
    params = {"net": "private", "nothing": None}

    def resolver(value: Any) -> Any:
        if isinstance(value, dict) and "get_param" in value:
            return params[value["get_param"]]
        return value

    data = {"network": {"get_param": "net"}, "port": {"get_param": "nothing"}}
    assert errors(NETWORK_XOR, SERVER_SCHEMA, data, resolver=resolver) == []
    data = {"network": {"get_param": "nothing"}}
    assert errors(NETWORK_XOR, SERVER_SCHEMA, data, resolver=resolver) == [
        f"{PATH}: exactly one of 'network' or 'port' must be given"
    ]


def test_validate_leaves_groups_with_unknown_values_undecided():
    def resolver(value: Any) -> Any:
        return UNRESOLVED if isinstance(value, dict) and "get_attr" in value else value

    data = {"port": {"get_attr": ["p", "id"]}}
    assert errors(NETWORK_XOR, SERVER_SCHEMA, data, resolver=resolver) == []
    # Known values decide the group whatever the unknown one turns out to be.
    data = {"network": "n", "port": "p", "subnet": {"get_attr": ["s", "id"]}}
    groups = [{XOR: [["network"], ["port"], ["subnet"]]}]
    assert len(errors(groups, SERVER_SCHEMA, data, resolver=resolver)) == 1


def test_validate_map_given_as_json_text():
    data = {PropertyA: '{"PropertySubA": "x", "PropertySubB": "y"}'}
    assert errors(SEED_PATHS, NESTED_SCHEMA, data) == []


def test_validate_uses_the_path_the_caller_passes():
    properties = Properties(SERVER_SCHEMA, {})
    found = validate(NETWORK_XOR, properties, path="resources.web.properties")
    assert [str(error) for error in found] == [
        "resources.web.properties: exactly one of 'network' or 'port' must be given"
    ]
    assert found[0].path == "resources.web.properties"
    assert found[0].message == "exactly one of 'network' or 'port' must be given"


# -- lists of maps: checked item by item ------------------------------------------------------------

ITEM_XOR = [{XOR: [["networks", "network"], ["networks", "port"]]}]


def test_validate_list_of_maps_checks_each_item():
    data = {"networks": [{"network": "n"}, {"port": "p"}]}
    assert errors(ITEM_XOR, SERVER_SCHEMA, data) == []


def test_validate_list_of_maps_names_the_failing_item():
    data = {"networks": [{"network": "n"}, {"network": "n", "port": "p"}, {"fixed_ip": "10.0.0.5"}]}
    assert errors(ITEM_XOR, SERVER_SCHEMA, data) == [
        f"{PATH}.networks[1]: exactly one of 'network' or 'port' must be given, but 'network' "
        "and 'port' were both given",
        f"{PATH}.networks[2]: exactly one of 'network' or 'port' must be given",
    ]


def test_validate_empty_list_of_maps_has_nothing_to_check():
    assert errors(ITEM_XOR, SERVER_SCHEMA, {"networks": []}) == []
    assert errors(ITEM_XOR, SERVER_SCHEMA, {}) == []


def test_validate_list_entries_mixed_with_top_level_entries():
    groups = [{XOR: [["network"], ["networks", "network"]]}]
    assert errors(groups, SERVER_SCHEMA, {"network": "n"}) == []
    assert errors(groups, SERVER_SCHEMA, {"networks": [{"network": "a"}, {"network": "b"}]}) == []
    assert errors(groups, SERVER_SCHEMA, {"network": "n", "networks": [{"port": "p"}, {"network": "b"}]}) == [
        f"{PATH}: exactly one of 'network' or 'networks[1].network' must be given, but "
        "'network' and 'networks[1].network' were both given"
    ]
    assert errors(groups, SERVER_SCHEMA, {}) == [
        f"{PATH}: exactly one of 'network' or 'networks.network' must be given"
    ]


def test_validate_api_versions_inside_list_items():
    groups = [
        {
            API_VERSIONS: {
                CLIENT_PLUGIN: FakeKeystonePlugin(service_max="1.0"),
                VERSIONS: ["2.0"],
                PROPERTIES: [["networks", "fixed_ip"]],
            }
        }
    ]
    data = {"networks": [{"network": "n"}, {"network": "m", "fixed_ip": "10.0.0.5"}]}
    assert errors(groups, SERVER_SCHEMA, data) == [
        f"{PATH}.networks[1].fixed_ip: property 'networks[1].fixed_ip' requires API version "
        "2.0 of client 'keystone'; the negotiated version is 1.0"
    ]


def test_validate_nested_api_versions_counts_as_given_and_checks_version():
    groups = [
        {
            XOR: [
                ["network"],
                {API_VERSIONS: {CLIENT_PLUGIN: "keystone", VERSIONS: ["2.0"], PROPERTIES: [["port"]]}},
            ]
        }
    ]
    lookup = Lookup(FakeKeystonePlugin(service_max="1.2"))
    assert errors(groups, SERVER_SCHEMA, {"network": "n"}, lookup) == []
    assert errors(groups, SERVER_SCHEMA, {}, lookup) == [
        f"{PATH}: exactly one of 'network' or 'port' must be given"
    ]
    assert errors(groups, SERVER_SCHEMA, {"port": "p"}, lookup) == [
        f"{PATH}.port: property 'port' requires API version 2.0 of client 'keystone'; "
        "the negotiated version is 1.2"
    ]


def test_validate_refuses_malformed_groups():
    properties = Properties(SERVER_SCHEMA, {})
    with pytest.raises(SchemaError, match="unknown operator 'nand'"):
        validate([{"nand": [["network"]]}], properties)


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
