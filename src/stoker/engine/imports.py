"""Import: make a stack whose named resources take over objects that already exist in
the cloud (``stoker stack import``, docs/import.md), the rest created as usual.

The action is Heat's ADOPT (taking over physical resources), fed from the request
instead of exported data. It runs in two steps:

1. check (``check_imports``, which the service runs first, before any stack is made, so
   that a refused request leaves nothing behind): every imported object is read through
   its plugin (``get_live_state``) and compared, property by property, with what the
   template gives it. Run again as the action starts, an object gone or changed since, or
   differences the request did not accept, fail the action before any resource is
   touched: nothing holds a physical id yet, so deleting the failed stack deletes
   nothing.
2. take over: a walk in dependency order; an imported resource records its id and the
   template's properties (ADOPT_COMPLETE; no handler call but the plugin's optional
   ``handle_import()``, which reads from the live object what a create would have kept
   in the resource's data), any other is created.

What it must not do: call a create or update handler on an imported resource.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any

from stoker.engine import actions
from stoker.engine.drift import PropertyDrift, compared_properties, differences
from stoker.engine.lifecycle import (
    ActionContext,
    aborted,
    create_resource,
    failure_reason,
    jsonable,
)
from stoker.engine.stack import StackRuntime, stored_data
from stoker.engine.states import Action, Status
from stoker.graph import walk
from stoker.sdk.exceptions import EntityNotFound, ResourceFailure
from stoker.sdk.properties import contains_unresolved

__all__ = ["check_imports", "import_stack", "noted", "refusal"]


def _text(value: Any) -> str:
    return json.dumps(value, default=str, sort_keys=True)


def check_imports(runtime: StackRuntime, imports: Mapping[str, str]) -> tuple[list[str], dict[str, list[PropertyDrift]]]:
    """Read every object to import through its plugin and compare it with what the
    template gives it: the problems that refuse the import (an object gone, a read that
    failed), and each resource's differences (template as ``expected``, live as
    ``actual``). Blocks on the services. ``runtime``'s records of the imported
    resources are not yet recorded (INIT); none is written."""
    # While checking, each imported resource stands for its object, so that a reference
    # between two of them (a port's security group, a rule's policy) resolves to its id.
    records = [runtime.current[name] for name in imports]
    held = [(record.action, record.physical_resource_id) for record in records]
    for record in records:
        record.action, record.physical_resource_id = Action.ADOPT, imports[record.name]
    try:
        return _compared(runtime, imports)
    finally:
        for record, (action, physical_id) in zip(records, held, strict=True):
            record.action, record.physical_resource_id = action, physical_id
            runtime.instances.pop(record.id, None)
            runtime.attribute_cache.pop(record.id, None)


def _compared(runtime: StackRuntime, imports: Mapping[str, str]) -> tuple[list[str], dict[str, list[PropertyDrift]]]:
    definitions = runtime.template.resources
    problems: list[str] = []
    found: dict[str, list[PropertyDrift]] = {}
    for name, physical_id in sorted(imports.items()):
        record = runtime.current[name]
        definition = definitions[name]
        instance = runtime.instance(record, definition, fresh=True)
        try:
            instance.resource_id = physical_id  # read only: nothing is recorded yet
            resolved = instance.properties.resolved()
            live = instance.get_live_state(resolved)
        except EntityNotFound:
            problems.append(f"{name}: {definition.resource_type} {physical_id} does not exist")
            continue
        except Exception as error:  # noqa: BLE001 - a failed read refuses the import, with its cause
            problems.append(
                f"{name}: reading {definition.resource_type} {physical_id} failed: {type(error).__name__}: {error}"
            )
            continue
        finally:
            runtime.instances.pop(record.id, None)
        schema = runtime.plugin_class(definition.resource_type, name).properties_schema
        given = (
            set((definition.properties_data or {}).keys())
            if isinstance(definition.properties_data, Mapping)
            else set()
        )
        # A value known only once the stack holds what the others make (an attribute of a
        # resource created by this import) cannot be compared yet.
        known = {key: value for key, value in resolved.items() if not contains_unresolved(value)}
        differing = differences(known, live, compared_properties(schema, known, given))
        if differing:
            found[name] = differing
    return problems, found


def noted(found: Mapping[str, list[PropertyDrift]]) -> dict[str, str]:
    """Each resource's differences in words: ``size: template 1, live 2``."""
    return {
        name: "; ".join(f"{d.name}: template {_text(d.expected)}, live {_text(d.actual)}" for d in differing)
        for name, differing in found.items()
    }


