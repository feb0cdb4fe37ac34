"""A resource type's schema, as the API answers it, turned into what its page shows:
property rows (nested properties flattened under their parent's path), how an update
treats each property, constraints and support statuses in words, defaults as JSON.

Plain data in, plain data out: escaping is the templates' (``pages``), never done here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

# What an update does when a property's value changes (Heat's ``update_allowed`` and
# ``immutable``; the engine's ``plan_update`` decides by the same two flags).
UPDATE_IN_PLACE = "updated in place"
UPDATE_REPLACES = "replaced on update"
UPDATE_FAILS = "immutable: an update that changes it fails"


@dataclass(frozen=True)
class PropertyRow:
    path: str  # "name", or "parent.*.child" for a member of a list or map
    depth: int
    type: str
    required: bool
    default: str | None  # JSON text; None when the property has no default
    constraints: list[str]
    update: str | None  # top-level properties only: a member changes with its parent
    support: str | None
    description: str


@dataclass(frozen=True)
class AttributeRow:
    name: str
    type: str
    support: str | None
    description: str


def update_behaviour(schema: dict[str, Any]) -> str:
    if schema.get("immutable"):
        return UPDATE_FAILS
    return UPDATE_IN_PLACE if schema.get("update_allowed") else UPDATE_REPLACES


def _json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _bounds(body: dict[str, Any]) -> str:
    parts = []
    if body.get("min") is not None:
        parts.append(f"at least {_json(body['min'])}")
    if body.get("max") is not None:
        parts.append(f"at most {_json(body['max'])}")
    return " and ".join(parts)


def constraint_text(constraint: dict[str, Any]) -> str:
    """One constraint of the API's ``constraints`` list in words."""
    description = constraint.get("description")
    kinds = [key for key in constraint if key != "description"]
    words = []
    for kind in kinds:
        body = constraint[kind]
        if kind == "range" and isinstance(body, dict):
            words.append(f"value {_bounds(body)}")
        elif kind == "length" and isinstance(body, dict):
            words.append(f"length {_bounds(body)}")
        elif kind == "allowed_values" and isinstance(body, list):
            words.append("one of " + ", ".join(_json(value) for value in body))
        elif kind == "allowed_pattern":
            words.append(f"matches the pattern {body}")
        elif kind == "custom_constraint":
            words.append(f"must be a valid {body}")
        elif kind == "modulo" and isinstance(body, dict):
            words.append(
                f"a multiple of {_json(body.get('step'))} plus {_json(body.get('offset', 0))}"
            )
        else:
            words.append(f"{kind}: {_json(body)}")
    text = "; ".join(words)
    return f"{text} ({description})" if description else text


def support_text(status: dict[str, Any] | None) -> str | None:
    """A support status and the ones before it in words, e.g. ``DEPRECATED since 9.0.0:
    use X instead; before: SUPPORTED since 2014.1``."""
    if not status:
        return None
    parts = []
    current: dict[str, Any] | None = status
    while current:
        text = str(current.get("status") or "UNKNOWN")
        if current.get("version"):
            text += f" since {current['version']}"
        if current.get("message"):
            text += f": {current['message']}"
        parts.append(text)
        current = current.get("previous_status")
    return parts[0] + ("; before: " + "; ".join(parts[1:]) if len(parts) > 1 else "")


def property_rows(properties: dict[str, dict[str, Any]]) -> list[PropertyRow]:
    """Required properties first, then the others, each in the API's order; a list's or
    a map's members follow their parent."""
    ordered = sorted(properties.items(), key=lambda item: not item[1].get("required"))
    rows: list[PropertyRow] = []
    for name, schema in ordered:
        _add_rows(rows, name, schema, 0)
    return rows


def _add_rows(rows: list[PropertyRow], path: str, schema: dict[str, Any], depth: int) -> None:
    rows.append(
        PropertyRow(
            path=path,
            depth=depth,
            type=str(schema.get("type") or ""),
            required=bool(schema.get("required")),
            default=_json(schema["default"]) if "default" in schema else None,
            constraints=[
                constraint_text(constraint) for constraint in schema.get("constraints") or ()
            ],
            update=update_behaviour(schema) if depth == 0 else None,
            support=support_text(schema.get("support_status")),
            description=str(schema.get("description") or ""),
        )
    )
    for name, member in (schema.get("schema") or {}).items():
        _add_rows(rows, f"{path}.{name}", member, depth + 1)


def attribute_rows(attributes: dict[str, dict[str, Any]]) -> list[AttributeRow]:
    return [
        AttributeRow(
            name,
            str(schema.get("type") or ""),
            support_text(schema.get("support_status")),
            str(schema.get("description") or ""),
        )
        for name, schema in sorted(attributes.items())
    ]


def paragraphs(text: str) -> list[str]:
    """A docstring's paragraphs (separated by blank lines), each on one line."""
    return [" ".join(block.split()) for block in text.split("\n\n") if block.strip()]
