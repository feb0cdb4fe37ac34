"""The Function object and the tree operations over parsed template data.

A parsed template value is plain data (dict, list, scalars) in which each intrinsic
function call is replaced by a ``Function``. A Function knows its arguments, its place in
the template, the resources it depends on, and how to compute its result against a
``ResolutionContext``. Parsing checks argument shapes; resolution needs a stack.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, ClassVar, Protocol

from stoker.sdk.properties import UNRESOLVED
from stoker.template.errors import TemplateError, format_path


class ResolutionContext(Protocol):
    """What a function may ask while resolving (the engine's stack provides it)."""

    def parameter(self, name: str) -> Any: ...

    def resource_reference(self, name: str) -> Any: ...

    def resource_attribute(self, name: str, attribute: str, path: tuple[Any, ...]) -> Any: ...

    def resource_attributes(self, name: str) -> Any: ...

    def has_resource(self, name: str) -> bool: ...


class Function:
    """An intrinsic function call found in a template."""

    __slots__ = ("fn_name", "args", "path")
    #: the version table assigns names; this is for messages
    description: ClassVar[str] = ""

    def __init__(self, fn_name: str, args: Any, path: tuple):
        self.fn_name = fn_name
        self.args = args
        self.path = path
        self.check()

    def error(self, message: str, hint: str | None = None) -> TemplateError:
        return TemplateError(message, path=format_path(self.path), hint=hint)

    def check(self) -> None:
        """Check the shape of the arguments at parse time; raise TemplateError."""

    def result(self, context: ResolutionContext) -> Any:
        raise NotImplementedError

    def dependencies(self) -> Iterator[str]:
        """Names of the resources this call needs (its own and its arguments')."""
        yield from dependencies(self.args)

    def referenced_attributes(self) -> Iterator[tuple[str, str | None]]:
        """(resource, attribute) pairs read through get_attr; None attribute means all."""
        yield from referenced_attributes(self.args)

    def __repr__(self) -> str:
        return f"{{{self.fn_name}: {self.args!r}}}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Function) and (self.fn_name, self.args) == (other.fn_name, other.args)

    def __hash__(self) -> int:
        return hash(self.fn_name)


def parse(data: Any, table: Mapping[str, type[Function]], path: tuple, errors: list[TemplateError], unknown: Mapping[str, str] | None = None) -> Any:
    """Replace function calls in ``data`` by Function objects (recursively).

    Problems are appended to ``errors`` so one pass reports all of them; a call that
    cannot be parsed is left as plain data.
    """
    if isinstance(data, dict):
        if len(data) == 1:
            (key, value), = data.items()
            if isinstance(key, str):
                cls = table.get(key)
                if cls is not None:
                    args = parse(value, table, path + (key,), errors, unknown)
                    try:
                        return cls(key, args, path)
                    except TemplateError as error:
                        errors.append(error)
                        return data
                if unknown and key in unknown:
                    errors.append(TemplateError(unknown[key], path=format_path(path + (key,))))
                    return data
        return {key: parse(value, table, path + (key,), errors, unknown) for key, value in data.items()}
    if isinstance(data, list):
        return [parse(item, table, path + (index,), errors, unknown) for index, item in enumerate(data)]
    return data


def resolve(data: Any, context: ResolutionContext) -> Any:
    """Compute the value of parsed data: every Function replaced by its result."""
    if isinstance(data, Function):
        return data.result(context)
    if isinstance(data, dict):
        if not data:
            return {}
        return {key: resolve(value, context) for key, value in data.items()}
    if isinstance(data, list):
        return [resolve(item, context) for item in data]
    return data


def dependencies(data: Any) -> Iterator[str]:
    if isinstance(data, Function):
        yield from data.dependencies()
    elif isinstance(data, dict):
        for value in data.values():
            yield from dependencies(value)
    elif isinstance(data, list):
        for item in data:
            yield from dependencies(item)


def referenced_attributes(data: Any) -> Iterator[tuple[str, str | None]]:
    if isinstance(data, Function):
        yield from data.referenced_attributes()
    elif isinstance(data, dict):
        for value in data.values():
            yield from referenced_attributes(value)
    elif isinstance(data, list):
        for item in data:
            yield from referenced_attributes(item)


def contains_unresolved(value: Any) -> bool:
    """Whether ``UNRESOLVED`` appears anywhere in a resolved value."""
    if value is UNRESOLVED:
        return True
    if isinstance(value, dict):
        return any(contains_unresolved(v) for v in value.values())
    if isinstance(value, list):
        return any(contains_unresolved(v) for v in value)
    return False


def has_functions(data: Any) -> bool:
    if isinstance(data, Function):
        return True
    if isinstance(data, dict):
        return any(has_functions(v) for v in data.values())
    if isinstance(data, list):
        return any(has_functions(v) for v in data)
    return False


def to_template(data: Any) -> Any:
    """Turn parsed data back into its template form (for storing and diffs)."""
    if isinstance(data, Function):
        return {data.fn_name: to_template(data.args)}
    if isinstance(data, dict):
        return {key: to_template(value) for key, value in data.items()}
    if isinstance(data, list):
        return [to_template(item) for item in data]
    return data