def refusal(problems: list[str], found: Mapping[str, list[PropertyDrift]], accept_differences: bool) -> str | None:
    """Why the import is refused (None: it may go on)."""
    reasons = list(problems)
    if found and not accept_differences:
        reasons += [f"{name} differs from the template: {text}" for name, text in sorted(noted(found).items())]
        reasons.append(
            "to take them over as they are, import again with --accept-differences (an update then applies the template)"
        )
    return "Import refused, nothing was taken over: " + " | ".join(reasons) if reasons else None


async def import_stack(context: ActionContext, request: Mapping[str, Any], limit: int) -> bool:
    """``request``: ``resources`` (resource name -> physical id) and
    ``accept_differences`` (take the objects over although they differ from the
    template). Returns whether the stack's ADOPT completed."""
    runtime = context.runtime
    definitions = runtime.template.resources
    imports: Mapping[str, str] = request.get("resources") or {}
    await actions.stack_started(context, Action.ADOPT)
    new = [
        runtime.new_record(definition)
        for name, definition in definitions.items()
        if name not in runtime.current
    ]
    await context.store.insert_resources_async(new)
    runtime.records.extend(new)
    runtime.current.update({record.name: record for record in new})

    # Checked again as the import starts (the request was checked before the stack was
    # made): an object deleted or changed since refuses it here.
    problems, found = await context.runner.call(lambda: check_imports(runtime, imports))
    refused = refusal(problems, found, bool(request.get("accept_differences")))
    if refused is not None:
        await context.recorder.stack_state(Action.ADOPT, Status.FAILED, refused)
        return False
    accepted = noted(found)

    async def take_over(name: str) -> None:
        record = runtime.current[name]
        if record.status == Status.COMPLETE and record.action in (Action.ADOPT, Action.CREATE):
            return
        if name not in imports:
            try:
                await create_resource(context, record, definitions[name])
            finally:
                runtime.release(record)
            return
        reason = f"Imported {imports[name]}" + (
            f" (differences accepted: {accepted[name]})" if name in accepted else ""
        )
        await context.recorder.resource_state(
            record, Action.ADOPT, Status.IN_PROGRESS, "Import started"
        )
        try:
            instance = runtime.instance(record, definitions[name], fresh=True)

            def record_id() -> tuple[dict[str, Any], dict[str, Any]]:
                instance.resource_id_set(imports[name])
                # A type whose other handlers need more than the id (a name, which a
                # create would have kept in the resource's data) reads it here.
                taken_over = getattr(instance, "handle_import", None)
                if callable(taken_over):
                    taken_over()
                return instance.properties.resolved(), runtime.attributes_to_store(record)

            properties, attributes = await context.runner.call(record_id)
        except asyncio.CancelledError:
            await aborted(context, record, Action.ADOPT)
            raise
        except Exception as error:  # noqa: BLE001 - any plugin failure becomes ADOPT_FAILED
            failed = failure_reason(name, error)
            await context.recorder.resource_state(record, Action.ADOPT, Status.FAILED, failed)
            raise ResourceFailure(failed, cause=error)
        finally:
            runtime.release(record)
        await context.recorder.resource_state(
            record,
            Action.ADOPT,
            Status.COMPLETE,
            reason,
            properties=jsonable(properties),
            attributes=jsonable(attributes),
            data=stored_data(runtime.store, instance),
            definition=runtime.render(definitions[name]),
        )

    outcome = await walk(runtime.graph(definitions), take_over, limit=limit)
    return await actions.stack_finished(context, Action.ADOPT, outcome)
