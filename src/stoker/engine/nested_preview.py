"""An update preview's nested stacks (Heat's ``preview_update_stack`` with ``show_nested``).

Owns: extending a stack's update preview (``preview.preview_update``) with the resources
of its nested stacks, as Heat does:

- a resource deleted or replaced takes its nested stack with it: every resource of that
  stack (and of the stacks nested in it) is ``deleted``;
- a resource added or replaced makes a new nested stack: every resource of the child
  template it would be given (and of the templates nested in that) is ``added``;
- a resource updated in place whose nested stack exists is previewed as an update of that
  stack, with the template and parameters the resource would give it now; what that
  preview finds (each kind) is added, and its own nested stacks in turn.

Each nested entry names its ``parent_resource`` (Heat's key) and, for the command's
table, ``nested_in``: the dotted path of parent resources from the previewed stack.
A child whose template or parameters depend on values known only during the update is not
previewed further (its resource's own entry says which values those are).

Must not: write anything or run a handler; it reads the store (existing child stacks).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from stoker.engine.drift import as_found
from stoker.engine.preview import (
    Change,
    PreviewRuntime,
    new_values,
    preview_runtime,
    preview_update,
)
from stoker.engine.stack import StackRuntime, parameter_values
from stoker.environment.environment import Environment
from stoker.masking import HiddenValues
from stoker.sdk.exceptions import StokerError
from stoker.sdk.properties import contains_unresolved
from stoker.sdk.stack_resource import StackResource
from stoker.store import ResourceRecord, StackRecord
from stoker.template.errors import TemplateErrors
from stoker.template.hot import Template

if TYPE_CHECKING:
    from stoker.engine.engine import Engine

# How deep a preview follows nested stacks (the engine's own limit stops them sooner).
_MAX_DEPTH = 20


def with_nested(engine: Engine, runtime: PreviewRuntime, changes: list[Change], path: str = "", depth: int = 0) -> list[Change]:
    """``changes`` (the preview of ``runtime``'s stack) followed by its nested stacks'."""
    found = list(changes)
    if depth >= _MAX_DEPTH:
        return found
    for change in changes:
        nested_in = f"{path}.{change.name}" if path else change.name
        record = runtime.current.get(change.name)
        if change.kind in ("deleted", "replaced") and record is not None:
            found.extend(_deleted(engine, runtime.stack, record, nested_in, depth + 1))
        if change.kind in ("added", "replaced"):
            found.extend(_added(engine, runtime, change.name, nested_in, depth + 1))
        if change.kind == "updated" and record is not None:
            found.extend(_updated(engine, runtime, record, nested_in, depth + 1))
    return found


def _entry(name: str, type_name: str, kind: str, reason: str, nested_in: str, properties: Any = None) -> Change:
    return Change(name, type_name, kind, reason, properties, nested_in)


def _child_record(engine: Engine, owner: StackRecord, record: ResourceRecord) -> StackRecord | None:
    """The nested stack ``record`` owns, if it has one."""
    if not record.physical_resource_id:
        return None
    child = engine.store.get_stack(record.physical_resource_id)
    if child is None or child.deleted_at is not None or child.owner_id != owner.id:
        return None
    return child


def _deleted(engine: Engine, owner: StackRecord, record: ResourceRecord, nested_in: str, depth: int) -> Iterator[Change]:
    child = _child_record(engine, owner, record)
    if child is None or depth > _MAX_DEPTH:
        return
    for member in engine.store.list_resources(child.id):
        if not member.current:
            continue
        yield _entry(member.name, member.type, "deleted", f"its nested stack goes with {record.name}", nested_in)
        yield from _deleted(engine, child, member, f"{nested_in}.{member.name}", depth + 1)


def _child_of(runtime: StackRuntime, name: str, record: ResourceRecord | None) -> tuple[StackResource, Template, dict[str, Any]] | None:
    """The resource's plugin as the new template defines it, the child template it
    would give its nested stack and the parameters; None when it makes no nested stack
    or what it gives is known only during the update."""
    definition = runtime.template.resources.get(name)
    if definition is None:
        return None
    try:
        cls = runtime.plugin_class(definition.resource_type, name)
    except StokerError:
        return None
    if not issubclass(cls, StackResource):
        return None
    from stoker.engine.nested import child_template

    made = record if record is not None else runtime.new_record(definition)
    try:
        instance = runtime.instance(made, definition, fresh=True)
        assert isinstance(instance, StackResource)
        template, params = instance.child_template(), instance.child_params()
        if contains_unresolved(template) or contains_unresolved(params):
            return None
        return instance, child_template(instance, template, runtime.template.files), dict(params)
    except (StokerError, TemplateErrors):
        return None


def _child_environment(runtime: StackRuntime, instance: StackResource) -> Environment:
    from stoker.engine.nested import child_environment

    return child_environment(
        runtime.environment, instance.name, runtime.registry.user_template_path(instance.type, runtime.aliases, instance.name)
    )


def _added(engine: Engine, runtime: StackRuntime, name: str, nested_in: str, depth: int) -> Iterator[Change]:
    made = _child_of(runtime, name, None)
    if made is None or depth > _MAX_DEPTH:
        return
    instance, parsed, params = made
    environment = _child_environment(runtime, instance)
    stack_name = f"{runtime.stack.name}-{name}"
    try:
        values = parameter_values(parsed, environment, params, stack_name, "None", runtime.stack.project_id)
        parsed = parsed.with_conditions(values)
    except (StokerError, TemplateErrors):
        return
    child = StackRuntime(runtime.stack, parsed, environment, values, runtime.registry, None, runtime.clock, [])
    child.nested = runtime.nested
    for member, definition in parsed.resources.items():
        entry = _entry(member, definition.resource_type, "added", "new resource (in a new nested stack)", nested_in)
        entry.values = new_values(child, definition)
        yield entry
        yield from _added(engine, child, member, f"{nested_in}.{member}", depth + 1)


def _updated(engine: Engine, runtime: PreviewRuntime, record: ResourceRecord, nested_in: str, depth: int) -> list[Change]:
    child_stack = _child_record(engine, runtime.stack, record)
    made = _child_of(runtime, record.name, record) if child_stack is not None else None
    if made is None or child_stack is None:
        return []
    instance, parsed, params = made
    current = engine.load_runtime(child_stack)
    as_found(current, runtime.found)  # a converging update's: its resources as found
    environment = _child_environment(runtime, instance)
    try:
        values = parameter_values(parsed, environment, params, child_stack.name, child_stack.id, child_stack.project_id)
        child = preview_runtime(current, parsed.with_conditions(values), values)
    except (StokerError, TemplateErrors):
        return []
    child.found = runtime.found
    child.environment = environment
    child.aliases = environment.type_aliases()
    changes = preview_update(child, current.template)
    # The child's hidden parameters, old and new, are masked in what it shows.
    hidden = HiddenValues.of(parsed.parameters, params, values, environment.parameters, environment.parameter_defaults)
    for change in changes:
        change.nested_in = nested_in
        if change.properties:
            change.properties = hidden.data(current.hidden_values().data(change.properties))
    return with_nested(engine, child, changes, nested_in, depth)

