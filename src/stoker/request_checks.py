"""A stack request checked: its template and environments parsed within the limits, its
parameters and resources validated against the registry (every problem, each with its
place), an update's request merged with the stack's own, an import's objects read and
compared with its template. A part of ``Service``, used by the parts that act
(``stack_actions``) and those that preview and plan (``plan_actions``), which check a
request alike.

What it owns: reading and judging a request. What it must not do: store a template or a
stack, or start a job (``stack_actions`` does).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stoker.engine import imports as imports_check
from stoker.engine.engine import Engine
from stoker.engine.errors import StackExistsError
from stoker.engine.trees import check_tree
from stoker.engine.validation import ValidationResult, check_resource_limit, validate
from stoker.environment import environment as environment_module
from stoker.environment import merge as environment_merge
from stoker.environment.environment import Environment
from stoker.environment.registry import ResourceRegistry
from stoker.masking import HiddenValues
from stoker.sdk.exceptions import ValidationError
from stoker.settings import Settings
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
from stoker.template import loader
from stoker.template.errors import TemplateError, TemplateErrors, TemplateLimitError
from stoker.template.hot import Template


@dataclass
class CheckedImport:
    """An import's request as checked (``RequestChecks.import_request``): the stack to make
    (not stored), its template, environment and validation, the objects to take over
    (resource name -> id), what refuses it and each resource's differences."""

    stack: StackRecord
    parsed: Template
    environment: Environment
    result: ValidationResult
    imports: dict[str, str]
    problems: list[str]
    found: dict[str, Any]


class RequestChecks:
    """Stack requests read and judged with the settings' limits and the registry's types;
    the store is read (a name taken, an update's stored template), never written."""

    def __init__(self, settings: Settings, store: Store, engine: Engine, registry: ResourceRegistry):
        self.settings = settings
        self.store = store
        self.engine = engine
        self.registry = registry

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
        self.check_limits(parsed)
        result = self.validate_stack(parsed, environment, parameters or {}, strict=False)
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

    def check_limits(self, template: Template) -> None:
        check_resource_limit(template, self.settings.max_resources_per_stack)

    def validate_stack(
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

    def update_request(
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
        self.check_limits(parsed)
        self.validate_stack(parsed, environment, user, stack)
        return parsed, environment, user, kept_files

    def import_request(
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
            except Exception:  # noqa: BLE001 - an unknown type: validate_stack below names it
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
        self.check_limits(parsed)
        result = self.validate_stack(parsed, environment, user, stack)
        taken = {key: value.strip() for key, value in imports.items()}
        problems, found = self._checked_imports(stack, result, environment, taken)
        return CheckedImport(stack, parsed, environment, result, taken, problems, found)

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
