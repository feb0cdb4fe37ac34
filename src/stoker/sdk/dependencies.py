"""Implicit dependencies: what a plugin may read of the other resources of its stack to
say it must come after them although the template does not say so.

Heat's Neutron types have such rules (a port waits for the subnets of its network, a
router for the subnet of its external network, a floating IP for the router interface
that makes its port reachable). In Heat each type overrides ``add_dependencies`` and reads
live ``Properties`` of live resources; an exception there broke the whole stack, which is
why the plugin guide asks plugin authors not to override it. Here a type answers a
question instead: ``Resource.implicit_dependencies(me, stack)`` receives read-only views
of the template's definitions and returns the names it must follow. The engine calls it
whenever it builds a stack's graph (create, update, delete, check, suspend, previews,
validation), ignores what it cannot use and never lets it fail an action. A second
question, ``Resource.update_dependencies(me, stack)``, reads the same views and names the
resources whose update this one's update follows (a stack update, its rollback, a
restore, and their previews), without ordering create or delete.

Owns: ``ResourceView`` and ``StackView`` (the views), ``Reference`` (how a
``get_resource`` reads in a view) and ``UNKNOWN`` (a value no view can know before the
action runs: an attribute, say). Views compare values as the template states them:
``{get_resource: net}`` reads as ``Reference("net")`` everywhere, so two resources naming
the same network through the same resource or the same parameter value match.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Reference", "ResourceView", "StackView", "UNKNOWN", "known"]


@dataclass(frozen=True)
class Reference:
    """``{get_resource: name}`` in a view: the resource ``name`` itself."""

    name: str


class _Unknown:
    """A value that depends on something only the action knows (never equal to anything)."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return False

    def __ne__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return 0

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN: Any = _Unknown()


def known(value: Any) -> bool:
    """Whether a view's value is known and given (not None, not UNKNOWN)."""
    return value is not None and value is not UNKNOWN


class ResourceView:
    """One resource of the template as a rule sees it: its name, its type and its
    properties as the template states them (``get``)."""

    __slots__ = ("name", "type", "_properties", "_is_a", "_read", "_values")

    def __init__(
        self,
        name: str,
        type_name: str,
        properties: Mapping[str, Any],
        is_a: Callable[[str], bool],
        read: Callable[[Any], Any],
    ):
        self.name = name
        self.type = type_name
        self._properties = properties
        self._is_a = is_a
        self._read = read
        self._values: dict[str, Any] = {}

    def is_a(self, type_name: str) -> bool:
        """Heat's ``has_interface``: the type is ``type_name`` or a plugin derived from it."""
        return self.type == type_name or self._is_a(type_name)

    def get(self, key: str, *path: Any) -> Any:
        """The property ``key`` (then ``path`` into it: map keys, list indexes) as the
        template states it; None when absent, UNKNOWN when only the action can know it."""
        if key not in self._values:
            self._values[key] = self._read(self._properties[key]) if key in self._properties else None
        value = self._values[key]
        for step in path:
            if isinstance(value, Mapping) and not isinstance(step, int):
                value = value.get(step)
            elif isinstance(value, list) and isinstance(step, int) and -len(value) <= step < len(value):
                value = value[step]
            elif value is UNKNOWN:
                return UNKNOWN
            else:
                return None
        return value

    def items(self, key: str) -> list[Any]:
        """The property ``key`` as a list of maps (``fixed_ips``, ``networks``): [] when
        absent or not a list; entries that are not maps read as {}."""
        value = self.get(key)
        if not isinstance(value, list):
            return []
        return [item if isinstance(item, Mapping) else {} for item in value]

    def refers_to(self, name: str) -> bool:
        """Whether one of the properties references resource ``name``."""
        return any(_mentions(self.get(key), name) for key in self._properties)

    def __repr__(self) -> str:
        return f"ResourceView({self.name!r}, {self.type!r})"


def _mentions(value: Any, name: str) -> bool:
    if isinstance(value, Reference):
        return value.name == name
    if isinstance(value, Mapping):
        return any(_mentions(item, name) for item in value.values())
    if isinstance(value, list):
        return any(_mentions(item, name) for item in value)
    return False


class StackView:
    """The template's resources as views, by name and by type."""

    __slots__ = ("_views", "_by_type")

    def __init__(self, views: Iterable[ResourceView]):
        self._views = {view.name: view for view in views}
        self._by_type: dict[str, list[ResourceView]] = {}

    def get(self, name: Any) -> ResourceView | None:
        """The view of the resource a value names (a name, or a ``Reference``)."""
        if isinstance(name, Reference):
            name = name.name
        return self._views.get(name) if isinstance(name, str) else None

    def of_type(self, type_name: str) -> list[ResourceView]:
        """The resources that are ``type_name`` (or derived from it)."""
        if type_name not in self._by_type:
            self._by_type[type_name] = [view for view in self._views.values() if view.is_a(type_name)]
        return self._by_type[type_name]

    def __iter__(self) -> Iterator[ResourceView]:
        return iter(self._views.values())
