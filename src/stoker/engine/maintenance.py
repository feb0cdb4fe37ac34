"""Suspend, resume and check: actions that visit every resource with one handler and
change nothing in the template.

Suspend goes in reverse dependency order (dependents first), resume and check forward.
A resource without the handler completes anyway: suspend/resume with "state changed",
check with "CHECK not supported for <type>" (as Heat reports it). A failed check leaves
the resource CHECK_FAILED, so the next update replaces it.
"""

from __future__ import annotations

import asyncio

from stoker.engine import actions
from stoker.engine.handlers import handler_pair
from stoker.engine.lifecycle import ActionContext, aborted, failure_reason, interrupted, jsonable
from stoker.engine.states import Action, Status
from stoker.graph import walk
from stoker.sdk.exceptions import ResourceFailure
from stoker.store import ResourceRecord


async def visit_resource(context: ActionContext, record: ResourceRecord, action: Action, resume: bool = False) -> None:
    recorder = context.recorder
    if resume and record.action == action and record.status == Status.COMPLETE:
        return  # done before an engine restart
    if record.action == "INIT" or (record.action == Action.DELETE and record.status == Status.COMPLETE):
        return
    resumed = interrupted(record, action) and record.handler_token is not None
    await recorder.resource_state(record, action, Status.IN_PROGRESS)
    instance = context.runtime.instance(record, None, fresh=True)
    handle, _ = handler_pair(instance, action)
    if handle is None:
        reason = f"{action} not supported for {record.type}" if action == Action.CHECK else "state changed"
        await recorder.resource_state(record, action, Status.COMPLETE, reason)
        return
    instance.action, instance.status = action, Status.IN_PROGRESS
    try:
        if resumed:
            await context.runner.resume(instance, action, record.handler_token["token"])
        else:
            await context.runner.run(instance, action)
    except asyncio.CancelledError:
        await aborted(context, record, action)
        raise
    except Exception as error:  # noqa: BLE001 - any plugin failure becomes <ACTION>_FAILED
        reason = failure_reason(record.name, error)
        await recorder.resource_state(record, action, Status.FAILED, reason, handler_token=None)
        raise ResourceFailure(reason, cause=error)
    kept = {"data": jsonable(record.data)} if record.data is not None else {}
    await recorder.resource_state(record, action, Status.COMPLETE, handler_token=None, **kept)


async def run(context: ActionContext, action: Action, limit: int, resume: bool = False) -> bool:
    runtime = context.runtime
    if not resume:
        await actions.stack_started(context, action)
    graph = runtime.graph()
    if action == Action.SUSPEND:
        graph = graph.reversed()

    async def visit(name: str) -> None:
        record = runtime.current.get(name)
        if record is not None:
            await visit_resource(context, record, action, resume)

    # A check looks at everything; a suspend or resume stops at the first failure.
    outcome = await walk(graph, visit, limit=limit, stop_on_failure=action != Action.CHECK)
    return await actions.stack_finished(context, action, outcome)
