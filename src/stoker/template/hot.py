"""The HOT template: sections read into parameters, resource and output definitions.

``Template.parse`` checks the version and the shape of every section and collects every
problem with its place before failing, so an author sees all mistakes at once. Checks
that need the resource registry (types, property schemas) live in
``stoker.engine.validation``; this module knows only the language.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from difflib import get_close_matches
from typing import Any

from stoker.template import conditions as conditions_module
from stoker.template import loader, versions
from stoker.template.conditions import ActiveDefinitions
from stoker.template.definitions import OutputDefinition, ResourceDefinition
from stoker.template.errors import TemplateError, TemplateErrors, format_path
from stoker.template.functions.access import GetAttr, GetParam, GetResource
from stoker.template.functions.base import Function, Parser
from stoker.template.functions.cfn import Ref
from stoker.template.parameters import PSEUDO, ParameterSchema, parse_schema


def _hint(word: Any, choices) -> str | None:
    close = get_close_matches(str(word), list(choices), n=1)
    return f"did you mean '{close[0]}'?" if close else None


def _newer(key: Any, *later: str) -> str | None:
    """The hint for a key that this version lacks but a later one has."""
    if key in later:
        return f"'{key}' needs heat_template_version 2016-10-14 or later"
    return None


@dataclass
class Template:
    version: versions.TemplateVersion
    data: dict[str, Any]
    document: loader.Document
    description: str = ""
    parameters: dict[str, ParameterSchema] = field(default_factory=dict)
    parameter_groups: list[Any] = field(default_factory=list)
    resources: dict[str, ResourceDefinition] = field(default_factory=dict)
    outputs: dict[str, OutputDefinition] = field(default_factory=dict)
    files: Mapping[str, str] = field(default_factory=dict)
    # name -> parsed condition expression (the conditions section, from 2016-10-14)
    conditions: dict[str, Any] = field(default_factory=dict)
    # Names of the intrinsic functions the template uses.
    functions_used: frozenset[str] = field(default_factory=frozenset)
    # Problems found while reading, kept when parsing with collect=True so that
    # validation can report them together with its own.
    problems: list[TemplateError] = field(default_factory=list)

    @classmethod
    def load(
        cls,
        text: str | bytes,
        file: str | None = None,
        files: Mapping[str, str] | None = None,
        limits: loader.Limits = loader.DEFAULT_LIMITS,
        collect: bool = False,
    ) -> Template:
        return cls.parse(loader.parse(text, file, limits), files, collect)

    @classmethod
    def from_data(cls, data: Any, files: Mapping[str, str] | None = None) -> Template:
        """Build from already parsed data (a stored template); no positions."""
        return cls.parse(loader.Document(data), files)

    @classmethod
    def parse(cls, document: loader.Document, files: Mapping[str, str] | None = None, collect: bool = False) -> Template:
        """Read a document. Problems raise TemplateErrors, unless ``collect`` is set and
        the template is readable enough to validate further (then see ``problems``)."""
        errors: list[TemplateError] = []
        template = _Reader(document, errors).read(files or {})
        for error in errors:
            if error.location is None:
                error.location = document.locate(error.path)
        if errors and (template is None or not collect):
            raise TemplateErrors(errors)
        assert template is not None
        template.problems = errors
        return template

    # -- conditions --------------------------------------------------------------

    def evaluate_conditions(self, parameter_values: Mapping[str, Any]) -> dict[str, bool]:
        """Every named condition's value for these parameter values (as computed by
        ``parameters.resolve_values``, pseudo parameters included). Raises
        TemplateErrors (an invalid definition, a cycle, a missing parameter)."""
        evaluator = conditions_module.Conditions(self.conditions, parameter_values)
        try:
            return evaluator.evaluate_all()
        except TemplateError as error:
            raise self._located(error)

    def active_definitions(self, parameter_values: Mapping[str, Any]) -> ActiveDefinitions:
        """The resources whose condition holds and every output (an output whose
        condition is false has the value None), with each ``if`` replaced by its chosen
        value and depends_on on inactive resources dropped, as Heat does. Raises
        TemplateErrors listing every problem, among them an active resource or output
        that refers to an inactive resource outside an ``if``."""
        try:
            return conditions_module.select_active(self.conditions, self.resources, self.outputs, parameter_values)
        except TemplateErrors as problems:
            raise TemplateErrors([self._located(error) for error in problems.errors])

    def with_conditions(self, parameter_values: Mapping[str, Any]) -> Template:
        """A copy of this template whose ``resources`` and ``outputs`` are the
        ``active_definitions``: the engine builds everything from it as from any template.
        A template without conditions or ``if`` is returned as it is (nothing to decide)."""
        if (
            not self.conditions
            and "if" not in self.functions_used
            and all(d.condition is None for d in self.resources.values())
            and all(o.condition is None for o in self.outputs.values())
        ):
            return self
        active = self.active_definitions(parameter_values)
        return replace(self, resources=active.resources, outputs=active.outputs)

    def _located(self, error: TemplateError) -> TemplateError:
        if error.location is None and error.path:
            error.location = self.document.locate(error.path)
        return error


class _Reader:
    def __init__(self, document: loader.Document, errors: list[TemplateError]):
        self.document = document
        self.errors = errors

    def fail(self, message: str, path: tuple, hint: str | None = None) -> None:
        self.errors.append(TemplateError(message, path=format_path(path) or None, location=self.document.locate(format_path(path)), hint=hint))

    def read(self, files: Mapping[str, str]) -> Template | None:
        data = self.document.data
        if not isinstance(data, dict):
            self.fail("The template must be a map with heat_template_version, resources and other sections", ())
            return None
        raw_version = data.get("heat_template_version")
        if raw_version is None:
            if "AWSTemplateFormatVersion" in data or "HeatTemplateFormatVersion" in data:
                self.fail("CFN templates are not supported yet; use heat_template_version", ())
            else:
                self.fail(
                    "The template has no heat_template_version",
                    (),
                    hint="add a first line such as 'heat_template_version: 2021-04-16'",
                )
            return None
        version = versions.get(raw_version)
        if version is None:
            self.fail(
                f'"{raw_version}" is not a valid heat_template_version',
                ("heat_template_version",),
                hint=_hint(raw_version, versions.VERSIONS) or "valid versions: " + ", ".join(versions.HOT_VERSIONS),
            )
            return None
        for key in data:
            if key not in version.sections:
                self.fail(
                    f"The template section '{key}' is invalid",
                    (key,),
                    hint=_hint(key, version.sections) or "valid sections: " + ", ".join(version.sections),
                )
        template = Template(version=version, data=data, document=self.document, files=dict(files))
        self.parser = Parser(
            version.functions,
            self.errors,
            version.unknown_functions,
            version.condition_functions,
            template.files,
        )
        template.description = str(data.get("description") or "")
        template.parameters = self._parameters(data.get("parameters"), version)
        template.parameter_groups = self._parameter_groups(data.get("parameter_groups"), data.get("parameters"))
        if version.has_conditions:
            template.conditions = self._conditions(data.get("conditions"))
        template.resources = self._resources(data.get("resources"), version)
        template.outputs = self._outputs(data.get("outputs"), version)
        template.functions_used = frozenset(self.parser.seen)
        self._check_references(template)
        if version.has_conditions:
            self._check_condition_names(template)
        return template

    def _section(self, value: Any, name: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(f"The {name} section must be a map", (name,))
            return {}
        return value

    def _parameters(self, section: Any, version: versions.TemplateVersion) -> dict[str, ParameterSchema]:
        result = {}
        for name, body in self._section(section, "parameters").items():
            schema = parse_schema(
                str(name), body, ("parameters",), self.errors, lambda p: self.document.locate(format_path(p)), version.date or "9999-12-31"
            )
            if schema is not None:
                result[str(name)] = schema
        return result

    def _parameter_groups(self, section: Any, parameters: Any) -> list[Any]:
        """Heat's rules: each group a map with a list of parameters that exist, and a
        parameter in at most one group."""
        if section is None:
            return []
        if not isinstance(section, list):
            self.fail("parameter_groups must be a list of groups", ("parameter_groups",))
            return []
        declared = set(parameters) if isinstance(parameters, dict) else set()
        seen: dict[str, int] = {}
        for index, group in enumerate(section):
            where = ("parameter_groups", index)
            if not isinstance(group, dict):
                self.fail("A parameter group must be a map with label, description and parameters", where)
                continue
            names = group.get("parameters")
            if names is None:
                self.fail("Parameters must be provided for each Parameter Group.", where)
                continue
            if not isinstance(names, list):
                self.fail("The parameters of a parameter group must be a list", where + ("parameters",))
                continue
            for position, name in enumerate(names):
                spot = where + ("parameters", position)
                if name not in declared:
                    self.fail(f"The grouped parameter {name} does not reference a valid parameter.", spot, _hint(name, declared))
                elif name in seen:
                    self.fail(f"The {name} parameter must be assigned to one parameter group only.", spot)
                else:
                    seen[name] = index
        return section

    def _functions(self, value: Any, path: tuple, version: versions.TemplateVersion) -> Any:
        return self.parser.parse(value, path)

    def _conditions(self, section: Any) -> dict[str, Any]:
        if section is not None and not isinstance(section, dict):
            self.fail(f"Condition definitions must be a map. Found a {type(section).__name__} instead", ("conditions",))
            return {}
        result = {}
        parser = self.parser.for_conditions()
        for name, body in (section or {}).items():
            path = ("conditions", str(name))
            before = len(self.errors)
            parsed = parser.parse(body, path)
            if len(self.errors) > before:
                continue
            if not isinstance(parsed, (bool, Function)):
                self.fail(
                    f'The definition of condition "{name}" is invalid: {body!r}',
                    path,
                    hint="a condition is true, false or a condition function such as {equals: [{get_param: env}, prod]}",
                )
                continue
            result[str(name)] = parsed
        return result

    def _condition(self, value: Any, path: tuple, owner: str) -> Any:
        """A resource's or output's condition: a name, a boolean or a condition function."""
        if value is None:
            return None
        parsed = self.parser.for_conditions().parse(value, path)
        if not isinstance(parsed, (str, bool, Function)):
            self.fail(
                f"{owner} condition type must be string_or_boolean",
                path,
                hint="give a condition name, true or false, or a condition function",
            )
            return None
        return parsed

    def _resources(self, section: Any, version: versions.TemplateVersion) -> dict[str, ResourceDefinition]:
        result = {}
        for name, body in self._section(section, "resources").items():
            name = str(name)
            path = ("resources", name)
            if not isinstance(body, dict):
                self.fail(f"Resource {name} must be a map with at least a type", path)
                continue
            for key in body:
                if key not in version.resource_keys:
                    self.fail(
                        f'"{key}" is not a valid keyword inside a resource definition',
                        path + (key,),
                        _newer(key, "external_id", "condition") or _hint(key, version.resource_keys),
                    )
            kind = body.get("type")
            if not isinstance(kind, str) or not kind:
                self.fail(f"Resource {name} has no type", path + (("type",) if "type" in body else ()), hint="add 'type: OS::Heat::None' or another resource type")
                continue
            properties = body.get("properties") or {}
            if not isinstance(properties, dict):
                self.fail("properties must be a map", path + ("properties",))
                properties = {}
            depends_on = body.get("depends_on") or []
            if isinstance(depends_on, str):
                depends_on = [depends_on]
            if not isinstance(depends_on, list) or not all(isinstance(d, str) for d in depends_on):
                self.fail("depends_on must be a resource name or a list of names", path + ("depends_on",))
                depends_on = []
            policy = body.get("deletion_policy", "Delete")
            normalized = version.deletion_policies.get(policy) if isinstance(policy, str) else None
            if normalized is None:
                hint = "use Delete, Retain or Snapshot"
                if str(policy) in ("delete", "retain", "snapshot"):
                    hint += " (lower-case spellings need heat_template_version 2016-10-14 or later)"
                self.fail(f'Invalid deletion policy "{policy}"', path + ("deletion_policy",), hint=hint)
                normalized = "Delete"
            metadata = body.get("metadata")
            if metadata is not None and not isinstance(metadata, dict):
                self.fail("metadata must be a map", path + ("metadata",))
                metadata = None
            result[name] = ResourceDefinition(
                name=name,
                resource_type=kind,
                properties_data=self._functions(properties, path + ("properties",), version),
                metadata=self._functions(metadata, path + ("metadata",), version),
                depends_on=tuple(depends_on),
                deletion_policy=normalized,
                update_policy=self._functions(body.get("update_policy"), path + ("update_policy",), version),
                description=str(body.get("description") or ""),
                external_id=self._functions(body.get("external_id"), path + ("external_id",), version),
                condition=self._condition(body.get("condition"), path + ("condition",), f"Resource {name}"),
            )
        return result

    def _outputs(self, section: Any, version: versions.TemplateVersion) -> dict[str, OutputDefinition]:
        result = {}
        for name, body in self._section(section, "outputs").items():
            name = str(name)
            path = ("outputs", name)
            if not isinstance(body, dict):
                self.fail(f"Output {name} must be a map with a value", path)
                continue
            for key in body:
                if key not in version.output_keys:
                    self.fail(
                        f'"{key}" is not a valid keyword inside an output definition',
                        path + (key,),
                        _newer(key, "condition") or _hint(key, version.output_keys),
                    )
            if "value" not in body:
                self.fail(f"Output {name} has no value", path)
            result[name] = OutputDefinition(
                name=name,
                value=self._functions(body.get("value"), path + ("value",), version),
                description=str(body.get("description") or ""),
                condition=self._condition(body.get("condition"), path + ("condition",), f"Output {name}"),
            )
        return result

    def _check_references(self, template: Template) -> None:
        """Every get_resource/get_attr/depends_on names a resource, every get_param a parameter."""
        # Every name declared counts, even of a resource too broken to read (already
        # reported): a second error about references to it would only mislead.
        section = template.data.get("resources")
        names = {str(name): None for name in section} if isinstance(section, dict) else {}
        declared = template.data.get("parameters")
        params = {str(name) for name in declared} if isinstance(declared, dict) else set()
        params |= set(PSEUDO)
        for definition in template.resources.values():
            base = ("resources", definition.name)
            for index, target in enumerate(definition.depends_on):
                if target not in names:
                    self.fail(
                        f'"{target}" (in depends_on) is not a resource in the template',
                        base + ("depends_on", index),
                        _hint(target, names),
                    )
                elif target == definition.name:
                    self.fail("A resource cannot depend on itself", base + ("depends_on", index))
            self._check_functions(definition.properties_data, names, params, definition.name)
            self._check_functions(definition.metadata, names, params, definition.name)
            self._check_functions(definition.update_policy, names, params)
            self._check_functions(definition.external_id, names, params)
            self._check_functions(definition.condition, names, params)
        for output in template.outputs.values():
            self._check_functions(output.value, names, params)
            self._check_functions(output.condition, names, params)
        for condition in template.conditions.values():
            self._check_functions(condition, names, params)

    def _check_condition_names(self, template: Template) -> None:
        """Every condition named literally exists, and no conditions name each other in a
        cycle. (Heat finds these only when it evaluates the condition; a misspelt name is
        refused here even where Heat would never evaluate it.)"""
        declared = template.conditions
        section = template.data.get("conditions")
        known = {str(name) for name in section} if isinstance(section, dict) else set()
        uses: list[tuple[str, tuple]] = []
        for condition in declared.values():
            uses.extend(conditions_module.referenced_names(condition))
        for name, definition in template.resources.items():
            path = ("resources", name, "condition")
            if isinstance(definition.condition, str):
                uses.append((definition.condition, path))
            for data in (definition.condition, definition.properties_data, definition.metadata, definition.update_policy, definition.external_id):
                uses.extend(conditions_module.referenced_names(data))
        for name, output in template.outputs.items():
            if isinstance(output.condition, str):
                uses.append((output.condition, ("outputs", name, "condition")))
            for data in (output.condition, output.value):
                uses.extend(conditions_module.referenced_names(data))
        for target, path in uses:
            if target not in known:
                self.fail(f'Invalid condition "{target}"', path, _hint(target, known) or (
                    "declared conditions: " + ", ".join(sorted(known)) if known else "the template declares no conditions"
                ))
        cycle = conditions_module.find_cycle(declared)
        if cycle:
            self.fail(
                f'Circular definition for condition "{cycle[0]}"',
                ("conditions", cycle[0]),
                hint=" -> ".join(cycle),
            )

    def _check_functions(self, data: Any, names: Mapping[str, Any], params: set[str], owner: str | None = None) -> None:
        """``owner``: the resource whose properties or metadata hold ``data``; it may not
        refer to itself (Heat reports that as a circular dependency)."""
        if isinstance(data, Function):
            if isinstance(data, GetParam):
                target = data.parameter_name()
                if target is not None and target not in params:
                    self.fail(f'The Parameter ({target}) was not defined in template.', data.path, _hint(target, params))
            elif isinstance(data, Ref):
                if data.args not in names and data.args not in params:
                    self.fail(
                        f'The specified reference "{data.args}" (in Ref) is neither a resource nor a parameter of the template',
                        data.path + (data.fn_name,),
                        _hint(data.args, list(names) + sorted(params)),
                    )
            elif isinstance(data, (GetResource, GetAttr)):
                target = data.args if isinstance(data, GetResource) else data.args[0]
                if target not in names:
                    self.fail(
                        f'The specified reference "{target}" (in {data.fn_name}) is not a resource in the template',
                        data.path + (data.fn_name,),
                        _hint(target, names),
                    )
                elif target == owner:
                    self.fail(
                        f"Circular dependency: resource {owner} refers to itself (in {data.fn_name})",
                        data.path + (data.fn_name,),
                    )
            self._check_functions(data.args, names, params, owner)
        elif isinstance(data, dict):
            for value in data.values():
                self._check_functions(value, names, params, owner)
        elif isinstance(data, list):
            for item in data:
                self._check_functions(item, names, params, owner)
