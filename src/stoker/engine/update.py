"""Stack update: walk the new template's graph; each resource is created, left alone,
updated in place or replaced (replacement created first). Then the cleanup phase deletes
what the new template no longer has and the resources that were replaced, in the old
template's teardown order, so nothing is deleted while a resource still uses it."""

from __future__ import annotations

from stoker.engine import actions
from stoker.engine.delete import delete_all
from stoker.engine.lifecycle import (
    ActionContext,
    create_resource,
    failure_reason,
    save_data,
    update_resource,
)
from stoker.engine.stack import stored_data
from stoker.engine.states import Action, Status
from stoker.graph import Graph, walk
from stoker.graph.walk import WalkOutcome
from stoker.sdk.exceptions import ResourceFailure
from stoker.sdk.resource import Resource
from stoker.store import ResourceRecord
from stoker.template.hot import Template


async def update(context: ActionContext, old_template: Template, limit: int, action: Action = Action.UPDATE) -> bool:
    """Bring the stack to ``context.runtime.template``; ``action`` names the stack action
    (UPDATE, or ROLLBACK when returning to the previous template)."""
    runtime = context.runtime
    definitions = runtime.template.resources

    async def visit(name: str) -> None:
        definition = definitions[name]
        record = runtime.current.get(name)
        try:
            if record is None:
                record = runtime.new_record(definition)
                await context.store.insert_resources_async([record])
                runtime.records.append(record)
                runtime.current[name] = record
                await create_resource(context, record, definition)
            else:
                await update_resource(context, record, definition)
        finally:
            # The record and, when it was replaced, its replacement are done with.
            if record is not None:
                runtime.release(record)
            replacement = runtime.current.get(name)
            if replacement is not None and replacement is not record:
                runtime.release(replacement)

    outcome = await walk(runtime.graph(definitions, update=True), visit, limit=limit)
    if not outcome.ok:
        return await actions.stack_finished(context, action, outcome)

    leftovers = [r for r in runtime.records if not r.current or r.name not in definitions]
    if leftovers:
        # Old names in the old order; replacements are placed by teardown_graph.
        requirements: Graph[str] = runtime.graph(old_template.resources)
        cleanup = await delete_all(context, limit, leftovers, requirements)
        deleted = [r for r in leftovers if r.action == Action.DELETE and r.status == Status.COMPLETE or r.action == "INIT"]
        context.store.delete_resources(context.runtime.id, (r.stored_id for r in deleted))
        gone = {r.id for r in deleted}
        runtime.records = [r for r in runtime.records if r.id not in gone]
        for name in [n for n, r in runtime.current.items() if r.id in gone]:
            del runtime.current[name]
        if not cleanup.ok:
            return await actions.stack_finished(context, action, cleanup)
    return await actions.stack_finished(context, action, outcome)


async def rollback(context: ActionContext, failed_template: Template, limit: int, resume: bool = False) -> bool:
    """Return a failed update to the previous template and parameters (the runtime is
    loaded with them). Resources the update replaced are still there: they become
    current again instead of being made anew, and the replacements are cleaned up."""
    runtime = context.runtime
    if not resume:
        await actions.stack_started(context, Action.ROLLBACK)
    by_id = {record.id: record for record in runtime.records}
    for name, record in list(runtime.current.items()):
        previous = by_id.get(record.replaces) if record.replaces is not None else None
        if previous is None or previous.current or previous.action in ("INIT", Action.DELETE):
            continue
        if name not in runtime.template.resources or previous.type != runtime.template.resources[name].resource_type:
            continue
        try:
            await restore_previous(context, previous, record)
        except ResourceFailure as error:
            return await actions.stack_finished(context, Action.ROLLBACK, WalkOutcome(failed={name: error}))
        await context.store.swap_current_async(previous, record)
        previous.current, previous.replaced_by = True, None
        record.current = False
        runtime.current[name] = previous
    return await update(context, failed_template, limit, action=Action.ROLLBACK)


async def restore_previous(context: ActionContext, previous: ResourceRecord, replacement: ResourceRecord) -> None:
    """Heat's ``restore_prev_rsrc``: a replaced resource that the rollback makes current
    again takes back from its replacement what ``prepare_for_replace`` gave up (a
    server's ports, a port's addresses). Only for plugins that have the hook; when it
    fails, the old resource is UPDATE_FAILED and the rollback fails, as in Heat."""
    runtime = context.runtime
    cls = runtime.plugin_class(previous.type, previous.name)
    if previous.physical_resource_id is None or cls.restore_prev_rsrc is Resource.restore_prev_rsrc:
        return
    old = runtime.instance(previous, None, fresh=True)
    new = runtime.instance(replacement, None, fresh=True) if replacement.physical_resource_id is not None else None
    old._replacement = new
    try:
        await context.runner.call(lambda: old.restore_prev_rsrc(convergence=True))
    except Exception as error:  # noqa: BLE001 - any plugin failure fails the rollback
        reason = failure_reason(previous.name, error)
        await context.recorder.resource_state(previous, Action.UPDATE, Status.FAILED, f"Restoring it for the rollback failed: {reason}", data=stored_data(runtime.store, old))
        raise ResourceFailure(reason, cause=error)
    finally:
        if new is not None:
            await save_data(context, replacement, new)
        runtime.release(replacement)
        runtime.release(previous)
    await save_data(context, previous, old)
