"""Attribute schemas (seed 001, "定义资源属性"): the runtime data a resource exposes.

Owns the declaration only; values come from the plugin's ``_resolve_attribute`` and the
engine caches them per resource.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk.exceptions import SchemaError
from stoker.sdk.support import SUPPORTED, SupportStatus

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
        if self.support_status.status != SUPPORTED:
            body["support_status"] = self.support_status.to_dict()
        return body


SHOW = "show"

# Every resource has a ``show`` attribute (seed 001); the base class adds it.
BASE_ATTRIBUTES: Mapping[str, Schema] = {
    SHOW: Schema("Detailed information about resource.", cache_mode=Schema.CACHE_NONE, type=Schema.MAP),
}


def select_path(value: Any, path: tuple[Any, ...], where: str = "") -> Any:
    """Follow ``path`` (keys and indexes) into a MAP or LIST attribute value.

    A missing key or index gives None, as in Heat's get_attr.
    """
    for step in path:
        if value is None:
            return None
        if isinstance(value, Mapping):
            value = value.get(step if isinstance(step, str) else str(step))
        elif isinstance(value, list):
            try:
                value = value[int(step)]
            except (ValueError, IndexError, TypeError):
                return None
        else:
            return None
    return value
