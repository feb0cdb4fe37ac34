"""Attribute schemas (seed 001, "定义资源属性"): the runtime data a resource exposes.

Owns the declaration only; values come from the plugin's ``_resolve_attribute`` and the
engine caches them per resource.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stoker.sdk.exceptions import SchemaError
from stoker.sdk.support import SupportStatus

__all__ = ["SHOW", "Schema", "select_path"]


class Schema:
    """The declaration of one attribute."""

    TYPES = (STRING, NUMBER, BOOLEAN, MAP, LIST, INTEGER) = (
        "String",
        "Number",
        "Boolean",
        "Map",
        "List",
        "Integer",
    )
    CACHE_MODES = (CACHE_LOCAL, CACHE_NONE) = ("cache_local", "cache_none")

    def __init__(
        self,
        description: str | None = None,
        support_status: SupportStatus | None = None,
        cache_mode: str = CACHE_LOCAL,
        type: str | None = None,  # noqa: A002 - the seed guide's keyword
    ):
        if type is not None and type not in self.TYPES:
            raise SchemaError(f"Invalid attribute type {type!r}; use one of attributes.Schema.TYPES")
        if cache_mode not in self.CACHE_MODES:
            raise SchemaError(f"Invalid cache_mode {cache_mode!r}")
        self.description = description
        self.support_status = support_status or SupportStatus()
        self.cache_mode = cache_mode
        self.type = type

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {"description": self.description}
        if self.type:
            body["type"] = self.type.lower()
        if self.support_status.says_more_than_supported():
            body["support_status"] = self.support_status.to_dict()
        return body


SHOW = "show"

# Every resource has a ``show`` attribute (seed 001); the base class adds it.
BASE_ATTRIBUTES: Mapping[str, Schema] = {
    SHOW: Schema("Detailed information about resource.", cache_mode=Schema.CACHE_NONE, type=Schema.MAP),
}


def select_path(value: Any, path: tuple[Any, ...], where: str = "") -> Any:
    """Follow ``path`` into an attribute value as Heat's ``attributes.select_from_attribute``
    does (get_attr's path): ``value[step]`` at each step, into any map or sequence, a
    string included (``"abc"``, ``0`` gives ``"a"``); a step that is not a string or an
    integer, a missing key or index, a string index into a sequence, or a step into
    anything else gives None.
    """
    for step in path:
        try:
            if isinstance(value, Mapping) and isinstance(step, (str, int)):  # noqa: SIM114 - apart, each branch narrows both types
                value = value[step]
            elif isinstance(value, Sequence) and isinstance(step, int):
                value = value[step]
            else:
                return None  # a string index into a sequence among them
        except (KeyError, IndexError, TypeError):
            return None
    return value
