"""Templates: a HOT or CloudFormation-compatible document read into parameters,
resource and output definitions.

``Template.parse`` finds the format and version as Heat's ``get_version`` does
(heat_template_version, AWSTemplateFormatVersion or HeatTemplateFormatVersion), checks the
shape of every section and collects every problem with its place before failing, so an
author sees all mistakes at once. Both formats give the same ``Template``: they differ in
spelling (``version.keywords``: ``Resources``/``Type``/``DependsOn`` against
``resources``/``type``/``depends_on``), in how parameters are declared
(``stoker.template.cfn`` reads CFN's) and in a few sections (parameter_groups in HOT,
Mappings in CFN); everything else is read by the same code. Checks that need the resource
registry (types, property schemas) live in ``stoker.engine.validation``; this module
knows only the language.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from difflib import get_close_matches
from typing import Any

from stoker.template import capabilities as template_capabilities
from stoker.template import cfn, loader, versions
from stoker.template import conditions as conditions_module
from stoker.template.conditions import ActiveDefinitions
from stoker.template.definitions import OutputDefinition, ResourceDefinition
from stoker.template.errors import (
    InvalidTemplateVersionError,
    TemplateError,
    TemplateErrors,
    TemplateWarning,
    format_path,
)
from stoker.template.functions.access import GetAttr, GetParam, GetResource
from stoker.template.functions.base import Function, Parser
from stoker.template.functions.cfn import Ref
from stoker.template.functions.conditions import If
from stoker.template.parameters import ParameterSchema, parse_schema

VERSION_KEYS = ("heat_template_version", *versions.CFN_VERSION_KEYS)


def _hint(word: Any, choices) -> str | None:
    close = get_close_matches(str(word), list(choices), n=1)
    return f"did you mean '{close[0]}'?" if close else None


def _resource_keys(words: versions.Keywords) -> dict[str, str]:
    """HOT's name of each key of a resource -> the format's."""
    return {
        "type": words.type,
        "properties": words.properties,
        "metadata": words.metadata,
        "depends_on": words.depends_on,
        "deletion_policy": words.deletion_policy,
        "update_policy": words.update_policy,
        "description": words.resource_description,
        "condition": words.condition,
    }


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
    # a CFN template's Mappings: map name -> top-level key -> second-level key -> value
    mappings: dict[str, Any] = field(default_factory=dict)
    # Names of the intrinsic functions the template uses.
    functions_used: frozenset[str] = field(default_factory=frozenset)
    # Problems found while reading, kept when parsing with collect=True so that
    # validation can report them together with its own.
    problems: list[TemplateError] = field(default_factory=list)
    # What Heat reads silently that an author may not mean: a key written twice (the
    # loader's), a function name this version does not have (read as a plain map).
    warnings: list[TemplateWarning] = field(default_factory=list)

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
        warnings: list[TemplateWarning] = []
        template = _Reader(document, errors, warnings).read(files or {})
        placed: list[TemplateError | TemplateWarning] = [*errors, *warnings]
        for problem in placed:
            if problem.location is None:
                problem.location = document.locate(problem.path)
        if errors and (template is None or not collect):
            raise TemplateErrors(errors)
        assert template is not None
        template.problems = errors
        template.warnings = [*document.warnings, *warnings]
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
            raise self.place(error)

    def active_definitions(self, parameter_values: Mapping[str, Any], partial: bool = False) -> ActiveDefinitions:
        """The resources whose condition holds and every output (an output whose
        condition is false has the value None), with each ``if`` replaced by its chosen
        value, depends_on on inactive resources dropped and deletion policies given by
        functions resolved, as Heat does. Raises TemplateErrors listing every problem,
        among them an active resource or output that refers to an inactive resource
        outside an ``if``. ``partial``: ``parameter_values`` lacks some parameters (a
        template-validate without them): what needs them stays undecided."""
        try:
            declared = {*self.parameters, *self.version.pseudo_parameters}
            return conditions_module.select_active(
                self.conditions, self.resources, self.outputs, parameter_values, self.version.deletion_policies, partial, declared
            )
        except TemplateErrors as problems:
            raise TemplateErrors([self.place(error) for error in problems.errors])

    def with_conditions(self, parameter_values: Mapping[str, Any], partial: bool = False) -> Template:
        """A copy of this template whose ``resources`` and ``outputs`` are the
        ``active_definitions``: the engine builds everything from it as from any template.
        A template without conditions, ``if`` or deletion policies given by functions is
        returned as it is (nothing to decide)."""
        if (
            not self.conditions
            and not self._uses_if()
            and all(d.condition is None and not isinstance(d.deletion_policy, Function) for d in self.resources.values())
            and all(o.condition is None for o in self.outputs.values())
        ):
            return self
        active = self.active_definitions(parameter_values, partial)
        return replace(self, resources=active.resources, outputs=active.outputs)

    def _uses_if(self) -> bool:
        return any(issubclass(self.version.functions.get(name, Function), If) for name in self.functions_used)

    def place(self, error: TemplateError) -> TemplateError:
        """``error``, if it has no position yet, with its path in this template's own
        spelling and its file position. Code outside ``template/`` names places as HOT
        does (``resources.web.properties.flavor``); in a CFN template that place is
        ``Resources.web.Properties.flavor``."""
        if error.location is None and error.path:
            error.path = self._respelled(error.path)
            error.location = self.document.locate(error.path)
        return error

    def _respelled(self, path: str) -> str:
        words = self.version.keywords
        if words == versions.HOT_KEYWORDS:
            return path
        section, _, rest = path.partition(".")
        keys: Mapping[str, str] = {}
        names: Mapping[str, Any] = {}
        if section == "resources":
            keys, names = _resource_keys(words), self.resources
        elif section == "outputs":
            keys, names = {"value": words.value, "description": words.output_description, "condition": words.condition}, self.outputs
        spelled = {"resources": words.resources, "outputs": words.outputs, "parameters": words.parameters, "conditions": words.conditions}
        if section not in spelled:
            return path
        # The longest declared name that the rest starts with (a name may hold a dot).
        for name in sorted(names, key=len, reverse=True):
            if rest == name or rest[len(name) : len(name) + 1] in (".", "[") and rest.startswith(name):
                key, separator, tail = rest[len(name) + 1 :].partition(".")
                key, bracket, index = key.partition("[")
                if key in keys:
                    rest = f"{name}.{keys[key]}{bracket}{index}{separator}{tail}"
                break
        return f"{spelled[section]}.{rest}" if rest else spelled[section]


_IN_BRANCH = "It is in a branch of an if: an error only when that branch is taken"


def _unused_note(name: str) -> str:
    return f'Condition "{name}" is used by no resource, output or used condition, so it is never evaluated'


class _Reader:
    def __init__(self, document: loader.Document, errors: list[TemplateError], warnings: list[TemplateWarning]):
        self.document = document
        self.errors = errors
        self.warnings = warnings

    def fail(self, message: str, path: tuple, hint: str | None = None) -> None:
        self.errors.append(TemplateError(message, path=format_path(path) or None, location=self.document.locate(format_path(path)), hint=hint))

    def warn(self, message: str, path: tuple, hint: str | None = None) -> None:
        where = format_path(path)
        self.warnings.append(TemplateWarning(message, path=where or None, location=self.document.locate(where), hint=hint))

    def read(self, files: Mapping[str, str]) -> Template | None:
        data = self.document.data
        if not isinstance(data, dict):
            self.fail("The template must be a map with heat_template_version, resources and other sections", ())
            return None
        version = self._version(data)
        if version is None:
            return None
        words = version.keywords
        for key in data:
            if key not in version.sections:
                self.fail(
                    f"The template section is invalid: {key}",  # Heat's words
                    (key,),
                    hint=template_capabilities.section_hint(key, version) or _hint(key, version.sections) or "valid sections: " + ", ".join(version.sections),
                )
        template = Template(version=version, data=data, document=self.document, files=dict(files))
        mappings: dict[str, Any] | None = {}
        if version.kind == "cfn":
            mappings = cfn.read_mappings(data.get("Mappings"), ("Mappings",), self.errors, self._locate)
            template.mappings = mappings or {}
        self.parser = Parser(
            version.functions,
            self.errors,
            version.unknown_functions,
            version.condition_functions,
            template.files,
            mappings,
            removed=version.removed_functions,
            warnings=self.warnings,
        )
        template.description = str(data.get(words.description) or "")
        template.parameters = self._parameters(data.get(words.parameters), version)
        if version.kind == "hot":
            template.parameter_groups = self._parameter_groups(data.get("parameter_groups"), data.get("parameters"))
        if template_capabilities.SECTION in version.sections:
            self.errors.extend(template_capabilities.check_section(data.get(template_capabilities.SECTION), self.document.locate))
        if version.has_conditions:
            template.conditions = self._conditions(data.get(words.conditions), words)
        template.resources = self._resources(data.get(words.resources), version)
        template.outputs = self._outputs(data.get(words.outputs), version)
        template.functions_used = frozenset(self.parser.seen)
        self.used_conditions = self._used_conditions(template) if version.has_conditions else set()
        self._check_duplicate_names(template)
        self._check_references(template)
        if version.has_conditions:
            self._check_condition_names(template)
        return template

    def _locate(self, path: tuple) -> Any:
        return self.document.locate(format_path(path))

    def _version(self, data: dict[str, Any]) -> versions.TemplateVersion | None:
        """The version the one version key names (Heat's get_version); None, reported,
        when there is none, more than one, or one Heat does not know."""
        present = [key for key in VERSION_KEYS if key in data]
        if len(present) > 1:
            self.fail(f"Ambiguous versions ({', '.join(present)})", (present[1],), hint="a template has one version key")
            return None
        if not present:
            if any(key in data for key in ("Resources", "Parameters", "Outputs", "Mappings")):
                self.fail(
                    "The template has no AWSTemplateFormatVersion or HeatTemplateFormatVersion",
                    (),
                    hint="add a first line such as 'AWSTemplateFormatVersion: 2010-09-09'",
                )
            else:
                self.fail(
                    "The template has no heat_template_version",
                    (),
                    hint="add a first line such as 'heat_template_version: 2021-04-16'",
                )
            return None
        key = present[0]
        raw_version = data[key]
        if key != "heat_template_version":
            version = versions.get_cfn(key, raw_version)
            if version is None:
                self.fail(f'"{raw_version}" is not a valid {key}', (key,), hint=f'"{key}" should be: ' + ", ".join(versions.cfn_dates(key)))
            return version
        version = versions.get(raw_version)
        if version is None:
            # Heat's InvalidTemplateVersion words it so; its clients match the start.
            self.errors.append(
                InvalidTemplateVersionError(
                    f'The template version is invalid: "heat_template_version: {raw_version}" is not a known version',
                    path="heat_template_version",
                    location=self.document.locate("heat_template_version"),
                    hint=_hint(raw_version, versions.VERSIONS) or "valid versions: " + ", ".join(versions.HOT_VERSIONS),
                )
            )
        return version

    def _section(self, value: Any, name: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(f"The {name} section must be a map", (name,))
            return {}
        return value

    def _parameters(self, section: Any, version: versions.TemplateVersion) -> dict[str, ParameterSchema]:
        result = {}
        where = (version.keywords.parameters,)
        for name, body in self._section(section, where[0]).items():
            if version.kind == "cfn":
                schema = cfn.parse_parameter(str(name), body, where, self.errors, self._locate)
            else:
                schema = parse_schema(str(name), body, where, self.errors, self._locate, version.date or "9999-12-31")
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

    def _functions(self, value: Any, path: tuple) -> Any:
        return self.parser.parse(value, path)

    def _conditions(self, section: Any, words: versions.Keywords) -> dict[str, Any]:
        if section is not None and not isinstance(section, dict):
            self.fail(f"Condition definitions must be a map. Found a {type(section).__name__} instead", (words.conditions,))
            return {}
        result = {}
        parser = self.parser.for_conditions()
        for name, body in (section or {}).items():
            path = (words.conditions, str(name))
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
        words = version.keywords
        result = {}
        for name, body in self._section(section, words.resources).items():
            name = str(name)
            path = (words.resources, name)
            if not isinstance(body, dict):
                self.fail(f"Resource {name} must be a map with at least a {words.type}", path)
                continue
            for key in body:
                if key not in version.resource_keys:
                    self.fail(
                        f'"{key}" is not a valid keyword inside a resource definition',
                        path + (key,),
                        version.key_hints.get(key) or _hint(key, version.resource_keys),
                    )
            kind = body.get(words.type)
            if not isinstance(kind, str) or not kind:
                self.fail(
                    f"Resource {name} has no {words.type}",
                    path + ((words.type,) if words.type in body else ()),
                    hint=f"add '{words.type}: OS::Heat::None' or another resource type",
                )
                continue
            properties = body.get(words.properties) or {}
            if not isinstance(properties, dict):
                self.fail(f"{words.properties} must be a map", path + (words.properties,))
                properties = {}
            depends_on = body.get(words.depends_on) or []
            if isinstance(depends_on, str):
                depends_on = [depends_on]
            if not isinstance(depends_on, list) or not all(isinstance(d, str) for d in depends_on):
                self.fail(f"{words.depends_on} must be a resource name or a list of names", path + (words.depends_on,))
                depends_on = []
            metadata = body.get(words.metadata)
            if metadata is not None and not isinstance(metadata, dict):
                self.fail(f"{words.metadata} must be a map", path + (words.metadata,))
                metadata = None
            result[name] = ResourceDefinition(
                name=name,
                resource_type=kind,
                properties_data=self._functions(properties, path + (words.properties,)),
                metadata=self._functions(metadata, path + (words.metadata,)),
                depends_on=tuple(depends_on),
                deletion_policy=self._deletion_policy(body.get(words.deletion_policy, "Delete"), path + (words.deletion_policy,), version),
                update_policy=self._functions(body.get(words.update_policy), path + (words.update_policy,)),
                description=str(body.get(words.resource_description) or ""),
                external_id=self._functions(body.get(words.external_id), path + (words.external_id,)) if words.external_id else None,
                condition=self._condition(body.get(words.condition), path + (words.condition,), f"Resource {name}"),
            )
        return result

    def _deletion_policy(self, policy: Any, path: tuple, version: versions.TemplateVersion) -> Any:
        """The policy's normal spelling, or a function (Heat's ``{get_param: policy}``)
        that ``Template.with_conditions`` resolves with the stack's parameters."""
        if isinstance(policy, dict):
            parsed = self._functions(policy, path)
            if isinstance(parsed, Function):
                return parsed
        normalized = version.deletion_policies.get(policy) if isinstance(policy, str) else None
        if normalized is None:
            hint = "use Delete, Retain or Snapshot"
            if version.kind == "hot" and str(policy) in ("delete", "retain", "snapshot"):
                hint += " (lower-case spellings need heat_template_version 2016-10-14 or later)"
            self.fail(f'Invalid deletion policy "{policy}"', path, hint=hint)
            return "Delete"
        return normalized

    def _outputs(self, section: Any, version: versions.TemplateVersion) -> dict[str, OutputDefinition]:
        words = version.keywords
        result = {}
        for name, body in self._section(section, words.outputs).items():
            name = str(name)
            path = (words.outputs, name)
            if not isinstance(body, dict):
                self.fail(f"Output {name} must be a map with a {words.value}", path)
                continue
            for key in body:
                if key not in version.output_keys:
                    # Heat reads an output's value, description and condition and
                    # ignores any other key; an author may have meant one of them.
                    self.warn(
                        f'"{key}" is not a keyword of an output definition: it is ignored',
                        path + (key,),
                        version.key_hints.get(key) or _hint(key, version.output_keys),
                    )
            if words.value not in body:
                self.fail(f"Output {name} has no {words.value}", path)
            result[name] = OutputDefinition(
                name=name,
                value=self._functions(body.get(words.value), path + (words.value,)),
                description=str(body.get(words.output_description) or ""),
                condition=self._condition(body.get(words.condition), path + (words.condition,), f"Output {name}"),
            )
        return result

    def _check_references(self, template: Template) -> None:
        """Every get_resource/get_attr/depends_on names a resource, every get_param a parameter."""
        # Every name declared counts, even of a resource too broken to read (already
        # reported): a second error about references to it would only mislead.
        words = template.version.keywords
        section = template.data.get(words.resources)
        names = {str(name): None for name in section} if isinstance(section, dict) else {}
        declared = template.data.get(words.parameters)
        params = {str(name) for name in declared} if isinstance(declared, dict) else set()
        params |= set(template.version.pseudo_parameters)
        for definition in template.resources.values():
            base = (words.resources, definition.name)
            for index, target in enumerate(definition.depends_on):
                if target not in names:
                    self.fail(
                        f'"{target}" (in {words.depends_on}) is not a resource in the template',
                        base + (words.depends_on, index),
                        _hint(target, names),
                    )
                elif target == definition.name:
                    self.fail("A resource cannot depend on itself", base + (words.depends_on, index))
            self._check_functions(definition.properties_data, names, params, definition.name)
            self._check_functions(definition.metadata, names, params, definition.name)
            self._check_functions(definition.update_policy, names, params)
            self._check_functions(definition.external_id, names, params)
            self._check_functions(definition.condition, names, params)
        for output in template.outputs.values():
            self._check_functions(output.value, names, params, lazy="The output will show this error instead of a value")
            self._check_functions(output.condition, names, params, lazy="The output will show this error instead of a value")
        for name, condition in template.conditions.items():
            # As Heat, a condition nothing uses is never evaluated (TripleO's rendered
            # templates keep such conditions, naming parameters they do not declare).
            unused = None if name in self.used_conditions else _unused_note(name)
            self._check_functions(condition, names, params, lazy=unused)

    def _used_conditions(self, template: Template) -> set[str]:
        """The conditions a resource or output uses, directly or through others."""
        roots: list[str] = []
        for definition in template.resources.values():
            if isinstance(definition.condition, str):
                roots.append(definition.condition)
            for data in (definition.condition, definition.properties_data, definition.metadata, definition.update_policy, definition.external_id, definition.deletion_policy):
                roots.extend(name for name, _ in conditions_module.referenced_names(data))
        for output in template.outputs.values():
            if isinstance(output.condition, str):
                roots.append(output.condition)
            for data in (output.condition, output.value):
                roots.extend(name for name, _ in conditions_module.referenced_names(data))
        return conditions_module.used_conditions(template.conditions, iter(roots))

    def _check_duplicate_names(self, template: Template) -> None:
        """No resource may share a name with a parameter, pseudo parameters included
        (Heat's Stack.validate: ``Duplicate names {'web'}``). Heat compares the resources
        whose condition holds; every declared resource counts here."""
        words = template.version.keywords
        resources = template.data.get(words.resources)
        declared = template.data.get(words.parameters)
        params = {str(name) for name in declared} if isinstance(declared, dict) else set()
        params |= set(template.version.pseudo_parameters)
        for name in resources if isinstance(resources, dict) else ():
            if str(name) in params:
                self.fail(
                    f"Duplicate names {{{str(name)!r}}}",
                    (words.resources, str(name)),
                    hint=f"a resource and a parameter cannot share the name '{name}': rename one of them",
                )

    def _check_condition_names(self, template: Template) -> None:
        """Every condition named literally exists, and no conditions name each other in a
        cycle. (Heat finds these only when it evaluates the condition; a misspelt name is
        refused here even where Heat would never evaluate it.)"""
        words = template.version.keywords
        declared = template.conditions
        section = template.data.get(words.conditions)
        known = {str(name) for name in section} if isinstance(section, dict) else set()
        # (name, path, why Heat may never look it up: None when it always does)
        uses: list[tuple[str, tuple, str | None]] = []
        for condition_name, condition in declared.items():
            unused = None if condition_name in self.used_conditions else _unused_note(condition_name)
            uses.extend((target, path, unused) for target, path in conditions_module.referenced_names(condition))
        in_branch = _IN_BRANCH
        for name, definition in template.resources.items():
            path = (words.resources, name, words.condition)
            if isinstance(definition.condition, str):
                uses.append((definition.condition, path, None))
            for data in (definition.condition, definition.properties_data, definition.metadata, definition.update_policy, definition.external_id, definition.deletion_policy):
                uses.extend((target, spot, in_branch if branch else None) for target, spot, branch in conditions_module.condition_uses(data))
        for name, output in template.outputs.items():
            if isinstance(output.condition, str):
                uses.append((output.condition, (words.outputs, name, words.condition), None))
            for data in (output.condition, output.value):
                uses.extend((target, spot, in_branch if branch else None) for target, spot, branch in conditions_module.condition_uses(data))
        for target, path, lenient in uses:
            if target not in known:
                hint = _hint(target, known) or (
                    "declared conditions: " + ", ".join(sorted(known)) if known else "the template declares no conditions"
                )
                if lenient:
                    self.warn(f'Invalid condition "{target}". {lenient}', path, hint)
                else:
                    self.fail(f'Invalid condition "{target}"', path, hint)
        cycle = conditions_module.find_cycle(declared)
        if cycle:
            self.fail(
                f'Circular definition for condition "{cycle[0]}"',
                (words.conditions, cycle[0]),
                hint=" -> ".join(cycle),
            )

    def _check_functions(self, data: Any, names: Mapping[str, Any], params: set[str], owner: str | None = None, lazy: str | None = None) -> None:
        """``owner``: the resource whose properties or metadata hold ``data``; it may not
        refer to itself (Heat reports that as a circular dependency). ``lazy``: an
        output's, where (as in Heat, whose get_param checks nothing until it resolves) a
        parameter the template lacks is the output's ``output_error``, or an unused
        condition's, never evaluated: a warning, ending with ``lazy``'s sentence."""
        if isinstance(data, Function):
            if isinstance(data, GetParam):
                target = data.parameter_name()
                if target is not None and target not in params:
                    message = f"The Parameter ({target}) was not defined in template."
                    if lazy:
                        path = format_path(data.path)
                        self.warnings.append(
                            TemplateWarning(f"{message} {lazy}", path=path or None, location=self.document.locate(path), hint=_hint(target, params))
                        )
                    else:
                        self.fail(message, data.path, _hint(target, params))
            elif isinstance(data, Ref):
                if data.args not in names and data.args not in params:
                    self.fail(
                        f'The specified reference "{data.args}" (in Ref) is neither a resource nor a parameter of the template',
                        data.path + (data.fn_name,),
                        _hint(data.args, list(names) + sorted(params)),
                    )
                elif data.args == owner and data.args in names:
                    self.fail(f"Circular dependency: resource {owner} refers to itself (in Ref)", data.path + (data.fn_name,))
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
            if isinstance(data, If):
                # As Heat, only the branch the condition takes is ever resolved: a
                # parameter the template lacks there is refused when it is taken
                # (conditions.select_active), a warning until then.
                self._check_functions(data.args[0], names, params, owner, lazy)
                self._check_functions(data.args[1:], names, params, owner, lazy or _IN_BRANCH)
            else:
                self._check_functions(data.args, names, params, owner, lazy)
        elif isinstance(data, dict):
            for value in data.values():
                self._check_functions(value, names, params, owner, lazy)
        elif isinstance(data, list):
            for item in data:
                self._check_functions(item, names, params, owner, lazy)
