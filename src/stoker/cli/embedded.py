"""The embedded backend: the engine runs in this process, on the local store
(``stoker.service.Service``), and answers in the API's shapes by the API's own view
functions (``stoker.api.views``), so a command prints the same as against a server.

What only the embedded engine does stays here: a command that changes stacks first
finishes the actions an engine that stopped mid-way left IN_PROGRESS (``recover``),
a read says which stacks wait for that, and a delete of a stack that recovery just
deleted counts as done. Links in the bodies are ``embedded:///v1/{project}/...``: no
server answers them, but they name stacks as a server's do.

The engine acts in one project (``Settings.project``, ``--project``): stacks are made
in it, and a name given on the command line is found in it only (then the stack is
named by its id), so no command reaches another project's stack by name. Every project's
stacks are listed only when asked (``--all-projects``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import quote

import click

from stoker.api import views
from stoker.cli.backend import Backend, EventCallback, StackRequest, _ignore, close_names
from stoker.cli.backend import Source as FileSource
from stoker.cli.invocation import message
from stoker.engine.states import Action
from stoker.reads import Project
from stoker.sdk.exceptions import ValidationError
from stoker.service import Service, Source
from stoker.store import EventRecord, StackRecord
from stoker.store.stale import fresh
from stoker.template import loader


def _template(request: StackRequest) -> Source | None:
    """The request's template as the engine takes it."""
    found = request.template
    return Source(found.text, found.name) if found is not None else None


def _given_template(request: StackRequest) -> Source:
    """The template of a request that must have one (an import's: ``-t`` is required)."""
    found = _template(request)
    if found is None:
        raise ValidationError("A template is needed", hint="give one with -t")
    return found


def _environments(request: StackRequest) -> list[Source]:
    return [Source(found.text, found.name) for found in request.environments]


def _sent(request: StackRequest) -> dict[str, Any]:
    """What every request about a template gives the service, as its keyword
    arguments: the template, the environments, the parameters and the files."""
    return {"template": _template(request), "environments": _environments(request), "parameters": request.parameters, "files": request.files}


class _Links:
    """What the API's views need of a call: the service and the URLs of links."""

    def __init__(self, service: Service, project: str):
        self.service = service
        self.project = project

    def url(self, *parts: str) -> str:
        return "/".join(["embedded://", "v1", quote(self.project, safe=""), *(quote(part, safe="") for part in parts)])

    def stack_url(self, stack: StackRecord, *parts: str) -> str:
        return self.url("stacks", stack.name, stack.id, *parts)

    def link(self, href: str, rel: str = "self") -> dict[str, str]:
        return {"href": href, "rel": rel}


