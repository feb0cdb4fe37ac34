"""What a stack action other than create and update would do to each resource: the
plan of a suspend, resume, check, delete or snapshot (docs/plans.md, "Other actions").

Owns: visiting the stack's resources in the action's order (suspend and delete
dependents first, resume and check forward, as engine.maintenance and engine.delete
walk them), and for each one what the action will do and why: whether its type has the
action's handler (a resource without one only changes state, as the action records
it), what a delete keeps (``deletion_policy``), a resource never created. A nested
stack's resources follow the resource that owns them, under its path.

Must not: write anything or call a handler; it reads the store and the plugins' classes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stoker.engine.handlers import handler_pair
from stoker.engine.states import Action, Status
from stoker.sdk.stack_resource import StackResource
from stoker.store import ResourceRecord, StackRecord

if TYPE_CHECKING:
    from stoker.engine.engine import Engine
    from stoker.engine.stack import StackRuntime

# The actions planned here, each with the verb its reasons use.
VERBS = {Action.SUSPEND: "suspend", Action.RESUME: "resume", Action.CHECK: "check", Action.DELETE: "delete", Action.SNAPSHOT: "snapshot"}
# How deep nested stacks are followed (the engine's own limit stops them sooner).
_MAX_DEPTH = 20


def preview_action(engine: Engine, stack: StackRecord, action: Action) -> list[dict[str, Any]]:
    """One entry a resource (``address``, ``name``, ``type``, ``nested_in``,
    ``action``: the verb or ``no-change``, ``reason``), in the order the action visits
    them."""
    if action not in VERBS:
        raise ValueError(f"no plan of {action}")
    return list(_entries(engine, stack, action, None, 0))


def _order(runtime: StackRuntime, action: Action) -> list[ResourceRecord]:
    graph = runtime.graph()
    if action in (Action.SUSPEND, Action.DELETE):
        graph = graph.reversed()
    names = [name for name in graph.topological_order() if name in runtime.current]
    # Resources the template no longer has (an interrupted update's): a delete takes them too.
    rest = sorted(name for name in runtime.current if name not in set(names))
    return [runtime.current[name] for name in names + rest]


def _entries(engine: Engine, stack: StackRecord, action: Action, nested_in: str | None, depth: int) -> Any:
    runtime = engine.load_runtime(stack)
    verb = VERBS[action]
    for record in _order(runtime, action):
        address = f"{nested_in}.{record.name}" if nested_in else record.name
        entry: dict[str, Any] = {
            "address": address,
            "name": record.name,
            "type": record.type,
            "nested_in": nested_in,
            "action": verb,
            "reason": "",
            "changes": [],
        }
        if record.action == "INIT" or record.physical_resource_id is None and action != Action.DELETE:
            entry["action"], entry["reason"] = "no-change", f"never created: nothing to {verb}"
            yield entry
            continue
        if record.action == Action.DELETE and record.status == Status.COMPLETE:
            entry["action"], entry["reason"] = "no-change", "deleted already"
            yield entry
            continue
        plugin = _plugin_class(runtime, record)
        entry["reason"] = _reason(record, plugin, action)
        yield entry
        # A snapshot does not go into nested stacks (no snapshot handler of their own).
        child = None if action == Action.SNAPSHOT else _child(engine, record, plugin)
        if child is not None and depth < _MAX_DEPTH:
            yield from _entries(engine, child, action, address, depth + 1)


def _plugin_class(runtime: StackRuntime, record: ResourceRecord) -> type | None:
    try:
        return runtime.plugin_class(record.type, record.name)
    except Exception:  # noqa: BLE001 - a type no longer registered: said in the reason
        return None


def _reason(record: ResourceRecord, plugin: type | None, action: Action) -> str:
    verb = VERBS[action]
    if action == Action.DELETE:
        policy = (record.definition or {}).get("deletion_policy")
        if policy == "Retain":
            return "deletion_policy Retain: it leaves the stack, its physical resource is kept"
        if policy == "Snapshot":
            return "deletion_policy Snapshot: a snapshot is taken before it is deleted"
        if record.physical_resource_id is None:
            return "no physical resource: only its record is removed"
        if plugin is not None and issubclass(plugin, StackResource):
            return "its nested stack is deleted first"
        return f"deletes {record.physical_resource_id}"
    if plugin is None:
        return f"type {record.type} is not available: the {verb} fails"
    handle, _ = handler_pair(plugin, action)
    if handle is None:
        if action == Action.SNAPSHOT:
            return "nothing of its own to save: the snapshot keeps its properties, data and id"
        if action == Action.CHECK:
            return f"CHECK not supported for {record.type}: it completes without a check"
        return f"no {verb} of its own: only its state changes"
    if issubclass(plugin, StackResource):
        return f"{verb}s its nested stack"
    return f"its type's {verb} runs on {record.physical_resource_id}"


def _child(engine: Engine, record: ResourceRecord, plugin: type | None) -> StackRecord | None:
    if plugin is None or not issubclass(plugin, StackResource) or record.physical_resource_id is None:
        return None
    child = engine.store.get_stack(record.physical_resource_id)
    return child if child is not None and child.deleted_at is None else None
