"""One resource through one action: create, update (in place or replace), delete.

Each function records IN_PROGRESS, runs the plugin through the handler runner, and
records COMPLETE or FAILED with a reason; the action modules decide the order. A failure
is returned to the walk as ``ResourceFailure`` carrying the reason already recorded.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stoker import faults
from stoker.engine import hooks
from stoker.engine.events import Recorder
from stoker.engine.handlers import SNAPSHOT_DELETE, HandlerRunner, handler_pair
from stoker.engine.stack import StackRuntime, stored_data
from stoker.engine.states import Action, Status
from stoker.sdk.exceptions import ResourceFailure, StokerError, UpdateReplace
from stoker.sdk.properties import Properties
from stoker.sdk.resource import Resource
from stoker.sdk.stack_resource import StackResource
from stoker.store import ResourceRecord, Store
from stoker.store.connection_loss import database_text
from stoker.template import budget
from stoker.template.definitions import ResourceDefinition


@dataclass
class Stop:
    """Set by whoever cancels a stack action (a timeout, a user's cancel)."""

    reason: str | None = None


@dataclass
class ActionContext:
    runtime: StackRuntime
    recorder: Recorder
    runner: HandlerRunner
    store: Store
    # Why the action is being stopped (set before cancelling it), for the resources' reasons.
    stop: Stop = field(default_factory=lambda: Stop())
    # Seconds between looks for a cleared hook.
    hook_poll_s: float = 0.2


LOG = logging.getLogger(__name__)

# Exceptions a handler raises only by a mistake of its own or of a library it calls (a
# plugin refuses a value with ValueError or a StokerError, the cloud with the SDK's errors):
# their tracebacks go to the engine's log.
PLUGIN_BUGS = (AttributeError, LookupError, NameError, TypeError, AssertionError, RuntimeError)


def failure_reason(name: str, error: BaseException) -> str:
    """Heat's form: ``ValueError: resources.<name>: <message>``."""
    if isinstance(error, ResourceFailure):
        return error.message
    if isinstance(error, StokerError):
        text = str(error)
        if not error.path:
            text = f"resources.{name}: {text}"
        return f"{type(error).__name__}: {text}"
    if isinstance(error, PLUGIN_BUGS) and not type(error).__module__.startswith("stoker."):
        # Not a refusal of the cloud or of the template: a bug in the plugin or in a library
        # it calls. The reason says what; the engine's log keeps where (the traceback).
        LOG.error("resource %s failed by an unexpected %s", name, type(error).__name__, exc_info=error)
    # A database error without its SQL and parameters (they may quote a hidden value).
    return f"{type(error).__name__}: resources.{name}: {database_text(error) or error}"


def jsonable(value: Any) -> Any:
    """Values go into JSON columns; anything else is kept as its string form."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=str))


def _stored_definition(record: ResourceRecord) -> ResourceDefinition:
    """A definition carrying the record's last resolved properties (for delete)."""
    return ResourceDefinition(name=record.name, resource_type=record.type, properties_data=record.properties or {})


async def aborted(context: ActionContext, record: ResourceRecord, action: Action, **fields: Any) -> None:
    """The stack action was cancelled (timeout, cancel) while this resource was in
    progress: leave no IN_PROGRESS behind (with ``fields``: what else to record)."""
    await context.recorder.resource_state(record, action, Status.FAILED, f"{action} aborted: {context.stop.reason or 'the stack action was cancelled'}", **fields)


def interrupted(record: ResourceRecord, action: Action) -> bool:
    """The record was left IN_PROGRESS in ``action`` by an engine that stopped."""
    return record.action == action and record.status == Status.IN_PROGRESS


async def resume_resource(context: ActionContext, record: ResourceRecord, definition: ResourceDefinition | None, action: Action) -> None:
    """Finish an action an engine restart interrupted: poll on with the persisted handler
    token, or, without one, record FAILED (the handler's progress is unknown; a retry of
    the stack action replaces or deletes the resource, whose physical id is recorded)."""
    runtime, recorder = context.runtime, context.recorder
    token = record.handler_token
    if token is None:
        reason = f"Engine restarted during {action}: the progress of {record.name} is unknown"
        fields = await _found_created(context, record, definition) if action == Action.CREATE else {}
        if fields:
            reason += f"; {fields['physical_resource_id']} found by its name belongs to the stack (an update checks or replaces it, a delete deletes it)"
        if action == Action.CREATE and definition is not None:
            fields.update(_given_properties(runtime, record, definition))
        await recorder.resource_state(record, action, Status.FAILED, reason, **fields)
        raise ResourceFailure(reason)
    instance = runtime.instance(record, definition if definition is not None else _stored_definition(record), fresh=True)
    instance.action, instance.status = action, Status.IN_PROGRESS

    def finish() -> tuple[Mapping[str, Any], Mapping[str, Any]]:
        return budget.stored_values(record.name, instance.properties.resolved(), runtime.attributes_to_store(record) if action != Action.DELETE else {})

    try:
        properties, attributes = await context.runner.resume(instance, action, token["token"], after=finish)
    except asyncio.CancelledError:
        given = _given_properties(runtime, record, definition) if action == Action.CREATE and definition is not None and record.properties is None else {}
        await aborted(context, record, action, **given)
        raise
    except Exception as error:  # noqa: BLE001
        reason = failure_reason(record.name, error)
        await recorder.resource_state(record, action, Status.FAILED, reason, handler_token=None)
        raise ResourceFailure(reason, cause=error)
    fields = {"handler_token": None}
    if action != Action.DELETE:
        fields.update(properties=jsonable(properties), attributes=jsonable(attributes), data=stored_data(runtime.store, instance))
    await recorder.resource_state(record, action, Status.COMPLETE, "state changed (resumed after an engine restart)", **fields)


def _given_properties(runtime: StackRuntime, record: ResourceRecord, definition: ResourceDefinition) -> dict[str, Any]:
    """The properties a create that did not finish was given, to record with its failure:
    the next update compares the template with them, as with any resource, instead of
    replacing a resource whose create may well have worked."""
    try:
        return {"properties": jsonable(runtime.instance(record, definition, fresh=True).properties.resolved())}
    except Exception:  # noqa: BLE001 - what cannot be resolved is not recorded
        return {}


async def _found_created(context: ActionContext, record: ResourceRecord, definition: ResourceDefinition | None) -> dict[str, Any]:
    """For a create an engine death interrupted before the physical id was recorded: the
    plugin's ``find_created`` (the object found by the name only this resource uses), as
    fields to record. Nothing when the id is known, nothing is found, or the search fails
    (the failure is logged: the resource is FAILED either way)."""
    if record.physical_resource_id is not None:
        return {}
    try:
        instance = context.runtime.instance(record, definition, fresh=True)
        found = await context.runner.call(instance.find_created)
    except Exception:  # noqa: BLE001 - a best effort on top of a failure
        LOG.warning("looking for what the interrupted create of %s made failed", record.name, exc_info=True)
        return {}
    return {"physical_resource_id": str(found)} if found else {}


async def create_resource(context: ActionContext, record: ResourceRecord, definition: ResourceDefinition, reason: str = "state changed") -> None:
    runtime, recorder = context.runtime, context.recorder
    if interrupted(record, Action.CREATE) and record.hook is None:
        return await resume_resource(context, record, definition, Action.CREATE)
    await hooks.pause(context, record, Action.CREATE, "pre")
    await recorder.resource_state(record, Action.CREATE, Status.IN_PROGRESS, reason)
    if definition.external_id is not None:
        return await _adopt_external(context, record, definition)
    try:
        instance = runtime.instance(record, definition, fresh=True)
        instance.action, instance.status = Action.CREATE, Status.IN_PROGRESS

        def finish() -> tuple[Mapping[str, Any], Mapping[str, Any]]:
            return budget.stored_values(record.name, instance.properties.resolved(), runtime.attributes_to_store(record))

        properties, attributes = await context.runner.run(
            instance,
            Action.CREATE,
            before=instance.validate,
            after=finish,
            on_token=lambda token: _save_token(context, record, token),
        )
    except asyncio.CancelledError:
        # As a failed create: the properties it was given are kept (its delete needs them).
        await aborted(context, record, Action.CREATE, **_given_properties(runtime, record, definition))
        raise
    except Exception as error:  # noqa: BLE001 - any plugin failure becomes CREATE_FAILED
        reason = failure_reason(record.name, error)
        kept = {"data": jsonable(record.data)} if record.data is not None else {}
        kept.update(_given_properties(runtime, record, definition))
        await recorder.resource_state(record, Action.CREATE, Status.FAILED, reason, handler_token=None, **kept)
        raise ResourceFailure(reason, cause=error)
    await recorder.resource_state(
        record,
        Action.CREATE,
        Status.COMPLETE,
        properties=jsonable(properties),
        attributes=jsonable(attributes),
        data=stored_data(runtime.store, instance),
        handler_token=None,
        # the definition was stored with the row (new_record) and has not changed
    )
    await hooks.pause(context, record, Action.CREATE, "post")


async def _adopt_external(context: ActionContext, record: ResourceRecord, definition: ResourceDefinition) -> None:
    """A resource with ``external_id`` stands for a physical resource made elsewhere: its
    id is recorded, its properties are not applied, and the stack never deletes it."""
    try:
        external = context.runtime.resolve(definition.external_id)
        if not isinstance(external, str) or not external:
            raise StokerError("external_id must be a non-empty string", path=f"resources.{record.name}.external_id")
    except StokerError as error:
        reason = failure_reason(record.name, error)
        await context.recorder.resource_state(record, Action.CREATE, Status.FAILED, reason)
        raise ResourceFailure(reason, cause=error)
    await context.recorder.resource_state(
        record,
        Action.CREATE,
        Status.COMPLETE,
        f"External resource {external} adopted",
        physical_resource_id=external,
        definition=context.runtime.render(definition),
        properties={},
    )


def restricted(context: ActionContext, name: str, action: str) -> bool:
    """Whether the environment forbids ``action`` (update, replace) on resource ``name``
    (its ``resources`` entries whose name or pattern matches, as in Heat)."""
    from stoker.environment.environment import restricted_actions

    return action in restricted_actions(context.runtime.environment.resource_registry, name)


async def _save_token(context: ActionContext, record: ResourceRecord, token: Any) -> None:
    """Persist the handler token (and the data the plugin set) before waiting on it, so
    a restart can resume polling."""
    fields: dict[str, Any] = {"data": jsonable(record.data)} if record.data is not None else {}
    try:
        json.dumps(token)
        fields["handler_token"] = {"token": token}
    except (TypeError, ValueError):
        pass
    if fields:
        await context.store.update_resource_async(record, **fields)
    record.handler_token = fields.get("handler_token")
    if record.handler_token is not None:
        faults.point("token-saved")


def _nothing_to_delete(instance: Resource) -> bool:
    """The plugin keeps the base class's handle_delete with no entity to delete through
    and no check: there is no plugin code to run, so no thread is needed."""
    cls = type(instance)
    return (
        cls.handle_delete is Resource.handle_delete
        and not (cls.entity and cls.default_client_name)
        and getattr(cls, "check_delete_complete", None) is None
    )


async def delete_resource(context: ActionContext, record: ResourceRecord, definition: ResourceDefinition | None = None) -> None:
    recorder = context.recorder
    if record.action == Action.DELETE and record.status == Status.COMPLETE:
        return
    if interrupted(record, Action.DELETE) and record.handler_token is not None:
        return await resume_resource(context, record, definition, Action.DELETE)
    # Only a resource no handler ever ran for is skipped: a failed or interrupted create
    # may have made something (its plugin's handle_delete copes with a missing id).
    never_created = record.action == "INIT"
    policy = definition.deletion_policy if definition is not None else (record.definition or {}).get("deletion_policy", "Delete")
    if never_created:
        return
    state = (record.action, record.status)  # what the plugin backs up from
    await hooks.pause(context, record, Action.DELETE, "pre")
    await recorder.resource_state(record, Action.DELETE, Status.IN_PROGRESS)
    if (record.definition or {}).get("external_id") is not None:
        await recorder.resource_state(record, Action.DELETE, Status.COMPLETE, f"External resource {record.physical_resource_id} is not deleted")
        return
    if policy == "Retain":
        await recorder.resource_state(record, Action.DELETE, Status.COMPLETE, "Retained: deletion_policy is Retain")
        return
    try:
        # The properties it was last given; a record that kept none (its create stopped
        # before they were recorded, by an older stoker) is deleted with the template's.
        fallback = definition is not None and record.properties is None and definition.resource_type == record.type
        given = definition if fallback else _stored_definition(record)
        instance = context.runtime.instance(record, given, fresh=True)
        instance.action, instance.status = Action.DELETE, Status.IN_PROGRESS
        if policy == "Snapshot":
            await context.runner.run(instance, SNAPSHOT_DELETE, (state,), on_token=lambda token: _save_token(context, record, token))
        elif not _nothing_to_delete(instance):
            await context.runner.run(instance, Action.DELETE, on_token=lambda token: _save_token(context, record, token))
    except asyncio.CancelledError:
        await aborted(context, record, Action.DELETE)
        raise
    except Exception as error:  # noqa: BLE001
        reason = failure_reason(record.name, error)
        await recorder.resource_state(record, Action.DELETE, Status.FAILED, reason, handler_token=None)
        raise ResourceFailure(reason, cause=error)
    await recorder.resource_state(record, Action.DELETE, Status.COMPLETE, handler_token=None)
    await hooks.pause(context, record, Action.DELETE, "post")


@dataclass
class UpdatePlan:
    """What an update of one resource must do, and why."""

    kind: str  # "none", "metadata", "update", "replace", "complete" (a failed one, checked)
    reason: str = ""
    prop_diff: Mapping[str, Any] | None = None
    tmpl_diff: Mapping[str, Any] | None = None
    new_properties: Mapping[str, Any] | None = None


def plan_update(context: ActionContext, record: ResourceRecord, definition: ResourceDefinition) -> UpdatePlan:
    """Decide in place versus replacement (runs in a handler thread: it resolves values)."""
    runtime = context.runtime
    was_external = (record.definition or {}).get("external_id") is not None
    new_external = runtime.resolve(definition.external_id) if definition.external_id is not None else None
    old_external = record.physical_resource_id if was_external else None
    if old_external != new_external and record.action != "INIT":
        raise StokerError(
            f"Update of external_id of resource {record.name} is not allowed",
            path=f"resources.{record.name}.external_id",
            hint="keep the old external_id, or remove the resource and add a new one",
        )
    if new_external is not None:
        return UpdatePlan("none")
    type_changed = record.type != definition.resource_type
    if type_changed and not substituted(runtime, record, definition):
        return UpdatePlan("replace", f"type changed from {record.type} to {definition.resource_type}")
    remapped = None if type_changed else runtime.remapped(record)
    if remapped is not None:
        return UpdatePlan("replace", f"the environment now maps {record.type} to {remapped[1]} instead of {remapped[0]}")
    # A substitute's class (seed 000's substitute_class) takes over the record in place.
    instance = runtime.instance(record, definition, fresh=True)
    unfinished = record.status == Status.FAILED or record.action == "INIT" or (record.action == Action.CREATE and record.status != Status.COMPLETE)
    never_made = record.action == "INIT" or record.physical_resource_id is None
    if unfinished and (never_made or instance.needs_replace_failed()):
        return UpdatePlan("replace", f"resource is {record.action}_{record.status}")
    new_properties = instance.properties.resolved()
    old_properties = record.properties or {}
    prop_diff = {key: value for key, value in new_properties.items() if old_properties.get(key) != value}
    prop_diff.update({key: None for key in old_properties if key not in new_properties})
    tmpl_diff: dict[str, Any] = {}
    if prop_diff:
        tmpl_diff["Properties"] = definition.render().get("properties", {})
    old_definition = record.definition or {}
    new_render = definition.render()
    if old_definition.get("metadata") != new_render.get("metadata"):
        tmpl_diff["Metadata"] = new_render.get("metadata")
    if old_definition.get("deletion_policy") != new_render.get("deletion_policy"):
        tmpl_diff["DeletionPolicy"] = new_render.get("deletion_policy", "Delete")
    if old_definition.get("update_policy") != new_render.get("update_policy"):
        tmpl_diff["UpdatePolicy"] = new_render.get("update_policy")
    # A nested stack's parent passes every update on when what the child would get
    # changed (a provider template's text, a group's members), even with equal properties.
    # A failed one is always passed on: the child's update retries what failed in it; so is
    # one whose tree holds a failed resource (one marked unhealthy: CHECK_FAILED), which
    # the child's update replaces (heat-templates' autohealing marks a member's server and
    # updates the root stack; Heat passes every update on to nested stacks).
    child_changed = isinstance(instance, StackResource) and (
        record.status == Status.FAILED
        or instance.child_digest() != (record.data or {}).get(StackResource.DIGEST_KEY)
        or (runtime.store is not None and record.physical_resource_id is not None and runtime.store.tree_has_failed_resource(record.physical_resource_id))
    )
    if unfinished and not prop_diff and not child_changed:
        # Heat marks such a resource COMPLETE ("neither update nor replace"); here its
        # live object is checked first, and a failed check replaces it.
        return UpdatePlan("complete", f"resource is {record.action}_{record.status}", {}, tmpl_diff, new_properties)
    if getattr(type(instance), "replace_on_every_update", False):
        # Heat's UpdateWaitConditionHandle: every stack update makes a new handle (new URL,
        # no signals), so that agents signal again and its waiters wait again.
        return UpdatePlan("replace", f"{record.type} is replaced at every update")
    # Heat's OS::Mistral::ExternalResource with always_update: its plugin runs its UPDATE at
    # every stack update, changed or not.
    always = bool(getattr(instance, "updates_when_unchanged", lambda: False)())
    if not tmpl_diff and not child_changed and not type_changed and not always:
        return UpdatePlan("none")
    schema = type(instance).properties_schema
    immutable = sorted(key for key in prop_diff if key in schema and schema[key].immutable)
    if immutable:
        raise StokerError(
            f"Update of immutable property {', '.join(immutable)} is not allowed",
            path=f"resources.{record.name}.properties.{immutable[0]}",
            hint="restore the old value or create a new resource under another name",
        )
    fixed = sorted(key for key in prop_diff if key in schema and not schema[key].update_allowed)
    if fixed:
        return UpdatePlan("replace", f"property {', '.join(fixed)} changed and cannot be updated in place", prop_diff, tmpl_diff, new_properties)
    # The plugin's own say (Heat's needs_replace* hooks), asked before anything runs so
    # a preview predicts exactly what the update will do.
    if instance.needs_replace(new_properties):
        return UpdatePlan("replace", f"{record.type} requires replacement (needs_replace)")
    if prop_diff and instance.needs_replace_with_prop_diff(set(prop_diff), new_properties, old_properties):
        return UpdatePlan("replace", f"{record.type} requires replacement when {', '.join(sorted(prop_diff))} changes")
    if instance.needs_replace_with_tmpl_diff(tmpl_diff):
        return UpdatePlan("replace", f"{record.type} requires replacement for this template change")
    if not prop_diff and not child_changed and not always:
        # Metadata, policies or a substitute type only: recorded without calling the plugin.
        reason = f"type changed from {record.type} to {definition.resource_type} (its substitute)" if type_changed else ""
        return UpdatePlan("metadata", reason, {}, tmpl_diff, new_properties)
    return UpdatePlan("update", "", prop_diff, tmpl_diff, new_properties)


async def update_resource(context: ActionContext, record: ResourceRecord, definition: ResourceDefinition) -> ResourceRecord:
    """Bring one resource to ``definition``. Returns the record now current for the name
    (a new one when the resource was replaced)."""
    recorder = context.recorder
    if interrupted(record, Action.CREATE):
        await resume_resource(context, record, definition, Action.CREATE)
        return record
    if interrupted(record, Action.UPDATE):
        await resume_resource(context, record, definition, Action.UPDATE)
        return record
    if record.action == "INIT":  # never started (e.g. a replacement before a restart)
        await create_resource(context, record, definition)
        return record
    if updatable(context.runtime, record, definition):
        # Heat's Resource.update stops here before deciding anything: the hook fires
        # when nothing changed and before a replacement too.
        await hooks.pause(context, record, Action.UPDATE, "pre")
    try:
        plan: UpdatePlan = await context.runner.call(plan_update, context, record, definition)
    except Exception as error:  # noqa: BLE001
        reason = failure_reason(record.name, error)
        await recorder.resource_state(record, Action.UPDATE, Status.FAILED, reason)
        raise ResourceFailure(reason, cause=error)
    if plan.kind == "none":
        return record
    forbidden = "replace" if plan.kind == "replace" else "update"
    if restricted(context, record.name, forbidden):
        reason = f"ResourceActionRestricted: resources.{record.name}: {forbidden} is restricted for resource {record.name} (restricted_actions in the environment)"
        await recorder.resource_state(record, Action.UPDATE, Status.FAILED, reason)
        raise ResourceFailure(reason)
    if plan.kind == "complete":
        failure = await _check_unfinished(context, record, definition, plan)
        if failure is None:
            return record
        plan = UpdatePlan("replace", failure)
    if plan.kind == "metadata":
        await recorder.resource_state(record, Action.UPDATE, Status.IN_PROGRESS, type=definition.resource_type)
        await recorder.resource_state(record, Action.UPDATE, Status.COMPLETE, plan.reason or "metadata updated", definition=context.runtime.render(definition))
        await hooks.pause(context, record, Action.UPDATE, "post")
        return record
    if plan.kind == "update":
        try:
            await _update_in_place(context, record, definition, plan)
            return record
        except UpdateReplace as replace:
            plan = UpdatePlan("replace", replace.message)
            # Leave no IN_PROGRESS behind: this resource is finished with; its
            # replacement is created now and it is deleted in the cleanup phase.
            await recorder.resource_state(record, Action.UPDATE, Status.COMPLETE, f"Replacement required: {replace.message}")
    return await replace_resource(context, record, definition, plan.reason)


def updatable(runtime: StackRuntime, record: ResourceRecord, definition: ResourceDefinition) -> bool:
    """Whether Heat would call the resource's ``update`` (where the pre-update hook is):
    not for a change of type (replaced at once) unless to its substitute, nor for an
    external resource."""
    was_external = (record.definition or {}).get("external_id") is not None
    same_type = record.type == definition.resource_type or substituted(runtime, record, definition)
    if same_type and record.type == definition.resource_type and runtime.remapped(record) is not None:
        same_type = False  # another class now: Heat replaces it without calling update
    return same_type and not was_external and definition.external_id is None


def substituted(runtime: StackRuntime, record: ResourceRecord, definition: ResourceDefinition) -> bool:
    """Whether the new type of a resource is its old type's ``substitute_class`` or extends
    it (seed 000; Heat's ``check_is_substituted``): the type changes in place, no
    replacement."""
    if record.type == definition.resource_type:
        return False
    try:
        old_class = runtime.plugin_class(record.type, record.name)
        new_class = runtime.plugin_class(definition.resource_type, record.name)
    except (LookupError, StokerError):
        return False  # a type no longer known cannot hand its resource over
    status = getattr(old_class, "support_status", None)
    return status is not None and status.is_substituted(new_class)


async def _check_unfinished(context: ActionContext, record: ResourceRecord, definition: ResourceDefinition, plan: UpdatePlan) -> str | None:
    """A resource whose create (or update) did not finish, unchanged in the template and
    not needing replacement by its plugin's say: its live object is checked (the plugin's
    ``handle_check``), then it is COMPLETE. Returns why it must be replaced instead."""
    runtime, recorder = context.runtime, context.recorder
    await recorder.resource_state(record, Action.UPDATE, Status.IN_PROGRESS, f"Checking {record.name}: {plan.reason}", type=definition.resource_type)
    instance = runtime.instance(record, definition, fresh=True)
    instance.action, instance.status = Action.CHECK, Status.IN_PROGRESS
    if handler_pair(instance, Action.CHECK)[0] is not None:
        try:
            await context.runner.run(instance, Action.CHECK)
        except asyncio.CancelledError:
            await aborted(context, record, Action.UPDATE)
            raise
        except Exception as error:  # noqa: BLE001 - a failed check means: replace it
            reason = f"{plan.reason} and its check failed: {failure_reason(record.name, error)}"
            await recorder.resource_state(record, Action.UPDATE, Status.COMPLETE, f"Replacement required: {reason}")
            return reason
    try:
        attributes = await context.runner.call(lambda: budget.check_each(runtime.attributes_to_store(record), "attribute", f"resources.{record.name}.attributes"))
    except Exception:  # noqa: BLE001 - attributes are read again on demand
        attributes = {}
    await recorder.resource_state(
        record,
        Action.UPDATE,
        Status.COMPLETE,
        "Update status to COMPLETE for FAILED resource neither update nor replace (its live object checked)",
        properties=jsonable(plan.new_properties),
        attributes=jsonable(attributes),
        data=stored_data(runtime.store, instance),
        definition=context.runtime.render(definition),
    )
    return None


async def _update_in_place(context: ActionContext, record: ResourceRecord, definition: ResourceDefinition, plan: UpdatePlan) -> None:
    runtime, recorder = context.runtime, context.recorder
    # A substitute type (seed 000) is the record's from here on.
    await recorder.resource_state(record, Action.UPDATE, Status.IN_PROGRESS, type=definition.resource_type)
    try:
        instance = runtime.instance(record, definition, fresh=True)
        # The plugin sees the old values as self.properties and the new ones through json_snippet.
        instance.properties = Properties(type(instance).properties_schema, record.properties or {}, path=f"resources.{record.name}.properties", accept_any=instance.accepts_any_property)
        instance.action, instance.status = Action.UPDATE, Status.IN_PROGRESS
        new_definition = definition.bind(runtime.resolve)

        def finish() -> Mapping[str, Any]:
            # Attributes come from the new values (the plugin saw the old ones as
            # self.properties during handle_update).
            runtime.instance(record, definition, fresh=True)
            return budget.check_each(runtime.attributes_to_store(record), "attribute", f"resources.{record.name}.attributes")

        attributes = await context.runner.run(
            instance,
            Action.UPDATE,
            (new_definition, plan.tmpl_diff, plan.prop_diff),
            after=finish,
            on_token=lambda token: _save_token(context, record, token),
        )
    except UpdateReplace:
        raise
    except asyncio.CancelledError:
        await aborted(context, record, Action.UPDATE)
        raise
    except Exception as error:  # noqa: BLE001
        reason = failure_reason(record.name, error)
        await recorder.resource_state(record, Action.UPDATE, Status.FAILED, reason, handler_token=None)
        raise ResourceFailure(reason, cause=error)
    await recorder.resource_state(
        record,
        Action.UPDATE,
        Status.COMPLETE,
        properties=jsonable(plan.new_properties),
        attributes=jsonable(attributes),
        data=stored_data(runtime.store, instance),
        definition=context.runtime.render(definition),
        handler_token=None,
    )
    await hooks.pause(context, record, Action.UPDATE, "post")


async def save_data(context: ActionContext, record: ResourceRecord, instance: Resource) -> None:
    """Write what a plugin stored with ``data_set`` in a hook that no state change of
    its record follows (prepare_for_replace, restore_prev_rsrc)."""
    take = getattr(instance._hooks, "take_pending", None)
    pending = take() if take is not None else None
    if pending is not None:
        await context.store.update_resource_async(record, data=pending)


async def replace_resource(context: ActionContext, record: ResourceRecord, definition: ResourceDefinition, why: str) -> ResourceRecord:
    """Create the replacement first; the old resource is deleted in the cleanup phase."""
    runtime, store = context.runtime, context.store
    if record.physical_resource_id is not None and record.action != Action.DELETE:
        old = runtime.instance(record, None, fresh=True)
        try:
            await context.runner.call(old.prepare_for_replace)
        except Exception as error:  # noqa: BLE001 - the update of this resource fails
            reason = failure_reason(record.name, error)
            await context.recorder.resource_state(record, Action.UPDATE, Status.FAILED, f"Preparing the replacement failed: {reason}", data=stored_data(runtime.store, old))
            raise ResourceFailure(reason, cause=error)
        await save_data(context, record, old)
    replacement = runtime.new_record(definition, replaces=record.id)
    await store.insert_replacement_async(replacement, record)
    record.current, record.replaced_by = False, replacement.id
    runtime.records.append(replacement)
    runtime.current[definition.name] = replacement
    await create_resource(context, replacement, definition, reason=f"Replacing {record.name}: {why}" if why else "state changed")
    return replacement
