"""Property translation rules (seed 000): the five cases, the rule errors, and the
errors. Values that are functions or not known yet: test_translation_values.py;
through real plugins: test_translation_plugins.py."""

from __future__ import annotations

import copy
import subprocess
import sys
from typing import Any

import pytest

from stoker.sdk import properties, support, translation
from stoker.sdk.exceptions import EntityNotFound, PropertyError, SchemaError
from stoker.sdk.properties import Properties, Schema
from stoker.sdk.translation import TranslationRule, apply_rules, check_rules

HIDDEN = support.SupportStatus(
    status=support.HIDDEN,
    version="5.0.0",
    previous_status=support.SupportStatus(status=support.DEPRECATED, version="2014.2"),
)

ADD, REPLACE, DELETE, RESOLVE = TranslationRule.RULE_KEYS


def _string(**kwargs: Any) -> Schema:
    return Schema(Schema.STRING, **kwargs)


def _list_of(**fields: Schema) -> Schema:
    return Schema(Schema.LIST, schema=Schema(Schema.MAP, schema=fields))


SERVER_SCHEMA = {
    "flavor": _string(),
    "flavor_id": _string(support_status=HIDDEN),
    "networks": _list_of(
        network=_string(),
        uuid=_string(support_status=HIDDEN),
        port=_string(),
        ports=Schema(Schema.LIST),
    ),
    "fixed_ip": Schema(Schema.MAP, schema={"subnet": _string(), "ip_address": _string()}),
    "fixed_ips": _list_of(subnet=_string(), ip_address=_string()),
    "subnet_id": _string(support_status=HIDDEN),
    "subnet": _string(),
    "security_group": _string(support_status=HIDDEN),
    "security_groups": Schema(Schema.LIST, schema=_string()),
    "tags": Schema(Schema.LIST),
    "config": Schema(Schema.MAP),
    "image": _string(),
    "count": Schema(Schema.INTEGER),
}


def _translated(
    data: dict[str, Any], *rules: tuple, resolver: Any = None, **options: Any
) -> Properties:
    """Properties over SERVER_SCHEMA with ``rules`` (TranslationRule argument tuples) applied."""
    props = Properties(
        SERVER_SCHEMA,
        data,
        resolver=resolver or (lambda value: value),
        path="resources.server.properties",
    )
    apply_rules(
        props, [TranslationRule(props, *args, **kwargs) for args, kwargs in rules], **options
    )
    return props


def rule(*args: Any, **kwargs: Any) -> tuple:
    return args, kwargs


class FakeNetworkPlugin:
    """A client plugin at the boundary: names to ids from a table, as a finder does."""

    def __init__(self) -> None:
        self.ids = {
            "network": {"private": "net-1", "public": "net-2"},
            "subnet": {"private-subnet": "sub-1"},
        }
        self.calls: list[tuple[Any, ...]] = []

    def find_resourceid_by_name_or_id(self, entity: str, name: str) -> str:
        self.calls.append((entity, name))
        if name in self.ids[entity].values():
            return name
        try:
            return self.ids[entity][name]
        except KeyError:
            raise EntityNotFound(entity, name) from None

    def get_image_id(self, name: str) -> str:
        self.calls.append((name,))
        return f"image-{name}"

    def broken_finder(self, name: str) -> str:
        raise ConnectionError("service unavailable")


# -- the rule itself ------------------------------------------------------------


def test_translation_rule_keys_are_heats():
    assert TranslationRule.RULE_KEYS == ("Add", "Replace", "Delete", "Resolve")
    assert (
        TranslationRule.ADD,
        TranslationRule.REPLACE,
        TranslationRule.DELETE,
        TranslationRule.RESOLVE,
    ) == (
        "Add",
        "Replace",
        "Delete",
        "Resolve",
    )


def test_translation_rule_is_importable_from_properties():
    assert properties.TranslationRule is translation.TranslationRule
    from stoker.sdk.properties import TranslationRule as from_properties

    assert from_properties is TranslationRule


