"""Whole-stack validation: everything that can be known before any handler runs.

Collects every problem (parameters, unknown types, property values, attribute names,
dependency cycles) with its template path and file position, instead of stopping at the
first. Values that depend on resources not yet created are ``UNRESOLVED`` and checked
again, with real values, just before the resource's handler runs.

Not ``strict`` (Heat's template-validate, which builds the stack with
``strict_validate=False``): parameter values are not needed and not judged. A parameter
without a value, or with a value create would refuse, is a note of what create would need,
and what uses it is checked as far as it can be without it; custom constraints (which
ask a cloud) are not checked at all. Errors in the template itself stay errors.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from difflib import get_close_matches
from typing import Any

from stoker.engine.implicit import implicit_dependencies
from stoker.engine.stack import dependency_graph, parameter_values
from stoker.environment.environment import Environment
from stoker.environment.registry import ResourceRegistry, UnknownResourceTypeError
from stoker.graph import CycleError
from stoker.masking import HiddenValues
from stoker.sdk import support
from stoker.sdk.clients import Clients
from stoker.sdk.exceptions import (
    ClientPluginError,
    PropertyErrors,
    StokerError,
    UnknownClientPluginError,
    ValidationError,
)
from stoker.sdk.properties import UNRESOLVED, contains_unresolved
from stoker.sdk.resource import Resource, overrides_fn_get_att
from stoker.sdk.stack_resource import StackResource
from stoker.sdk.support import SupportStatus
from stoker.sdk.translation import apply_rules, resource_rules
from stoker.store import StackRecord
from stoker.template import parameters as parameters_module
from stoker.template.errors import NestedStackErrors, TemplateError, TemplateErrors
from stoker.template.functions.base import resolve
from stoker.template.hot import Template

_UNDEFINED_PARAMETER = re.compile(r"The Parameter \((.*)\) was not defined in template\.")


class _Unchecked:
    """A registered custom constraint, not checked (template-validate asks no cloud)."""

    @staticmethod
    def validate(value: Any, context: Any) -> bool:
        return True


# Who may use which resource types (Heat's ``resource_types:<type>`` policy): the API
# sets it for the request's caller; every validation of the request (nested stacks'
# too) asks it about each type its template names, and it raises when one is refused.
type_check: ContextVar[Callable[[str], None] | None] = ContextVar("stoker_type_check", default=None)


class TypeRefusedError(StokerError):
    """What ``type_check`` raises for a type the caller may not use: the request is
    refused as a whole (a nested stack's refusal is not one of its parent's problems)."""


class ValidationContext:
    """Resolves parameters for real and everything about resources as UNRESOLVED,
    checking that referenced attributes exist on the target's type."""

    def __init__(
        self,
        template: Template,
        params: Mapping[str, Any],
        classes: Mapping[str, type[Resource]],
        errors: list[TemplateError],
        registry: ResourceRegistry,
        strict: bool = True,
    ):
        self.registry = registry
        self.template = template
        self.params = params
        self.classes = classes
        self.errors = errors
        self.strict = strict
        # The id of the stack a create or update validates (its lookups are handed over).
        self.validates_stack: str | None = None
        # The stack validated, whose user a lookup in the cloud acts for (a nested stack
        # validated by its parent's job acts with the tree's trust: trusts.py).
        self.stack: StackRecord | None = None

    def parameter(self, name: str) -> Any:
        if name not in self.params:
            return UNRESOLVED
        return self.params[name]

    def has_resource(self, name: str) -> bool:
        return name in self.template.resources

    def resource_reference(self, name: str) -> Any:
        return UNRESOLVED

    def resource_attribute(self, name: str, attribute: str, path: tuple) -> Any:
        return UNRESOLVED

    def resource_attributes(self, name: str) -> Any:
        return UNRESOLVED

    def custom_constraint(self, name: str) -> Any:
        found = self.registry.constraints.get(name)
        if found is None or self.strict:
            return found
        return _Unchecked  # template-validate judges no value (Heat: with_value=False)

    def condition(self, name: str) -> Any:
        return UNRESOLVED

    def client(self, name: str) -> Any:
        return Clients(self.registry.clients, self, settings=self.registry.client_settings).client(name)


