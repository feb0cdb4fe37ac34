"""A stack's actions requested: create, update, adopt, import, delete, suspend, resume and
check, and the cancel of a create or update in progress. A part of ``Service``.

What it owns: each request checked (``request_checks``, ``stack_checks``), its template
stored, a new stack's row inserted (with its first job, and its credential, by
``serving``) and its job run (``serving``: to its end here, or in the background of a
server). What it must not do: run the action itself (the engine does), or judge a
template (``request_checks`` does).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stoker.engine import admission, drift
from stoker.engine import imports as imports_check
from stoker.engine.engine import Engine, Job
from stoker.engine.errors import StackExistsError
from stoker.engine.events import Listener
from stoker.engine.states import Action, Status
from stoker.environment.environment import Environment
from stoker.reads import StackReads
from stoker.request_checks import RequestChecks
from stoker.sdk.exceptions import ValidationError
from stoker.serving import Serving
from stoker.settings import Settings
from stoker.stack_checks import check_idle, check_resource_types, check_top_level
from stoker.stack_requests import Source, check_stack_name, new_stack
from stoker.store import StackRecord, Store
from stoker.store.records import TemplateRecord
from stoker.template.hot import Template


class StackActions:
    """The actions of a ``Service``'s stacks: requests judged by ``checks``, stacks
    found by ``reads``, jobs run by ``serving``."""

    def __init__(self, settings: Settings, store: Store, engine: Engine, checks: RequestChecks, reads: StackReads, serving: Serving):
        self.settings = settings
        self.store = store
        self.engine = engine
        self.checks = checks
        self.reads = reads
        self.serving = serving

    def create_stack(
        self,
        name: str,
        template: Source,
        environments: Sequence[Source] = (),
        parameters: Mapping[str, Any] | None = None,
        files: Mapping[str, str] | None = None,
        disable_rollback: bool = True,
        timeout_mins: int | None = None,
        tags: Sequence[str] = (),
        listeners: Sequence[Listener] = (),
        on_created: Callable[[StackRecord], None] | None = None,
        project_id: str = "",
    ) -> StackRecord:
        """``project_id``: the project that makes the stack (the API's tenant), which
        the OS::project_id pseudo parameter gives (Heat's stack identifier's tenant)."""
        check_stack_name(name)
        if self.store.find_stack(name, project_id) is not None:  # names are unique per project
            raise StackExistsError(name)
        parsed = self.checks.parse_template(template, files)
        environment = self.checks.parse_environments(environments, parsed, files)
        user = dict(parameters or {})
        stack = new_stack(name, user, disable_rollback, timeout_mins, tags)
        stack.project_id = project_id
        self.checks.check_limits(parsed)
        self.checks.validate_stack(parsed, environment, user, stack)
        stack.raw_template_id = self._store_template(parsed, dict(files or {}), environment)
        job = Job(stack.id, Action.CREATE)
        job_id = self.serving.insert_stack(stack, delegated=True, job=job)
        if on_created is not None:
            on_created(stack)
        return self.serving.run(job, listeners, job_id)

    def update_stack(
        self,
        name_or_id: str,
        template: Source | None = None,
        environments: Sequence[Source] = (),
        parameters: Mapping[str, Any] | None = None,
        files: Mapping[str, str] | None = None,
        existing: bool = False,
        listeners: Sequence[Listener] = (),
        clear_parameters: Sequence[str] = (),
        disable_rollback: bool | None = None,
        timeout_mins: int | None = None,
        tags: Sequence[str] | None = None,
        converge: bool = False,
    ) -> StackRecord:
        """Update a stack; ``disable_rollback``, ``timeout_mins`` and ``tags``, when
        given, replace the stack's own (the job reads them from the stack row). As in
        Heat, an update that is not ``existing`` (PUT) without tags leaves the stack
        without tags; an ``existing`` one (PATCH) keeps them unless given (``[]`` clears).
        ``converge`` (Heat's): the update starts from the live objects, not from what the
        stack recorded, so what drifted is changed back (``engine/drift.absorb``)."""
        if tags is None and not existing:
            tags = ()
        stack = self.reads.get_stack(name_or_id)
        check_idle(self.store, stack)
        parsed, environment, user, kept_files = self.checks.update_request(stack, template, environments, parameters, files, existing, clear_parameters)
        template_id = self._store_template(parsed, kept_files, environment)
        if converge:
            # After the request is checked (a bad template absorbs nothing), before the job.
            drift.absorb(self.engine, self.store, stack)
        given = {"disable_rollback": disable_rollback, "timeout_mins": timeout_mins, "tags": list(tags) if tags is not None else None}
        changed = {key: value for key, value in given.items() if value is not None}
        # The settings change with the update itself, once its job holds the lock.
        return self.serving.run(Job(stack.id, Action.UPDATE, template_id=template_id, parameters=user, stack_fields=changed), listeners)

    def adopt_stack(
        self,
        name: str,
        adopt_data: Mapping[str, Any],
        environments: Sequence[Source] = (),
        parameters: Mapping[str, Any] | None = None,
        disable_rollback: bool = True,
        timeout_mins: int | None = None,
        listeners: Sequence[Listener] = (),
        project_id: str = "",
    ) -> StackRecord:
        """Make a stack from exported data, taking over its physical resources
        (``project_id`` as for ``create_stack``)."""
        if not self.settings.enable_stack_adopt:
            raise ValidationError("Stack adopt is disabled", hint="set STOKER_ENABLE_STACK_ADOPT=true to allow it")
        if not isinstance(adopt_data, Mapping) or not isinstance(adopt_data.get("template"), Mapping):
            raise ValidationError("The adopt data must be a JSON object with a template and resources (what stack abandon or export gives)")
        if self.store.find_stack(name, project_id) is not None:  # names are unique per project
            raise StackExistsError(name)
        files = dict(adopt_data.get("files") or {})
        parsed = self.checks.parse_template(Source(adopt_data["template"], "adopt data template"), files)
        environment = Environment.from_dict(adopt_data.get("environment")).merge(self.checks.parse_environments(environments, parsed, files))
        user = {**(adopt_data.get("parameters") or {}), **(parameters or {})}
        stack = new_stack(name, user, disable_rollback, timeout_mins, adopt_data.get("tags") or [])
        stack.project_id = project_id
        self.checks.check_limits(parsed)
        self.checks.validate_stack(parsed, environment, user, stack)
        stack.raw_template_id = self.store.store_template(parsed.data, files, environment.to_dict())
        job = Job(stack.id, Action.ADOPT, adopt_data=dict(adopt_data))
        return self.serving.run(job, listeners, self.serving.insert_stack(stack, delegated=True, job=job))

    def import_stack(
        self,
        name: str,
        template: Source,
        imports: Mapping[str, str],
        environments: Sequence[Source] = (),
        parameters: Mapping[str, Any] | None = None,
        files: Mapping[str, str] | None = None,
        accept_differences: bool = False,
        listeners: Sequence[Listener] = (),
        project_id: str = "",
    ) -> StackRecord:
        """Make a stack whose resources named in ``imports`` (resource name -> physical
        id) take over objects that exist already, the rest created (engine/imports.py,
        docs/import.md). The objects' live properties are checked against the template
        first; differences refuse the import unless ``accept_differences``."""
        checked = self.checks.import_request(name, template, imports, environments, parameters, files, project_id)
        # Refused before any stack is made: a refusal leaves nothing to delete.
        refused = imports_check.refusal(checked.problems, checked.found, bool(accept_differences))
        if refused is not None:
            raise ValidationError(refused)
        stack, parsed, environment = checked.stack, checked.parsed, checked.environment
        stack.raw_template_id = self._store_template(parsed, dict(files or {}), environment)
        request = {"resources": checked.imports, "accept_differences": bool(accept_differences)}
        job = Job(stack.id, Action.ADOPT, adopt_data={"import": request})
        return self.serving.run(job, listeners, self.serving.insert_stack(stack, delegated=True, job=job))

    def delete_stack(self, name_or_id: str, listeners: Sequence[Listener] = ()) -> StackRecord:
        stack = self.reads.get_stack(name_or_id)
        check_top_level(self.store, stack)
        check_resource_types(self.engine, stack)
        if self.serving.delegation is not None:
            from stoker.clouds.trusts import acting_user

            self.serving.delegation.deleting(stack.id, acting_user.get())
        return self.serving.run(Job(stack.id, Action.DELETE), listeners)

    def stack_action(self, name_or_id: str, action: Action, listeners: Sequence[Listener] = ()) -> StackRecord:
        """Suspend, resume or check a stack."""
        stack = self.reads.get_stack(name_or_id)
        check_idle(self.store, stack)
        if action in (Action.SUSPEND, Action.RESUME):
            check_resource_types(self.engine, stack)
        # Answered at once here; the job decides again under the stack's lock.
        admission.admit(Job(stack.id, action), stack)
        return self.serving.run(Job(stack.id, action), listeners)

    def cancel_stack(self, name_or_id: str, rollback: bool = True) -> StackRecord:
        """Ask the engine running a create or update to stop it (and roll back)."""
        stack = self.reads.get_stack(name_or_id)
        if stack.status != Status.IN_PROGRESS or stack.action not in (Action.CREATE, Action.UPDATE):
            raise ValidationError(
                f"Stack {stack.name} is {stack.state}: only a create or update in progress can be cancelled"
            )
        if not self.store.request_cancel(stack.id, "rollback" if rollback else "no_rollback"):
            raise ValidationError(f"No engine is running an action on stack {stack.name}")
        return stack

    def _store_template(self, parsed: Template, files: dict[str, str], environment: Environment) -> int:
        body = environment.to_dict()
        template_id = self.store.store_template(parsed.data, files, body)
        self.engine.remember_template(TemplateRecord(template_id, parsed.data, files, body), parsed)
        return template_id
