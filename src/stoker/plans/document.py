"""The plan document (version 1, ``plan.schema.json``): its parts and its summary.

Owns: turning the engine's preview (a list of ``engine.preview.Change``, nested stacks'
included) and the outputs before and after into the document's ``resources``,
``outputs`` and ``summary``; reading a saved document back (``read``), refusing one
this version cannot apply with a message that says why.

Must not: decide what changes (the engine's previews do) or mask values (the caller
masks the document it shows).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from importlib import resources as package_files
from typing import Any

from stoker.plans import diff
from stoker.plans.errors import PlanError
from stoker.sdk.properties import contains_unresolved

FORMAT = "stoker-plan"
VERSION = 1

# engine.preview's kinds -> the plan's actions.
ACTIONS = {
    "added": "create",
    "updated": "update",
    "replaced": "replace",
    "deleted": "delete",
    "unchanged": "no-change",
}
# The summary's counters (``summary``), in the order its line names them.
SUMMARY_WORDS = (
    ("add", "to add"),
    ("change", "to change"),
    ("replace", "to replace"),
    ("delete", "to delete"),
)
_COUNTED = {
    "create": "add",
    "update": "change",
    "replace": "replace",
    "delete": "delete",
    "no-change": "no_change",
    "import": "import",
    # the plans of the other actions (engine.action_preview)
    "suspend": "suspend",
    "resume": "resume",
    "check": "check",
    "snapshot": "snapshot",
}


def schema() -> dict[str, Any]:
    """The JSON Schema of the document (``plan.schema.json``, shipped with stoker)."""
    return json.loads(package_files.files("stoker.plans").joinpath("plan.schema.json").read_text())


def resource_entries(changes: Iterable[Any]) -> list[dict[str, Any]]:
    """One entry a resource, in the order the action visits them (a nested stack's
    resources after the resource that owns it)."""
    entries = []
    for change in changes:
        address = f"{change.nested_in}.{change.name}" if change.nested_in else change.name
        entries.append(
            {
                "address": address,
                "name": change.name,
                "type": change.type,
                "nested_in": change.nested_in,
                "action": ACTIONS[change.kind],
                # "in place: value changed" reads "update in place: value changed"
                "reason": change.reason.removeprefix("in place: ")
                if change.kind == "updated"
                else change.reason,
                "changes": list(change.values or []),
                **({"hooks": list(change.hooks)} if change.hooks else {}),
            }
        )
    return entries


def refresh_entries(results: Iterable[tuple[Any, Any]]) -> list[dict[str, Any]]:
    """A refresh's resources from a drift detection (``engine.drift.examine``): each
    one that drifted ``update`` (what the stack holds changes to the live object's
    values, or to CHECK_FAILED when the object is gone), the others ``no-change`` with
    why. Values as the detection shows them (hidden ones masked)."""
    entries = []
    for result, _ in results:
        address = result.path.replace("/", ".")
        nested_in = address[: -len(result.resource_name) - 1] or None
        entry: dict[str, Any] = {
            "address": address,
            "name": result.resource_name,
            "type": result.resource_type,
            "nested_in": nested_in,
            "action": "no-change",
            "reason": result.reason or "in sync",
            "changes": [],
        }
        if result.status == "MODIFIED":
            names = ", ".join(drifted.name for drifted in result.properties)
            entry["action"] = "update"
            entry["reason"] = f"takes the live object's {names}"
            entry["changes"] = [
                leaf
                for drifted in result.properties
                for leaf in diff.changes(f"properties.{drifted.name}", drifted.expected, drifted.actual)
            ]
        elif result.status == "DELETED":
            entry["action"] = "update"
            entry["reason"] = (
                f"{result.reason}: marked CHECK_FAILED (the next update makes it again)"
            )
        entries.append(entry)
    return entries


def output_entries(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each output of the stack after the action (``new``, values not known yet as
    ``UNRESOLVED``) against before (``old``; None for a create): added, changed,
    removed or not changed, with the key-level differences."""
    before = dict(old or {})
    entries = []
    for name, value in new.items():
        unknown = contains_unresolved(value)
        if old is None or name not in before:
            entry = {
                "name": name,
                "action": "create",
                "old": None,
                "new": diff.shown(value),
                "changes": [],
            }
        else:
            found = diff.changes("value", before[name], value)
            entry = {
                "name": name,
                "action": "update" if found else "no-change",
                "old": before[name],
                "new": diff.shown(value),
                "changes": found,
            }
        if unknown:
            entry["known_after_apply"] = True
        entries.append(entry)
    for name, value in before.items():
        if name not in new:
            entries.append(
                {"name": name, "action": "delete", "old": value, "new": None, "changes": []}
            )
    return entries


