"""Stack create: insert every resource row, then walk the dependency graph creating each
resource once all it needs is COMPLETE. A failure stops new work; with rollback enabled
the created resources are then deleted (ROLLBACK)."""

from __future__ import annotations

from stoker.engine import actions
from stoker.engine.delete import delete_all
from stoker.engine.lifecycle import ActionContext, create_resource
from stoker.engine.states import Action, Status
from stoker.graph import walk
from stoker.sdk.exceptions import ResourceFailure


async def create(context: ActionContext, limit: int, resume: bool = False) -> bool:
    runtime = context.runtime
    definitions = runtime.template.resources
    if not resume:
        await actions.stack_started(context, Action.CREATE)
    # All rows first, in one transaction: the store knows every resource the stack will
    # have before any physical resource exists.
    new = [runtime.new_record(definition) for name, definition in definitions.items() if name not in runtime.current]
    await context.store.insert_resources_async(new)
    runtime.records.extend(new)
    runtime.current.update({record.name: record for record in new})

    async def visit(name: str) -> None:
        record = runtime.current[name]
        if record.action == Action.CREATE and record.status == Status.COMPLETE:
            return
        if record.status == Status.FAILED:  # failed before an engine restart: stays failed
            raise ResourceFailure(record.status_reason)
        try:
            await create_resource(context, record, definitions[name])
        finally:
            runtime.release(record)

    outcome = await walk(runtime.graph(definitions), visit, limit=limit)
    ok = await actions.stack_finished(context, Action.CREATE, outcome)
    if not ok and not runtime.stack.disable_rollback:
        await rollback_create(context, limit)
    return ok


async def rollback_create(context: ActionContext, limit: int, resume: bool = False) -> bool:
    if not resume:
        await actions.stack_started(context, Action.ROLLBACK)
    outcome = await delete_all(context, limit)
    ok = await actions.stack_finished(context, Action.ROLLBACK, outcome)
    if ok:
        context.store.delete_resources(context.runtime.id, (record.id for record in context.runtime.records))
        context.runtime.records.clear()
        context.runtime.current.clear()
    return ok
