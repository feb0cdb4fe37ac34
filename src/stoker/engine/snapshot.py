"""Snapshots: record every resource's state (and let plugins back up what they own),
delete them, and restore a stack to one.

A snapshot visits resources in dependency order with ``handle_snapshot`` (resources
without one are recorded as they are) and stores the template, environment, parameters
and each resource's physical id and data. Deleting one calls each plugin's
``handle_delete_snapshot(snapshot)``. Restoring is an update back to the snapshot's
template and parameters, where a plugin's ``handle_restore(definition, data)`` may
rewrite its resource's definition first (a volume restored from its backup, say).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from stoker.engine import maintenance
from stoker.engine.handlers import DELETE_SNAPSHOT, handler_pair
from stoker.engine.lifecycle import ActionContext
from stoker.engine.stack import StackRuntime
from stoker.engine.states import Action, Status
from stoker.store import ResourceRecord, SnapshotRecord
from stoker.template.definitions import ResourceDefinition


def exported_resources(records: Iterable[ResourceRecord]) -> dict[str, dict[str, Any]]:
    """The current resources as Heat's abandon/export and snapshot data lists them."""
    return {
        record.name: {
            "name": record.name,
            "type": record.type,
            "resource_id": record.physical_resource_id,
            "action": record.action,
            "status": record.status,
            "metadata": (record.definition or {}).get("metadata") or {},
            "resource_data": record.data or {},
            "properties": record.properties or {},
        }
        for record in records
        if record.current
    }


def snapshot_data(context: ActionContext) -> dict[str, Any]:
    runtime = context.runtime
    stored = context.store.get_template(runtime.stack.raw_template_id)
    resources = exported_resources(context.store.list_resources(runtime.stack.id))
    return {
        "template": stored.template,
        "files": stored.files,
        "environment": stored.environment,
        "parameters": runtime.stack.parameters,
        "resources": resources,
    }


async def snapshot(context: ActionContext, record: SnapshotRecord, limit: int) -> bool:
    ok = await maintenance.run(context, Action.SNAPSHOT, limit)
    record.status = Status.COMPLETE if ok else Status.FAILED
    record.status_reason = "Stack SNAPSHOT completed successfully" if ok else context.runtime.stack.status_reason
    record.data = snapshot_data(context) if ok else None
    context.store.save_snapshot(record)
    return ok


async def delete_snapshot(context: ActionContext, record: SnapshotRecord) -> None:
    """Each plugin that keeps something per snapshot deletes it."""
    runtime = context.runtime
    for name, data in ((record.data or {}).get("resources") or {}).items():
        current = runtime.current.get(name)
        if current is None or current.type != data.get("type"):
            continue
        instance = runtime.instance(current, None, fresh=True)
        handle, _ = handler_pair(instance, DELETE_SNAPSHOT)
        if handle is not None:
            await context.runner.run(instance, DELETE_SNAPSHOT, (data,))
    context.store.delete_snapshot(record.id)


def restored_definitions(runtime: StackRuntime, snapshot_data: Mapping[str, Any]) -> None:
    """Let plugins rewrite their definitions from the snapshot (``handle_restore``), in
    ``runtime`` (the restore's, or its plan's)."""
    saved = snapshot_data.get("resources") or {}
    # The template may be shared (parsed-template cache): change a copy.
    runtime.template = replace(runtime.template, resources=dict(runtime.template.resources))
    for name, definition in list(runtime.template.resources.items()):
        data = saved.get(name)
        if data is None:
            continue
        cls = runtime.plugin_class(definition.resource_type, name)
        handle_restore = getattr(cls, "handle_restore", None)
        if handle_restore is None:
            continue
        record = runtime.current.get(name)
        if record is None:
            continue
        instance = runtime.instance(record, definition, fresh=True)
        rewritten = handle_restore(instance, definition, data)
        if isinstance(rewritten, ResourceDefinition):
            runtime.template.resources[name] = rewritten