@pytest.mark.parametrize(
    "imports",
    [
        "import stoker.sdk.translation, stoker.sdk.properties as p; p.TranslationRule",
        "import stoker.sdk.properties as p; p.TranslationRule; import stoker.sdk.translation",
        "from stoker.sdk.properties import TranslationRule",
    ],
)
def test_translation_module_imports_without_cycle(imports):
    subprocess.run([sys.executable, "-c", imports], check=True)


def test_translation_rule_unknown_rule_is_rejected():
    with pytest.raises(SchemaError) as caught:
        TranslationRule(None, "Move", ["flavor"])
    assert (
        "There is no rule Move. List of allowed rules is: Add, Replace, Delete, Resolve."
        in caught.value.message
    )


@pytest.mark.parametrize("path", [[], "flavor", None, ["networks", 0]])
def test_translation_rule_path_must_be_a_list_of_names(path):
    with pytest.raises(
        SchemaError, match='"translation_path" should be non-empty list with path to translate.'
    ):
        TranslationRule(None, DELETE, path)


def test_translation_rule_value_sources_are_exclusive():
    with pytest.raises(
        SchemaError, match='"value_path", "value" and "value_name" are mutually exclusive'
    ):
        TranslationRule(None, REPLACE, ["flavor"], value="m1", value_path=["flavor_id"])


def test_translation_rule_add_value_must_be_a_list():
    with pytest.raises(SchemaError, match='"value" must be list type when rule is Add.'):
        TranslationRule(None, ADD, ["tags"], value="one")


def test_translation_rule_resolve_needs_client_plugin_and_finder():
    with pytest.raises(
        SchemaError, match='"client_plugin" and "finder" should be specified for Resolve rule'
    ):
        TranslationRule(None, RESOLVE, ["image"], finder="get_image_id")


def test_translation_rule_resolve_finder_must_exist_on_plugin():
    with pytest.raises(
        SchemaError, match="client plugin FakeNetworkPlugin has no finder method 'find_image'"
    ):
        TranslationRule(
            None, RESOLVE, ["image"], client_plugin=FakeNetworkPlugin(), finder="find_image"
        )


# -- checks against the schema ------------------------------------------------------


def test_check_rules_accepts_valid_rules():
    rules = [
        TranslationRule(None, REPLACE, ["flavor"], value_path=["flavor_id"]),
        TranslationRule(None, REPLACE, ["networks", "network"], value_name="uuid"),
        TranslationRule(None, ADD, ["security_groups"], value_path=["security_group"]),
        TranslationRule(None, DELETE, ["networks", "uuid"]),
        TranslationRule(
            None,
            RESOLVE,
            ["networks", "network"],
            client_plugin="neutron",
            finder="find",
            entity="network",
        ),
        TranslationRule(
            None, REPLACE, ["image"], value_path=["config"], custom_value_path=["image", "name"]
        ),
    ]
    assert check_rules(SERVER_SCHEMA, rules) == []


def test_check_rules_reports_path_not_in_schema():
    problems = check_rules(SERVER_SCHEMA, [TranslationRule(None, DELETE, ["networks", "mac"])])
    assert problems == [
        "translation rule Delete networks.mac: translation_path: property networks.mac is not in the schema"
    ]


def test_check_rules_reports_add_on_non_list():
    problems = check_rules(SERVER_SCHEMA, [TranslationRule(None, ADD, ["flavor"], value=["m1"])])
    assert problems == [
        "translation rule Add flavor: Add rule must be used only for List properties; flavor is a String property"
    ]


def test_check_rules_reports_unknown_value_name_and_value_path():
    problems = check_rules(
        SERVER_SCHEMA,
        [
            TranslationRule(None, REPLACE, ["networks", "network"], value_name="net_id"),
            TranslationRule(None, REPLACE, ["flavor"], value_path=["flavour_id"]),
        ],
    )
    assert problems == [
        "translation rule Replace networks.network: value_name: property networks.net_id is not in the schema",
        "translation rule Replace flavor: value_path: property flavour_id is not in the schema",
    ]


def test_check_rules_reports_replace_from_inside_a_list():
    problems = check_rules(
        SERVER_SCHEMA,
        [TranslationRule(None, REPLACE, ["subnet"], value_path=["fixed_ips", "subnet"])],
    )
    assert problems == [
        "translation rule Replace subnet: Cannot use value_path for properties inside list-type properties"
    ]


