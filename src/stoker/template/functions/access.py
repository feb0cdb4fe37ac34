"""Functions that read parameters and resources: get_param, get_resource, get_attr."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from stoker.sdk.attributes import select_path
from stoker.sdk.properties import UNRESOLVED
from stoker.template.functions.base import Function, ResolutionContext, dependencies, resolve


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
        name, *path = args
        return select_path(context.parameter(name), tuple(path))

    def parameter_name(self) -> str | None:
        if isinstance(self.args, str):
            return self.args
        first = self.args[0]
        return first if isinstance(first, str) else None


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
    """``{get_attr: [resource, attribute, path...]}``; ``[resource]`` alone gives all attributes."""

    __slots__ = ()
    description = "A function for resolving resource attributes."

    def check(self) -> None:
        args = self.args
        if not isinstance(args, list) or not args or not isinstance(args[0], str):
            raise self.error(
                "Arguments to get_attr must be a list [resource_name, attribute, path...]",
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
        if attribute is UNRESOLVED or UNRESOLVED in path:
            return UNRESOLVED
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
