"""The last drift detection of a stack in the store (``store/drift.py``), on a SQLite file
and on PostgreSQL (the ``store`` fixture runs each test on both)."""

from __future__ import annotations

from datetime import timedelta

from stoker.store import Store
from stoker.store.drift import DriftRecord
from stoker.store.records import utcnow
from tests.support.records import make_stack

RESULT = {
    "path": "inner/port",
    "resource_name": "port",
    "resource_type": "OS::Neutron::Port",
    "physical_resource_id": "p-1",
    "stack_id": "s",
    "status": "MODIFIED",
    "reason": "",
    "properties": [{"name": "security_groups", "expected": ["web", "ü"], "actual": ["id-2"]}],
}


def test_store_keeps_one_drift_detection_per_stack_the_last(store: Store) -> None:
    stack, other = make_stack(store, "one"), make_stack(store, "two")
    assert store.drift.last_drift(stack.id) is None
    first = DriftRecord(
        stack.id,
        utcnow().replace(microsecond=0),
        {"stack_status": "DRIFTED", "modified": 1},
        [RESULT],
    )
    store.drift.save_drift(first)
    assert store.drift.last_drift(stack.id) == first
    second = DriftRecord(
        stack.id,
        first.detected_at + timedelta(seconds=5),
        {"stack_status": "IN_SYNC", "modified": 0},
        [],
    )
    store.drift.save_drift(second)
    assert store.drift.last_drift(stack.id) == second
    assert store.drift.last_drift(other.id) is None
