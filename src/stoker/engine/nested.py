"""Nested stacks: the engine's side of ``StackResource``.

A nested stack is a stack of its own (a row with ``owner_id`` and ``nested_depth``)
whose actions are jobs like any other; its parent resource's handler asks for them here
and polls the child's state. This module owns that hand-over, from handler threads:

* validating a would-be child (its template, parameters and the depth limit) with the
  same whole-stack validation a top-level stack gets, and counting the tree it would
  join against max_resources_per_stack (``engine.trees.check_child``) before it is made;
* moving the child to ``<ACTION>_IN_PROGRESS`` in the store before the request returns,
  then queueing the child's job (``Engine.submit``). The parent's handler token is saved
  only after this returns, so after a crash either the parent resource is FAILED
  ("Engine restarted") or its poll finds the child in the store;
* restarting a child's job when its state is IN_PROGRESS and no live engine holds it
  (its engine died): the parent's poll drives the child's recovery;
* read-only views of a finished child for attributes (outputs, members).

Invariant that makes the synchronous state write safe: a child's job is requested only
by its parent resource's handler, which polls until the child's action ends before
asking for another; when the parent's action is stopped, the engine stops the children
and waits for them (``Engine.stop_children``) before anything else touches them. With
workers, the child's job goes on the queue (``workers.ChildJobs``) and may run on any
worker; the parent's poll reads the child's row either way.
"""

from __future__ import annotations

import copy
import fnmatch
import textwrap
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stoker.engine import trees
from stoker.engine.events import stack_event
from stoker.engine.states import Action, Status
from stoker.environment.environment import Environment
from stoker.identifiers import new_id
from stoker.masking import HiddenValues
from stoker.sdk.exceptions import StokerError, ValidationError
from stoker.sdk.properties import contains_unresolved
from stoker.sdk.resource import Resource
from stoker.store import StackRecord
from stoker.store.repository import utcnow
from stoker.template import loader
from stoker.template.errors import NestedStackErrors, TemplateError, TemplateErrors
from stoker.template.hot import Template

if TYPE_CHECKING:
    from stoker.engine.engine import Engine
    from stoker.engine.stack import StackRuntime

# The id of a child stack made only to be validated, never stored (Heat's "None").
VALIDATING = "None"


def depth_error(depth: int, limit: int, name: str) -> ValidationError:
    return ValidationError(
        f"Recursion depth exceeds {limit}.",
        path=f"resources.{name}",
        hint=f"nested stacks may go {limit} levels deep (max_nested_depth, STOKER_MAX_NESTED_DEPTH); "
        "a template resource that uses itself never ends",
    )


def child_environment(parent: Environment, resource_name: str | None = None, template_entry: tuple[str, ...] | None = None) -> Environment:
    """What a child inherits: the resource registry and parameter_defaults (as in Heat),
    not the parent's own ``parameters``. The registry's per-resource section (hooks,
    restricted_actions) nests by resource name, so the child gets the part under its
    parent resource's name (or a pattern matching it)."""
    inherited = Environment.from_dict(parent.to_dict())
    inherited.parameters = {}
    if template_entry:
        # The entry that made the parent resource this template is not the child's
        # (Heat's remove_item): a template wrapping a type uses the type itself inside.
        *above, last = template_entry
        inherited.resource_registry = copy.deepcopy(inherited.resource_registry)
        level: Any = inherited.resource_registry
        for key in above:
            level = level.get(key) if isinstance(level, Mapping) else None
        if isinstance(level, dict):
            level.pop(last, None)
    sections = parent.resource_registry.get("resources")
    if isinstance(sections, Mapping):
        below: dict[str, Any] = {}
        for pattern, entry in sections.items():
            if resource_name is not None and isinstance(entry, Mapping) and fnmatch.fnmatchcase(resource_name, str(pattern)):
                below.update({key: value for key, value in entry.items() if isinstance(value, Mapping)})
        inherited.resource_registry["resources"] = below
    return inherited


def child_template(
    resource: Resource, template: Mapping[str, Any], files: Mapping[str, str], collect: bool = False
) -> Template:
    """Parse a child's template, from its text when it has one (positions in errors)."""
    from stoker.sdk.stack_resource import StackResource

    source = resource.child_source() if isinstance(resource, StackResource) else None
    if source is not None:
        return Template.load(source[0], source[1], files, collect=collect)
    return Template.parse(loader.Document(template), files, collect=collect)


def errors_text(problems: TemplateErrors) -> str:
    """A nested stack's problems, each with its own place (the nested file's name, line
    and column), as one message of its parent: one problem on the line, several as a
    list below it, indented under the parent's place (a deeper stack's list indents again)."""
    errors = problems.errors
    if len(errors) == 1:
        return f"nested stack: {errors[0]}"
    items = "".join("\n" + textwrap.indent(f"- {error}", "    ") for error in errors)
    return f"nested stack: {len(errors)} problems:{items}"


