"""The size budget of one value made from a template, in bytes.

Owns ``max_value_bytes`` (the most one value may take: a function's result, a stored
property, attribute or output), the measure of a value's size (the length of its JSON
text, worked out without writing it) and the error a value over budget raises.

A small template can ask for a huge value (a ``str_replace`` that doubles its input,
chained; a ``repeat`` over several lists; a ``list_join`` of many aliases of one long
string), so the functions that can multiply their input check the budget while they
build their result, before the memory is taken; ``resolve`` checks every other result.
Must not: know any particular function or the engine; callers say what the value is.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping
from typing import Any

from stoker.template.errors import TemplateLimitError

# Heat's max_json_body_size: no request can carry a larger value, and no value made from
# one needs to be larger.
DEFAULT_MAX_VALUE_BYTES = 1024 * 1024
SETTING = "STOKER_MAX_VALUE_BYTES"

_max_value_bytes = DEFAULT_MAX_VALUE_BYTES


class OverBudgetError(Exception):
    """Raised by a builder that knows no template path (``strings.replace``) when the
    value it builds passes the budget; the function calling it raises ``too_large``."""

    def __init__(self, size: int):
        super().__init__(size)
        self.size = size


def configure(max_value_bytes: int) -> None:
    """Set the budget every value is held to from now on (engine configuration)."""
    global _max_value_bytes
    if max_value_bytes < 1:
        raise ValueError(f"{SETTING} must be a positive number of bytes, got {max_value_bytes}")
    _max_value_bytes = max_value_bytes


def max_value_bytes() -> int:
    return _max_value_bytes


def size_of(value: Any, limit: int | None = None) -> int:
    """The length of ``value``'s JSON text, in bytes (UTF-8), measured without writing it.

    With ``limit``, measuring stops as soon as the size passes it, and the size so far
    (more than ``limit``) is returned: a list of a million references to one long string
    costs no more to measure than the budget it breaks. Values that are not JSON data
    count as their ``str``.
    """
    limit = _max_value_bytes if limit is None else limit
    total = _size_of_one(value)
    # Iterators, not items: a list of ten million items costs no more than the first few
    # thousand the budget lets through.
    pending: list[Iterator[Any]] = []
    children = _children(value)
    if children is not None:
        pending.append(children)
    while pending and total <= limit:
        item = next(pending[-1], _END)
        if item is _END:
            pending.pop()
            continue
        total += _size_of_one(item)
        children = _children(item)
        if children is not None:
            pending.append(children)
    return total


_END = object()


def _size_of_one(item: Any) -> int:
    """The bytes ``item`` adds itself (a container: its brackets and separators)."""
    kind = type(item)
    if kind is str:
        return (len(item) if item.isascii() else len(item.encode("utf-8", "surrogatepass"))) + 2
    if kind is dict or isinstance(item, Mapping):
        return 2 + 2 * len(item)  # braces, colons and commas
    if kind is list or kind is tuple or isinstance(item, (list, tuple)):
        return 2 + len(item)  # brackets and commas
    if item is None or kind is bool:
        return 5
    if kind is int:
        return item.bit_length() // 3 + 2  # at least its decimal digits, without writing them
    if kind is float:
        return 24
    return len(str(item)) + 2


def _children(item: Any) -> Iterator[Any] | None:
    if isinstance(item, Mapping):
        return itertools.chain.from_iterable(item.items())
    if isinstance(item, (list, tuple)):
        return iter(item)
    return None


def too_large(what: str, path: str | None = None, size: int | None = None) -> TemplateLimitError:
    """The error for a value over budget: ``what`` names the function (or the property,
    attribute or output), ``path`` is its place in the template, ``size`` the size when
    it is known (a measure stops at the budget, so it gives only "more than")."""
    size_text = f"at least {size} bytes" if size is not None else f"more than {_max_value_bytes} bytes"
    return TemplateLimitError(
        f"{what} makes a value of {size_text}; one value may take at most {_max_value_bytes} bytes",
        path=path,
        hint=f"make the value smaller, or raise {SETTING}",
    )


def check(value: Any, what: str, path: str | None = None) -> Any:
    """``value`` if it is within the budget, else raise ``too_large``."""
    if size_of(value) > _max_value_bytes:
        raise too_large(what, path)
    return value


def check_each(values: Mapping[str, Any], what: str, path: str) -> Mapping[str, Any]:
    """``values`` (a resource's properties or attributes, about to be stored) if each is
    within the budget; ``what`` names the kind ("property"), ``path`` their place."""
    for key, value in values.items():
        if size_of(value) > _max_value_bytes:
            raise too_large(f"The {what} {key!r}", f"{path}.{key}")
    return values


def stored_values(resource: str, properties: Mapping[str, Any], attributes: Mapping[str, Any]) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """A resource's properties and attributes, checked before they are stored."""
    check_each(properties, "property", f"resources.{resource}.properties")
    check_each(attributes, "attribute", f"resources.{resource}.attributes")
    return properties, attributes
