"""What the live-state methods of ``Resource`` share (docs/drift.md): the default reading
of a live object into property values, and the helpers plugins use to put live values in
the vocabulary the stack holds (a security group's name where the template gave one).

Nothing here talks to a service or knows the engine: a plugin hands it what it read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = ["as_given", "parse_default"]


def parse_default(
    schema: Mapping[str, Any],
    fields: Mapping[str, str],
    resource_properties: Mapping[str, Any],
    resource_data: Mapping[str, Any],
) -> dict[str, Any]:
    """Heat's default ``parse_live_resource_data``: each ``update_allowed`` property the
    live object shows; ``name`` left out when the stack did not set it (the object then
    carries the physical resource name, which is no drift)."""
    result: dict[str, Any] = {}
    for key, property_schema in schema.items():
        if not getattr(property_schema, "update_allowed", False):
            continue
        field = fields.get(key, key)
        if field not in resource_data:
            continue
        if key == "name" and resource_properties.get(key) is None:
            continue
        result[key] = resource_data.get(field)
    return result


def as_given(
    live_ids: Iterable[str] | None, given: Iterable[str] | None, resolve: Callable[[str], str]
) -> list[str] | None:
    """Live ids written as the stack gave them: an id whose name (or id) the stack gave is
    shown as that name, any other id as itself. ``resolve`` turns a given name or id into
    the id (a lookup that fails leaves the given value as it is)."""
    if live_ids is None:
        return None
    by_id: dict[str, str] = {}
    for value in given or ():
        try:
            by_id.setdefault(resolve(value), value)
        except Exception:  # noqa: BLE001 - a name that no longer resolves matches no live id
            continue
    return [by_id.get(live_id, live_id) for live_id in live_ids]
