"""The implicit dependencies of a stack's resources: the edges plugins' rules add
(``Resource.implicit_dependencies``, see ``stoker.sdk.dependencies``) to those the template
states.

Owns: reading definitions statically for the rules (parameters resolved, ``get_resource``
as a ``Reference``, anything only the action knows as ``UNKNOWN``) and calling each rule
so that a failing rule is logged and ignored, never an action's failure; and the same for
a plugin written for Heat that overrides ``add_dependencies(self, deps)``, called on
stand-ins of the template's resources (seed 001: its ordering is honoured, not lost). Only
types that have a rule cost anything: a stack of 100,000 resources without any reads nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from stoker.sdk.dependencies import UNKNOWN, Reference, ResourceView, StackView
from stoker.sdk.resource import Resource
from stoker.template.definitions import ResourceDefinition
from stoker.template.functions.base import resolve

__all__ = ["implicit_dependencies"]

LOG = logging.getLogger(__name__)

#: The rules a type may have: the edges every action follows, and the extra ones an
#: update (and its rollback, and a restore) follows.
RULES = ("implicit_dependencies", "update_dependencies")
_DEFAULT_RULES = {rule: getattr(Resource, rule).__func__ for rule in RULES}


class _NotStatic(Exception):
    """The value needs something only the action knows (an attribute)."""


class _StaticContext:
    """A ResolutionContext that knows the parameters and nothing that happens later."""

    __slots__ = ("_parameter",)

    def __init__(self, parameter: Callable[[str], Any]):
        self._parameter = parameter

    def parameter(self, name: str) -> Any:
        return self._parameter(name)

    def resource_reference(self, name: str) -> Any:
        return Reference(name)

    def resource_attribute(self, name: str, attribute: str, path: tuple[Any, ...]) -> Any:
        raise _NotStatic(name)

    def resource_attributes(self, name: str) -> Any:
        raise _NotStatic(name)

    def has_resource(self, name: str) -> bool:
        return True


def _has_rule(cls: type[Resource], rule: str) -> bool:
    method = getattr(getattr(cls, rule), "__func__", None)
    return method is not None and method is not _DEFAULT_RULES[rule]


def _adds_dependencies(cls: type[Resource]) -> bool:
    """Whether the type overrides Heat's ``add_dependencies`` (a plugin written for Heat)."""
    return getattr(cls, "add_dependencies", Resource.add_dependencies) is not Resource.add_dependencies


# -- Heat's add_dependencies, adapted ------------------------------------------------------
# A plugin written for Heat orders itself in ``add_dependencies(self, deps)``: it reads
# ``self.properties`` and the other resources of ``self.stack`` (``has_interface``, their
# ``properties``) and adds ``deps += (requirer, required)``. It is called here on stand-ins:
# instances of the plugin classes that were never constructed, whose properties read the
# template as the views do (a get_resource as a Reference, what only the action knows as
# UNKNOWN), so its edges join the implicit ones for every action.