class ChildView:
    """A finished child stack, read for its parent's attributes."""

    def __init__(self, runtime: StackRuntime):
        self.runtime = runtime

    def outputs(self) -> dict[str, Any]:
        """Every output's value; one that cannot be computed is None (Heat's
        ``output_value`` beside its ``output_error``)."""
        from stoker.engine.outputs import output_value

        values = {}
        for name, output in self.runtime.template.outputs.items():
            value, _ = output_value(output, self.runtime.resolve)
            values[name] = None if contains_unresolved(value) else value
        return values

    def output(self, name: str) -> tuple[Any, str | None]:
        """One output's value and None, or None and why it cannot be computed; KeyError
        when the child has no such output."""
        from stoker.engine.outputs import output_value

        value, error = output_value(self.runtime.template.outputs[name], self.runtime.resolve)
        return (None if contains_unresolved(value) else value), error

    def resource_names(self) -> list[str]:
        return list(self.runtime.template.resources)

    def definition(self, name: str) -> dict[str, Any] | None:
        found = self.runtime.template.resources.get(name)
        return found.render() if found is not None else None

    def resource_state(self, name: str) -> tuple[str, str] | None:
        record = self.runtime.current.get(name)
        return (record.action, record.status) if record is not None else None

    def reference(self, name: str) -> Any:
        if name not in self.runtime.current:
            return None
        value = self.runtime.resource_reference(name)
        return None if contains_unresolved(value) else value

    def attribute(self, name: str, attribute: str, path: tuple[Any, ...] = ()) -> Any:
        if name not in self.runtime.current:
            return None
        value = self.runtime.resource_attribute(name, attribute, tuple(path))
        return None if contains_unresolved(value) else value


