"""The implicit dependencies of a stack's resources: the edges plugins' rules add
(``Resource.implicit_dependencies``, see ``stoker.sdk.dependencies``) to those the template
states.

Owns: reading definitions statically for the rules (parameters resolved, ``get_resource``
as a ``Reference``, anything only the action knows as ``UNKNOWN``) and calling each rule
so that a failing rule is logged and ignored, never an action's failure. Only types that
have a rule cost anything: a stack of 100,000 resources without any reads nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
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
    if not ruled:
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
    return edges
