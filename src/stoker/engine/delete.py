"""Stack delete: every resource record, dependents before what they depend on.

Records that a replacement left behind are deleted before whatever the current resource
of the same name depends on, so no resource disappears while something still uses it.
"""

from __future__ import annotations

from typing import Any

from stoker import faults
from stoker.engine import actions
from stoker.engine.lifecycle import ActionContext, delete_resource
from stoker.engine.states import Action, Status
from stoker.graph import Graph, WalkOutcome, walk
from stoker.store import ResourceRecord
from stoker.store.repository import utcnow


def teardown_graph(records: list[ResourceRecord], requirements: Graph[str]) -> Graph[int]:
    """Graph over record ids in deletion order (a record requires its dependents gone)."""
    by_name: dict[str, list[ResourceRecord]] = {}
    for record in records:
        by_name.setdefault(record.name, []).append(record)
    graph: Graph[int] = Graph()
    for record in records:
        graph.add_node(record.stored_id)
    for record in records:
        if record.name not in requirements:
            continue
        for need in requirements.requires(record.name):
            for needed in by_name.get(need, []):
                # ``needed`` may only go once ``record`` is gone.
                graph.add_edge(needed.stored_id, record.stored_id)
    # An old (replaced) record goes before the current one's requirements, as above; and
    # a replacement's predecessor goes before the replacement itself.
    for record in records:
        if record.replaces is not None and record.replaces in graph:
            graph.add_edge(record.stored_id, record.replaces)
    return graph


async def delete_all(
    context: ActionContext,
    limit: int,
    records: list[ResourceRecord] | None = None,
    requirements: Graph[str] | None = None,
) -> WalkOutcome[int]:
    """Delete ``records`` (default: all of the stack's) in teardown order; the order of
    names comes from ``requirements`` (default: the stack's current template)."""
    runtime = context.runtime
    records = list(runtime.records if records is None else records)
    by_id = {record.stored_id: record for record in records}
    if requirements is None:
        requirements = runtime.graph()
    graph = teardown_graph(records, requirements)

    async def visit(record_id: int) -> None:
        record = by_id[record_id]
        definition = runtime.template.resources.get(record.name) if record.current else None
        try:
            await delete_resource(context, record, definition)
        finally:
            runtime.release(record)

    return await walk(graph, visit, limit=limit)


async def delete(context: ActionContext, limit: int, resume: bool = False) -> bool:
    """Delete every resource, then the tree's stack user project (a top-level stack's);
    True when the stack is DELETE_COMPLETE (``finish`` comes next)."""
    if not resume:
        await actions.stack_started(context, Action.DELETE)
    outcome = await delete_all(context, limit)
    if outcome.ok:
        failure = await delete_stack_user_project(context)
        if failure is not None:
            await context.recorder.stack_state(Action.DELETE, Status.FAILED, failure)
            return False
    ok = await actions.stack_finished(context, Action.DELETE, outcome)
    if ok:
        faults.point("delete-complete")
    return ok


async def delete_stack_user_project(context: ActionContext) -> str | None:
    """Delete the stack user domain's project of a top-level stack whose resources are
    gone (its users went with them), as Heat's delete does: before DELETE_COMPLETE, so a
    crash in between deletes it when the delete resumes. A nested stack's users share
    its root's project, which stays. None when done (or there is none); else the
    stack's reason, Heat's ``Error deleting project: ...``."""
    runtime = context.runtime
    if runtime.stack.owner_id is not None:
        return None
    project_id = runtime.stack_user_project_id
    if project_id is None:
        return None
    try:
        plugin: Any = runtime.clients.client_plugin("keystone")
        await context.runner.call(plugin.delete_stack_user_project, project_id)
    except Exception as error:  # noqa: BLE001 - the cloud's refusal, said as the stack's reason
        return f"Error deleting project: {type(error).__name__}: {error}"
    return None


async def finish(context: ActionContext) -> None:
    """The end of a delete that recorded DELETE_COMPLETE: the stack's resource rows go
    and the stack is marked deleted. Each step may run again (recovery runs it for a
    stack whose delete's process died after DELETE_COMPLETE: admission.half_deleted)."""
    store = context.store
    stack_id = context.runtime.id
    store.delete_resources(stack_id, (record.stored_id for record in store.list_resources(stack_id)))
    store.update_stack(stack_id, deleted_at=utcnow())
