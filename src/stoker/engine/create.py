"""Stack create: insert every resource row, then walk the dependency graph creating each
resource once all it needs is COMPLETE. A failure stops new work; with rollback enabled
the created resources are then deleted (ROLLBACK)."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from stoker.engine import actions
from stoker.engine.delete import delete_all
from stoker.engine.lifecycle import ActionContext, create_resource, interrupted, resume_resource
from stoker.engine.states import Action, Status
from stoker.graph import walk
from stoker.sdk.exceptions import ResourceFailure
from stoker.store import ResourceRecord
from stoker.template.definitions import ResourceDefinition


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
    if resume and outcome.failed:
        await settle_interrupted(context, definitions, limit)
    ok = await actions.stack_finished(context, Action.CREATE, outcome)
    if not ok and not runtime.stack.disable_rollback:
        await rollback_create(context, limit)
    return ok


async def settle_interrupted(context: ActionContext, definitions: Mapping[str, ResourceDefinition], limit: int) -> None:
    """A resumed create whose walk failed before it reached every resource the dead engine
    had in progress: each of those is finished as a resume finishes it (polled on with its
    handler token, or FAILED with what ``find_created`` finds), so none stays IN_PROGRESS
    and the delete or rollback that follows knows what was made."""
    runtime = context.runtime
    left = [record for record in runtime.current.values() if interrupted(record, Action.CREATE)]
    gate = asyncio.Semaphore(max(1, limit))

    async def settle(record: ResourceRecord) -> None:
        async with gate:
            try:
                await resume_resource(context, record, definitions.get(record.name), Action.CREATE)
            except ResourceFailure:
                pass  # recorded FAILED; the stack's create has failed already
            finally:
                runtime.release(record)

    await asyncio.gather(*(settle(record) for record in left))


async def rollback_create(context: ActionContext, limit: int, resume: bool = False) -> bool:
    if not resume:
        await actions.stack_started(context, Action.ROLLBACK)
    outcome = await delete_all(context, limit)
    ok = await actions.stack_finished(context, Action.ROLLBACK, outcome)
    if ok:
        context.store.delete_resources(context.runtime.id, (record.stored_id for record in context.runtime.records))
        context.runtime.records.clear()
        context.runtime.current.clear()
    return ok
