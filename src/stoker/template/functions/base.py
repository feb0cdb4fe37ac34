"""The Function object, the parser that builds Function trees, and the operations over them.

A parsed template value is plain data (dict, list, scalars) in which each intrinsic
function call is replaced by a ``Function``. A Function knows its arguments, its place in
the template, the resources it depends on, and how to compute its result against a
``ResolutionContext``. Parsing checks argument shapes; resolution needs a stack.

``OMITTED`` is what the nullable ``if`` of 2021-04-16 yields when its condition is false
and it has no false branch: the enclosing map key or list item is then dropped, as if the
template had not mentioned it; at the top of a value it reads as None (Heat's Ellipsis).
This module must not know any particular function: they live one family per module.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from stoker.sdk.properties import UNRESOLVED
from stoker.template import budget
from stoker.template.errors import TemplateError, TemplateWarning, format_path


class ResolutionContext(Protocol):
    """What a function may ask while resolving (the engine's stack provides it).

    Optional methods, looked up with ``getattr`` by the functions that need them:

    ``condition(name: str) -> bool``
        The value of a named condition of the template (``if``, ``not``, ``and``, ``or``
        given a condition name). ``Template.with_conditions`` expands every ``if`` of the
        active definitions beforehand, so an engine that uses it never needs this.
    ``resource_facade(attribute: str) -> Any``
        For a stack that implements a resource (a provider template): the parent
        resource's ``metadata``, ``deletion_policy`` or ``update_policy``. A top-level
        stack does not implement it, and ``resource_facade`` then fails with a clear error.
    ``availability_zones() -> list[str]``
        For ``Fn::GetAZs`` (heat_template_version 2013-05-23 only); ``["nova"]`` without it.
    """

    def parameter(self, name: str) -> Any: ...

    def resource_reference(self, name: str) -> Any: ...

    def resource_attribute(self, name: str, attribute: str, path: tuple[Any, ...]) -> Any: ...

    def resource_attributes(self, name: str) -> Any: ...

    def has_resource(self, name: str) -> bool: ...


class _Omitted:
    """The value of a nullable ``if`` whose condition is false and that has no false branch."""

    __slots__ = ()
    _instance: ClassVar[_Omitted | None] = None

    def __new__(cls) -> _Omitted:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "<omitted>"

    def __reduce__(self) -> str:
        return "OMITTED"


OMITTED = _Omitted()


class Function:
    """An intrinsic function call found in a template."""

    __slots__ = ("fn_name", "args", "path")
    #: first line: what the function does (Heat's template-function-list description)
    description: ClassVar[str] = ""

    def __init__(self, fn_name: str, args: Any, path: tuple):
        self.fn_name = fn_name
        self.args = args
        self.path = path
        self.check()

    @classmethod
    def from_template(cls, fn_name: str, raw_args: Any, path: tuple, parser: Parser) -> Function:
        """Build the call from its raw arguments; the arguments are parsed with the same
        table as the call. A function whose arguments are read differently (``if``'s
        condition, ``get_file``'s files) overrides this."""
        return cls(fn_name, parser.parse(raw_args, path + (fn_name,)), path)

    def error(self, message: str, hint: str | None = None) -> TemplateError:
        return TemplateError(message, path=format_path(self.path), hint=hint)

    def check(self) -> None:
        """Check the shape of the arguments at parse time; raise TemplateError."""

    def result(self, context: ResolutionContext) -> Any:
        raise NotImplementedError

    def resolved_args(self, context: ResolutionContext) -> Any:
        """The arguments resolved, or UNRESOLVED if any part of them is not known yet."""
        args = resolve_nullable(self.args, context)
        return UNRESOLVED if contains_unresolved(args) else args

    def with_args(self, args: Any) -> Function:
        """A copy of this call with other (already parsed) arguments; not checked again."""
        clone = copy.copy(self)
        clone.args = args
        return clone

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


class ListArgumentsFunction(Function):
    """A function whose argument is a list of values to combine (list_concat, map_merge):
    the shape check and the resolved list, with the subclass's usage message."""

    __slots__ = ()

    def _usage(self) -> str:
        raise NotImplementedError

    def check(self) -> None:
        if not isinstance(self.args, (list, Function)):
            raise self.error(self._usage())

    def resolved_list(self, context: ResolutionContext) -> Any:
        """The resolved argument list, or UNRESOLVED."""
        args = self.resolved_args(context)
        if args is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(args, list):
            raise self.error(self._usage())
        return args


@dataclass
class Parser:
    """Turns raw template data into Function trees for one template version.

    ``functions``: the version's table. ``unknown``: names of functions the version lacks
    (those of later versions or other formats) -> a warning: as in Heat, such a one-key map
    is plain data, its value parsed as any other. ``removed``: the functions the version
    removed -> the error to give (Heat's ``Removed``). ``conditions``: the
    table for the ``conditions`` section and condition arguments (None before
    2016-10-14). ``files``: the template's ``files`` map, for ``get_file``.
    ``mappings``: a CFN template's Mappings section, for ``Fn::FindInMap`` (None when
    that section could not be read).
    Problems are appended to ``errors`` so one pass reports all of them, warnings to
    ``warnings``; a call that cannot be parsed is left as plain data.
    """

    functions: Mapping[str, type[Function]]
    errors: list[TemplateError]
    unknown: Mapping[str, str] = field(default_factory=dict)
    conditions: Mapping[str, type[Function]] | None = None
    files: Mapping[str, str] = field(default_factory=dict)
    mappings: Mapping[str, Any] | None = field(default_factory=dict)
    # set on the parser of condition expressions: name -> message for the functions of
    # the version that may not appear there
    invalid: Mapping[str, str] = field(default_factory=dict)
    removed: Mapping[str, str] = field(default_factory=dict)
    warnings: list[TemplateWarning] = field(default_factory=list)
    _condition_parser: Parser | None = field(default=None, init=False, repr=False, compare=False)
    # names of the functions met, so a template knows cheaply whether it uses `if`
    seen: set[str] = field(default_factory=set, init=False, repr=False, compare=False)

    def parse(self, data: Any, path: tuple) -> Any:
        if isinstance(data, dict):
            if len(data) == 1:
                ((key, value),) = data.items()
                if isinstance(key, str):
                    cls = self.functions.get(key)
                    if cls is not None:
                        self.seen.add(key)
                        try:
                            return cls.from_template(key, value, path, self)
                        except TemplateError as error:
                            self.errors.append(error)
                            return data
                    message = self.invalid.get(key) or self.removed.get(key)
                    if message is not None:
                        self.errors.append(TemplateError(message, path=format_path(path + (key,)), hint=self._hint(key)))
                        return data
                    note = self.unknown.get(key)
                    if note is not None:
                        self.warnings.append(TemplateWarning(note, path=format_path(path + (key,))))
            return {key: self.parse(value, path + (key,)) for key, value in data.items()}
        if isinstance(data, list):
            return [self.parse(item, path + (index,)) for index, item in enumerate(data)]
        return data

    def _hint(self, key: str) -> str | None:
        if key in self.invalid:
            return "conditions may use " + ", ".join(sorted(self.functions))
        return None

    def for_conditions(self) -> Parser:
        """The parser for condition expressions: only the condition functions; every
        other function of the version is refused there, as Heat does."""
        if self.invalid or self.conditions is None:
            return self
        if self._condition_parser is None:
            invalid = {
                name: f'The function "{name}" is invalid in this context'
                for name in self.functions
                if name not in self.conditions
            }
            self._condition_parser = Parser(
                self.conditions,
                self.errors,
                self.unknown,
                self.conditions,
                self.files,
                self.mappings,
                invalid,
                self.removed,
                self.warnings,
            )
        return self._condition_parser


def parse(
    data: Any,
    table: Mapping[str, type[Function]],
    path: tuple,
    errors: list[TemplateError],
    unknown: Mapping[str, str] | None = None,
    removed: Mapping[str, str] | None = None,
) -> Any:
    """Replace function calls in ``data`` by Function objects (recursively)."""
    return Parser(table, errors, unknown or {}, removed=removed or {}).parse(data, path)


def resolve(data: Any, context: ResolutionContext) -> Any:
    """Compute the value of parsed data: every Function replaced by its result.

    Map keys and list items whose value is ``OMITTED`` are dropped; an ``OMITTED`` value
    at the top reads as None.
    """
    value = resolve_nullable(data, context)
    return None if value is OMITTED else value


def resolve_nullable(data: Any, context: ResolutionContext) -> Any:
    """``resolve``, except that an ``OMITTED`` value at the top stays ``OMITTED``.

    Every function's result is held to the value budget (``stoker.template.budget``);
    the functions that can multiply their input check it while they build.
    """
    if isinstance(data, Function):
        return within_budget(data, data.result(context))
    if isinstance(data, dict):
        if not data:
            return {}
        result = {}
        for key, value in data.items():
            value = resolve_nullable(value, context)
            if value is not OMITTED:
                result[key] = value
        return result
    if isinstance(data, list):
        return [value for value in (resolve_nullable(item, context) for item in data) if value is not OMITTED]
    return data


def within_budget(function: Function, value: Any) -> Any:
    """``value``, the result of ``function``, if it is within the value budget."""
    kind = type(value)
    limit = budget.max_value_bytes()
    # Most results are short strings and scalars: no walk for them.
    if (kind is str and 4 * len(value) + 2 <= limit) or kind in _SCALARS:
        return value
    if budget.size_of(value, limit) > limit:
        raise budget.too_large(f'"{function.fn_name}"', format_path(function.path))
    return value


_SCALARS = frozenset({float, bool, type(None), _Omitted})


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


def walk(data: Any) -> Iterator[Function]:
    """Every Function in ``data``, outermost first (arguments after their call)."""
    if isinstance(data, Function):
        yield data
        yield from walk(data.args)
    elif isinstance(data, dict):
        for value in data.values():
            yield from walk(value)
    elif isinstance(data, list):
        for item in data:
            yield from walk(item)


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
    """Turn parsed data back into its template form (for storing and diffs).

    ``OMITTED`` (left by an expanded ``if``) is dropped from maps and lists, None at the top.
    """
    if data is OMITTED:
        return None
    if isinstance(data, Function):
        return {data.fn_name: to_template(data.args)}
    if isinstance(data, dict):
        return {key: to_template(value) for key, value in data.items() if value is not OMITTED}
    if isinstance(data, list):
        return [to_template(item) for item in data if item is not OMITTED]
    return data
