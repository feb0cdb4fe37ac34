"""Key-level differences between two values, for a plan.

Owns: turning an old and a new value (a property, an output) into the list of leaves
that differ, each with its dotted path (``properties.config.db.port``), so that a plan
shows what changed inside maps, lists of the same length and JSON text, rather than
two whole blobs. A new value known only once the action runs (``UNRESOLVED``
somewhere in it) is reported as such at the deepest place it can be told.

Must not: resolve anything or know about resources; it compares data.
"""

from __future__ import annotations

import json
from typing import Any

from stoker.sdk.properties import UNRESOLVED, contains_unresolved

# Deeper than this, a difference is shown whole (a plan stays readable).
_MAX_DEPTH = 12


def shown(value: Any) -> Any:
    """``value`` as a plan shows it: what is not known yet is None."""
    if value is UNRESOLVED:
        return None
    if isinstance(value, dict):
        return {key: shown(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [shown(item) for item in value]
    return value


def _json_container(value: Any) -> Any:
    """A JSON object or array written as text, parsed; anything else unchanged."""
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        if isinstance(parsed, dict | list):
            return parsed
    return value


def _leaf(
    path: str, old: Any, new: Any, present_old: bool = True, present_new: bool = True
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "path": path,
        "old": shown(old) if present_old else None,
        "new": shown(new) if present_new else None,
    }
    if not present_old:
        entry["op"] = "add"
    elif not present_new:
        entry["op"] = "remove"
    else:
        entry["op"] = "change"
    if present_new and contains_unresolved(new):
        entry["known_after_apply"] = True
    return entry


def changes(path: str, old: Any, new: Any, depth: int = 0) -> list[dict[str, Any]]:
    """The leaves under ``path`` that differ between ``old`` and ``new`` (none when
    they are equal). A new value not known yet is a change, flagged ``known_after_apply``."""
    if new is not UNRESOLVED and not contains_unresolved(new) and old == new:
        return []
    if depth < _MAX_DEPTH and new is not UNRESOLVED:
        old_inner, new_inner = _json_container(old), _json_container(new)
        if isinstance(old_inner, dict) and isinstance(new_inner, dict):
            found: list[dict[str, Any]] = []
            for key in sorted(set(old_inner) | set(new_inner), key=str):
                where = f"{path}.{key}"
                if key not in new_inner:
                    found.append(_leaf(where, old_inner[key], None, present_new=False))
                elif key not in old_inner:
                    found.append(_leaf(where, None, new_inner[key], present_old=False))
                else:
                    found.extend(changes(where, old_inner[key], new_inner[key], depth + 1))
            return found
        if (
            isinstance(old_inner, list)
            and isinstance(new_inner, list)
            and len(old_inner) == len(new_inner)
            and old_inner
        ):
            found = []
            for index, (old_item, new_item) in enumerate(zip(old_inner, new_inner, strict=True)):
                found.extend(changes(f"{path}[{index}]", old_item, new_item, depth + 1))
            return found
    return [_leaf(path, old, new)]


def additions(path: str, values: dict[str, Any]) -> list[dict[str, Any]]:
    """What a resource or output made new shows: each top-level value as added."""
    return [_leaf(f"{path}.{key}", None, value, present_old=False) for key, value in values.items()]