def test_check_rules_reports_path_through_a_scalar():
    problems = check_rules(SERVER_SCHEMA, [TranslationRule(None, DELETE, ["flavor", "name"])])
    assert problems == [
        "translation rule Delete flavor.name: translation_path: property flavor is a String: it has no property name"
    ]


def test_check_rules_reports_an_unknown_rule_name_set_after_construction():
    broken = TranslationRule(None, DELETE, ["flavor"])
    broken.rule = "Rename"
    problems = check_rules(SERVER_SCHEMA, [broken, "not a rule"])
    assert problems[0].startswith("translation rule Rename flavor: There is no rule Rename.")
    assert problems[1] == "translation rules must be TranslationRule objects, not str"


def test_apply_rules_rejects_rules_that_do_not_fit_the_schema():
    props = Properties(SERVER_SCHEMA, {}, path="resources.server.properties")
    with pytest.raises(SchemaError) as caught:
        apply_rules(props, [TranslationRule(props, ADD, ["flavor"], value=["m1"])])
    assert caught.value.path == "resources.server.properties"
    assert (
        "Add rule must be used only for List properties; flavor is a String property"
        in caught.value.message
    )


def test_apply_rules_without_rules_keeps_rules_applied_before():
    props = Properties(SERVER_SCHEMA, {"flavor_id": "m1"})
    applied = apply_rules(
        props, [TranslationRule(props, REPLACE, ["flavor"], value_path=["flavor_id"])]
    )
    assert apply_rules(props, []) is applied
    assert props["flavor"] == "m1"


def test_apply_rules_without_client_resolve_drops_only_resolve_rules():
    props = Properties(SERVER_SCHEMA, {"image": "cirros"})
    plugin = FakeNetworkPlugin()
    rules = [
        TranslationRule(props, RESOLVE, ["image"], client_plugin=plugin, finder="get_image_id")
    ]
    assert apply_rules(props, rules, client_resolve=False) is None
    assert props["image"] == "cirros"


def test_apply_rules_without_rules_leaves_properties_untranslated():
    props = Properties(SERVER_SCHEMA, {"flavor": "m1"})
    assert apply_rules(props, None) is None
    assert apply_rules(props, []) is None
    assert props.translation is None
    assert props["flavor"] == "m1"


# -- case 1: two scalar properties ---------------------------------------------------------


def test_replace_value_path_moves_deprecated_scalar_to_new_one():
    data = {"flavor_id": "m1.small"}
    props = _translated(data, rule(REPLACE, ["flavor"], value_path=["flavor_id"]))
    assert props["flavor"] == "m1.small"
    assert props["flavor_id"] == ""
    assert props.data == {"flavor_id": "m1.small"}
    assert props.errors() == []


def test_replace_value_path_keeps_new_property_when_old_is_absent():
    props = _translated({"flavor": "m1.large"}, rule(REPLACE, ["flavor"], value_path=["flavor_id"]))
    assert props["flavor"] == "m1.large"


def test_replace_value_path_conflict_names_both_properties():
    props = _translated(
        {"flavor": "m1.large", "flavor_id": "m1.small"},
        rule(REPLACE, ["flavor"], value_path=["flavor_id"]),
    )
    with pytest.raises(PropertyError) as caught:
        props["flavor"]
    assert (
        caught.value.message
        == "Cannot define the following properties at the same time: flavor, flavor_id."
    )
    assert caught.value.path == "resources.server.properties.flavor"


def test_properties_errors_reports_translation_conflict_once():
    props = _translated(
        {"flavor": "m1.large", "flavor_id": "m1.small"},
        rule(REPLACE, ["flavor"], value_path=["flavor_id"]),
    )
    problems = props.errors()
    assert [problem.message for problem in problems] == [
        "Cannot define the following properties at the same time: flavor, flavor_id."
    ]
    with pytest.raises(PropertyError, match="at the same time"):
        props.validate()


def test_replace_value_sets_a_fixed_value():
    props = _translated({"image": "cirros"}, rule(REPLACE, ["image"], value="fedora"))
    assert props["image"] == "fedora"


