"""Heat's previews: what a create (``preview_create``, and ``preview_stack``, the stack
it would make) or an update (``preview_update``) would do to each resource, decided as
the action decides, after the same checks. A part of ``Service``; the plans
(``plan_actions``) are made from the same previews (``create_plan``, ``update_runtime``).

What it must not do: decide what changes (engine/preview does), store anything, or run
an action.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stoker.engine import drift, implementations
from stoker.engine.engine import Engine
from stoker.engine.errors import StackExistsError
from stoker.engine.validation import ValidationResult
from stoker.environment.environment import Environment
from stoker.environment.registry import ResourceRegistry
from stoker.masking import HiddenValues
from stoker.reads import StackReads
from stoker.request_checks import RequestChecks
from stoker.stack_requests import Source, check_stack_name, new_stack
from stoker.store import StackRecord, Store
from stoker.store.repository import utcnow
from stoker.template.hot import Template


class StackPreviews:
    """Previews of a ``Service``'s stacks: requests judged by ``checks``, stacks found
    by ``reads``."""

    def __init__(self, store: Store, engine: Engine, registry: ResourceRegistry, checks: RequestChecks, reads: StackReads):
        self.store = store
        self.engine = engine
        self.registry = registry
        self.checks = checks
        self.reads = reads

    def preview_create(
        self, name: str, template: Source, environments: Sequence[Source] = (), parameters: Mapping[str, Any] | None = None, files: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """What a create would do (everything is added, in the create's order), after the
        same validation."""

        check_stack_name(name)
        parsed = self.checks.parse_template(template, files)
        environment = self.checks.parse_environments(environments, parsed, files)
        result = self.checks.validate_stack(parsed, environment, dict(parameters or {}))
        hidden = HiddenValues.of(parsed.parameters, parameters, result.params, environment.parameters, environment.parameter_defaults)
        return self.create_plan(result, parsed, environment, hidden)

    @staticmethod
    def create_plan(result: ValidationResult, parsed: Template, environment: Environment, hidden: HiddenValues) -> dict[str, Any]:
        """Every resource added, in the create's order; where the registry lists
        candidates, the template chosen for each resource (seed 003)."""
        from stoker.engine import preview

        return implementations.with_preview(hidden.data(preview.as_result(preview.preview_create(result.template, result.implicit))), parsed, environment)

    def preview_stack(
        self,
        name: str,
        template: Source,
        environments: Sequence[Source] = (),
        parameters: Mapping[str, Any] | None = None,
        files: Mapping[str, str] | None = None,
        disable_rollback: bool = True,
        timeout_mins: int | None = None,
        tags: Sequence[str] | None = None,
        project_id: str = "",
        plan: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Heat's preview_stack (``format_stack_preview``): the stack a create would make,
        checked as create checks it (name, template, parameters), with no id (``"None"``),
        its parameters (pseudo parameters included) and its resources, each with its
        properties resolved. ``stack_identity`` is for the API to make ``id`` and links of.
        ``plan``: filled with what ``preview_create`` gives, from the same validation."""
        from stoker.engine import preview
        from stoker.engine.outputs import output_entries
        from stoker.reads import shown_parameters
        from stoker.template.functions.base import resolve

        check_stack_name(name)
        if self.store.find_stack(name, project_id) is not None:  # names are unique per project
            raise StackExistsError(name)
        parsed = self.checks.parse_template(template, files)
        environment = self.checks.parse_environments(environments, parsed, files)
        user = dict(parameters or {})
        stack = new_stack(name, user, disable_rollback, timeout_mins, tags or ())
        stack.id, stack.project_id = "None", project_id
        self.checks.check_limits(parsed)
        result = self.checks.validate_stack(parsed, environment, user, stack, hand_over=False)  # no action follows
        hidden = HiddenValues.of(parsed.parameters, user, result.params, environment.parameters, environment.parameter_defaults)
        context = preview.preview_context(result, self.registry)
        description = parsed.description or "No description"
        body = {
            "stack_identity": {"stack_name": name, "stack_id": "None", "tenant": project_id, "path": ""},
            "stack_name": name,
            "creation_time": utcnow(),
            "updated_time": None,
            "deletion_time": None,
            "notification_topics": [],
            "parameters": shown_parameters(result.template, result.params, context),
            "description": description,
            "template_description": description,
            "capabilities": [],
            "disable_rollback": disable_rollback,
            "timeout_mins": timeout_mins,
            "stack_owner": None,
            "parent": None,
            "stack_user_project_id": None,
            "tags": list(tags) if tags else None,
            "outputs": output_entries(result.template.outputs.values(), lambda value: resolve(value, context)),
            "resources": preview.preview_resources(result, self.registry, name, project_id),
        }
        if plan is not None:
            plan.update(self.create_plan(result, parsed, environment, hidden))
        return hidden.data(body)

    def preview_update(
        self,
        name_or_id: str,
        template: Source | None = None,
        environments: Sequence[Source] = (),
        parameters: Mapping[str, Any] | None = None,
        files: Mapping[str, str] | None = None,
        existing: bool = False,
        show_nested: bool = False,
        converge: bool = False,
    ) -> dict[str, Any]:
        """What an update would do to each resource, decided as the update decides; with
        ``show_nested``, to the resources of its nested stacks too (engine.nested_preview);
        with ``converge``, from the live objects (a drift detection runs first)."""
        from stoker.engine import preview

        stack = self.reads.get_stack(name_or_id)
        parsed, environment, user, _ = self.checks.update_request(stack, template, environments, parameters, files, existing)
        current, runtime, hidden = self.update_runtime(stack, parsed, environment, user, converge)
        planned = preview.preview_update(runtime, current.template)
        if show_nested:
            from stoker.engine.nested_preview import with_nested

            planned = with_nested(self.engine, runtime, planned)
        # Old values too: a change's old value may be the stack's hidden parameter's as it was.
        changes = self.reads.hidden_values(stack).data(hidden.data(preview.as_result(planned)))
        # where the registry lists candidates: which resources change implementation
        return implementations.with_update_preview(changes, current.template, current.environment, parsed, environment)

    def update_runtime(
        self, stack: StackRecord, parsed: Template, environment: Environment, user: Mapping[str, Any], converge: bool = False
    ) -> tuple[Any, Any, HiddenValues]:
        """What an update's preview decides on: the stack's runtime now, the runtime of the
        update (``engine.preview.preview_runtime``: what it would make has no values yet),
        and the request's hidden values. ``converge``: the stack's resources as a drift
        detection finds them now (what ``update_stack`` stores first), nested ones too."""
        from stoker.engine import preview
        from stoker.engine.stack import parameter_values

        current = self.engine.load_runtime(stack)
        found = drift.found(self.engine, self.store, stack) if converge else {}
        drift.as_found(current, found)
        params = parameter_values(parsed, environment, user, stack.name, stack.id, stack.project_id)
        runtime = preview.preview_runtime(current, parsed.with_conditions(params), params)
        runtime.found = found
        runtime.environment = environment
        runtime.aliases = environment.type_aliases()
        hidden = HiddenValues.of(parsed.parameters, user, params, environment.parameters, environment.parameter_defaults)
        return current, runtime, hidden
