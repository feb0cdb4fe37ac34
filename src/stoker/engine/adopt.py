"""Adopt: make a stack from data another engine exported (``stack abandon``/``export``),
taking over the physical resources it lists instead of creating them.

Each resource goes ADOPT_IN_PROGRESS -> ADOPT_COMPLETE with the physical id and data
from the adopt data; a plugin that needs more implements ``handle_adopt(resource_data)``
(Heat's name). A resource missing from the data fails with Heat's reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from stoker.engine import actions
from stoker.engine.handlers import handler_pair
from stoker.engine.lifecycle import ActionContext, aborted, failure_reason, jsonable
from stoker.engine.stack import stored_data
from stoker.engine.states import Action, Status
from stoker.graph import walk
from stoker.sdk.exceptions import ResourceFailure, StokerError


async def adopt(context: ActionContext, adopt_data: Mapping[str, Any], limit: int) -> bool:
    runtime = context.runtime
    definitions = runtime.template.resources
    await actions.stack_started(context, Action.ADOPT)
    new = [runtime.new_record(definition) for name, definition in definitions.items() if name not in runtime.current]
    await context.store.insert_resources_async(new)
    runtime.records.extend(new)
    runtime.current.update({record.name: record for record in new})
    given = adopt_data.get("resources") or {}

    async def visit(name: str) -> None:
        record = runtime.current[name]
        if record.action == Action.ADOPT and record.status == Status.COMPLETE:
            return
        await context.recorder.resource_state(record, Action.ADOPT, Status.IN_PROGRESS)
        data = given.get(name) or {}
        try:
            if not data.get("resource_id"):
                raise StokerError("Resource ID was not provided.")
            instance = runtime.instance(record, definitions[name], fresh=True)
            instance.action, instance.status = Action.ADOPT, Status.IN_PROGRESS
            handle, _ = handler_pair(instance, Action.ADOPT)

            def take_over() -> None:
                if handle is not None:
                    handle(data)
                else:
                    for key, value in (data.get("resource_data") or {}).items():
                        instance.data_set(key, value)
                    instance.resource_id_set(data["resource_id"])

            def finish() -> tuple[dict[str, Any], dict[str, Any]]:
                return instance.properties.resolved(), runtime.attributes_to_store(record)

            await context.runner.call(take_over)
            properties, attributes = await context.runner.call(finish)
        except asyncio.CancelledError:
            await aborted(context, record, Action.ADOPT)
            raise
        except Exception as error:  # noqa: BLE001 - any plugin failure becomes ADOPT_FAILED
            reason = failure_reason(name, error)
            await context.recorder.resource_state(record, Action.ADOPT, Status.FAILED, reason)
            raise ResourceFailure(reason, cause=error)
        await context.recorder.resource_state(
            record,
            Action.ADOPT,
            Status.COMPLETE,
            properties=jsonable(properties),
            attributes=jsonable(attributes),
            data=stored_data(context.runtime.store, instance),
            definition=context.runtime.render(definitions[name]),
        )

    outcome = await walk(context.runtime.graph(definitions), visit, limit=limit)
    return await actions.stack_finished(context, Action.ADOPT, outcome)
