"""What a plan document holds (docs/plans.md), apart from making and applying it
(plan_actions.py): the inputs that make it and their reading back as a request, the
changes a create makes (nested stacks and group members included), the stack it was made
against, its form as a file holds it, and what differs between two plans in words.

What it must not do: read or write the store, or run anything: it works on what the
caller read.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from stoker.engine import preview
from stoker.engine.validation import ValidationContext, ValidationResult
from stoker.environment.registry import ResourceRegistry
from stoker.plans import diff
from stoker.plans.errors import PlanError
from stoker.sdk.exceptions import StokerError
from stoker.stack_requests import Source
from stoker.store import StackRecord
from stoker.template import loader
from stoker.template.functions.base import resolve

__all__ = [
    "as_json",
    "changed_time",
    "condition_reasons",
    "content",
    "create_changes",
    "differences",
    "plan_inputs",
    "request_of",
    "stack_state",
]


def content(source: Source) -> Any:
    """What a plan keeps of a template or environment: its text, or the data a client
    sent already parsed (JSON-safe)."""
    text = source.text
    if isinstance(text, bytes):
        return text.decode("utf-8", errors="replace")
    if isinstance(text, str):
        return text
    data = text.data if isinstance(text, loader.Document) else text
    return json.loads(json.dumps(data, default=str))


def plan_inputs(
    template: Source | None,
    environments: Sequence[Source],
    parameters: Mapping[str, Any] | None,
    files: Mapping[str, str] | None,
    existing: bool = False,
    clear_parameters: Sequence[str] = (),
    disable_rollback: bool | None = None,
    timeout_mins: int | None = None,
    tags: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The document's ``inputs``: everything the apply needs, and nothing else."""
    return {
        "template": {"name": template.name, "content": content(template)}
        if template is not None
        else None,
        "environments": [
            {"name": source.name, "content": content(source)} for source in environments
        ],
        "files": dict(files or {}),
        "parameters": dict(parameters or {}),
        "existing": existing,
        "clear_parameters": list(clear_parameters),
        "disable_rollback": disable_rollback,
        "timeout_mins": timeout_mins,
        "tags": list(tags) if tags is not None else None,
    }


def request_of(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """A saved plan's inputs as the keyword arguments of a plan or an action."""
    template = inputs.get("template")
    try:
        return {
            "template": Source(template["content"], template.get("name"))
            if template is not None
            else None,
            "environments": [
                Source(item["content"], item.get("name"))
                for item in inputs.get("environments") or []
            ],
            "parameters": dict(inputs.get("parameters") or {}),
            "files": {str(key): value for key, value in (inputs.get("files") or {}).items()},
            "existing": bool(inputs.get("existing")),
            "clear_parameters": list(inputs.get("clear_parameters") or []),
            "disable_rollback": inputs.get("disable_rollback"),
            "timeout_mins": inputs.get("timeout_mins"),
            "tags": inputs.get("tags"),
            "converge": bool(inputs.get("converge")),
            "resources": {str(key): str(value) for key, value in (inputs.get("resources") or {}).items()},
            "accept_differences": bool(inputs.get("accept_differences")),
        }
    except (TypeError, KeyError, AttributeError) as error:
        raise PlanError(
            f"the plan's inputs cannot be read: {type(error).__name__}: {error}",
            hint="save the plan again with --plan-out",
        )


def create_changes(
    result: ValidationResult,
    registry: ResourceRegistry,
    nested_in: str | None = None,
    depth: int = 0,
) -> list[preview.Change]:
    """Every resource a create makes, in its order, with the values of its properties
    as far as they are known before it runs; then those of its nested stack, if any."""
    context = ValidationContext(result.template, result.params, result.classes, [], registry)
    definitions = result.template.resources
    found: list[preview.Change] = []
    for change in preview.preview_create(result.template, result.implicit):
        change.nested_in = nested_in
        definition, cls = definitions[change.name], result.classes.get(change.name)
        if cls is not None:
            try:
                bound = definition.bind(lambda value: resolve(value, context))
                properties = bound.properties(
                    cls.properties_schema, None, accept_any=cls.accepts_any_property
                )
                change.values = (
                    diff.additions(
                        "properties",
                        {
                            key: properties[key]
                            for key in bound.properties_data
                            if key in properties
                        },
                    )
                    or None
                )
            except StokerError:
                change.values = None
        if nested_in is not None:
            change.reason = "new resource (in a new nested stack)"
        found.append(change)
        child = result.nested.get(change.name)
        if child is not None and depth < 20:
            path = f"{nested_in}.{change.name}" if nested_in else change.name
            members = create_changes(child, registry, path, depth + 1)
            found.extend(members)
            found.extend(_more_members(child, members, path))
    return found


def _more_members(
    child: ValidationResult, members: list[preview.Change], path: str
) -> list[preview.Change]:
    """A group's nested stack is validated with one member standing for ``count``
    (``ValidationResult.resource_count``): the others a create makes, named as a
    ResourceGroup names them ("1", "2", ...); their values are the first one's
    definition with their own index."""
    count = child.resource_count
    if (
        child.count_property is None
        or not count
        or count <= 1
        or list(child.template.resources) != ["0"]
    ):
        return []
    first = [member for member in members if member.nested_in == path and member.name == "0"]
    if not first:
        return []
    reason = f"new resource (in a new nested stack), defined as {path}.0 with its own index"
    return [
        preview.Change(str(index), first[0].type, "added", reason, nested_in=path)
        for index in range(1, count)
    ]


def condition_reasons(changes: list[preview.Change], unconditioned: Any) -> None:
    """A resource the new template still names, but whose condition is now false, is
    deleted for that reason (not as one taken out of the template)."""
    for change in changes:
        if (
            change.kind == "deleted"
            and change.nested_in is None
            and change.name in unconditioned.resources
        ):
            condition = unconditioned.resources[change.name].condition
            change.reason = (
                f"its condition {condition!r} is false now"
                if isinstance(condition, str)
                else "its condition is false now"
            )


def as_json(plan: dict[str, Any]) -> dict[str, Any]:
    """The plan as a file holds it: plain JSON (a value of another type as its text), so
    a plan made again compares equal to one read back from its file."""
    return json.loads(json.dumps(plan, default=str))


def changed_time(stack: StackRecord) -> str | None:
    """When the stack last changed (its update, else its create), for messages."""
    when = stack.updated_at or stack.created_at
    return when.isoformat() if when is not None else None


def stack_state(stack: StackRecord, made_from: str) -> dict[str, Any]:
    """The plan's ``stack``: what it was made against."""
    return {
        "name": stack.name,
        "id": stack.id,
        "state": stack.state,
        "updated_time": changed_time(stack),
        "fingerprint": made_from,
    }


def differences(made: Mapping[str, Any], now: Mapping[str, Any]) -> list[str]:
    """What differs between two plans' resources and outputs, in words."""
    before = {entry["address"]: entry for entry in made.get("resources") or []}
    after = {entry["address"]: entry for entry in now.get("resources") or []}
    found = []
    for address in sorted(set(before) | set(after)):
        old, new = before.get(address), after.get(address)
        if old is None:
            found.append(f"{address} would now {new['action']}" if new else address)
        elif new is None:
            found.append(f"{address} ({old['action']} in the plan) is no longer planned")
        elif old["action"] != new["action"]:
            found.append(f"{address}: {old['action']} in the plan, {new['action']} now")
        elif old != new:
            found.append(f"{address}: its values differ")
    if made.get("outputs") != now.get("outputs"):
        found.append("the outputs differ")
    return found
