"""Store records for tests: a stack (stored), a resource and an event (not yet stored)."""

from __future__ import annotations

import uuid
from datetime import datetime

from stoker.store import EventRecord, ResourceRecord, StackRecord, Store


def new_id() -> str:
    return str(uuid.uuid4())


def make_stack(store: Store, name: str = "web", created_at: datetime | None = None, **fields) -> StackRecord:
    template_id = store.store_template({"heat_template_version": "2021-04-16"}, {}, {})
    fields.setdefault("parameters", {})
    record = StackRecord(
        id=new_id(),
        name=name,
        action="CREATE",
        status="IN_PROGRESS",
        status_reason="",
        raw_template_id=template_id,
        created_at=created_at,
        **fields,
    )
    store.create_stack(record)
    return record


def make_resource(stack_id: str, name: str, **fields) -> ResourceRecord:
    return ResourceRecord(id=None, uuid=new_id(), stack_id=stack_id, name=name, type="OS::Heat::None", **fields)


def make_event(
    stack_id: str,
    resource_name: str,
    action: str = "CREATE",
    status: str = "COMPLETE",
    reason: str = "",
) -> EventRecord:
    return EventRecord(
        id=None,
        uuid=new_id(),
        stack_id=stack_id,
        resource_name=resource_name,
        physical_resource_id=None,
        resource_type="OS::Heat::None",
        resource_action=action,
        resource_status=status,
        resource_status_reason=reason,
    )