def test_properties_validate_sees_translated_values():
    schema = {"flavor": _string(required=True), "flavor_id": _string(support_status=HIDDEN)}
    untranslated = Properties(schema, {"flavor_id": "m1.small"})
    assert [p.message for p in untranslated.errors()] == [
        "Property is required but has no value (set it in the template)"
    ]
    translated = Properties(schema, {"flavor_id": "m1.small"})
    apply_rules(
        translated, [TranslationRule(translated, REPLACE, ["flavor"], value_path=["flavor_id"])]
    )
    translated.validate()


def test_properties_hidden_property_in_old_template_is_not_unknown():
    props = _translated(
        {"flavor_id": "m1.small", "subnet_id": "s1"},
        rule(REPLACE, ["flavor"], value_path=["flavor_id"]),
    )
    assert props.errors() == []
    assert props["subnet_id"] == "s1"


def test_properties_resolved_leaves_out_retired_properties():
    props = _translated(
        {"flavor_id": "m1.small", "security_group": "web"},
        rule(REPLACE, ["flavor"], value_path=["flavor_id"]),
        rule(ADD, ["security_groups"], value_path=["security_group"]),
        rule(DELETE, ["security_group"]),
    )
    resolved = props.resolved()
    assert "flavor_id" not in resolved and "security_group" not in resolved
    assert resolved["flavor"] == "m1.small"
    assert resolved["security_groups"] == ["web"]
    # What the store records translates to itself: no conflict on the next read.
    again = _translated(resolved, rule(REPLACE, ["flavor"], value_path=["flavor_id"]))
    assert again.errors() == []
    assert again["flavor"] == "m1.small"


def test_properties_translation_applies_after_rules_read_old_values():
    props = Properties(SERVER_SCHEMA, {"flavor_id": "m1.small"})
    assert props["flavor"] == ""  # read (and cached) before the rules
    apply_rules(props, [TranslationRule(props, REPLACE, ["flavor"], value_path=["flavor_id"])])
    assert props["flavor"] == "m1.small"


# -- case 2: a property in a Map or List sub-schema and one at the top ------------------------


def test_replace_value_path_moves_top_level_into_map_sub_schema():
    props = _translated(
        {"subnet_id": "s1"}, rule(REPLACE, ["fixed_ip", "subnet"], value_path=["subnet_id"])
    )
    assert props["fixed_ip"] == {"subnet": "s1", "ip_address": None}
    assert props["subnet_id"] == ""


def test_replace_value_path_moves_map_sub_property_to_top_level():
    props = _translated(
        {"fixed_ip": {"subnet": "s1", "ip_address": "10.0.0.5"}},
        rule(REPLACE, ["subnet"], value_path=["fixed_ip", "subnet"]),
    )
    assert props["subnet"] == "s1"
    assert props["fixed_ip"] == {"subnet": None, "ip_address": "10.0.0.5"}


def test_replace_value_path_sets_every_list_item_from_top_level():
    props = _translated(
        {"subnet_id": "s1", "fixed_ips": [{"ip_address": "10.0.0.5"}, {"ip_address": "10.0.0.6"}]},
        rule(REPLACE, ["fixed_ips", "subnet"], value_path=["subnet_id"]),
    )
    assert props["fixed_ips"] == [
        {"subnet": "s1", "ip_address": "10.0.0.5"},
        {"subnet": "s1", "ip_address": "10.0.0.6"},
    ]


def test_replace_value_path_conflicts_with_a_list_item():
    props = _translated(
        {"subnet_id": "s1", "fixed_ips": [{"ip_address": "10.0.0.5"}, {"subnet": "s2"}]},
        rule(REPLACE, ["fixed_ips", "subnet"], value_path=["subnet_id"]),
    )
    with pytest.raises(PropertyError) as caught:
        props.validate()
    assert (
        caught.value.message
        == "Cannot define the following properties at the same time: fixed_ips.subnet, subnet_id."
    )
    assert caught.value.path == "resources.server.properties.fixed_ips[1].subnet"


# -- case 3: two properties inside list items --------------------------------------------------


