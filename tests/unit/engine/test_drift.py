"""The comparison of drift detection (engine/drift.py) and the SDK's default reading of
a live object (sdk/live_state.py), on plain values."""

from __future__ import annotations

from stoker.engine.drift import (
    PropertyDrift,
    compared_properties,
    differences,
    same_value,
    summary_of,
)
from stoker.sdk import properties
from stoker.sdk.live_state import as_given, parse_default

S = properties.Schema
SCHEMA = {
    "name": S(S.STRING, "Name.", update_allowed=True),
    "admin_state_up": S(S.BOOLEAN, "Up.", default=True, update_allowed=True),
    "allocation_pools": S(S.LIST, "Pools.", default=[], update_allowed=True),
    "cidr": S(S.STRING, "CIDR."),
    "qos_policy": S(S.STRING, "QoS.", update_allowed=True),
}


def test_same_value_ignores_list_order_number_types_and_null_map_entries():
    assert same_value(["b", "a"], ["a", "b"])
    assert same_value({"size": 1}, {"size": 1.0})
    assert same_value({"network": "n", "enable_snat": None}, {"network": "n"})
    assert not same_value(["a"], ["a", "a"])
    assert not same_value({"role": "web"}, {"role": "db"})
    assert not same_value("1", 1)


def test_compared_properties_are_those_given_and_scalar_defaults():
    stored = {
        "name": "n",
        "admin_state_up": True,
        "allocation_pools": [],
        "cidr": "10.0.0.0/24",
        "qos_policy": None,
    }
    assert compared_properties(SCHEMA, stored, {"cidr"}) == {"cidr", "admin_state_up"}
    assert compared_properties(SCHEMA, stored, {"name", "allocation_pools"}) == {
        "name",
        "allocation_pools",
        "admin_state_up",
    }
    # A record without its definition: everything it holds.
    assert compared_properties(SCHEMA, stored, None) == {
        "name",
        "admin_state_up",
        "allocation_pools",
        "cidr",
    }


def test_differences_name_each_changed_property_in_order():
    stored = {"name": "n", "admin_state_up": True, "cidr": "10.0.0.0/24"}
    live = {"name": "renamed", "admin_state_up": False, "allocation_pools": [{"start": "x"}]}
    assert differences(stored, live, {"name", "admin_state_up", "cidr"}) == [
        PropertyDrift("admin_state_up", True, False),
        PropertyDrift("name", "n", "renamed"),
    ]


def test_parse_default_reads_update_allowed_properties_and_skips_an_unset_name():
    data = {
        "name": "stack-net-x1",
        "admin_state_up": True,
        "cidr": "10.0.0.0/24",
        "qos_policy_id": "q",
    }
    assert parse_default(SCHEMA, {"qos_policy": "qos_policy_id"}, {"name": None}, data) == {
        "admin_state_up": True,
        "qos_policy": "q",
    }
    assert parse_default(SCHEMA, {}, {"name": "mine"}, data) == {
        "name": "stack-net-x1",
        "admin_state_up": True,
    }


def test_as_given_writes_live_ids_as_the_names_given():
    ids = {"web": "id-1", "db": "id-2"}

    def resolve(value: str) -> str:
        if value not in ids and value not in ids.values():
            raise LookupError(value)
        return ids.get(value, value)

    assert as_given(["id-2", "id-1"], ["web", "id-2"], resolve) == ["id-2", "web"]
    assert as_given(["id-3"], ["web", "gone"], resolve) == ["id-3"]
    assert as_given(None, ["web"], resolve) is None


def test_summary_counts_each_status():
    from stoker.engine.drift import DriftStatus, ResourceDrift

    results = [
        ResourceDrift(name, name, "T", None, "s", status)
        for name, status in [
            ("a", DriftStatus.IN_SYNC),
            ("b", DriftStatus.DELETED),
            ("c", DriftStatus.NOT_CHECKED),
        ]
    ]
    assert summary_of(results) == {
        "stack_status": "DRIFTED",
        "resources": 3,
        "in_sync": 1,
        "modified": 0,
        "deleted": 1,
        "not_checked": 1,
    }
