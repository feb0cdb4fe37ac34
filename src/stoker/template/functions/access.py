"""Functions that read parameters and resources: get_param, get_resource, get_attr.

get_attr comes in three forms, as in Heat's heat/engine/hot/functions.py: 2013-05-23's
(``GetAttThenSelect``: the whole attribute is read and the path is selected from it
here), 2014-10-16's (``GetAtt``: the path goes with the attribute to the stack) and,
from 2015-10-15, one that also accepts ``[resource]`` alone (``GetAttAllAttributes``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from stoker.sdk.attributes import select_path
from stoker.sdk.properties import UNRESOLVED
from stoker.template.functions.base import (
    Function,
    ResolutionContext,
    contains_unresolved,
    dependencies,
    referenced_attributes,
    resolve,
)


class GetParam(Function):
    """``{get_param: name}`` or ``{get_param: [name, key_or_index, ...]}``."""

    __slots__ = ()
    description = "A function for resolving parameter references."

    def check(self) -> None:
        args = self.args
        if isinstance(args, str):
            return
        if isinstance(args, list) and args and isinstance(args[0], (str, Function)):
            return
        raise self.error("Arguments to get_param must be a parameter name or a list [name, path...]")

    def result(self, context: ResolutionContext) -> Any:
        args = resolve(self.args, context)
        if isinstance(args, str):
            return context.parameter(args)
        if contains_unresolved(args):
            return UNRESOLVED
        name, *path = args
        if not isinstance(name, str):
            raise self.error(f"The parameter name given to get_param must be a string, got {type(name).__name__}")
        return _select_parameter(context.parameter(name), path)

    def parameter_name(self) -> str | None:
        if isinstance(self.args, str):
            return self.args
        first = self.args[0]
        return first if isinstance(first, str) else None


def _select_parameter(value: Any, path: list[Any]) -> Any:
    """Follow get_param's path as Heat's ``GetParam.result`` does: ``value[step]`` into
    any map or sequence (a string is one: ``["abc", 0]`` gives ``"a"``), a string step
    into a sequence read as an integer; a step that cannot be followed gives ""."""
    for step in path:
        if value is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(value, (Mapping, Sequence)) or not isinstance(step, (str, int)):
            return ""
        if isinstance(value, Sequence) and isinstance(step, str):
            try:
                step = int(step)
            except ValueError:
                return ""
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return ""
    return value


class GetResource(Function):
    """``{get_resource: name}``: the resource's reference id (usually its physical id)."""

    __slots__ = ()
    description = "A function for resolving resource references."

    def check(self) -> None:
        if not isinstance(self.args, str):
            raise self.error("Argument to get_resource must be a resource name (a string)")

    def result(self, context: ResolutionContext) -> Any:
        return context.resource_reference(self.args)

    def dependencies(self) -> Iterator[str]:
        yield self.args


class GetAttr(Function):
    """``{get_attr: [resource, attribute, path...]}``; ``[resource]`` alone gives all
    attributes (from 2015-10-15 on; ``all_attributes`` is set by the version table)."""

    __slots__ = ()
    description = "A function for resolving resource attributes."
    all_attributes = True

    def check(self) -> None:
        args = self.args
        if not isinstance(args, list) or not args or not isinstance(args[0], str):
            raise self.error(
                "Arguments to get_attr must be a list [resource_name, attribute, path...]",
            )
        if len(args) == 1 and not self.all_attributes:
            raise self.error(
                "Arguments to get_attr must be a list [resource_name, attribute, path...]",
                hint="the form [resource_name] (all attributes) needs heat_template_version 2015-10-15 or later",
            )
        if len(args) > 1 and not isinstance(args[1], (str, Function)):
            raise self.error("The attribute name given to get_attr must be a string")

    @property
    def resource_name(self) -> str:
        return self.args[0]

    def result(self, context: ResolutionContext) -> Any:
        name = self.args[0]
        if len(self.args) == 1:
            return context.resource_attributes(name)
        attribute = resolve(self.args[1], context)
        path = tuple(resolve(self.args[2:], context))
        if attribute is UNRESOLVED or contains_unresolved(list(path)):
            return UNRESOLVED
        if not isinstance(attribute, str):
            raise self.error(f"The attribute name given to get_attr must be a string, got {type(attribute).__name__}")
        return context.resource_attribute(name, attribute, path)

    def dependencies(self) -> Iterator[str]:
        yield self.args[0]
        yield from dependencies(self.args[1:])

    def referenced_attributes(self) -> Iterator[tuple[str, str | None]]:
        if len(self.args) == 1:
            yield (self.args[0], None)
        elif isinstance(self.args[1], str):
            yield (self.args[0], self.args[1])
        else:
            yield (self.args[0], None)
        # the attribute name and the path may read other attributes themselves
        yield from referenced_attributes(self.args[1:])


class GetAttrNamed(GetAttr):
    """get_attr before 2015-10-15: the attribute name is required."""

    __slots__ = ()
    all_attributes = False


class GetAttrThenSelect(GetAttrNamed):
    """get_attr of heat_template_version 2013-05-23: ``[resource, attribute, path...]``.

    The stack gives the whole attribute; the path is then selected from its value as
    Heat's ``select_from_attribute`` does: a missing key or index, a step into a value
    that is not a map or a sequence (a string is one), or a step that is not a string or
    an integer, gives None. A resource therefore never sees the path.
    """

    __slots__ = ()

    def check(self) -> None:
        if not isinstance(self.args, list):
            raise self.error(f'Argument to "{self.fn_name}" must be a list')
        if len(self.args) < 2:
            raise self.error(
                f'Arguments to "{self.fn_name}" must be of the form [resource_name, attribute, (path), ...]'
            )
        super().check()

    def result(self, context: ResolutionContext) -> Any:
        attribute = resolve(self.args[1], context)
        if attribute is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(attribute, str):
            raise self.error(
                f"The attribute name given to {self.fn_name} must be a string, got {type(attribute).__name__}"
            )
        value = context.resource_attribute(self.args[0], attribute, ())
        if value is UNRESOLVED or value is None:
            return value
        path = resolve(self.args[2:], context)
        if contains_unresolved(path):
            return UNRESOLVED
        return select_from_attribute(value, path)


def select_from_attribute(value: Any, path: list[Any]) -> Any:
    """Heat's ``attributes.select_from_attribute``: follow ``path`` with ``value[step]``;
    anything that cannot be followed gives None (``stoker.sdk.attributes.select_path``)."""
    return select_path(value, tuple(path))
