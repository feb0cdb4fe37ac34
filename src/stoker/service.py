"""The one place that wires store, registry and engine together for the CLI and API.

Requests are checked here (names, templates, environments, parameters) and turned into
jobs; jobs run in the engine. Read operations go to the store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stoker.engine import admission, drift, implementations
from stoker.engine import imports as imports_check
from stoker.engine.clock import Clock
from stoker.engine.engine import Engine, EngineSettings, Job
from stoker.engine.errors import ActionInProgressError, StackExistsError
from stoker.engine.events import Listener
from stoker.engine.states import Action, Status
from stoker.engine.trees import check_tree
from stoker.engine.validation import ValidationResult, check_resource_limit, validate
from stoker.environment import environment as environment_module
from stoker.environment import merge as environment_merge
from stoker.environment.directory import load_default_environment, load_environment_dir
from stoker.environment.environment import Environment
from stoker.environment.plugins import load_plugin_dirs
from stoker.environment.registry import ResourceRegistry
from stoker.masking import HiddenValues
from stoker.plan_actions import CheckedImport, PlanActions
from stoker.reads import StackReads
from stoker.resource_actions import ResourceActions
from stoker.resources import builtin_client_mapping, builtin_constraint_mapping
from stoker.resources.index import BUILTIN_TYPES
from stoker.sdk.exceptions import ResourceNotFoundError, StokerError, ValidationError
from stoker.serving import Serving
from stoker.settings import DEFAULT_PUBLIC_URL, Settings
from stoker.stack_copies import StackCopies
from stoker.stack_requests import (
    Source,
    check_stack_name,
    nested_parameters,
    new_stack,
    refuse_nul,
    validate_environment,
    validate_parameters,
)
from stoker.store import StackRecord, Store
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



class _ListingContext:
    """What a constraint's listing acts in: no stack, the caller's cloud (the request's
    user in Keystone mode, the configured cloud otherwise)."""

    stack = None


class Service(PlanActions, ResourceActions, StackCopies, Serving, StackReads):
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
        stack = self.get_stack(name_or_id)
        self._check_idle(stack)
        parsed, environment, user, kept_files = self._update_request(stack, template, environments, parameters, files, existing, clear_parameters)
        template_id = self._store_template(parsed, kept_files, environment)
        if converge:
            # After the request is checked (a bad template absorbs nothing), before the job.
            drift.absorb(self.engine, self.store, stack)
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
        converge: bool = False,
    ) -> dict[str, Any]:
        """What an update would do to each resource, decided as the update decides; with
        ``show_nested``, to the resources of its nested stacks too (engine.nested_preview);
        with ``converge``, from the live objects (a drift detection runs first)."""
        from stoker.engine import preview

        stack = self.get_stack(name_or_id)
        parsed, environment, user, _ = self._update_request(stack, template, environments, parameters, files, existing)
        current, runtime, hidden = self._update_preview_runtime(stack, parsed, environment, user, converge)
        planned = preview.preview_update(runtime, current.template)
        if show_nested:
            from stoker.engine.nested_preview import with_nested

            planned = with_nested(self.engine, runtime, planned)
        # Old values too: a change's old value may be the stack's hidden parameter's as it was.
        changes = self.hidden_values(stack).data(hidden.data(preview.as_result(planned)))
        # where the registry lists candidates: which resources change implementation
        return implementations.with_update_preview(changes, current.template, current.environment, parsed, environment)

    def _update_preview_runtime(
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

    def _holding(self, stack: StackRecord, change: Callable[[StackRecord], Any]) -> Any:
        """Make a short change to an idle stack under its lock (decided and fenced as a
        job's writes are); ``change`` gets the stack as it is under the lock."""

        async def held() -> Any:
            async with self.engine.holding(stack.id) as current:
                return change(current)

        return self._call(held())

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
        checked = self._import_request(name, template, imports, environments, parameters, files, project_id)
        # Refused before any stack is made: a refusal leaves nothing to delete.
        refused = imports_check.refusal(checked.problems, checked.found, bool(accept_differences))
        if refused is not None:
            raise ValidationError(refused)
        stack, parsed, environment = checked.stack, checked.parsed, checked.environment
        stack.raw_template_id = self._store_template(parsed, dict(files or {}), environment)
        request = {"resources": checked.imports, "accept_differences": bool(accept_differences)}
        job = Job(stack.id, Action.ADOPT, adopt_data={"import": request})
        return self._run(job, listeners, self._insert_stack(stack, delegated=True, job=job))

    def _import_request(
        self,
        name: str,
        template: Source,
        imports: Mapping[str, str],
        environments: Sequence[Source],
        parameters: Mapping[str, Any] | None,
        files: Mapping[str, str] | None,
        project_id: str,
    ) -> CheckedImport:
        """An import's request checked (the name, each resource named and its type, the
        template), and its objects read and compared with the template: what an import
        and its plan both start from. Nothing is stored."""
        check_stack_name(name)
        if self.store.find_stack(name, project_id) is not None:  # names are unique per project
            raise StackExistsError(name)
        if not isinstance(imports, Mapping) or not imports:
            raise ValidationError("Nothing to import", hint="name at least one resource and its id: --resource NAME=ID")
        parsed = self.parse_template(template, files)
        environment = self.parse_environments(environments, parsed, files)
        for resource_name, physical_id in imports.items():
            where = f"resources.{resource_name}"
            definition = parsed.resources.get(resource_name)
            if definition is None:
                known = ", ".join(sorted(parsed.resources)) or "none"
                raise ValidationError(f"The template has no resource {resource_name} to import into (its resources: {known})", path=where)
            if not isinstance(physical_id, str) or not physical_id.strip():
                raise ValidationError(f"The id to import as {resource_name} must be a non-empty string", path=where)
            try:
                plugin_class = self.registry.get_class(definition.resource_type, environment.type_aliases(), parsed.files, resource_name)
            except Exception:  # noqa: BLE001 - an unknown type: _validate below names it
                continue
            if definition.external_id is not None:
                raise ValidationError(f"Resource {resource_name} has external_id already: import it or name it there, not both", path=where)
            if not plugin_class.reads_live_state():
                raise ValidationError(
                    f"Resource {resource_name}: {definition.resource_type} cannot be imported, it has no live object to read and check",
                    path=where,
                    hint="let the stack create it, or import only resources whose type reads its live object (docs/import.md)",
                )
        user = dict(parameters or {})
        stack = new_stack(name, user, True, None, [])
        stack.project_id = project_id
        self._check_limits(parsed)
        result = self._validate(parsed, environment, user, stack)
        taken = {key: value.strip() for key, value in imports.items()}
        problems, found = self._checked_imports(stack, result, environment, taken)
        return CheckedImport(stack, parsed, environment, result, taken, problems, found)

    def constraint_values(self, name: str) -> dict[str, Any]:
        """The values the custom constraint ``name`` accepts in the caller's cloud (a
        launch form's list, docs/api.md): ``{"constraint", "values": [{value, id,
        label}], "truncated"}``. Refused for a constraint not registered, or one that
        does not list (a constraint lists when it has ``values(context, limit)``)."""
        found = self.registry.constraints.get(name)
        if found is None:
            known = ", ".join(sorted(self.registry.constraints))
            raise ResourceNotFoundError(f"No custom constraint named {name}", hint=f"one of: {known}")
        constraint = found() if isinstance(found, type) else found
        if getattr(constraint, "values", None) is None or getattr(constraint, "listing", "") is None:
            raise ValidationError(f"The custom constraint {name} does not list its values", hint="type the value")
        try:
            values, truncated = constraint.values(_ListingContext())
        except StokerError:
            raise
        except Exception as error:  # noqa: BLE001 - the cloud's own failure, said in words
            raise StokerError(
                f"Listing the values of {name} in the cloud failed: {type(error).__name__}: {error}",
                hint="type the value, or try again once the cloud answers",
            ) from None
        return {"constraint": name, "values": values, "truncated": truncated}

    def _checked_imports(
        self, stack: StackRecord, result: ValidationResult, environment: Environment, imports: Mapping[str, str]
    ) -> tuple[list[str], dict[str, Any]]:
        """The import's check (engine.imports.check_imports) on a stack not made yet:
        its resources as the template gives them, none recorded."""
        from stoker.engine.stack import StackRuntime

        runtime = StackRuntime(stack, result.template, environment, result.params, self.registry, None, self.engine.clock)
        runtime.records = [runtime.new_record(definition) for definition in result.template.resources.values()]
        for number, record in enumerate(runtime.records, 1):
            record.id = -number  # not stored: ids of their own, as the runtime keys its plugins by id
        runtime.current = {record.name: record for record in runtime.records}
        runtime.public_url = self.engine.settings.public_url
        runtime.read_store = self.store  # an imported deployment or config is read there
        return imports_check.check_imports(runtime, imports)

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