class EmbeddedBackend(Backend):
    where = "the embedded engine"

    def __init__(self, service: Service, recovered: Sequence[StackRecord] = ()):
        self.service = service
        self.project = Project(service.settings.project)
        self.links = _Links(service, self.project.id)
        self.recovered = list(recovered)
        self._stacks: dict[str, StackRecord] = {}
        # The stack a create or update of this command acts on (for a Ctrl-C to cancel).
        self.acting_on: str | None = None

    @classmethod
    def open(cls, settings: Any, recover: bool, progress: Callable[[], EventCallback]) -> EmbeddedBackend:
        """The engine on ``settings``' store. ``recover``: finish the actions a stopped
        engine left IN_PROGRESS first (a command that changes stacks); else only say
        which stacks wait for that."""
        import os

        from stoker.cli import engine_log

        engine_log.send_to_file(settings.database_url)
        service = Service(settings)
        abandoned = service.abandoned_stacks()
        recovered: list[StackRecord] = []
        if abandoned and not os.environ.get("STOKER_NO_RECOVERY"):
            names = ", ".join(f"{s.name} ({s.state})" for s in abandoned)
            if not recover:
                message("note", f"NOTE: actions interrupted by an engine restart: {names}; the next stoker command that changes stacks finishes them")
            else:
                message("note", f"Resuming actions interrupted by an engine restart: {names}")
                backend = cls(service)
                recovered = service.recover(listeners=[backend._listener(progress())])
                for stack in recovered:
                    click.echo(f"Stack {stack.name} {stack.state}: {stack.status_reason}", err=True)
        return cls(service, recovered)

    def close(self) -> None:
        self.service.close()

    # -- bodies ----------------------------------------------------------------------

    def _owner(self, stack_id: str) -> StackRecord | None:
        if stack_id not in self._stacks:
            found = self.service.store.get_stack(stack_id)
            if found is None:
                return None
            self._stacks[stack_id] = found
        return self._stacks[stack_id]

    def _event(self, event: EventRecord, root: StackRecord | None = None, detail: bool = False) -> dict[str, Any]:
        owner = self._owner(event.stack_id) or root
        assert owner is not None
        return views.event_body(self.links, owner, event, detail=detail, root=root)

    def _listener(self, on_event: EventCallback) -> Callable[[EventRecord], None]:
        def listen(event: EventRecord) -> None:
            # A stack's row may change name or state: look its events' owner up afresh.
            self._stacks.pop(event.stack_id, None)
            on_event(self._event(event))

        return listen

    def _detail(self, stack: StackRecord) -> dict[str, Any]:
        return views.stack_detail(self.links, stack)

    def _summary(self, stack: StackRecord, with_project: bool = False) -> dict[str, Any]:
        return views.stack_summary(self.links, stack, with_project)

    def _stack(self, name: str) -> StackRecord:
        """The live stack ``name`` (a name or an id) names in this engine's project."""
        from stoker.engine.errors import StackNotFoundError

        try:
            return self.service.get_stack(name, self.project)
        except StackNotFoundError as error:
            try:
                suggestion = close_names(name, [stack.name for stack in self.service.list_stacks(project=self.project)])
            except Exception:  # noqa: BLE001 - a suggestion must never hide the error it adds to
                suggestion = None
            if suggestion:
                error.hint = f"{suggestion} See 'stoker stack list'"
            raise

    def _id(self, name: str) -> str:
        """The id of the stack ``name`` names in this engine's project: what the
        service is given, so that no name reaches another project's stack."""
        return self._stack(name).id

    # -- limits and stacks -----------------------------------------------------------

    def limits(self) -> loader.Limits:
        return self.service.limits()

    def list_stacks(self, nested: bool = False, hidden: bool = False, deleted: bool = False, all_projects: bool = False) -> list[dict[str, Any]]:
        stacks = self.service.list_stacks(nested=nested, hidden=hidden, deleted=deleted, project=None if all_projects else self.project)
        return [self._summary(stack, with_project=all_projects) for stack in stacks]

    def identify_stack(self, name: str) -> tuple[str, str]:
        stack = self._stack(name)
        return stack.name, stack.id

    def get_stack(self, name: str) -> dict[str, Any]:
        return fresh(lambda: self._detail(self._stack(name)))

    def stack_owner(self, stack_id: str) -> tuple[str, str] | None:
        found = self.service.store.get_stack(stack_id)
        if found is None or not found.owner_id or not found.owner_resource:
            return None
        return found.owner_id, found.owner_resource

    def create_stack(self, name: str, request: StackRequest, on_event: EventCallback = _ignore) -> dict[str, Any]:
        assert request.template is not None
        stack = self.service.create_stack(
            name,
            **_sent(request),
            disable_rollback=request.disable_rollback is not False,
            timeout_mins=request.timeout_mins,
            tags=request.tags or [],
            project_id=self.project.id,
            listeners=[self._listener(on_event)],
            on_created=lambda made: setattr(self, "acting_on", made.id),
        )
        return self._detail(stack)

    def update_stack(self, name: str, request: StackRequest, existing: bool, on_event: EventCallback = _ignore) -> dict[str, Any]:
        self.acting_on = self._id(name)
        stack = self.service.update_stack(self.acting_on,
            **_sent(request),
            existing=existing,
            listeners=[self._listener(on_event)],
            clear_parameters=request.clear_parameters,
            disable_rollback=request.disable_rollback,
            timeout_mins=request.timeout_mins,
            tags=request.tags,
            converge=request.converge,
        )
        return self._detail(stack)

    def preview_create(self, name: str, request: StackRequest) -> dict[str, Any]:
        """As Heat's preview: a name taken is refused, as the create would be."""
        from stoker.engine.errors import StackExistsError

        assert request.template is not None
        if self.service.store.find_stack(name, self.project.id) is not None:
            raise StackExistsError(name)
        return self.service.plan_create(
            name, **_sent(request), disable_rollback=request.disable_rollback, timeout_mins=request.timeout_mins, tags=request.tags, project_id=self.project.id
        )

    def preview_update(self, name: str, request: StackRequest, existing: bool, show_nested: bool = False) -> dict[str, Any]:
        return self.service.plan_update(
            self._id(name), **_sent(request), existing=existing, show_nested=show_nested, clear_parameters=request.clear_parameters,
            disable_rollback=request.disable_rollback, timeout_mins=request.timeout_mins, tags=request.tags, converge=request.converge,
        )

    def plan_action(self, name: str, action: str, snapshot_id: str | None = None) -> dict[str, Any]:
        if action == "restore":
            return self.service.plan_restore(self._id(name), snapshot_id or "", self.project)
        return self.service.plan_stack_action(self._id(name), action, self.project)

    def refresh_stack(self, name: str, dry_run: bool) -> dict[str, Any]:
        if dry_run:
            return self.service.plan_refresh(self._id(name), self.project)
        return self.service.refresh_stack(self._id(name), self.project)

    def apply_plan(self, plan: dict[str, Any], on_event: EventCallback = _ignore) -> dict[str, Any]:
        if plan.get("operation") == "update" and isinstance((plan.get("stack") or {}).get("id"), str):
            self.acting_on = plan["stack"]["id"]  # what a Ctrl-C cancels
        stack = self.service.apply_plan(plan, self.project, listeners=[self._listener(on_event)], on_created=lambda made: setattr(self, "acting_on", made.id))
        return self._detail(stack)

    def delete_stack(self, name: str, on_event: EventCallback = _ignore) -> dict[str, Any]:
        for stack in self.recovered:
            # This command's recovery just finished the stack's interrupted delete.
            if name in (stack.name, stack.id) and stack.state == "DELETE_COMPLETE":
                return self._summary(stack)
        return self._summary(self.service.delete_stack(self._id(name), listeners=[self._listener(on_event)]))

    def stack_action(self, name: str, action: str, on_event: EventCallback = _ignore) -> dict[str, Any]:
        return self._summary(self.service.stack_action(self._id(name), Action(action.upper()), listeners=[self._listener(on_event)]))

    def cancel_stack(self, name: str, rollback: bool) -> dict[str, Any]:
        return self._summary(self.service.cancel_stack(self._id(name), rollback=rollback))

    def cancel_acting(self, give_up: Callable[[], bool]) -> tuple[StackRecord, bool] | None:
        """Cancel the create or update this command runs (a Ctrl-C), as ``stoker stack
        cancel`` does, rolling back as the stack says (disable_rollback): (the stack, it
        rolls back). Asked again until the engine has the action running, or
        ``give_up()``; None when the action ended first. Called on a thread of its own."""
        import time

        from stoker.sdk.exceptions import ValidationError

        while not give_up():
            found = self.service.store.get_stack(self.acting_on) if self.acting_on else None
            if found is not None:
                try:
                    self.service.cancel_stack(found.id, rollback=not found.disable_rollback)
                    return found, not found.disable_rollback
                except ValidationError:
                    pass  # not running yet (or no more)
            time.sleep(0.05)
        return None

    def left_state(self) -> str | None:
        """The state the acted-on stack is left in when this process leaves at once (a
        second Ctrl-C): nothing more is written from here on. None when unknown."""
        return self.service.store.left_stack_state(self.acting_on) if self.acting_on else None

    def export_stack(self, name: str) -> dict[str, Any]:
        return self.service.export_stack(self._id(name))

    def detect_drift(self, name: str) -> dict[str, Any]:
        from stoker.api.views import drift_body

        stack = self._stack(name)
        return drift_body(stack, self.service.detect_drift(stack.id))["drift"]

    def last_drift(self, name: str) -> dict[str, Any] | None:
        from stoker.api.views import drift_body

        stack = self._stack(name)
        record = self.service.last_drift(stack.id)
        return None if record is None else drift_body(stack, record)["drift"]

    def abandon_stack(self, name: str) -> dict[str, Any]:
        return self.service.abandon_stack(self._id(name))

    def adopt_stack(self, name: str, data: dict[str, Any], request: StackRequest, on_event: EventCallback = _ignore) -> dict[str, Any]:
        stack = self.service.adopt_stack(
            name,
            data,
            _environments(request),
            request.parameters,
            disable_rollback=request.disable_rollback is not False,
            timeout_mins=request.timeout_mins,
            listeners=[self._listener(on_event)],
            project_id=self.project.id,
        )
        return self._detail(stack)

    def preview_import(self, name: str, request: StackRequest, imports: dict[str, str], accept_differences: bool) -> dict[str, Any]:
        return self.service.plan_import(
            name, _given_template(request), imports, _environments(request), request.parameters, request.files, accept_differences, project_id=self.project.id
        )

    def import_stack(
        self, name: str, request: StackRequest, imports: dict[str, str], accept_differences: bool, on_event: EventCallback = _ignore
    ) -> dict[str, Any]:
        stack = self.service.import_stack(
            name,
            _given_template(request),
            imports,
            _environments(request),
            request.parameters,
            files=request.files,
            accept_differences=accept_differences,
            listeners=[self._listener(on_event)],
            project_id=self.project.id,
        )
        return self._detail(stack)

    def template_of(self, name: str) -> Any:
        return fresh(lambda: self.service.template_of(self._id(name)))

    def environment_of(self, name: str) -> Any:
        return fresh(lambda: self.service.environment_of(self._id(name)))

    def files_of(self, name: str) -> dict[str, str]:
        return fresh(lambda: self.service.files_of(self._stack(name)))

    # -- resources -------------------------------------------------------------------

    def _required_by(self, stack: StackRecord) -> dict[str, list[str]]:
        try:
            return self.service.required_by(stack)
        except Exception:  # noqa: BLE001 - a stack whose template no longer loads still lists its resources (as the API)
            return {}

    def _resource_bodies(self, pairs: list[tuple[StackRecord, Any]], detail: bool = False) -> list[dict[str, Any]]:
        required: dict[str, dict[str, list[str]]] = {}
        children: dict[str, dict[str, StackRecord]] = {}
        bodies = []
        for owner, record in pairs:
            if owner.id not in required:
                required[owner.id] = self._required_by(owner)
                children[owner.id] = {child.owner_resource or "": child for child in self.service.store.child_stacks(owner.id)}
            nested = children[owner.id].get(record.name)
            nested = nested if nested is not None and nested.id == record.physical_resource_id else None
            bodies.append(views.resource_body(self.links, owner, record, required[owner.id].get(record.name, []), nested, detail))
        return bodies

    def list_resources(self, name: str, nested_depth: int = 0, filters: Mapping[str, Sequence[str]] | None = None) -> list[dict[str, Any]]:
        from stoker.api.views import resource_matches

        if nested_depth:
            listed = self.service.list_resources_nested(self._id(name), nested_depth)
        else:
            stack = self._stack(name)
            listed = [(stack, record) for record in self.service.list_resources(stack.id)]
        return self._resource_bodies([(owner, record) for owner, record in listed if resource_matches(record, filters or {})])

    def get_resource(self, name: str, resource_name: str) -> dict[str, Any]:
        from stoker.sdk.exceptions import StokerError

        stack = self._stack(name)
        for record in self.service.list_resources(stack.id):
            if record.name == resource_name:
                [body] = self._resource_bodies([(stack, record)], detail=True)
                body["attributes"] = self.service.resource_attributes(stack, resource_name)
                return body
        raise StokerError(f"The Resource ({resource_name}) could not be found in Stack {stack.name}.", hint=f"see 'stoker stack resource list {stack.name}'")

    def resource_metadata(self, name: str, resource_name: str) -> Any:
        self.get_resource(name, resource_name)
        return self.service.resource_metadata(self._stack(name), resource_name)

    def mark_unhealthy(self, name: str, resource_name: str, unhealthy: bool, reason: str) -> None:
        self.service.mark_unhealthy(self._id(name), resource_name, unhealthy=unhealthy, reason=reason)

    def signal_resource(self, name: str, resource_name: str, details: Mapping[str, Any]) -> None:
        self.service.signal_resource(self._id(name), resource_name, details)

    def clear_hook(self, name: str, resource_name: str, hook: str | None) -> None:
        self.service.clear_hook(self._id(name), resource_name, hook)

    # -- events and outputs ----------------------------------------------------------

    def list_events(self, name: str, resource_name: str | None = None, nested_depth: int = 0) -> list[dict[str, Any]]:
        stack = self._stack(name)
        root = stack if nested_depth else None
        self._stacks[stack.id] = stack
        return [self._event(event, root) for event in self.service.list_events(stack.id, resource_name, nested_depth)]

    def get_event(self, name: str, resource_name: str, event_id: str) -> dict[str, Any] | None:
        stack = self._stack(name)
        for event in self.service.list_events(stack.id, resource_name):
            if event.uuid == event_id:
                return self._event(event, detail=True)
        return None

    def list_outputs(self, name: str) -> list[dict[str, Any]]:
        return [{"output_key": o["output_key"], "description": o["description"]} for o in fresh(lambda: self.service.outputs(self._id(name)))]

    def get_output(self, name: str, output_key: str) -> dict[str, Any] | None:
        found = fresh(lambda: self.service.outputs(self._id(name), [output_key]))
        return found[0] if found else None

    # -- snapshots -------------------------------------------------------------------

    def _snapshot(self, stack: StackRecord, record: Any) -> dict[str, Any]:
        return views.snapshot_body(record, self.service.hidden_values(stack))

    def create_snapshot(self, name: str, snapshot_name: str | None, on_event: EventCallback = _ignore) -> dict[str, Any]:
        record = self.service.create_snapshot(self._id(name), snapshot_name, listeners=[self._listener(on_event)])
        return self._snapshot(self._stack(name), record)

    def list_snapshots(self, name: str) -> list[dict[str, Any]]:
        stack = self._stack(name)
        return [self._snapshot(stack, record) for record in self.service.list_snapshots(stack.id)]

    def get_snapshot(self, name: str, snapshot_id: str) -> dict[str, Any]:
        stack = self._stack(name)
        return self._snapshot(stack, self.service.get_snapshot(stack.id, snapshot_id))

    def delete_snapshot(self, name: str, snapshot_id: str) -> None:
        self.service.delete_snapshot(self._id(name), snapshot_id)

    def restore_snapshot(self, name: str, snapshot_id: str, on_event: EventCallback = _ignore) -> dict[str, Any]:
        return self._detail(self.service.restore_snapshot(self._id(name), snapshot_id, listeners=[self._listener(on_event)]))

    # -- the catalog -----------------------------------------------------------------

    def validate_template(self, request: StackRequest, show_nested: bool) -> dict[str, Any]:
        assert request.template is not None
        notes: list[str] = []
        result, warnings = self.service.validate_template(**_sent(request), show_nested=show_nested, notes=notes)
        if warnings:
            result["Warnings"] = warnings
        if notes:
            result["Notes"] = notes  # what a create would still need (a server: with_notes)
        return result

    def template_versions(self) -> list[dict[str, Any]]:
        from stoker.template.versions import template_versions

        return template_versions()

    def template_functions(self, version: str, with_conditions: bool) -> list[dict[str, Any]] | None:
        from stoker.template.versions import template_functions

        try:
            return template_functions(version, with_condition_functions=with_conditions)
        except KeyError:
            return None

    def resource_types(self, filters: Mapping[str, str] | None = None, with_description: bool = False) -> list[Any]:
        from stoker.api import catalog

        wanted = filters or {}
        names = catalog.listed_types(self.service, wanted.get("name"), wanted.get("support_status"), wanted.get("version"))
        return catalog.described_types(self.service, names) if with_description else names

    def resource_type(self, type_name: str) -> dict[str, Any]:
        from stoker.environment.registry import UnknownResourceTypeError
        from stoker.sdk.exceptions import StokerError

        try:
            return self.service.resource_type_schema(type_name)
        except UnknownResourceTypeError as error:
            raise StokerError(str(error))

    def resource_type_template(self, type_name: str, template_type: str) -> dict[str, Any]:
        from stoker.api import catalog
        from stoker.environment.registry import UnknownResourceTypeError
        from stoker.sdk.exceptions import StokerError

        try:
            return catalog.type_template(self.service, type_name, template_type)
        except UnknownResourceTypeError as error:
            raise StokerError(str(error))

    def find_capabilities(self, files: dict[str, str], requirements: list[tuple[str, str]]) -> dict[str, Any]:
        from stoker.environment.capabilities import find

        matched, skipped = find(files, requirements)
        return {"templates": matched, "skipped": skipped}

    def template_capabilities(self, files: dict[str, str], templates: list[str], environments: list[FileSource]) -> dict[str, Any]:
        from stoker.environment.capabilities import describe_templates

        environment = self.service.parse_environments([Source(e.text, e.name) for e in environments], None, files) if environments else None
        return describe_templates(files, templates, environment)