class _NestedValidation:
    """``NestedStacks`` while validating: a nested stack's template is validated as a
    stack of its own, one level deeper, and its result kept for ``--show-nested``."""

    def __init__(
        self,
        environment: Environment,
        registry: ResourceRegistry,
        files: Mapping[str, str],
        depth: int,
        max_depth: int,
        chain: tuple[str, ...],
        strict: bool = True,
        acting_for: StackRecord | None = None,
    ):
        self.strict = strict
        self.chain = chain
        # The stack being validated: the user a nested template's lookups act for.
        self.acting_for = acting_for
        self.environment = environment
        self.registry = registry
        self.files = files
        self.depth = depth
        self.max_depth = max_depth
        self.results: dict[str, ValidationResult] = {}

    def __call__(self, resource: Resource) -> _NestedValidation:
        return self

    def validate(self, resource: Resource, template: Any, params: Mapping[str, Any], resource_count: int | None = None) -> None:
        from stoker.engine.nested import child_environment, child_template, depth_error, errors_text

        source = resource.child_source() if isinstance(resource, StackResource) else None
        if source is not None and source[1] in self.chain:
            loop = " -> ".join((*self.chain[self.chain.index(source[1]) :], source[1]))
            raise ValidationError(
                f"The template resource {source[1]} contains itself ({loop}): its nested stacks would never end",
                path=f"resources.{resource.name}.type",
                hint="break the loop; a template may not use itself, directly or through others",
            )
        if self.depth + 1 > self.max_depth:
            raise depth_error(self.depth + 1, self.max_depth, resource.name)
        where = f"resources.{resource.name}"
        chain = self.chain + ((source[1],) if source is not None else ())
        # A value not known yet (an attribute of a resource not created) is no value
        # given: the child is then validated as template-validate does, as deeply as it
        # goes without it (types, property names, functions), its parameter noted.
        given = params
        params = {key: value for key, value in given.items() if not contains_unresolved(value)}
        strict = self.strict and len(params) == len(given)
        try:
            parsed = child_template(resource, template, self.files, collect=True)
            result = validate(
                parsed,
                child_environment(
                    self.environment, resource.name, self.registry.user_template_path(resource.type, self.environment.type_aliases(), resource.name)
                ),
                params,
                self.registry,
                depth=self.depth + 1,
                max_depth=self.max_depth,
                chain=chain,
                strict=strict,
                unknown=frozenset(key for key in given if key not in params),
                acting_for=self.acting_for,
            )
        except TemplateErrors as problems:
            raise NestedStackErrors(errors_text(problems), problems.errors, path=where)
        result.resource_count = resource_count
        result.source = source[1] if source is not None else None
        if isinstance(resource, StackResource):
            result.count_property = resource.member_count_property()
        self.results[resource.name] = result


class _ValidationHooks:
    """Engine hooks while validating: client plugins work (properties groups ask them for
    API versions, custom constraints for lookups); nothing may be persisted."""

    def __init__(self, clients: Clients, nested_stacks: _NestedValidation | None = None):
        self.clients = clients
        self.nested_stacks = nested_stacks

    def resource_id_set(self, resource: Resource, physical_id: str | None) -> None:
        raise StokerError("resource_id_set() may not be called during validation")

    def data_changed(self, resource: Resource) -> None:
        raise StokerError("data_set() may not be called during validation")

    def signals(self, resource: Resource) -> Any:
        """Signals read-only: nothing is received before a stack exists."""
        from stoker.engine.signals import ResourceSignals

        return ResourceSignals(None, getattr(resource.stack, "id", ""), resource.uuid, read_only=True)

    def client_plugin(self, resource: Resource, name: str | None) -> Any:
        return self.clients.client_plugin(name)

    def now(self) -> float:
        return time.time()