def summary(resources: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """How many resources each action touches, nested stacks' included."""
    counts = {"add": 0, "change": 0, "replace": 0, "delete": 0, "no_change": 0}
    for entry in resources:
        key = _COUNTED[entry["action"]]
        counts[key] = counts.get(key, 0) + 1
    return counts


def summary_line(counts: Mapping[str, int]) -> str:
    """``Plan: 2 to add, 1 to change, 1 to replace, 0 to delete``."""
    return "Plan: " + ", ".join(f"{counts.get(key, 0)} {words}" for key, words in SUMMARY_WORDS)


def read(document: Any, where: str = "the plan") -> dict[str, Any]:
    """A saved plan, checked enough to be applied: its format, its version, its
    operation and the inputs it carries."""
    if not isinstance(document, Mapping):
        raise PlanError(
            f"{where} is not a plan: expected a JSON object",
            hint="save one with --plan-out on 'stack create/update --dry-run'",
        )
    if document.get("format") != FORMAT:
        raise PlanError(
            f"{where} is not a stoker plan (its 'format' is {document.get('format')!r}, not {FORMAT!r})",
            hint="save one with --plan-out",
        )
    if document.get("version") != VERSION:
        raise PlanError(
            f"{where} is a plan of version {document.get('version')!r}; this stoker applies version {VERSION}",
            hint="make the plan again with this stoker",
        )
    if document.get("operation") not in ("create", "update", "refresh", "import"):
        raise PlanError(
            f"{where}: 'operation' must be create, update, refresh or import, not {document.get('operation')!r}"
        )
    inputs, stack = document.get("inputs"), document.get("stack")
    if (
        not isinstance(inputs, Mapping)
        or not isinstance(stack, Mapping)
        or not isinstance(stack.get("name"), str)
    ):
        raise PlanError(
            f"{where} carries no inputs to apply (a plan printed with -f json leaves them out)",
            hint="save the plan with --plan-out FILE and apply that file",
        )
    for key in ("resources", "outputs"):
        entries = document.get(key)
        if not isinstance(entries, list) or not all(
            isinstance(entry, Mapping) for entry in entries
        ):
            raise PlanError(f"{where}: '{key}' must be a list of objects")
    for index, entry in enumerate(document["resources"]):
        if not isinstance(entry.get("address"), str) or entry.get("action") not in _COUNTED:
            raise PlanError(
                f"{where}: resources[{index}] needs an 'address' and an 'action' ({', '.join(_COUNTED)})"
            )
    _check_inputs(inputs, where)
    return dict(document)


def _check_source(value: Any, where: str) -> None:
    if (
        not isinstance(value, Mapping)
        or not isinstance(value.get("content"), str | Mapping)
        or not isinstance(value.get("name"), str | None)
    ):
        raise PlanError(
            f"{where} must be an object with 'name' (text or null) and 'content' (text or an object)"
        )


def _check_inputs(inputs: Mapping[str, Any], where: str) -> None:
    """Each input of its type (plan.schema.json's ``inputs``), the first wrong one named."""
    if inputs.get("template") is not None:
        _check_source(inputs["template"], f"{where}: inputs.template")
    environments = inputs.get("environments", [])
    if not isinstance(environments, list):
        raise PlanError(f"{where}: inputs.environments must be a list")
    for index, source in enumerate(environments):
        _check_source(source, f"{where}: inputs.environments[{index}]")
    files = inputs.get("files", {})
    if not isinstance(files, Mapping) or not all(isinstance(text, str) for text in files.values()):
        raise PlanError(f"{where}: inputs.files must map names to text")
    checks = {
        "parameters": (lambda value: isinstance(value, Mapping), "an object"),
        "existing": (lambda value: isinstance(value, bool), "true or false"),
        "clear_parameters": (
            lambda value: isinstance(value, list) and all(isinstance(name, str) for name in value),
            "a list of names",
        ),
        "disable_rollback": (
            lambda value: value is None or isinstance(value, bool),
            "true, false or null",
        ),
        "timeout_mins": (
            lambda value: (
                value is None
                or (isinstance(value, int) and not isinstance(value, bool) and value > 0)
            ),
            "a positive integer or null",
        ),
        "tags": (
            lambda value: (
                value is None
                or (isinstance(value, list) and all(isinstance(tag, str) for tag in value))
            ),
            "a list of text or null",
        ),
    }
    defaults: dict[str, Any] = {"parameters": {}, "existing": False, "clear_parameters": []}
    for key, (valid, wanted) in checks.items():
        if not valid(inputs.get(key, defaults.get(key))):
            raise PlanError(f"{where}: inputs.{key} must be {wanted}")


def actions(document: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(address, action) of each resource a plan touches, for comparing two plans."""
    return sorted((entry["address"], entry["action"]) for entry in document.get("resources") or [])
