"""The one place that wires store, registry and engine together for the CLI and API.

Requests are checked here (names, templates, environments, parameters) and turned into
jobs; jobs run in the engine. Read operations go to the store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stoker.engine import admission, implementations
from stoker.engine.clock import Clock
from stoker.engine.engine import Engine, EngineSettings, Job
from stoker.engine.errors import ActionInProgressError, StackExistsError
from stoker.engine.events import Listener, stack_event
from stoker.engine.snapshot import exported_resources
from stoker.engine.states import Action, Status
from stoker.engine.trees import check_tree
from stoker.engine.validation import ValidationResult, check_resource_limit, validate
from stoker.environment import environment as environment_module
from stoker.environment import merge as environment_merge
from stoker.environment.directory import load_default_environment, load_environment_dir
from stoker.environment.environment import Environment
from stoker.environment.plugins import load_plugin_dirs
from stoker.environment.registry import ResourceRegistry
from stoker.identifiers import new_id
from stoker.masking import HiddenValues
from stoker.reads import StackReads
from stoker.resource_actions import ResourceActions
from stoker.resources import builtin_client_mapping, builtin_constraint_mapping
from stoker.resources.index import BUILTIN_TYPES
from stoker.sdk.exceptions import ResourceNotFoundError, ValidationError
from stoker.serving import Serving
from stoker.settings import DEFAULT_PUBLIC_URL, Settings
from stoker.stack_requests import (
    Source,
    check_stack_name,
    nested_parameters,
    new_stack,
    refuse_nul,
    validate_environment,
    validate_parameters,
)
from stoker.store import SnapshotRecord, StackRecord, Store
from stoker.store.records import TemplateRecord
from stoker.store.repository import utcnow
from stoker.store.sealing import Sealer
from stoker.template import evaluation_limits, loader
from stoker.template.errors import TemplateError, TemplateErrors, TemplateLimitError
from stoker.template.hot import Template


def build_registry(settings: Settings) -> ResourceRegistry:
    registry = ResourceRegistry()
    # The built-in types by name; each module is imported when a stack first uses one
    # of its types (resources/index.py).
    registry.register_index(BUILTIN_TYPES)
    registry.clients.register_mapping(builtin_client_mapping(), "stoker.resources")
    registry.constraints.update(builtin_constraint_mapping())
    load_plugin_dirs(registry, settings.plugin_dirs)
    # Beneath every stack's own environment, as Heat's environment_dir: Heat's default
    # environment first, then the operator's files.
    load_default_environment(registry)
    load_environment_dir(registry, settings.environment_dir)
    # Only what the operator turned on: a plugin falls back on the environment
    # (STOKER_ALLOW_IMAGE_URLS) for what these settings leave out.
    registry.client_settings = {"allow_image_urls": True} if settings.allow_image_urls else {}
    if settings.allow_template_urls:
        registry.client_settings["allow_template_urls"] = True
    registry.client_settings["max_template_bytes"] = settings.max_template_bytes
    if settings.loadbalancer_template:
        registry.client_settings["loadbalancer_template"] = settings.loadbalancer_template
    registry.region_name = settings.region_name
    return registry


class Service(ResourceActions, Serving, StackReads):
    """Requests from the CLI and the API: checked here, run as jobs in the engine.
    What only reads (stacks, resources, events, outputs, resource types) is ``StackReads``."""

    def __init__(self, settings: Settings | None = None, clock: Clock | None = None):
        self.settings = settings or Settings.from_env()
        evaluation_limits.configure(self.settings)
        self.store = Store(self.settings.database_url, Sealer.for_database(self.settings.database_url, self.settings.encryption_keys, self.settings.encrypt_parameters_and_properties))
        self.store.migrate()
        # The built-in types' modules are imported when a stack first uses one of their
        # types (resources/index.py): building the registry and the engine costs a read
        # about 10 ms; plugin directories are loaded here, their problems reported at once.
        self.registry = build_registry(self.settings)
        self.engine = Engine(
            self.store,
            self.registry,
            EngineSettings(
                handler_threads=self.settings.handler_threads,
                max_in_flight=self.settings.max_in_flight,
                max_tree_handler_calls=self.settings.tree_handler_calls(),
                max_events_per_stack=self.settings.max_events_per_stack,
                max_nested_depth=self.settings.max_nested_depth,
                max_resources_per_stack=self.settings.max_resources_per_stack,
                public_url=self.settings.public_url or DEFAULT_PUBLIC_URL,
                lock_lease_s=self.settings.lock_lease_s,
            ),
            clock,
        )
        # Where jobs run and whom they act for (serving.py): here, with the settings' cloud.
        self._init_serving()

    def close(self) -> None:
        self.engine.close()
        self.store.close()
        self._release_cloud_source()

    # -- parsing --------------------------------------------------------------

    def limits(self) -> loader.Limits:
        return loader.Limits(max_bytes=self.settings.max_template_bytes, max_expanded_bytes=self.settings.max_template_expanded_bytes)

    def parse_template(self, source: Source, files: Mapping[str, str] | None = None) -> Template:
        try:
            refuse_nul(files, "files")
            if isinstance(source.text, loader.Document):  # parsed by the CLI with self.limits()
                return Template.parse(source.text, files, collect=True)
            if isinstance(source.text, Mapping):
                # The limits of text hold for parsed data too: nesting counted as the
                # loader counts it (the top mapping is level 1), by a walk that cannot
                # recurse, before json.dumps would; size measured as Heat does (its JSON text).
                max_depth = self.limits().max_depth
                pending: list[tuple[Mapping[str, Any] | list[Any], int, str | None]] = [(source.text, 1, source.name)]
                while pending:
                    value, depth, place = pending.pop()
                    if depth > max_depth:
                        raise TemplateLimitError(f"The document is nested more than {max_depth} levels deep", path=place)
                    children = value.items() if isinstance(value, Mapping) else enumerate(value)
                    pending.extend((child, depth + 1, f"{place}.{key}") for key, child in children if isinstance(child, Mapping | list))
                refuse_nul(source.text, source.name)
                size = len(json.dumps(source.text))
                if size > self.settings.max_template_bytes:
                    raise TemplateLimitError(f"Template size ({size} bytes) exceeds maximum allowed size ({self.settings.max_template_bytes} bytes).", hint="STOKER_MAX_TEMPLATE_BYTES")
                return Template.parse(loader.Document(dict(source.text)), files, collect=True)
            return Template.load(source.text, source.name, files, self.limits(), collect=True)
        except TemplateError as error:  # one problem stops reading: report it like the rest
            raise TemplateErrors([error])

    def parse_environments(
        self, sources: Sequence[Source], template: Template | None = None, files: Mapping[str, str] | None = None, loaded: bool = True
    ) -> Environment:
        """The request's environment files combined in order as Heat combines them
        (parameter_merge_strategies by the types of ``template``'s parameters and of the
        templates in ``files``; environment.merge). Not ``loaded``: registry ``null``
        entries are kept, to remove mappings of the stack's own environment."""
        try:
            parsed = [(source.name or f"environment {number}", self._parse_environment(source)) for number, source in enumerate(sources, 1)]
            types = None
            if template is not None and len(parsed) > 1:
                types = environment_merge.parameter_types(template.parameters, files)
            return environment_merge.merge_environments(parsed, types, loaded)
        except TemplateError as error:
            raise TemplateErrors([error])

    def _parse_environment(self, source: Source) -> Environment:
        assert not isinstance(source.text, loader.Document)  # only a template comes parsed (Source)
        if not isinstance(source.text, Mapping):
            return environment_module.parse(source.text, source.name)
        try:
            return environment_module.parse(json.dumps(source.text), source.name)
        except TemplateErrors as problems:
            for error in problems.errors:
                error.location = None  # a line of our JSON text is no place of the user's
            raise

    def validate_template(
        self,
        template: Source,
        environments: Sequence[Source] = (),
        parameters: Mapping[str, Any] | None = None,
        files: Mapping[str, str] | None = None,
        show_nested: bool = False,
        notes: list[str] | None = None,
    ) -> tuple[dict[str, Any], list[str]]:
        """Heat's template-validate result, and the warnings (deprecated things in use).
        As Heat (strict validation off), no parameter value is needed or judged: what
        create would need is appended to ``notes``, not raised. With ``show_nested``,
        ``NestedParameters`` describes each nested stack's template and the values its
        parameters are given, level by level."""
        parsed = self.parse_template(template, files)
        environment = self.parse_environments(environments)
        self._check_limits(parsed)
        result = self._validate(parsed, environment, parameters or {}, strict=False)
        hidden = HiddenValues.of(parsed.parameters, parameters, result.params, environment.parameters, environment.parameter_defaults)
        # Heat's user values: the environment's parameters with the request's on top.
        given = {**environment.parameters, **(parameters or {})}
        body: dict[str, Any] = {
            "Description": parsed.description or "No description",
            "Parameters": validate_parameters(parsed, given, environment.parameter_defaults),
        }
        if parsed.parameter_groups:
            body["ParameterGroups"] = parsed.parameter_groups
        if show_nested and result.nested:
            # A nested parameter fed from a hidden one is masked by value.
            body["NestedParameters"] = hidden.data(nested_parameters(result))
        body["Environment"] = hidden.environment(validate_environment(parsed, environment, given))
        if notes is not None:
            notes.extend(result.notes)
        return body, result.warnings

    # -- actions --------------------------------------------------------------

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
        parsed = self.parse_template(template, files)
        environment = self.parse_environments(environments, parsed, files)
        user = dict(parameters or {})
        stack = new_stack(name, user, disable_rollback, timeout_mins, tags)
        stack.project_id = project_id
        self._check_limits(parsed)
        self._validate(parsed, environment, user, stack)
        stack.raw_template_id = self._store_template(parsed, dict(files or {}), environment)
        job = Job(stack.id, Action.CREATE)
        job_id = self._insert_stack(stack, delegated=True, job=job)
        if on_created is not None:
            on_created(stack)
        return self._run(job, listeners, job_id)

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
    ) -> StackRecord:
        """Update a stack; ``disable_rollback``, ``timeout_mins`` and ``tags``, when
        given, replace the stack's own (the job reads them from the stack row). As in
        Heat, an update that is not ``existing`` (PUT) without tags leaves the stack
        without tags; an ``existing`` one (PATCH) keeps them unless given (``[]`` clears)."""
        if tags is None and not existing:
            tags = ()
        stack = self.get_stack(name_or_id)
        self._check_idle(stack)
        parsed, environment, user, kept_files = self._update_request(stack, template, environments, parameters, files, existing, clear_parameters)
        template_id = self._store_template(parsed, kept_files, environment)
        given = {"disable_rollback": disable_rollback, "timeout_mins": timeout_mins, "tags": list(tags) if tags is not None else None}
        changed = {key: value for key, value in given.items() if value is not None}
        # The settings change with the update itself, once its job holds the lock.
        return self._run(Job(stack.id, Action.UPDATE, template_id=template_id, parameters=user, stack_fields=changed), listeners)

    def preview_create(
        self, name: str, template: Source, environments: Sequence[Source] = (), parameters: Mapping[str, Any] | None = None, files: Mapping[str, str] | None = None
    ) -> dict[str, Any]:
        """What a create would do (everything is added, in the create's order), after the
        same validation."""

        check_stack_name(name)
        parsed = self.parse_template(template, files)
        environment = self.parse_environments(environments, parsed, files)
        result = self._validate(parsed, environment, dict(parameters or {}))
        hidden = HiddenValues.of(parsed.parameters, parameters, result.params, environment.parameters, environment.parameter_defaults)
        return self._create_plan(result, parsed, environment, hidden)

    @staticmethod
    def _create_plan(result: ValidationResult, parsed: Template, environment: Environment, hidden: HiddenValues) -> dict[str, Any]:
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
        parsed = self.parse_template(template, files)
        environment = self.parse_environments(environments, parsed, files)
        user = dict(parameters or {})
        stack = new_stack(name, user, disable_rollback, timeout_mins, tags or ())
        stack.id, stack.project_id = "None", project_id
        self._check_limits(parsed)
        result = self._validate(parsed, environment, user, stack, hand_over=False)  # no action follows
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
            plan.update(self._create_plan(result, parsed, environment, hidden))
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
    ) -> dict[str, Any]:
        """What an update would do to each resource, decided as the update decides; with
        ``show_nested``, to the resources of its nested stacks too (engine.nested_preview)."""
        from stoker.engine import preview
        from stoker.engine.stack import parameter_values

        stack = self.get_stack(name_or_id)
        parsed, environment, user, _ = self._update_request(stack, template, environments, parameters, files, existing)
        current = self.engine.load_runtime(stack)
        params = parameter_values(parsed, environment, user, stack.name, stack.id, stack.project_id)
        runtime = preview.preview_runtime(current, parsed.with_conditions(params), params)
        runtime.environment = environment
        runtime.aliases = environment.type_aliases()
        hidden = HiddenValues.of(parsed.parameters, user, params, environment.parameters, environment.parameter_defaults)
        # where the registry lists candidates: which resources change implementation (seed 003)
        # Old values too: a plan shows each changed property's old value, which may be
        # the stack's hidden parameter's as it was.
        planned = preview.preview_update(runtime, current.template)
        if show_nested:
            from stoker.engine.nested_preview import with_nested

            planned = with_nested(self.engine, runtime, planned)
        changes = self.hidden_values(stack).data(hidden.data(preview.as_result(planned)))
        return implementations.with_update_preview(changes, current.template, current.environment, parsed, environment)

    # -- snapshots ------------------------------------------------------------------

    def create_snapshot(self, name_or_id: str, name: str | None = None, listeners: Sequence[Listener] = ()) -> SnapshotRecord:
        stack = self.get_stack(name_or_id)
        self._check_idle(stack)
        if stack.status != Status.COMPLETE or stack.action in (Action.DELETE, Action.INIT):
            raise ValidationError(f"Stack {stack.name} is {stack.state}: only a stack in a COMPLETE state can be snapshotted")
        record = SnapshotRecord(id=new_id(), stack_id=stack.id, name=name, status="IN_PROGRESS", status_reason="")
        self.store.save_snapshot(record)
        self._run(Job(stack.id, Action.SNAPSHOT, snapshot_id=record.id), listeners)
        return self.get_snapshot(stack.id, record.id)

    def list_snapshots(self, name_or_id: str) -> list[SnapshotRecord]:
        return self.store.list_snapshots(self.get_stack(name_or_id).id)

    def get_snapshot(self, name_or_id: str, snapshot_id: str) -> SnapshotRecord:
        for record in self.list_snapshots(name_or_id):
            if record.id == snapshot_id or record.name == snapshot_id:
                return record
        raise ResourceNotFoundError(f"The Snapshot ({snapshot_id}) could not be found.", hint=f"see 'stoker stack snapshot list {name_or_id}'")

    def delete_snapshot(self, name_or_id: str, snapshot_id: str) -> None:
        stack = self.get_stack(name_or_id)
        record = self.get_snapshot(stack.id, snapshot_id)
        self._call(self.engine.delete_snapshot(stack, record.id))

    def restore_snapshot(self, name_or_id: str, snapshot_id: str, listeners: Sequence[Listener] = ()) -> StackRecord:
        stack = self.get_stack(name_or_id)
        self._check_idle(stack)
        record = self.get_snapshot(stack.id, snapshot_id)
        if record.status != "COMPLETE":
            raise ValidationError(f"Snapshot {snapshot_id} is {record.status}: only a complete snapshot can be restored")
        return self._run(Job(stack.id, Action.RESTORE, snapshot_id=record.id), listeners)

    def export_stack(self, name_or_id: str) -> dict[str, Any]:
        """Everything needed to adopt the stack elsewhere (Heat's abandon/export data)."""
        stack = self.get_stack(name_or_id)
        stored = self.store.get_template(stack.raw_template_id)
        resources = self._exported_resources(stack.id)
        return {
            "id": stack.id,
            "name": stack.name,
            "action": stack.action,
            "status": stack.status,
            "template": stored.template,
            "files": stored.files,
            "environment": stored.environment,
            "parameters": stack.parameters,
            "project_id": stack.project_id,
            "tags": stack.tags,
            "resources": resources,
        }

    def _exported_resources(self, stack_id: str) -> dict[str, Any]:
        """A stack's resources for export; a nested stack's resources under its parent
        resource's ``resources`` (as Heat's abandon data nests them)."""
        resources = exported_resources(self.store.list_resources(stack_id))
        for entry in resources.values():
            # Plain, as Heat exports them: the data is for adopting the stack elsewhere.
            entry["resource_data"] = self.store.sealer.open(entry["resource_data"])[0]
        for child in self.store.child_stacks(stack_id):
            owned = resources.get(child.owner_resource or "")
            if owned is not None and owned["resource_id"] == child.id:
                owned["resources"] = self._exported_resources(child.id)
        return resources

    def abandon_stack(self, name_or_id: str) -> dict[str, Any]:
        """Forget a stack, leaving its physical resources in place; returns the adopt data."""
        if not self.settings.enable_stack_abandon:
            raise ValidationError("Stack abandon is disabled", hint="set STOKER_ENABLE_STACK_ABANDON=true to allow it")
        stack = self.get_stack(name_or_id)
        self._check_idle(stack)

        def abandon(current: StackRecord) -> dict[str, Any]:
            data = self.export_stack(current.id)
            self._forget(current)
            if self.delegation is not None:
                from stoker.resources.openstack.trusts import acting_user

                self.delegation.forget(current, acting_user.get())
            return data

        return self._holding(stack, abandon)

    def _holding(self, stack: StackRecord, change: Callable[[StackRecord], Any]) -> Any:
        """Make a short change to an idle stack under its lock (decided and fenced as a
        job's writes are); ``change`` gets the stack as it is under the lock."""

        async def held() -> Any:
            async with self.engine.holding(stack.id) as current:
                return change(current)

        return self._call(held())

    def _forget(self, stack: StackRecord) -> None:
        """Drop a stack and its nested stacks from the store, leaving resources in place."""
        for child in self.store.child_stacks(stack.id):
            self._forget(child)
        event = stack_event(stack, "DELETE", "COMPLETE", "Stack abandoned: its resources were left in place")
        self.store.delete_resources(stack.id, (r.stored_id for r in self.store.list_resources(stack.id)))
        self.store.update_stack(stack.id, event=event, action="DELETE", status="COMPLETE", status_reason=event.resource_status_reason, deleted_at=utcnow())

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
        parsed = self.parse_template(Source(adopt_data["template"], "adopt data template"), files)
        environment = Environment.from_dict(adopt_data.get("environment")).merge(self.parse_environments(environments, parsed, files))
        user = {**(adopt_data.get("parameters") or {}), **(parameters or {})}
        stack = new_stack(name, user, disable_rollback, timeout_mins, adopt_data.get("tags") or [])
        stack.project_id = project_id
        self._check_limits(parsed)
        self._validate(parsed, environment, user, stack)
        stack.raw_template_id = self.store.store_template(parsed.data, files, environment.to_dict())
        job = Job(stack.id, Action.ADOPT, adopt_data=dict(adopt_data))
        return self._run(job, listeners, self._insert_stack(stack, delegated=True, job=job))

    def delete_stack(self, name_or_id: str, listeners: Sequence[Listener] = ()) -> StackRecord:
        stack = self.get_stack(name_or_id)
        self._check_top_level(stack)
        self._check_resource_types(stack)
        if self.delegation is not None:
            from stoker.resources.openstack.trusts import acting_user

            self.delegation.deleting(stack.id, acting_user.get())
        return self._run(Job(stack.id, Action.DELETE), listeners)

    def _update_request(
        self,
        stack: StackRecord,
        template: Source | None,
        environments: Sequence[Source],
        parameters: Mapping[str, Any] | None,
        files: Mapping[str, str] | None,
        existing: bool,
        clear_parameters: Sequence[str] = (),
    ) -> tuple[Template, Environment, dict[str, Any], dict[str, str]]:
        """The validated template, environment, parameters and files of an update
        (with ``existing``: the stack's own, with what is given merged in)."""
        stored = self.store.get_template(stack.raw_template_id)
        # With existing (PATCH), the files given are merged into the stack's own.
        kept_files = {**stored.files, **(files or {})} if existing else dict(files or {})
        if template is None:
            if not existing:
                raise ValidationError(
                    "An update needs a template (-t) or --existing to reuse the current one"
                )
            parsed = Template.from_data(stored.template, kept_files)
        else:
            parsed = self.parse_template(template, kept_files)
        environment = self.parse_environments(environments, parsed, files, loaded=not existing)
        user = dict(parameters or {})
        if existing:
            environment = Environment.from_dict(stored.environment).merge(environment)
            user = {**stack.parameters, **user}
        for name in clear_parameters:
            # Back to the template's default (Heat's PATCH clear_parameters).
            if name not in parsed.parameters:
                raise ValidationError(f"Cannot clear parameter {name}: the template has no such parameter")
            user.pop(name, None)
            environment.parameters.pop(name, None)
        self._check_limits(parsed)
        self._validate(parsed, environment, user, stack)
        return parsed, environment, user, kept_files


    def stack_action(self, name_or_id: str, action: Action, listeners: Sequence[Listener] = ()) -> StackRecord:
        """Suspend, resume or check a stack."""
        stack = self.get_stack(name_or_id)
        self._check_idle(stack)
        if action in (Action.SUSPEND, Action.RESUME):
            self._check_resource_types(stack)
        # Answered at once here; the job decides again under the stack's lock.
        admission.admit(Job(stack.id, action), stack)
        return self._run(Job(stack.id, action), listeners)

    def cancel_stack(self, name_or_id: str, rollback: bool = True) -> StackRecord:
        """Ask the engine running a create or update to stop it (and roll back)."""
        stack = self.get_stack(name_or_id)
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

    def _check_limits(self, template: Template) -> None:
        check_resource_limit(template, self.settings.max_resources_per_stack)

    def _validate(
        self, template: Template, environment: Environment, user: Mapping[str, Any], stack: StackRecord | None = None, strict: bool = True, hand_over: bool = True
    ) -> ValidationResult:
        try:
            refuse_nul(user, "parameters")
        except TemplateError as error:
            raise TemplateErrors([error])
        result = validate(template, environment, user, self.registry, stack, max_depth=self.settings.max_nested_depth, strict=strict, hand_over=hand_over)
        # The whole tree under this root, with every count validation knows (engine.trees).
        check_tree(result, self.settings.max_resources_per_stack)
        return result

    def _check_top_level(self, stack: StackRecord) -> None:
        """A nested stack changes only through its parent's resource (which would
        otherwise no longer describe it)."""
        if stack.owner_id is not None:
            parent = self.store.get_stack(stack.owner_id)
            raise ValidationError(
                f"Stack {stack.name} is nested in stack {parent.name if parent else stack.owner_id} (resource {stack.owner_resource})",
                hint="act on the parent stack; its resource owns this stack",
            )

    def _check_resource_types(self, stack: StackRecord) -> None:
        """Heat's enforce_stack before a delete, suspend or resume: the caller may use
        every resource type the stack's template names (``validation.type_check``)."""
        from stoker.engine.validation import type_check

        check = type_check.get()
        if check is None or not stack.raw_template_id:
            return
        for definition in self.engine.load_runtime(stack).template.resources.values():
            if isinstance(definition.resource_type, str):
                check(definition.resource_type)

    def _check_idle(self, stack: StackRecord) -> None:
        self._check_top_level(stack)
        if stack.status == Status.IN_PROGRESS:
            raise ActionInProgressError(stack.name, stack.state)