def test_replace_value_name_applies_to_every_list_item():
    data = {
        "flavor": "m1",
        "networks": [{"uuid": "net-1"}, {"network": "private"}, {"uuid": "net-3", "port": "p"}],
    }
    raw = copy.deepcopy(data)
    props = _translated(data, rule(REPLACE, ["networks", "network"], value_name="uuid"))
    assert [(item["network"], item["uuid"]) for item in props["networks"]] == [
        ("net-1", None),
        ("private", None),
        ("net-3", None),
    ]
    assert props.data == raw


def test_replace_value_name_conflict_in_a_list_item():
    props = _translated(
        {"networks": [{"uuid": "net-1"}, {"uuid": "net-2", "network": "private"}]},
        rule(REPLACE, ["networks", "network"], value_name="uuid"),
    )
    with pytest.raises(PropertyError) as caught:
        props["networks"]
    assert (
        caught.value.message
        == "Cannot define the following properties at the same time: networks.network, networks.uuid."
    )
    assert caught.value.path == "resources.server.properties.networks[1].network"


def test_replace_value_sets_every_list_item():
    props = _translated(
        {"networks": [{"network": "a"}, {"network": "b"}]},
        rule(REPLACE, ["networks", "network"], value="c"),
    )
    assert [item["network"] for item in props["networks"]] == ["c", "c"]


def test_delete_removes_property_from_every_list_item():
    props = _translated(
        {"networks": [{"network": "a", "uuid": "x"}, {"uuid": "y"}]},
        rule(DELETE, ["networks", "uuid"]),
    )
    assert [item["uuid"] for item in props["networks"]] == [None, None]
    assert props["networks"][0]["network"] == "a"


def test_delete_removes_top_level_property():
    props = _translated({"subnet_id": "s1"}, rule(DELETE, ["subnet_id"]))
    assert props["subnet_id"] == ""
    assert "subnet_id" not in props.resolved()


# -- case 4: a non-List property replaced by a List one ---------------------------------------


def test_add_value_path_turns_scalar_into_list_item():
    props = _translated(
        {"security_group": "web", "security_groups": ["default"]},
        rule(ADD, ["security_groups"], value_path=["security_group"]),
        rule(DELETE, ["security_group"]),
    )
    assert props["security_groups"] == ["default", "web"]
    assert props["security_group"] == ""


def test_add_value_name_turns_item_scalar_into_item_list():
    props = _translated(
        {"networks": [{"port": "p1"}, {"port": "p2", "ports": ["p0"]}, {"network": "private"}]},
        rule(ADD, ["networks", "ports"], value_name="port"),
        rule(DELETE, ["networks", "port"]),
    )
    assert [(item["ports"], item["port"]) for item in props["networks"]] == [
        (["p1"], None),
        (["p0", "p2"], None),
        (None, None),
    ]


def test_add_value_appends_to_list_and_creates_missing_one():
    props = _translated({"tags": ["a"]}, rule(ADD, ["tags"], ["b", {"c": 1}]))
    assert props["tags"] == ["a", "b", {"c": 1}]
    props = _translated({}, rule(ADD, ["tags"], ["b"]))
    assert props["tags"] == ["b"]


def test_add_rule_on_a_value_that_is_not_a_list_is_a_property_error():
    props = _translated({"tags": "a,b"}, rule(ADD, ["tags"], ["c"]))
    with pytest.raises(PropertyError) as caught:
        props["tags"]
    assert caught.value.message == "Add rule must be used only for lists: tags is not a list"
    assert caught.value.path == "resources.server.properties.tags"


def test_add_rule_value_is_not_shared_between_properties():
    value = [{"class": "digits"}]
    first = _translated({}, rule(ADD, ["tags"], value))
    first["tags"][0]["class"] = "changed"
    assert value == [{"class": "digits"}]


# -- case 5: resolve a name to an id through a client plugin --------------------------------


def test_resolve_finds_id_with_entity():
    plugin = FakeNetworkPlugin()
    props = _translated(
        {"networks": [{"network": "private"}, {"network": "net-2"}, {"port": "p"}]},
        rule(
            RESOLVE,
            ["networks", "network"],
            client_plugin=plugin,
            finder="find_resourceid_by_name_or_id",
            entity="network",
        ),
    )
    assert [item["network"] for item in props["networks"]] == ["net-1", "net-2", None]
    assert plugin.calls == [("network", "private"), ("network", "net-2")]