@dataclass
class ValidationResult:
    template: Template
    params: dict[str, Any]
    classes: dict[str, type[Resource]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    # resource name -> the validation of its nested stack (nested stack resources only)
    nested: dict[str, ValidationResult] = field(default_factory=dict)
    # How many resources the stack will have, when ``template`` stands for more (a
    # group's nested stack is validated with one member of ``count``).
    resource_count: int | None = None
    # The property of the parent resource that gives ``resource_count`` (a group's
    # ``count``), to name it when the tree is over the resource limit (engine.trees).
    count_property: str | None = None
    # Not strict: what create would need that validate does not (parameter values).
    notes: list[str] = field(default_factory=list)
    # The values given for parameters (environment's and request's, or for a nested
    # stack its parent's), where known: Heat's user values.
    given: dict[str, Any] = field(default_factory=dict)
    # The environment's parameter_defaults (they replace the template's defaults).
    defaults: dict[str, Any] = field(default_factory=dict)
    # resource name -> the resources its type's rules say it follows (engine.implicit),
    # which the template does not state: the create's order needs them (previews).
    implicit: dict[str, set[str]] = field(default_factory=dict)
    # A nested stack's template file (a template resource's, a get_file'd one), to name
    # it in the warnings its parent shows; None for a generated or inline template.
    source: str | None = None


def _attribute_errors(template: Template, classes: Mapping[str, type[Resource]]) -> list[TemplateError]:
    """get_attr must name an attribute the target type has (unless it accepts anything)."""
    from stoker.template.functions.access import GetAttr

    problems = []

    def visit(data: Any) -> None:
        if isinstance(data, GetAttr):
            target, *rest = data.args
            cls = classes.get(target)
            known = cls.all_attributes_schema() if cls is not None else {}
            name = rest[0] if rest and isinstance(rest[0], str) else None
            # A group's attributes are its members'; ``resource.<member>`` names a member.
            # A deployment's attributes include its config's outputs.
            dynamic = cls is not None and (
                cls.dynamic_attributes
                or overrides_fn_get_att(cls)  # its names are the plugin's to check (seed 001)
                or (issubclass(cls, StackResource) and (name or "").startswith(cls.MEMBER_PREFIX))
            )
            if (
                cls is not None
                and name is not None
                and not cls.accepts_any_property
                and not dynamic
                and name not in known
            ):
                close = get_close_matches(rest[0], list(known), n=1)
                problems.append(
                    TemplateError(
                        f"The Referenced Attribute ({target} {rest[0]}) is incorrect.",
                        path=".".join(str(p) for p in data.path) + f".{data.fn_name}",
                        hint=f"did you mean '{close[0]}'?"
                        if close
                        else "attributes: " + ", ".join(sorted(known)),
                    )
                )
            for arg in data.args:
                visit(arg)
        elif hasattr(data, "args") and hasattr(data, "fn_name"):
            visit(data.args)
        elif isinstance(data, dict):
            for value in data.values():
                visit(value)
        elif isinstance(data, list):
            for item in data:
                visit(item)

    for definition in template.resources.values():
        visit(definition.properties_data)
        visit(definition.metadata)
    for output in template.outputs.values():
        visit(output.value)
    return problems


def validate(
    template: Template,
    environment: Environment,
    user_params: Mapping[str, Any],
    registry: ResourceRegistry,
    stack: StackRecord | None = None,
    depth: int = 0,
    max_depth: int = 5,
    chain: tuple[str, ...] = (),
    strict: bool = True,
    hand_over: bool = True,
    unknown: frozenset[str] = frozenset(),
    acting_for: StackRecord | None = None,
) -> ValidationResult:
    """Validate a stack definition; raise TemplateErrors listing every problem
    (including those the template reader collected). Not ``strict`` (Heat's
    template-validate): see the module's docstring. ``hand_over``: the stack's action
    follows, and reads what this validation looked up (not for a preview). ``unknown``:
    a nested stack's parameters whose values are not known yet (not strict).
    ``acting_for``: without ``stack`` (a nested template validated within its parent's
    validation), the stack whose user lookups in the cloud act for."""
    acting = stack if stack is not None else acting_for
    errors: list[TemplateError] = [_heat_text(error, template) for error in template.problems]
    stack_name = stack.name if stack else "stack"
    stack_id = stack.id if stack else "None"
    notes: list[TemplateError] = []
    if strict:
        try:
            params = parameter_values(template, environment, user_params, stack_name, stack_id, getattr(stack, "project_id", ""), registry=registry, stack=acting)
        except TemplateErrors as refused:
            errors.extend(refused.errors)
            params = {}
    else:
        params = _lenient_parameter_values(template, environment, user_params, stack_name, stack_id, errors, notes, unknown)
    # Validate what would run: inactive resources dropped (their types never looked
    # up), each `if` decided, deletion policies given by functions resolved. Without
    # every parameter's value (template-validate), what needs a missing one stays
    # undecided: such a resource is validated as if its condition held, with a note.
    partial = not all(name in params for name in template.parameters)
    try:
        if partial:
            active = template.active_definitions(params, partial=True)
            template = replace(template, resources=active.resources, outputs=active.outputs)
            notes.extend(
                TemplateError(
                    "Its condition needs parameter values not given: validated as if it held",
                    path=f"resources.{name}.condition",
                )
                for name in active.undecided_resources
            )
        else:
            template = template.with_conditions(params)
    except TemplateErrors as refused:
        errors.extend(refused.errors)
    aliases = environment.type_aliases()
    classes: dict[str, type[Resource]] = {}
    check_type = type_check.get()
    for name, definition in template.resources.items():
        if check_type is not None and isinstance(definition.resource_type, str):
            check_type(definition.resource_type)  # the caller may not use it: refused as a whole
        try:
            classes[name] = registry.get_class(definition.resource_type, aliases, template.files, name)
        except UnknownResourceTypeError as error:
            errors.append(TemplateError(str(error), path=f"resources.{name}.type"))
        except StokerError as error:  # a template resource whose template is invalid
            errors.append(
                TemplateError(error.message, path=f"resources.{name}.type", hint=error.hint)
            )
    errors.extend(_attribute_errors(template, classes))
    for name, cls in classes.items():
        if template.resources[name].deletion_policy == "Snapshot" and not callable(getattr(cls, "handle_snapshot_delete", None)):
            errors.append(
                TemplateError(
                    f'"Snapshot" deletion policy not supported by {template.resources[name].resource_type}',
                    path=f"resources.{name}.deletion_policy",
                    hint="use Delete or Retain",
                )
            )
    context = ValidationContext(template, params, classes, errors, registry, strict)
    # The stack's first action, which follows at once, reads what this validation looked
    # up in the cloud instead of asking again (LookupCache: for a minute, in this process).
    context.validates_stack = stack.id if stack is not None and strict and hand_over else None
    context.stack = acting
    # The template files this one is nested in (template resources), to name a loop.
    chain = chain or ((template.document.file,) if template.document.file else ())
    nested = _NestedValidation(environment, registry, template.files, depth, max_depth, chain, strict, acting)
    hooks = _ValidationHooks(Clients(registry.clients, context, settings=registry.client_settings), nested)
    warnings: list[str] = []

    def resolver(value: Any) -> Any:
        return resolve(value, context)

    for name, cls in classes.items():
        definition = template.resources[name]
        if definition.external_id is not None:
            continue  # an existing physical resource: its properties are not applied (Heat)
        try:
            instance = cls(name, definition.bind(resolver), stack or _Placeholder(stack_name, stack_id), context=context, hooks=hooks)
            if not strict:
                # No name is looked up in a cloud (Heat validates no value here).
                # Only a rule naming a client plugin that is not registered is kept: it
                # fails at its property without calling any client (a plugin's mistake
                # that create would meet).
                apply_rules(
                    instance.properties,
                    resource_rules(instance, instance.properties),
                    instance.client_plugin,
                    client_resolve=False,
                    known_clients=registry.clients.known_names(),
                )
            problems = instance.properties.errors()
        except TypeRefusedError:
            raise
        except StokerError as error:
            errors.append(TemplateError.of(error, f"resources.{name}"))
            continue
        # Not strict, Heat judges property names only (Properties.validate with_value=
        # False) and calls no plugin's own checks (validate_template only): what they
        # find is a note of what create would refuse; what only a cloud could judge is
        # left to create. A nested stack is still read, for its parameters.
        judged = errors if strict else notes
        sound = not problems
        # An unknown property name stays an error, a typo create would refuse, except
        # on a template resource: its properties are its template's parameters, which
        # Heat's template-validate does not hold them to.
        names_judged = errors if not getattr(cls, "template_name", "") else judged
        for problem in problems:
            found = names_judged if problem.message.startswith("Unknown Property") else judged
            if isinstance(problem, UnknownClientPluginError):
                found = errors  # no value of the user's can mend it: refused, not a note
            found.append(TemplateError(problem.message, path=problem.path, hint=problem.hint))
        known = sound and not any(contains_unresolved(instance.properties[key]) for key in instance.properties)
        if known:
            try:
                instance.validate()
            except TypeRefusedError:
                raise
            except PropertyErrors as several:  # every properties group broken, each in its place
                judged.extend(TemplateError(p.message, path=p.path, hint=p.hint) for p in several.errors)
                sound = False
            except StokerError as error:
                if strict or not isinstance(error, ClientPluginError):
                    judged.append(TemplateError.of(error, f"resources.{name}"))
                sound = False
        if isinstance(instance, StackResource) and (sound or not strict):
            try:
                instance.validate_nested()
            except TypeRefusedError:
                raise
            except NestedStackErrors as error:  # the nested template's own problems
                errors.append(TemplateError.of(error, f"resources.{name}"))
            except StokerError as error:
                if known:
                    errors.append(TemplateError.of(error, f"resources.{name}"))
                else:
                    notes.append(_not_validated(name, error))
            except Exception as error:  # noqa: BLE001 - read as far as it goes without the values it lacks
                if known:
                    raise
                notes.append(_not_validated(name, error))
    implicit: dict[str, set[str]] = {}
    try:
        def plugin_class(type_name: str) -> type[Resource]:
            return registry.get_class(type_name, aliases, template.files)

        implicit = implicit_dependencies(template.resources, plugin_class, params.__getitem__)
        dependency_graph(template.resources, implicit).check_acyclic()
    except CycleError as error:
        errors.append(TemplateError(str(error), path=f"resources.{error.cycle[0]}", hint="remove one of these dependencies"))
    # A property error (or note) quotes the value it refuses, which may be a hidden parameter's.
    hidden = HiddenValues.of(template.parameters, user_params, params, environment.parameters, environment.parameter_defaults)
    if errors:
        for found_error in errors:
            template.place(found_error)  # position, and the path as the template spells it
            found_error.message = hidden.text(found_error.message)
            found_error.args = (found_error.message,)
        raise TemplateErrors(errors)
    # What Heat accepts silently that an author may not mean (the reader's warnings).
    warnings.extend(hidden.text(str(warning)) for warning in template.warnings)
    warnings.extend(hidden.text(str(problem)) for problem in _output_problems(template, resolver))
    warnings.extend(support_warnings(template, classes))
    # A nested stack's warnings are its parent's too (a deprecated type used in a
    # template resource), each under the resource that makes the stack.
    warnings.extend(f"resources.{name}: {line}" for name, child in nested.results.items() for line in nested_warnings(child))
    for note in notes:
        template.place(note)
        note.message = hidden.text(note.message)
    # What a nested stack's validation left for create (a parameter whose value is not
    # known yet among them), under the resource that makes it.
    nested_notes = [f"resources.{name}: nested stack: {note}" for name, child in nested.results.items() for note in child.notes]
    given = {key: value for key, value in {**environment.parameters, **user_params}.items() if not contains_unresolved(value)}
    return ValidationResult(
        template, params, classes, warnings, nested.results,
        notes=[str(note) for note in notes] + nested_notes, given=given, defaults=dict(environment.parameter_defaults), implicit=dict(implicit),
    )


def nested_warnings(child: ValidationResult) -> list[str]:
    """A nested stack's warnings (its own nested stacks' among them), each saying which
    template it is in: ``nested stack child.yaml: resources.x.type: ...``. A warning that
    already starts with the template's position is not told the name twice."""
    lines = []
    for warning in child.warnings:
        located = child.source is not None and warning.startswith(f"{child.source}:")
        where = "nested stack" if located or child.source is None else f"nested stack {child.source}"
        lines.append(f"{where}: {warning}")
    return lines


def _not_validated(name: str, error: Exception) -> TemplateError:
    """A note: a nested stack that could not be read without values not known yet."""
    return TemplateError(
        f"Its nested stack was not validated: it needs values known only once resources exist ({error})",
        path=f"resources.{name}",
    )


def _output_problems(template: Template, resolver: Callable[[Any], Any]) -> list[TemplateError]:
    """What an output's functions will fail with, as far as known before any resource
    exists. Heat resolves an output only when it is shown, and its failure is that
    output's error (the stack's action completes): a warning here, not an error."""
    problems = []
    for name, output in template.outputs.items():
        try:
            resolver(output.value)
        except StokerError as error:
            problem = TemplateError.of(error, f"outputs.{name}.value")
            problem.message += ". The output will show this error instead of a value"
            problems.append(template.place(problem))
    return problems


def _lenient_parameter_values(
    template: Template,
    environment: Environment,
    user_params: Mapping[str, Any],
    stack_name: str,
    stack_id: str,
    errors: list[TemplateError],
    notes: list[TemplateError],
    unknown: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """Parameter values for template-validate (Heat's ``validate_value=False``): a value
    missing, or one create would refuse, is a note and the parameter stays unresolved; a
    parameter the template does not declare, or a template default that breaks its own
    constraints (Heat's schema check), is an error. Custom constraints are not checked."""
    pseudo = {parameters_module.STACK_NAME: stack_name, parameters_module.STACK_ID: stack_id, parameters_module.PROJECT_ID: ""}
    given = {**environment.parameters, **user_params}
    values, problems = parameters_module.resolve_values(template.parameters, given, environment.parameter_defaults, pseudo, None)
    reported = {error.path for error in template.problems}
    for problem in problems:
        name = (problem.path or "").split(".", 1)[-1]
        schema = template.parameters.get(name)
        if schema is None or (name not in given and name not in environment.parameter_defaults and schema.default is not None):
            if f"{problem.path}.default" not in reported:  # the reader names a bad default already
                errors.append(problem)
        else:
            if name in unknown:  # given, by a value not known yet: no user's mistake
                problem = TemplateError(
                    f"The Parameter ({name}) is given a value known only once the parent's resources exist: "
                    "what uses it was validated without it",
                    path=problem.path,
                )
            if problem.location is None:
                problem.location = template.document.locate(problem.path)
            notes.append(problem)
    return values


def _heat_text(error: TemplateError, template: Template) -> TemplateError:
    """Heat's text for a problem its clients and tests match: a ``get_param`` of a
    parameter the template lacks, in a resource's properties, is (from Heat's
    properties validation) ``Property error: : <path>: : The Parameter (x) was not
    provided.``; the path, as the template spells it, is then in the message only."""
    match = _UNDEFINED_PARAMETER.fullmatch(error.message)
    parts = (error.path or "").split(".")
    if match and len(parts) >= 4 and parts[0].lower() == "resources" and parts[2].lower() == "properties":
        template.place(error)
        parts = (error.path or "").split(".")
        prop = re.split(r"[\[.]", parts[3], maxsplit=1)[0]
        error.message = f"Property error: : {'.'.join(parts[:3])}.{prop}: : The Parameter ({match.group(1)}) was not provided."
        error.args = (error.message,)
        error.path = None
    return error


def _support_note(kind: str, name: str, status: SupportStatus) -> str | None:
    """A warning for a DEPRECATED or HIDDEN object, carrying the message of its chain."""
    if status.status not in (support.DEPRECATED, support.HIDDEN):
        return None
    message = status.message
    previous = status.previous_status
    while not message and previous is not None:
        message = previous.message
        previous = previous.previous_status
    since = f" since {status.version}" if status.version else ""
    return f"{kind} {name} is {status.status}{since}" + (f": {message}" if message else "")


def support_warnings(template: Template, classes: Mapping[str, type[Resource]]) -> list[str]:
    """Warnings for deprecated (or hidden) types, properties and attributes a template uses."""
    from stoker.template.functions.access import GetAttr
    from stoker.template.functions.base import Function

    warnings: list[str] = []
    for name, definition in template.resources.items():
        cls = classes.get(name)
        if cls is None:
            continue
        note = _support_note("resource type", definition.resource_type, cls.support_status)
        if note:
            warnings.append(f"resources.{name}.type: {note}")
        _property_notes(cls.properties_schema, definition.properties_data, f"resources.{name}.properties", warnings)

    def visit(data: Any, where: str) -> None:
        if isinstance(data, GetAttr):
            target, *rest = data.args
            cls = classes.get(target)
            if cls is not None and rest and isinstance(rest[0], str) and rest[0] in cls.attributes_schema:
                note = _support_note("attribute", f"{target}.{rest[0]}", cls.attributes_schema[rest[0]].support_status)
                if note:
                    warnings.append(f"{where}: {note}")
        if isinstance(data, Function):
            visit(data.args, where)
        elif isinstance(data, dict):
            for value in data.values():
                visit(value, where)
        elif isinstance(data, list):
            for item in data:
                visit(item, where)

    for name, definition in template.resources.items():
        visit(definition.properties_data, f"resources.{name}.properties")
    for name, output in template.outputs.items():
        visit(output.value, f"outputs.{name}.value")
    return warnings


def _property_notes(schemata: Mapping[str, Any], data: Any, path: str, warnings: list[str]) -> None:
    if not isinstance(data, Mapping):
        return
    for key, value in data.items():
        schema = schemata.get(key)
        if schema is None:
            continue
        note = _support_note("property", key, schema.support_status)
        if note:
            warnings.append(f"{path}.{key}: {note}")
        if isinstance(schema.schema, Mapping):
            if isinstance(value, Mapping):
                _property_notes(schema.schema, value, f"{path}.{key}", warnings)
            elif isinstance(value, list) and schema.type == schema.LIST:
                for index, item in enumerate(value):
                    _property_notes(schema.schema, item, f"{path}.{key}[{index}]", warnings)
        elif schema.schema is not None and isinstance(value, list) and isinstance(schema.schema.schema, Mapping):
            for index, item in enumerate(value):
                _property_notes(schema.schema.schema, item, f"{path}.{key}[{index}]", warnings)


@dataclass
class _Placeholder:
    name: str
    id: str


def check_resource_limit(template: Template, limit: int) -> None:
    """max_resources_per_stack for one template's own resources (-1: no limit): the
    quick refusal before validation; the whole tree is counted after it (engine.trees)."""
    if limit >= 0 and len(template.resources) > limit:
        raise ValidationError(
            f"The template has {len(template.resources)} resources; a stack may have at most {limit}",
            path="resources",
            hint="raise max_resources_per_stack (STOKER_MAX_RESOURCES_PER_STACK), or split the stack",
        )
