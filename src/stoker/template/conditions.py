"""The conditions section, and the resources and outputs it leaves active.

Owns: evaluating named conditions against parameter values (memoised, with cycle
detection), the checks of condition names and cycles made while reading, expanding each
``if`` to its chosen value, and choosing the active resource and output definitions as
Heat does (``resource_definitions`` and ``outputs`` with conditions):

- a resource whose condition is false is not part of the stack;
- an output whose condition is false is kept, with the value None;
- ``depends_on`` naming an inactive resource is dropped;
- get_resource, get_attr or Ref of an inactive resource in an active resource or output is an
  error (Heat: 'The specified reference "X" (in Y) is incorrect.'), unless it sits in the
  branch of an ``if`` that is not chosen.

Must not: read resources; condition expressions may only read parameters.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field, replace
from difflib import get_close_matches
from typing import Any

from stoker.sdk.properties import UNRESOLVED
from stoker.template.definitions import OutputDefinition, ResourceDefinition
from stoker.template.errors import TemplateError, TemplateErrors, format_path
from stoker.template.functions.access import GetAttr, GetParam, GetResource
from stoker.template.functions.base import OMITTED, Function, resolve, to_template, walk
from stoker.template.functions.cfn import Ref
from stoker.template.functions.conditions import If, literal_names

_IN_PROGRESS = object()


def _did_you_mean(name: Any, names: Mapping[str, Any]) -> str | None:
    close = get_close_matches(str(name), [str(n) for n in names], n=1)
    if close:
        return f"did you mean '{close[0]}'?"
    return "declared conditions: " + ", ".join(map(str, names)) if names else "the template declares no conditions"


class Conditions:
    """The named conditions of one template, evaluated against parameter values.

    It is the ResolutionContext of condition expressions: ``parameter`` and ``condition``
    answer; anything about resources is refused (the parser never lets it in).
    """

    def __init__(self, definitions: Mapping[str, Any], parameters: Mapping[str, Any], partial: bool = False):
        self.definitions = definitions
        self.parameters = parameters
        # Template-validate without every parameter's value: a parameter not given is
        # UNRESOLVED, and so is every condition that needs it.
        self.partial = partial
        self.values: dict[str, Any] = {}

    def parameter(self, name: str) -> Any:
        try:
            return self.parameters[name]
        except KeyError:
            if self.partial:
                return UNRESOLVED
            raise TemplateError(f"The Parameter ({name}) was not provided.", path=f"parameters.{name}")

    def has_resource(self, name: str) -> bool:
        return False

    def resource_reference(self, name: str) -> Any:
        raise TemplateError("A condition cannot refer to a resource")

    def resource_attribute(self, name: str, attribute: str, path: tuple[Any, ...]) -> Any:
        raise TemplateError("A condition cannot refer to a resource")

    def resource_attributes(self, name: str) -> Any:
        raise TemplateError("A condition cannot refer to a resource")

    def condition(self, name: str) -> Any:
        """The value of the named condition (True, False, or UNRESOLVED)."""
        if name not in self.definitions:
            raise TemplateError(f'Invalid condition "{name}"', hint=_did_you_mean(name, self.definitions))
        value = self.values.get(name)
        if value is _IN_PROGRESS:
            raise TemplateError(f'Circular definition for condition "{name}"', path=f"conditions.{name}")
        if value is None:
            definition = self.definitions[name]
            self.values[name] = _IN_PROGRESS
            try:
                value = resolve(definition, self)
            finally:
                del self.values[name]
            if value is not UNRESOLVED and not isinstance(value, bool):
                raise TemplateError(
                    f'The definition of condition "{name}" is invalid: {to_template(definition)!r}',
                    path=f"conditions.{name}",
                    hint=f"it gives {value!r}; a condition must give true or false",
                )
            self.values[name] = value
        return value

    def is_enabled(self, expression: Any, where: tuple) -> Any:
        """The value of a condition expression (a name, a boolean, a condition function,
        or None for "no condition"). Errors name ``where`` unless they know better."""
        try:
            value = resolve(expression, self)
            if value is None or isinstance(value, bool) or value is UNRESOLVED:
                return True if value is None else value
            if isinstance(value, str):
                return self.condition(value)
            raise TemplateError(f'Invalid condition "{value}"', hint="give a condition name, true or false, or a condition function")
        except TemplateError as error:
            if error.path is None:
                error.path = format_path(where)
            raise

    def evaluate_all(self) -> dict[str, bool]:
        """Every named condition, in the order of the section."""
        return {name: self.condition(name) for name in self.definitions}


def expand(data: Any, conditions: Conditions, in_function: bool = False) -> Any:
    """``data`` with every ``if`` replaced by its chosen value, as Heat parses macros.

    A nullable ``if`` whose condition is false drops its map key or list item; inside a
    function's arguments ``OMITTED`` stays in place (the function's shape must not change)
    and ``resolve`` drops it there.
    """
    if isinstance(data, If):
        decision = _decide(data, conditions)
        if decision is UNRESOLVED:  # partial: kept, to be resolved as UNRESOLVED
            return data.with_args(expand(data.args, conditions, in_function=True))
        chosen = data.args[1] if decision else data.args[2]
        return expand(chosen, conditions, in_function)
    if isinstance(data, Function):
        return data.with_args(expand(data.args, conditions, in_function=True))
    if isinstance(data, dict):
        result = {}
        for key, value in data.items():
            value = expand(value, conditions, in_function)
            if value is not OMITTED or in_function:
                result[key] = value
        return result
    if isinstance(data, list):
        items = (expand(item, conditions, in_function) for item in data)
        return [item for item in items if item is not OMITTED or in_function]
    return data


def _decide(call: If, conditions: Conditions) -> Any:
    value = call.decide(conditions)
    if value is UNRESOLVED and not conditions.partial:
        raise call.error("The condition of this if depends on parameter values that are not known")
    return value


def _expand_top(data: Any, conditions: Conditions) -> Any:
    value = expand(data, conditions)
    return None if value is OMITTED else value


def referenced_names(data: Any) -> Iterator[tuple[str, tuple]]:
    """(condition name, path) for each name given literally in ``data``'s condition
    functions and ``if`` calls."""
    for function in walk(data):
        for name in literal_names(function):
            yield name, function.path + (function.fn_name,)


def condition_uses(data: Any, in_branch: bool = False) -> Iterator[tuple[str, tuple, bool]]:
    """(condition name, path, whether it sits in a branch of an ``if``) for each name
    given literally in ``data``. Heat evaluates only the branch an ``if`` takes, so a
    name in a branch is looked up only when that branch is taken."""
    if isinstance(data, Function):
        for name in literal_names(data):
            yield name, data.path + (data.fn_name,), in_branch
        if isinstance(data, If):
            yield from condition_uses(data.args[0], in_branch)
            for branch in data.args[1:]:
                yield from condition_uses(branch, True)
        else:
            yield from condition_uses(data.args, in_branch)
    elif isinstance(data, dict):
        for value in data.values():
            yield from condition_uses(value, in_branch)
    elif isinstance(data, list):
        for item in data:
            yield from condition_uses(item, in_branch)


def used_conditions(definitions: Mapping[str, Any], roots: Iterator[str]) -> set[str]:
    """The named conditions that ``roots`` (names used by resources and outputs) need,
    directly or through other conditions: the only ones Heat ever evaluates."""
    used: set[str] = set()
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in used or name not in definitions:
            continue
        used.add(name)
        pending.extend(target for target, _ in referenced_names(definitions[name]))
    return used


def find_cycle(definitions: Mapping[str, Any]) -> list[str] | None:
    """A cycle among conditions that name each other literally, as [a, b, ..., a]."""
    edges = {
        name: [target for target, _ in referenced_names(definition) if target in definitions]
        for name, definition in definitions.items()
    }
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in edges:
        if start in state:
            continue
        # Iterative DFS: the path of names, and for each the next edge to follow.
        path, cursors = [start], [0]
        state[start] = 1
        while path:
            name, cursor = path[-1], cursors[-1]
            if cursor < len(edges[name]):
                cursors[-1] += 1
                target = edges[name][cursor]
                if state.get(target) == 1:
                    return path[path.index(target) :] + [target]
                if target not in state:
                    state[target] = 1
                    path.append(target)
                    cursors.append(0)
            else:
                state[name] = 2
                path.pop()
                cursors.pop()
    return None


@dataclass(frozen=True)
class ActiveDefinitions:
    """What a template defines for given parameter values."""

    # active resources, each with its if calls expanded and its depends_on pruned
    resources: dict[str, ResourceDefinition]
    # every output; one whose condition is false has the value None (as in Heat)
    outputs: dict[str, OutputDefinition]
    # inactive resource name -> its condition as written
    inactive_resources: dict[str, Any] = field(default_factory=dict)
    inactive_outputs: tuple[str, ...] = ()
    # the named conditions that were evaluated (Heat evaluates only those needed)
    conditions: dict[str, bool] = field(default_factory=dict)
    # partial: the resources kept because their condition needs a parameter not given
    undecided_resources: tuple[str, ...] = ()


def select_active(
    condition_definitions: Mapping[str, Any],
    resources: Mapping[str, ResourceDefinition],
    outputs: Mapping[str, OutputDefinition],
    parameters: Mapping[str, Any],
    deletion_policies: Mapping[str, str] | None = None,
    partial: bool = False,
    declared: Collection[str] | None = None,
) -> ActiveDefinitions:
    """Evaluate conditions and expand ``if`` calls; raise TemplateErrors listing every
    problem. A deletion policy given by a function is resolved (``deletion_policies``:
    the version's spellings). ``partial``: parameters missing from ``parameters`` are not
    known; a resource whose condition needs one is kept (``undecided_resources``), and
    an ``if`` whose condition needs one is kept unexpanded. ``declared``: the
    template's parameter names; a get_param of another name in a branch of an ``if``
    that an active resource takes is refused (the reader only warned of it)."""
    conditions = Conditions(condition_definitions, parameters, partial)
    errors: list[TemplateError] = []
    active: dict[str, ResourceDefinition] = {}
    inactive: dict[str, Any] = {}
    undecided: list[str] = []
    for name, definition in resources.items():
        base = ("resources", name)
        try:
            enabled = conditions.is_enabled(definition.condition, base + ("condition",))
            # As Heat, every resource's if calls are evaluated, active or not.
            expanded = replace(
                definition,
                properties_data=_expand_top(definition.properties_data, conditions) or {},
                metadata=_expand_top(definition.metadata, conditions),
                update_policy=_expand_top(definition.update_policy, conditions),
                external_id=_expand_top(definition.external_id, conditions),
                deletion_policy=_deletion_policy(definition.deletion_policy, conditions, deletion_policies or {}, base),
            )
        except TemplateError as error:
            errors.append(error)
            continue
        if enabled is UNRESOLVED:
            undecided.append(name)
        if enabled:
            active[name] = expanded
        else:
            inactive[name] = to_template(definition.condition)
    for name, definition in list(active.items()):
        if any(target in inactive for target in definition.depends_on):
            active[name] = replace(definition, depends_on=tuple(t for t in definition.depends_on if t not in inactive))
        for data in (definition.properties_data, definition.metadata):
            errors.extend(_inactive_references(data, name, inactive))
        if declared is not None:
            for data in (definition.properties_data, definition.metadata, definition.update_policy, definition.external_id):
                errors.extend(_undeclared_parameters(data, declared))
    selected: dict[str, OutputDefinition] = {}
    disabled: list[str] = []
    for name, output in outputs.items():
        try:
            if not conditions.is_enabled(output.condition, ("outputs", name, "condition")):
                selected[name] = replace(output, value=None)
                disabled.append(name)
                continue
            selected[name] = replace(output, value=_expand_top(output.value, conditions))
        except TemplateError as error:
            errors.append(error)
            continue
        errors.extend(_inactive_references(selected[name].value, name, inactive))
    if errors:
        raise TemplateErrors(errors)
    evaluated = {key: value for key, value in conditions.values.items() if isinstance(value, bool)}
    return ActiveDefinitions(active, selected, inactive, tuple(disabled), evaluated, tuple(undecided))


def _deletion_policy(policy: Any, conditions: Conditions, spellings: Mapping[str, str], base: tuple) -> Any:
    """A deletion policy given by a function, resolved as Heat resolves it when it reads
    the resource (with the stack's parameters); UNRESOLVED (partial) keeps the function."""
    if not isinstance(policy, Function):
        return policy
    path = format_path(base + ("deletion_policy",))
    try:
        value = resolve(expand(policy, conditions), conditions)
    except TemplateError as error:
        if error.message == "A condition cannot refer to a resource":
            raise TemplateError("A deletion policy may refer to parameters only, not to resources", path=path)
        raise
    if value is UNRESOLVED:
        return policy
    normalized = spellings.get(value) if isinstance(value, str) else None
    if normalized is None:
        raise TemplateError(f'Invalid deletion policy "{value}"', path=path, hint="use Delete, Retain or Snapshot")
    return normalized


def _undeclared_parameters(data: Any, declared: Collection[str]) -> Iterator[TemplateError]:
    """A get_param naming a parameter not in ``declared``, outside the branches of an
    ``if`` left undecided."""
    for function in _decided_functions(data):
        if isinstance(function, GetParam):
            target = function.parameter_name()
            if target is not None and target not in declared:
                close = get_close_matches(target, sorted(declared), n=1)
                yield TemplateError(
                    f"The Parameter ({target}) was not defined in template.",
                    path=format_path(function.path),
                    hint=f"did you mean '{close[0]}'?" if close else "declare it in the parameters section",
                )


def _decided_functions(data: Any) -> Iterator[Function]:
    """``walk``, less the branches of an ``if`` left undecided (partial)."""
    if isinstance(data, Function):
        yield data
        yield from _decided_functions(data.args[0] if isinstance(data, If) else data.args)
    elif isinstance(data, dict):
        for value in data.values():
            yield from _decided_functions(value)
    elif isinstance(data, list):
        for item in data:
            yield from _decided_functions(item)


def _inactive_references(data: Any, owner: str, inactive: Mapping[str, Any]) -> Iterator[TemplateError]:
    for function in _decided_functions(data):
        if isinstance(function, (GetResource, Ref)):
            target = function.args
        elif isinstance(function, GetAttr):
            target = function.args[0]
        else:
            continue
        if target in inactive:
            condition = inactive[target]
            guard = condition if isinstance(condition, str) else "<its condition>"
            yield TemplateError(
                f'The specified reference "{target}" (in {owner}) is incorrect.',
                path=format_path(function.path + (function.fn_name,)),
                hint=f'resource "{target}" is not in the stack because its condition is false; '
                f"refer to it inside {{if: [{guard}, ..., ...]}}",
            )