def test_resolve_finds_id_without_entity_after_replace():
    plugin = FakeNetworkPlugin()
    # Rules run ADD, REPLACE, RESOLVE, DELETE whatever order they are given in.
    props = _translated(
        {"config": {}, "flavor": "m1", "subnet_id": "cirros"},
        rule(RESOLVE, ["image"], client_plugin=plugin, finder="get_image_id"),
        rule(REPLACE, ["image"], value_path=["subnet_id"]),
    )
    assert props["image"] == "image-cirros"
    assert plugin.calls == [("cirros",)]


def test_resolve_resolves_every_item_of_a_list_value():
    plugin = FakeNetworkPlugin()
    schema = {"subnets": Schema(Schema.LIST, schema=_string())}
    props = Properties(schema, {"subnets": ["private-subnet", "sub-1"]})
    apply_rules(
        props,
        [
            TranslationRule(
                props,
                RESOLVE,
                ["subnets"],
                client_plugin=plugin,
                finder="find_resourceid_by_name_or_id",
                entity="subnet",
            )
        ],
    )
    assert props["subnets"] == ["sub-1", "sub-1"]


def test_resolve_names_client_plugin_through_client_resolver():
    plugin = FakeNetworkPlugin()
    asked: list[str] = []

    def client_resolver(name: str) -> FakeNetworkPlugin:
        asked.append(name)
        return plugin

    props = _translated(
        {"image": "cirros"},
        rule(RESOLVE, ["image"], client_plugin="glance", finder="get_image_id"),
        client_resolver=client_resolver,
    )
    assert props["image"] == "image-cirros"
    assert asked == ["glance"]


def test_resolve_without_client_resolver_for_named_plugin_is_schema_error():
    props = _translated(
        {"image": "cirros"}, rule(RESOLVE, ["image"], client_plugin="glance", finder="get_image_id")
    )
    with pytest.raises(
        SchemaError,
        match="names client plugin 'glance', but apply_rules was given no client_resolver",
    ):
        props["image"]


def test_resolve_is_skipped_without_client_resolve():
    plugin = FakeNetworkPlugin()
    props = _translated(
        {"image": "cirros"},
        rule(RESOLVE, ["image"], client_plugin=plugin, finder="get_image_id"),
        client_resolve=False,
    )
    assert props["image"] == "cirros"
    assert plugin.calls == []


def test_resolve_not_found_keeps_error_type_and_names_path():
    props = _translated(
        {"networks": [{"network": "missing"}]},
        rule(
            RESOLVE,
            ["networks", "network"],
            client_plugin=FakeNetworkPlugin(),
            finder="find_resourceid_by_name_or_id",
            entity="network",
        ),
    )
    with pytest.raises(EntityNotFound) as caught:
        props["networks"]
    assert caught.value.message == "The network (missing) could not be found."
    assert caught.value.path == "resources.server.properties.networks[0].network"


def test_resolve_client_failure_becomes_property_error():
    props = _translated(
        {"image": "cirros"},
        rule(RESOLVE, ["image"], client_plugin=FakeNetworkPlugin(), finder="broken_finder"),
    )
    with pytest.raises(PropertyError) as caught:
        props["image"]
    assert (
        caught.value.message
        == "Cannot resolve 'cirros' with FakeNetworkPlugin.broken_finder: service unavailable"
    )
    assert isinstance(caught.value.__cause__, ConnectionError)


def test_resolve_ignore_resolve_error_keeps_the_name():
    props = _translated(
        {"image": "cirros"},
        rule(RESOLVE, ["image"], client_plugin=FakeNetworkPlugin(), finder="broken_finder"),
        ignore_resolve_error=True,
    )
    assert props["image"] == "cirros"


def test_resolve_calls_the_finder_once_per_properties():
    plugin = FakeNetworkPlugin()
    props = _translated(
        {"image": "cirros"}, rule(RESOLVE, ["image"], client_plugin=plugin, finder="get_image_id")
    )
    props.validate()
    props.resolved()
    assert plugin.calls == [("cirros",)]
