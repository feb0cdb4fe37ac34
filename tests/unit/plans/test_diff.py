"""Key-level differences (plans.diff): inside maps, JSON text and lists of one length;
values only the action will know flagged as such."""

from __future__ import annotations

from stoker.plans.diff import additions, changes
from stoker.sdk.properties import UNRESOLVED


def test_diff_equal_values_have_no_change():
    assert changes("properties.x", {"a": [1, 2]}, {"a": [1, 2]}) == []


def test_diff_names_each_changed_key_inside_maps():
    old = {"db": {"port": 5432, "host": "a"}, "debug": False, "gone": 1}
    new = {"db": {"port": 5433, "host": "a"}, "debug": False, "added": 2}
    assert changes("properties.config", old, new) == [
        {"path": "properties.config.added", "old": None, "new": 2, "op": "add"},
        {"path": "properties.config.db.port", "old": 5432, "new": 5433, "op": "change"},
        {"path": "properties.config.gone", "old": 1, "new": None, "op": "remove"},
    ]


def test_diff_looks_inside_json_text():
    assert changes("properties.value", '{"a": {"b": 1}, "c": 2}', '{"a": {"b": 3}, "c": 2}') == [
        {"path": "properties.value.a.b", "old": 1, "new": 3, "op": "change"}
    ]


def test_diff_compares_lists_of_one_length_item_by_item_and_others_whole():
    assert changes("p", [{"port": 1}, {"port": 2}], [{"port": 1}, {"port": 3}]) == [
        {"path": "p[1].port", "old": 2, "new": 3, "op": "change"}
    ]
    assert changes("p", [1], [1, 2]) == [{"path": "p", "old": [1], "new": [1, 2], "op": "change"}]


def test_diff_flags_values_known_only_after_the_action():
    assert changes("p", {"a": 1, "b": "x"}, {"a": 1, "b": UNRESOLVED}) == [
        {"path": "p.b", "old": "x", "new": None, "op": "change", "known_after_apply": True}
    ]
    assert changes("p", "x", UNRESOLVED) == [
        {"path": "p", "old": "x", "new": None, "op": "change", "known_after_apply": True}
    ]


def test_diff_additions_show_each_new_value():
    assert additions("properties", {"a": 1, "b": UNRESOLVED}) == [
        {"path": "properties.a", "old": None, "new": 1, "op": "add"},
        {"path": "properties.b", "old": None, "new": None, "op": "add", "known_after_apply": True},
    ]
