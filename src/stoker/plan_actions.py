"""Plans made, saved and applied (docs/plans.md). A part of ``Service``.

What it owns: making the plan document of a create or an update (the engine's
previews, nested stacks always followed, the outputs before and after, the stack's
fingerprint and the inputs that make it); applying a saved plan: refused, saying why,
when the stack changed since (its fingerprint), when a stack of the name was created
since (a create's), or when the inputs no longer make the same plan; otherwise the
create or update of exactly those inputs, as any other.

What it must not do: decide what changes (engine.preview does) or run the action
itself (``stack_actions``' ``create_stack``/``update_stack``/``import_stack`` do, with
their own checks).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stoker import plan_contents as contents
from stoker.engine import drift, implementations, preview
from stoker.engine import imports as imports_check
from stoker.engine.engine import Engine
from stoker.engine.errors import ActionInProgressError, StackExistsError
from stoker.engine.events import Listener
from stoker.engine.outputs import resolve_outputs
from stoker.engine.validation import ValidationContext
from stoker.environment.environment import Environment
from stoker.environment.registry import ResourceRegistry
from stoker.masking import HiddenValues
from stoker.plans import diff
from stoker.plans import document as plan_document
from stoker.plans.errors import PlanError, StalePlanError
from stoker.plans.fingerprint import fingerprint
from stoker.previews import StackPreviews
from stoker.reads import Project, StackReads
from stoker.request_checks import RequestChecks
from stoker.sdk.exceptions import StokerError, ValidationError
from stoker.sdk.properties import UNRESOLVED
from stoker.stack_actions import StackActions
from stoker.stack_copies import StackCopies
from stoker.stack_requests import Source, check_stack_name
from stoker.store import StackRecord, Store
from stoker.store.repository import utcnow
from stoker.template.functions.base import resolve
from stoker.template.hot import Template

# How many differences a refusal names before "and N more".
_SHOWN_DIFFERENCES = 5


class PlanActions:
    """Plans of a ``Service``'s stacks: requests judged by ``checks``, made from the
    engine's previews as ``previews`` makes them, stacks found by ``reads``, snapshots
    by ``copies``; a plan applied is the create, update or import of ``actions``."""

    def __init__(
        self,
        store: Store,
        engine: Engine,
        registry: ResourceRegistry,
        checks: RequestChecks,
        previews: StackPreviews,
        reads: StackReads,
        copies: StackCopies,
        actions: StackActions,
    ):
        self.store = store
        self.engine = engine
        self.registry = registry
        self.checks = checks
        self.previews = previews
        self.reads = reads
        self.copies = copies
        self.actions = actions

    def plan_create(
        self,
        name: str,
        template: Source,
        environments: Sequence[Source] = (),
        parameters: Mapping[str, Any] | None = None,
        files: Mapping[str, str] | None = None,
        disable_rollback: bool | None = None,
        timeout_mins: int | None = None,
        tags: Sequence[str] | None = None,
        project_id: str = "",
    ) -> dict[str, Any]:
        """The create's preview (``preview_create``'s body) with its ``plan``: every
        resource of the stack and of its nested stacks, with its values, and each output."""
        check_stack_name(name)
        if self.store.find_stack(name, project_id) is not None:  # names are unique per project
            raise StackExistsError(name)
        parsed = self.checks.parse_template(template, files)
        environment = self.checks.parse_environments(environments, parsed, files)
        user = dict(parameters or {})
        self.checks.check_limits(parsed)
        result = self.checks.validate_stack(parsed, environment, user)
        hidden = HiddenValues.of(
            parsed.parameters,
            user,
            result.params,
            environment.parameters,
            environment.parameter_defaults,
        )
        body = self.previews.create_plan(result, parsed, environment, hidden)
        context = ValidationContext(
            result.template, result.params, result.classes, [], self.registry
        )
        outputs = {
            output.name: _output(output, context) for output in result.template.outputs.values()
        }
        resources = plan_document.resource_entries(contents.create_changes(result, self.registry))
        stack = {"name": name, "id": None, "state": None, "updated_time": None, "fingerprint": None}
        plan = hidden.data(
            self._document(
                "create", stack, resources, plan_document.output_entries(None, outputs), body
            )
        )
        plan["inputs"] = contents.plan_inputs(
            template,
            environments,
            parameters,
            files,
            False,
            (),
            disable_rollback,
            timeout_mins,
            tags,
        )
        return {**body, "plan": contents.as_json(plan)}

    def plan_update(
        self,
        name_or_id: str,
        template: Source | None = None,
        environments: Sequence[Source] = (),
        parameters: Mapping[str, Any] | None = None,
        files: Mapping[str, str] | None = None,
        existing: bool = False,
        show_nested: bool = False,
        clear_parameters: Sequence[str] = (),
        disable_rollback: bool | None = None,
        timeout_mins: int | None = None,
        tags: Sequence[str] | None = None,
        project: Project | None = None,
        converge: bool = False,
    ) -> dict[str, Any]:
        """The update's preview (``preview_update``'s body) with its ``plan``: every
        resource, nested stacks' always, and each output, old -> new. ``converge``: from
        the live objects, as that update would start (a drift detection runs first)."""
        stack = self.reads.get_stack(name_or_id, project)
        made_from = fingerprint(self.store, stack)
        parsed, environment, user, _ = self.checks.update_request(
            stack, template, environments, parameters, files, existing, clear_parameters
        )
        if converge:
            self._refuse_busy(stack)
        current, runtime, hidden = self.previews.update_runtime(
            stack, parsed, environment, user, converge
        )
        hidden = hidden.with_values_of(self.reads.hidden_values(stack))
        body, plan = self._update_plan("update", stack, made_from, current, runtime, parsed, environment, hidden, show_nested)
        plan["inputs"] = contents.plan_inputs(
            template,
            environments,
            parameters,
            files,
            existing,
            clear_parameters,
            disable_rollback,
            timeout_mins,
            tags,
        )
        if converge:
            plan["inputs"]["converge"] = True
        return {**body, "plan": contents.as_json(plan)}

    def _update_plan(
        self, operation: str, stack: StackRecord, made_from: str, current: Any, runtime: Any,
        parsed: Template, environment: Environment, hidden: HiddenValues, show_nested: bool = False,
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """An update's (or a restore's) preview body and plan document, from the stack's
        runtime now (``current``) to the one the action would make (``runtime``)."""
        from stoker.engine.nested_preview import with_nested

        planned = preview.preview_update(runtime, current.template)
        contents.condition_reasons(planned, parsed)
        everything = with_nested(self.engine, runtime, planned)
        body = implementations.with_update_preview(
            hidden.data(preview.as_result(everything if show_nested else planned)),
            current.template,
            current.environment,
            parsed,
            environment,
        )
        old_outputs = {entry["output_key"]: entry.get("output_value") for entry in resolve_outputs(current)}
        new_outputs = {output.name: _output(output, runtime) for output in runtime.template.outputs.values()}
        resources = plan_document.resource_entries(everything)
        outputs = plan_document.output_entries(old_outputs, new_outputs)
        return body, hidden.data(self._document(operation, contents.stack_state(stack, made_from), resources, outputs, body))

    def plan_restore(self, name_or_id: str, snapshot_id: str, project: Project | None = None) -> dict[str, Any]:
        """What restoring the stack to snapshot ``snapshot_id`` would do, as ``{"plan":
        ...}`` (operation ``restore``): the update to the snapshot's template and
        parameters that the restore runs, each resource as its type restores it
        (``handle_restore``), nested stacks followed; shown, not applied."""
        from stoker.engine.snapshot import restored_definitions
        from stoker.engine.stack import parameter_values

        stack = self.reads.get_stack(name_or_id, project)
        record = self.copies.get_snapshot(stack.id, snapshot_id)
        if record.status != "COMPLETE":
            raise ValidationError(f"Snapshot {snapshot_id} is {record.status}: only a complete snapshot can be restored")
        made_from = fingerprint(self.store, stack)
        data = record.data or {}
        parsed = Template.from_data(data.get("template") or {}, data.get("files") or {})
        environment = Environment.from_dict(data.get("environment") or {})
        user = dict(data.get("parameters") or {})
        params = parameter_values(parsed, environment, user, stack.name, stack.id, stack.project_id)
        current = self.engine.load_runtime(stack)
        runtime = preview.preview_runtime(current, parsed.with_conditions(params), params)
        runtime.environment, runtime.aliases = environment, environment.type_aliases()
        restored_definitions(runtime, data)
        hidden = HiddenValues.of(parsed.parameters, user, params, environment.parameters, environment.parameter_defaults)
        _, plan = self._update_plan("restore", stack, made_from, current, runtime, parsed, environment, hidden.with_values_of(self.reads.hidden_values(stack)))
        return {"plan": contents.as_json(plan)}

    def plan_refresh(self, name_or_id: str, project: Project | None = None) -> dict[str, Any]:
        """What ``refresh_stack`` would take into the stack now, as ``{"plan": ...}``
        (operation ``refresh``): a drift detection runs (and is kept as the stack's
        last), nothing else is written."""
        stack = self.reads.get_stack(name_or_id, project)
        self._refuse_busy(stack)
        made_from = fingerprint(self.store, stack)
        _, results = drift.examine(self.engine, self.store, stack)
        return {"plan": self._refresh_document(stack, made_from, results)}

    def refresh_stack(self, name_or_id: str, project: Project | None = None) -> dict[str, Any]:
        """Take the live objects' values into what the stack holds, changing nothing in
        the cloud (Terraform's refresh-only apply; ``engine.drift.absorb``): each
        resource that drifted holds its live values, one whose object is gone is marked
        CHECK_FAILED. ``{"plan": ...}`` of what was taken (``done``: true)."""
        stack = self.reads.get_stack(name_or_id, project)
        self._refuse_busy(stack)
        made_from = fingerprint(self.store, stack)
        _, results = drift.absorb(self.engine, self.store, stack, refresh=True)
        plan = self._refresh_document(stack, made_from, results)
        plan["done"] = True
        return {"plan": plan}

    def plan_import(
        self,
        name: str,
        template: Source,
        imports: Mapping[str, str],
        environments: Sequence[Source] = (),
        parameters: Mapping[str, Any] | None = None,
        files: Mapping[str, str] | None = None,
        accept_differences: bool = False,
        project_id: str = "",
    ) -> dict[str, Any]:
        """What ``import_stack`` would do, as ``{"plan": ...}`` (operation ``import``):
        each imported resource ``import`` with its differences, template against live
        (old: the live value, new: the template's), the others ``create`` with their
        values, and the outputs. Its objects are read; nothing is stored. An object gone
        or unreadable refuses the plan as it would the import."""
        checked = self.checks.import_request(name, template, imports, environments, parameters, files, project_id)
        if checked.problems:
            raise ValidationError(imports_check.refusal(checked.problems, {}, True) or "", hint="name objects that exist")
        result, parsed, environment = checked.result, checked.parsed, checked.environment
        hidden = HiddenValues.of(parsed.parameters, parameters, result.params, environment.parameters, environment.parameter_defaults)
        body = self.previews.create_plan(result, parsed, environment, hidden)
        resources = plan_document.resource_entries(contents.create_changes(result, self.registry))
        for entry in resources:
            physical_id = checked.imports.get(entry["address"])
            if physical_id is None:
                continue
            differing = checked.found.get(entry["address"]) or []
            entry["action"], entry["changes"] = "import", [
                leaf for drifted in differing for leaf in diff.changes(f"properties.{drifted.name}", drifted.actual, drifted.expected)
            ]
            if not differing:
                entry["reason"] = f"takes over {physical_id} (as the template describes it)"
            elif accept_differences:
                entry["reason"] = f"takes over {physical_id}; it differs from the template, the stack holds the template's values (differences accepted)"
            else:
                entry["reason"] = f"takes over {physical_id}; it differs from the template: the import is refused without --accept-differences"
        context = ValidationContext(result.template, result.params, result.classes, [], self.registry)
        outputs = {output.name: _output(output, context) for output in result.template.outputs.values()}
        stack = {"name": name, "id": None, "state": None, "updated_time": None, "fingerprint": None}
        plan = hidden.data(self._document("import", stack, resources, plan_document.output_entries(None, outputs), body))
        plan["inputs"] = {
            **contents.plan_inputs(template, environments, parameters, files),
            "resources": dict(checked.imports),
            "accept_differences": bool(accept_differences),
        }
        return {**body, "plan": contents.as_json(plan)}

    def plan_stack_action(self, name_or_id: str, action: str, project: Project | None = None) -> dict[str, Any]:
        """What a suspend, resume, check or delete of the stack would do to each resource
        (``engine.action_preview``), nested stacks' too, as ``{"plan": ...}`` (operation
        the action's name): shown before the action, not applied."""
        from stoker.engine.action_preview import VERBS, preview_action
        from stoker.engine.states import Action

        wanted = next((known for known in VERBS if str(known).lower() == str(action).lower()), None)
        if wanted is None:
            raise ValidationError(
                f"No plan of a {action!r}: a plan is made of {', '.join(VERBS.values())} (and of create, update and refresh)",
                hint="ask for one of those",
            )
        stack = self.reads.get_stack(name_or_id, project)
        state = contents.stack_state(stack, fingerprint(self.store, stack))
        resources = preview_action(self.engine, stack, Action(wanted))
        document = self._document(VERBS[wanted], state, resources, [], {})
        return {"plan": contents.as_json(self.reads.hidden_values(stack).data(document))}

    def _refresh_document(self, stack: StackRecord, made_from: str, results: Any) -> dict[str, Any]:
        state = contents.stack_state(stack, made_from)
        plan = self._document("refresh", state, plan_document.refresh_entries(results), [], {})
        plan["inputs"] = {**contents.plan_inputs(None, (), None, None, existing=True), "refresh_only": True}
        return contents.as_json(plan)

    @staticmethod
    def _refuse_busy(stack: StackRecord) -> None:
        """A detection reads resources that are changing while an action runs."""
        if stack.status == "IN_PROGRESS":
            raise ActionInProgressError(stack.name, stack.state)

    @staticmethod
    def _document(
        operation: str,
        stack: dict[str, Any],
        resources: list[dict[str, Any]],
        outputs: list[dict[str, Any]],
        body: Mapping[str, Any],
    ) -> dict[str, Any]:
        document: dict[str, Any] = {
            "format": plan_document.FORMAT,
            "version": plan_document.VERSION,
            "operation": operation,
            "created_at": utcnow().isoformat(),
            "stack": stack,
            "resources": resources,
            "outputs": outputs,
            "summary": plan_document.summary(resources),
        }
        for key in ("resource_changes", "implementations", "implementation_changes"):
            if key in body:
                document[key] = body[key]
        return document

    def apply_plan(
        self,
        saved: Any,
        project: Project | None = None,
        listeners: Sequence[Listener] = (),
        on_created: Callable[[StackRecord], None] | None = None,
    ) -> StackRecord:
        """Run the create or update a saved plan describes, with its inputs; refused
        (``StalePlanError``) when the stack changed since the plan was made, or the
        same inputs would now make another plan."""
        plan = plan_document.read(saved)
        request = contents.request_of(plan["inputs"])
        name, project_id = plan["stack"]["name"], project.id if project is not None else ""
        hint = "make a new plan (stack create/update --dry-run --plan-out) and review it"
        if plan["operation"] in ("import", "create") and self.store.find_stack(name, project_id) is not None:
            raise StalePlanError(
                f"The plan is stale: a stack named {name} was created since the plan was made", hint=hint
            )
        if plan["operation"] == "import":
            fresh = self.plan_import(
                name,
                request["template"],
                request["resources"],
                request["environments"],
                request["parameters"],
                request["files"],
                request["accept_differences"],
                project_id=project_id,
            )["plan"]
        elif plan["operation"] == "create":
            fresh = self.plan_create(
                name,
                request["template"],
                request["environments"],
                request["parameters"],
                request["files"],
                request["disable_rollback"],
                request["timeout_mins"],
                request["tags"],
                project_id=project_id,
            )["plan"]
        else:
            stack = self._planned_stack(plan, project)
            if plan["operation"] == "refresh":
                self._refuse_busy(stack)
            now = fingerprint(self.store, stack)
            if now != plan["stack"].get("fingerprint"):
                was = plan["stack"].get("state") or "?"
                when = plan["stack"].get("updated_time") or "?"
                changed = contents.changed_time(stack) or "?"
                raise StalePlanError(
                    f"The plan is stale: stack {stack.name} changed since the plan was made "
                    f"(it was {was}, last changed {when}; it is {stack.state} now, last changed {changed})",
                    hint=hint,
                )
            if plan["operation"] == "refresh":
                fresh = self.plan_refresh(stack.id, project)["plan"]
            else:
                fresh = self.plan_update(
                    stack.id,
                    request["template"],
                    request["environments"],
                    request["parameters"],
                    request["files"],
                    request["existing"],
                    clear_parameters=request["clear_parameters"],
                    disable_rollback=request["disable_rollback"],
                    timeout_mins=request["timeout_mins"],
                    tags=request["tags"],
                    project=project,
                    converge=request["converge"],
                )["plan"]
        differences = contents.differences(plan, fresh)
        if differences:
            shown = "; ".join(differences[:_SHOWN_DIFFERENCES]) + (
                f"; and {len(differences) - _SHOWN_DIFFERENCES} more"
                if len(differences) > _SHOWN_DIFFERENCES
                else ""
            )
            raise StalePlanError(
                f"The plan is stale: its inputs would now make another plan ({shown})", hint=hint
            )
        if plan["operation"] == "refresh":
            self.refresh_stack(stack.id, project)
            return self.reads.get_stack(stack.id, project)
        if plan["operation"] == "import":
            return self.actions.import_stack(
                name,
                request["template"],
                request["resources"],
                request["environments"],
                request["parameters"],
                request["files"],
                request["accept_differences"],
                listeners=listeners,
                project_id=project_id,
            )
        if plan["operation"] == "create":
            return self.actions.create_stack(
                name,
                request["template"],
                request["environments"],
                request["parameters"],
                request["files"],
                disable_rollback=request["disable_rollback"] is not False,
                timeout_mins=request["timeout_mins"],
                tags=request["tags"] or (),
                listeners=listeners,
                on_created=on_created,
                project_id=project_id,
            )
        return self.actions.update_stack(
            plan["stack"]["id"],
            request["template"],
            request["environments"],
            request["parameters"],
            request["files"],
            request["existing"],
            listeners=listeners,
            clear_parameters=request["clear_parameters"],
            disable_rollback=request["disable_rollback"],
            timeout_mins=request["timeout_mins"],
            tags=request["tags"],
            converge=request["converge"],
        )

    def _planned_stack(self, plan: Mapping[str, Any], project: Project | None) -> StackRecord:
        """The stack an update's plan was made for: by its id (a stack deleted and made
        again under the name is another stack)."""
        stack_id = plan["stack"].get("id")
        if not isinstance(stack_id, str):
            raise PlanError(
                "the plan of an update names no stack id",
                hint="save the plan again with --plan-out",
            )
        try:
            return self.reads.get_stack(stack_id, project)
        except StokerError:
            raise StalePlanError(
                f"The plan is stale: stack {plan['stack']['name']} ({stack_id}) is gone since the plan was made",
                hint="make a new plan (stack create/update --dry-run --plan-out) and review it",
            )


def _output(output: Any, context: Any) -> Any:
    """An output's value after the action: ``UNRESOLVED`` where only the action will
    know it (an error is a value the plan cannot tell either)."""
    try:
        return resolve(output.value, context)
    except Exception:  # noqa: BLE001 - a plugin's attribute code may raise anything
        return UNRESOLVED
