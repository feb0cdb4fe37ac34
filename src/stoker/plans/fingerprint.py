"""A stack's state fingerprint: what a saved plan was made against.

Owns: one digest of everything an update's plan depends on in the store: the stack's
row (action, status, updated time, settings, parameters), its stored template, files
and environment, and each resource's record (state, physical id, properties, data),
for the stack and every live nested stack under it. Two equal fingerprints mean no
action, signal or mark has changed the stack between a plan and its apply.

Must not: write anything or decide whether a plan may run (the service does).
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from stoker.store import ResourceRecord, StackRecord, Store

# A tree deeper than this is a loop in the store, not a real stack.
_MAX_DEPTH = 64


def _time(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _resource(record: ResourceRecord) -> dict[str, Any]:
    return {
        "name": record.name,
        "type": record.type,
        "state": record.state,
        "reason": record.status_reason,
        "physical_resource_id": record.physical_resource_id,
        "properties": record.properties,
        "data": record.data,
        "current": record.current,
        "updated": _time(record.updated_at),
    }


def _stack(store: Store, stack: StackRecord, depth: int) -> dict[str, Any]:
    stored = store.get_template(stack.raw_template_id)
    resources = sorted(
        (_resource(record) for record in store.list_resources(stack.id)),
        key=lambda item: (item["name"], str(item["updated"])),
    )
    children = (
        []
        if depth >= _MAX_DEPTH
        else [_stack(store, child, depth + 1) for child in store.child_stacks(stack.id)]
    )
    return {
        "id": stack.id,
        "state": stack.state,
        "updated": _time(stack.updated_at),
        "settings": [stack.disable_rollback, stack.timeout_mins, sorted(stack.tags or [])],
        "parameters": stack.parameters,
        "template": [stored.template, stored.files, stored.environment],
        "resources": resources,
        "children": sorted(children, key=lambda item: item["id"]),
    }


def fingerprint(store: Store, stack: StackRecord) -> str:
    """``sha256:<hex>`` of the stack's stored state, nested stacks included."""
    text = json.dumps(_stack(store, stack, 0), sort_keys=True, default=str, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()