class ChildStacks:
    """``NestedStacks`` for the resources of one parent stack action."""

    def __init__(self, engine: Engine, runtime: StackRuntime):
        self.engine = engine
        self.runtime = runtime
        # child id -> view, dropped whenever this action asks the child for something
        self._views: dict[str, ChildView] = {}

    def __call__(self, resource: Resource) -> ChildStacks:
        return self

    def owner_hidden_values(self) -> HiddenValues:
        """The hidden values of the stack that owns this runtime's stack, and of its
        owners up to the root (``StackRuntime.hidden_values``)."""
        owner_id = self.runtime.stack.owner_id
        owner = self.engine.store.get_stack(owner_id) if owner_id else None
        if owner is None:
            return HiddenValues()
        try:
            return self.engine.hidden_values_of(owner)
        except Exception:  # noqa: BLE001 - an owner that no longer loads (its template pruned) stops no action of its child
            return HiddenValues()

    # -- validation ------------------------------------------------------------------

    def _template(self, template: Mapping[str, Any], resource: Resource) -> Template:
        try:
            return child_template(resource, template, self.runtime.template.files)
        except TemplateErrors as problems:
            raise NestedStackErrors(errors_text(problems), problems.errors, path=f"resources.{resource.name}")
        except TemplateError as error:
            raise ValidationError(
                f"resources.{resource.name}: {error}", path=f"resources.{resource.name}"
            )

    def _checked(
        self,
        resource: Resource,
        template: Mapping[str, Any],
        params: Mapping[str, Any],
        stack: StackRecord,
        replaced: str | None = None,
        resource_count: int | None = None,
        hand_over: bool = True,
    ) -> tuple[Template, Environment]:
        """Validate a would-be child as a stack of its own, and count the tree it would
        join (engine.trees): ``replaced``, the child it updates; ``resource_count``, how
        many members ``template`` stands for; ``hand_over``: the child's action follows
        (its cloud lookups are kept for it). Raises before anything is made."""
        from stoker.engine.validation import check_resource_limit, nested_warnings, validate
        from stoker.sdk.stack_resource import StackResource

        limit = self.engine.settings.max_nested_depth
        if stack.nested_depth > limit:
            raise depth_error(stack.nested_depth, limit, resource.name)
        parsed = self._template(template, resource)
        environment = child_environment(
            self.runtime.environment,
            resource.name,
            self.runtime.registry.user_template_path(resource.type, self.runtime.aliases, resource.name),
        )
        most = self.engine.settings.max_resources_per_stack
        try:
            check_resource_limit(parsed, most)
            result = validate(
                parsed,
                environment,
                params,
                self.engine.registry,
                stack,
                depth=stack.nested_depth,
                max_depth=limit,
                hand_over=hand_over,
            )
        except TemplateErrors as problems:
            raise NestedStackErrors(errors_text(problems), problems.errors, path=f"resources.{resource.name}")
        result.resource_count = resource_count
        trees.check_child(self.engine.store, self.runtime.stack, resource.name, trees.tree_size(result), replaced, most)
        if hand_over:
            # The child's action follows: what its template uses that is deprecated or
            # hidden is told in the parent's events too, where the user watches.
            source = resource.child_source() if isinstance(resource, StackResource) else None
            result.source = source[1] if source is not None else None
            for line in nested_warnings(result):
                resource.warn(line)
        return parsed, environment

    def _record(
        self, resource: Resource, child_id: str, params: Mapping[str, Any], timeout_mins: int | None
    ) -> StackRecord:
        parent = self.runtime.stack
        # A child validated inside a child that is itself only being validated (not
        # stored) names the nearest stored ancestor as its owner: what walks up to the
        # root finds it (the trust a nested stack acts with: trusts.credential_of).
        owner_id = parent.owner_id if parent.id == VALIDATING else parent.id
        return StackRecord(
            id=child_id,
            name=resource.physical_resource_name(),
            action=str(Action.CREATE),
            status=str(Status.IN_PROGRESS),
            status_reason=f"Stack {Action.CREATE} started",
            raw_template_id=0,
            parameters=dict(params),
            disable_rollback=True,  # the parent rolls back; the child follows its resource
            timeout_mins=timeout_mins,
            tags=[],
            project_id=parent.project_id,
            owner_id=owner_id,
            owner_resource=resource.name,
            nested_depth=parent.nested_depth + 1,
        )

    def validate(
        self,
        resource: Resource,
        template: Mapping[str, Any],
        params: Mapping[str, Any],
        resource_count: int | None = None,
    ) -> None:
        existing = self._child(resource)
        self._checked(
            resource, template, params, self._record(resource, VALIDATING, params, None),
            replaced=existing.id if existing is not None else None, resource_count=resource_count, hand_over=False,
        )

    # -- actions -----------------------------------------------------------------------

    def create(
        self,
        resource: Resource,
        template: Mapping[str, Any],
        params: Mapping[str, Any],
        timeout_mins: int | None,
    ) -> str:
        from stoker.engine.engine import Job

        child_id = new_id()
        record = self._record(resource, child_id, params, timeout_mins)
        parsed, environment = self._checked(resource, template, params, record)
        # The id first: a crash after this leaves a child the parent knows of.
        resource.resource_id_set(child_id)
        store = self.engine.store
        record.raw_template_id = store.store_template(
            parsed.data, dict(parsed.files), environment.to_dict()
        )
        store.create_stack(
            record,
            event=stack_event(record, Action.CREATE, Status.IN_PROGRESS, record.status_reason),
        )
        self.engine.submit(
            Job(child_id, Action.CREATE, resume=True, queued=True), owner_id=self.runtime.id
        )
        return child_id

    def update(
        self,
        resource: Resource,
        template: Mapping[str, Any],
        params: Mapping[str, Any],
        timeout_mins: int | None,
    ) -> None:
        from stoker.engine.engine import Job

        child = self._child(resource)
        if child is None:
            raise StokerError(
                f"The nested stack of {resource.name} does not exist",
                path=f"resources.{resource.name}",
            )
        parsed, environment = self._checked(resource, template, params, child, replaced=child.id)
        store = self.engine.store
        template_id = store.store_template(parsed.data, dict(parsed.files), environment.to_dict())
        reason = f"Stack {Action.UPDATE} started"
        store.update_stack(
            child.id,
            event=stack_event(child, Action.UPDATE, Status.IN_PROGRESS, reason),
            action=str(Action.UPDATE),
            status=str(Status.IN_PROGRESS),
            status_reason=reason,
            raw_template_id=template_id,
            prev_raw_template_id=child.raw_template_id,
            parameters=dict(params),
            prev_parameters=dict(child.parameters),
            timeout_mins=timeout_mins,
            updated_at=utcnow(),
        )
        self._views.pop(child.id, None)
        self.engine.submit(
            Job(child.id, Action.UPDATE, resume=True, queued=True), owner_id=self.runtime.id
        )

    def act(self, resource: Resource, action: str) -> bool:
        from stoker.engine.engine import Job

        child = self._child(resource)
        if child is None:
            return False
        reason = f"Stack {action} started"
        self.engine.store.update_stack(
            child.id,
            event=stack_event(child, action, Status.IN_PROGRESS, reason),
            action=action,
            status=str(Status.IN_PROGRESS),
            status_reason=reason,
        )
        self._views.pop(child.id, None)
        self.engine.submit(
            Job(child.id, Action(action), resume=True, queued=True), owner_id=self.runtime.id
        )
        return True

    def state(self, resource: Resource) -> tuple[str, str, str] | None:
        child = self._child(resource)
        if child is None:
            return None
        if child.status == Status.IN_PROGRESS:
            self.engine.adopt_orphan(child)
        elif self.engine.child_jobs is not None:
            self.engine.child_jobs.forget(child.id)  # its action has ended: nothing to watch
        return child.action, child.status, child.status_reason

    def view(self, resource: Resource) -> ChildView:
        child = self._child(resource)
        if child is None:
            raise StokerError(
                f"The nested stack of {resource.name} does not exist",
                path=f"resources.{resource.name}",
            )
        cached = self._views.get(child.id)
        if cached is None or cached.runtime.stack.status == Status.IN_PROGRESS:
            cached = self._views[child.id] = ChildView(self.engine.load_runtime(child))
        return cached

    def _child(self, resource: Resource) -> StackRecord | None:
        if resource.resource_id is None:
            return None
        child = self.engine.store.get_stack(resource.resource_id)
        if child is None or child.deleted_at is not None or child.owner_id != self.runtime.id:
            return None
        return child