def _as_heat_reads(value: Any) -> Any:
    """A view's value as Heat's properties read it before the create: a ``get_resource``
    is the resource's name (Heat's ``FnGetRefId`` of a resource with no id yet)."""
    if isinstance(value, Reference):
        return value.name
    if isinstance(value, Mapping):
        return {key: _as_heat_reads(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_heat_reads(item) for item in value]
    return value


class _HeatProperties(Mapping[str, Any]):
    """``self.properties`` of a stand-in: the view's values, the schema's defaults."""

    def __init__(self, view: ResourceView, schema: Mapping[str, Any]):
        self._view = view
        self._schema = schema

    def __getitem__(self, key: str) -> Any:
        value = _as_heat_reads(self._view.get(key))
        if value is None and key in self._schema:
            value = getattr(self._schema[key], "default", None)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        value = self[key]
        return default if value is None else value

    def __iter__(self) -> Iterator[str]:
        return iter(self._schema)

    def __len__(self) -> int:
        return len(self._schema)


class _HeatDependencies:
    """What ``deps`` is to a Heat plugin: ``deps += (requirer, required)`` records an edge."""

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []

    def __iadd__(self, pair: tuple[Any, Any]) -> _HeatDependencies:
        requirer, required = pair
        self.pairs.append((getattr(requirer, "name", requirer), getattr(required, "name", required)))
        return self


class _HeatStack(Mapping[str, Any]):
    """``self.stack`` of a stand-in: the template's resources as stand-ins, by name."""

    def __init__(self, stack: StackView, classes: Mapping[str, type[Resource]]):
        self._stack = stack
        self._classes = classes
        self._made: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._made:
            view = self._stack.get(name)
            if view is None:
                raise KeyError(name)
            cls = self._classes.get(name, Resource)
            stand_in = cls.__new__(cls)
            # Set on the instance, past whatever the class declares (``properties``).
            stand_in.__dict__.update(
                name=name,
                properties=_HeatProperties(view, cls.properties_schema),
                stack=self,
                has_interface=view.is_a,
                t=_HeatDefinition(view.type),
                resource_id=None,
                FnGetRefId=lambda name=name: name,
            )
            self._made[name] = stand_in
        return self._made[name]

    def __iter__(self) -> Iterator[str]:
        return (view.name for view in self._stack)

    def __len__(self) -> int:
        return sum(1 for _ in self._stack)


class _HeatDefinition:
    """A stand-in's ``t``: its ``type`` reads the type the template gives."""

    def __init__(self, resource_type: str):
        self.resource_type = resource_type


def _heat_edges(name: str, heat_stack: _HeatStack, resource_type: str) -> list[tuple[str, str]]:
    deps = _HeatDependencies()
    try:
        heat_stack[name].add_dependencies(deps)
    except Exception:  # noqa: BLE001 - a plugin's hook must not break the stack
        LOG.warning(
            "the add_dependencies of %s (%s) failed on stoker's stand-ins, so the ordering it adds is lost; "
            "write implicit_dependencies(me, stack) instead (stoker.sdk.dependencies)",
            name,
            resource_type,
            exc_info=True,
        )
        return []
    return deps.pairs


def implicit_dependencies(
    definitions: Mapping[str, ResourceDefinition],
    plugin_class: Callable[[str], type[Resource]],
    parameter: Callable[[str], Any],
    rules: tuple[str, ...] = ("implicit_dependencies",),
) -> dict[str, set[str]]:
    """resource name -> the names of other resources its type's ``rules`` say it follows
    (``RULES``: ``implicit_dependencies`` always, ``update_dependencies`` for an update)."""
    classes: dict[str, type[Resource]] = {}
    for name, definition in definitions.items():
        try:
            classes[name] = plugin_class(definition.resource_type)
        except Exception:  # noqa: BLE001 - an unknown type is validation's to report
            continue
    ruled = [(name, rule) for name, cls in classes.items() for rule in rules if _has_rule(cls, rule)]
    heat_style = [name for name, cls in classes.items() if "implicit_dependencies" in rules and _adds_dependencies(cls)]
    if not ruled and not heat_style:
        return {}
    context = _StaticContext(parameter)

    def read(value: Any) -> Any:
        try:
            return resolve(value, context)
        except Exception:  # noqa: BLE001 - not static (or not valid: validation says so)
            return UNKNOWN

    interfaces: dict[str, type[Resource] | None] = {}

    def interface(type_name: str) -> type[Resource] | None:
        if type_name not in interfaces:
            try:
                interfaces[type_name] = plugin_class(type_name)
            except Exception:  # noqa: BLE001 - a type this stack cannot name
                interfaces[type_name] = None
        return interfaces[type_name]

    def view(name: str, definition: ResourceDefinition) -> ResourceView:
        cls = classes.get(name)

        def is_a(type_name: str) -> bool:
            other = interface(type_name)
            return cls is not None and other is not None and issubclass(cls, other)

        data = definition.properties_data if isinstance(definition.properties_data, Mapping) else {}
        return ResourceView(name, definition.resource_type, data, is_a, read)

    stack = StackView(view(name, definition) for name, definition in definitions.items())
    edges: dict[str, set[str]] = {}
    for name, rule in ruled:
        me = stack.get(name)
        try:
            needs = {need for need in getattr(classes[name], rule)(me, stack) if need != name and need in definitions}
        except Exception:  # noqa: BLE001 - a plugin's rule must not break the stack
            LOG.warning("the %s rule of %s (%s) failed; ignored", rule, name, definitions[name].resource_type, exc_info=True)
            continue
        if needs:
            edges.setdefault(name, set()).update(needs)
    if heat_style:
        heat_stack = _HeatStack(stack, classes)
        for name in heat_style:
            for requirer, required in _heat_edges(name, heat_stack, definitions[name].resource_type):
                if requirer != required and requirer in definitions and required in definitions:
                    edges.setdefault(requirer, set()).add(required)
    return edges
