"""Properties groups (seed 002): every example of the seed, each operator, nested groups,
paths into Maps and Lists of Maps, and API_VERSIONS against a fake client plugin. The
registration check of the declarations is in ``test_properties_group_schema.py``."""

from __future__ import annotations

from typing import Any

import pytest

from stoker.sdk import properties_group
from stoker.sdk.exceptions import ClientPluginError, SchemaError
from stoker.sdk.properties import UNRESOLVED, Properties
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
from tests.unit.sdk.properties_group_cases import (
    FLAT_SCHEMA,
    ITEM_XOR,
    NESTED_SCHEMA,
    SERVER_SCHEMA,
    FakeKeystonePlugin,
    Lookup,
    PropertyA,
    PropertyB,
    PropertyC,
    PropertySubA,
    PropertySubB,
)

PATH = "resources.server.properties"

def errors(groups: list, schema: dict, data: dict, lookup: Any = None, **kwargs: Any) -> list[str]:
    properties = Properties(schema, data, path=PATH, **kwargs)
    return [str(error) for error in validate(groups, properties, lookup)]


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
