"""Property translation on values that come from functions, or are not known yet."""

from __future__ import annotations

from typing import Any

import pytest

from stoker.sdk.exceptions import PropertyError
from stoker.sdk.properties import UNRESOLVED, Properties, Schema
from stoker.sdk.translation import TranslationRule, apply_rules
from tests.unit.sdk.test_translation import (
    ADD,
    DELETE,
    REPLACE,
    RESOLVE,
    FakeNetworkPlugin,
    _list_of,
    _string,
    _translated,
    rule,
)

# -- functions and values not known yet --------------------------------------------------------


def _resolver(parameters: dict[str, Any]):
    """Resolves {"get_param": name} from ``parameters``; {"get_attr": ...} is not known yet."""

    def resolve(value: Any) -> Any:
        if isinstance(value, dict) and set(value) == {"get_param"}:
            return parameters[value["get_param"]]
        if isinstance(value, dict) and set(value) == {"get_attr"}:
            return UNRESOLVED
        if isinstance(value, dict):
            return {key: resolve(item) for key, item in value.items()}
        if isinstance(value, list):
            return [resolve(item) for item in value]
        return value

    return resolve


def test_translation_works_on_resolved_values():
    data = {"flavor_id": {"get_param": "flavor"}, "networks": [{"uuid": {"get_param": "net"}}]}
    props = _translated(
        data,
        rule(REPLACE, ["flavor"], value_path=["flavor_id"]),
        rule(REPLACE, ["networks", "network"], value_name="uuid"),
        resolver=_resolver({"flavor": "m1.small", "net": "net-1"}),
    )
    assert props["flavor"] == "m1.small"
    assert props["networks"] == [{"network": "net-1", "uuid": None, "port": None, "ports": None}]
    assert props.data["flavor_id"] == {"get_param": "flavor"}


def test_translation_carries_unresolved_old_value_to_new_property():
    props = _translated(
        {"flavor_id": {"get_attr": ["other", "flavor"]}},
        rule(REPLACE, ["flavor"], value_path=["flavor_id"]),
        resolver=_resolver({}),
    )
    assert props["flavor"] is UNRESOLVED
    assert props.errors() == []


def test_translation_leaves_unresolved_list_and_items_alone():
    plugin = FakeNetworkPlugin()
    rules = (
        rule(REPLACE, ["networks", "network"], value_name="uuid"),
        rule(
            RESOLVE,
            ["networks", "network"],
            client_plugin=plugin,
            finder="find_resourceid_by_name_or_id",
            entity="network",
        ),
        rule(DELETE, ["networks", "port"]),
        rule(ADD, ["tags"], ["x"]),
    )
    whole = _translated(
        {"networks": {"get_attr": ["net", "list"]}, "tags": {"get_attr": ["t", "v"]}},
        *rules,
        resolver=_resolver({}),
    )
    assert whole["networks"] is UNRESOLVED
    assert whole["tags"] is UNRESOLVED
    items = _translated(
        {
            "networks": [
                {"get_attr": ["a", "b"]},
                {"uuid": {"get_attr": ["c", "d"]}},
                {"network": {"get_attr": ["e", "f"]}},
            ]
        },
        *rules,
        resolver=_resolver({}),
    )
    networks = items["networks"]
    assert networks[0] is UNRESOLVED
    assert networks[1]["network"] is UNRESOLVED and networks[1]["uuid"] is None
    assert networks[2]["network"] is UNRESOLVED
    assert items.errors() == []
    assert plugin.calls == []


def test_translation_replace_custom_value_path_pulls_from_free_form_map():
    props = _translated(
        {"config": {"image": {"name": "cirros", "size": 1}}},
        rule(REPLACE, ["image"], value_path=["config"], custom_value_path=["image", "name"]),
    )
    assert props["image"] == "cirros"
    assert props["config"] == {"image": {"size": 1}}


def test_translation_custom_value_path_through_a_string_is_a_property_error():
    schema = {"mappings": _list_of(name=_string(), options=Schema(Schema.MAP))}
    data = {"mappings": [{"options": {"name": {"first": "a"}}}, {"options": {"name": "flat"}}]}
    props = Properties(schema, data)
    rules = [
        TranslationRule(
            props,
            REPLACE,
            ["mappings", "name"],
            value_name="options",
            custom_value_path=["name", "first"],
        )
    ]
    apply_rules(props, rules)
    with pytest.raises(PropertyError) as caught:
        props["mappings"]
    assert caught.value.message == (
        "Incorrectly specified custom_value_path - cannot pull out required value from data of str type."
    )
    assert caught.value.path == "properties.mappings[1].options.name"
