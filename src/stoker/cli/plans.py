"""Plans on the command line: a dry run's plan printed or saved (``--plan-out``), and
``stoker stack apply PLAN``, which applies a saved one (docs/plans.md).

Owns: the plan's text (each resource's action and reason, each changed value as
old -> new, outputs, the summary line), its other formats (``-f json`` is the
document without its inputs), writing the file and the ``apply`` command. Registered on
the ``stack`` group of ``cli/groups.py``. Must not decide anything about a plan: the
engine makes it and refuses a stale one.
"""

from __future__ import annotations

import json
import os
import shutil
import textwrap
from pathlib import Path
from typing import Any

import click
import yaml

from stoker.cli import render
from stoker.cli.groups import stack
from stoker.cli.interrupt import Interruption
from stoker.cli.invocation import (
    FORMAT,
    PROGRESS_FORMAT,
    Failure,
    backend_of,
    choose_messages,
    finish_action,
    progress_printer,
)
from stoker.sdk.exceptions import StokerError

# The width the text is wrapped at when the terminal's is not known (not a terminal, no
# COLUMNS): a plan stays readable in a 100-column terminal.
WIDTH = 100
_MARKS = {"create": "+", "update": "~", "replace": "-/+", "delete": "-", "no-change": "=", "suspend": "*", "resume": "*", "check": "*", "snapshot": "*", "import": "<="}
_WORDS = {
    "create": "create",
    "update": "update in place",
    "replace": "replace",
    "delete": "delete",
    "no-change": "no change",
    "suspend": "suspend",
    "resume": "resume",
    "check": "check",
    "snapshot": "snapshot",
    "import": "import",
}
# The plans of the other actions (engine.action_preview): shown, not applied.
_OTHER_ACTIONS = ("suspend", "resume", "check", "delete", "snapshot")
KNOWN_AFTER = "(known after apply)"
_SUMMARY_WORDS = (
    ("add", "to add"),
    ("change", "to change"),
    ("replace", "to replace"),
    ("delete", "to delete"),
)


def shown_document(plan: dict[str, Any]) -> dict[str, Any]:
    """The plan as ``-f json`` prints it: everything but the inputs (which hold the
    hidden parameters' values in clear: only a saved plan keeps them)."""
    return {key: value for key, value in plan.items() if key != "inputs"}


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _change_line(change: dict[str, Any], path: str | None = None) -> str:
    where = path if path is not None else change["path"]
    new = (
        KNOWN_AFTER
        if change.get("known_after_apply") and change.get("new") is None
        else _value(change.get("new"))
    )
    if change.get("op") == "add":
        return f"{where}: {new}"
    if change.get("op") == "remove":
        return f"{where}: {_value(change.get('old'))} -> (removed)"
    return f"{where}: {_value(change.get('old'))} -> {new}"


def _wrapped(text: str, indent: str) -> list[str]:
    # "(known after apply)" is kept on one line.
    kept = text.replace(KNOWN_AFTER, KNOWN_AFTER.replace(" ", "\x00"))
    width = max(40, shutil.get_terminal_size((WIDTH, 24)).columns)
    lines = textwrap.wrap(
        kept,
        width,
        initial_indent=indent,
        subsequent_indent=indent + "    ",
        break_on_hyphens=False,
    )
    return [line.replace("\x00", " ") for line in lines] or [indent]


def summary_line(counts: dict[str, int]) -> str:
    return "Plan: " + ", ".join(f"{counts.get(key, 0)} {words}" for key, words in _SUMMARY_WORDS)


def plan_text(plan: dict[str, Any]) -> list[str]:
    """The plan as lines as wide as the terminal (``WIDTH`` when it is not known)."""
    lines: list[str] = []
    stack_info = plan["stack"]
    if plan["operation"] in ("create", "import"):
        lines.append(f"Stack {stack_info['name']}: {plan['operation']}")
    elif plan["operation"] == "refresh" and plan.get("done"):
        lines.append(f"Stack {stack_info['name']}: refreshed from the live objects; the cloud was not changed")
    elif plan["operation"] in _OTHER_ACTIONS:
        lines.append(
            f"Stack {stack_info['name']}: {plan['operation']} (planned against {stack_info.get('state')}, last changed "
            f"{stack_info.get('updated_time')})"
        )
    elif plan["operation"] == "restore":
        lines.append(
            f"Stack {stack_info['name']}: restore to the snapshot, an update (planned against {stack_info.get('state')}, "
            f"last changed {stack_info.get('updated_time')})"
        )
    elif plan["operation"] == "refresh":
        lines.append(
            f"Stack {stack_info['name']}: refresh only (planned against {stack_info.get('state')}, last changed "
            f"{stack_info.get('updated_time')})"
        )
    else:
        lines.append(
            f"Stack {stack_info['name']}: update (planned against {stack_info.get('state')}, last changed {stack_info.get('updated_time')})"
        )
    unchanged = 0
    for entry in plan["resources"]:
        stops = f" (stops at hook {', '.join(entry['hooks'])})" if entry.get("hooks") else ""
        if entry["action"] == "no-change":
            if stops:
                lines.extend(_wrapped(f"{_MARKS['no-change']} {entry['address']} ({entry['type']}) no change{stops}", "  "))
            unchanged += 1
            continue
        mark = _MARKS[entry["action"]]
        reason = f": {entry['reason']}{stops}" if entry.get("reason") else stops
        # A refresh changes what the stack holds, not the object.
        word = "refresh" if plan["operation"] == "refresh" else _WORDS[entry["action"]]
        lines.extend(
            _wrapped(
                f"{mark} {entry['address']} ({entry['type']}) {word}{reason}",
                "  ",
            )
        )
        for change in entry.get("changes") or []:
            lines.extend(_wrapped(_change_line(change), "      "))
    outputs = [entry for entry in plan.get("outputs") or [] if entry["action"] != "no-change"]
    if outputs:
        lines.append("Outputs:")
        for entry in outputs:
            mark = _MARKS[entry["action"]]
            if entry["action"] == "delete":
                lines.extend(
                    _wrapped(
                        f"{mark} {entry['name']}: {_value(entry.get('old'))} -> (removed)", "  "
                    )
                )
            elif entry["action"] == "create":
                new = (
                    KNOWN_AFTER
                    if entry.get("known_after_apply") and entry.get("new") is None
                    else _value(entry.get("new"))
                )
                lines.extend(_wrapped(f"{mark} {entry['name']}: {new}", "  "))
            elif len(entry.get("changes") or []) == 1 and entry["changes"][0]["path"] == "value":
                lines.extend(
                    _wrapped(f"{mark} " + _change_line(entry["changes"][0], entry["name"]), "  ")
                )
            else:
                lines.extend(_wrapped(f"{mark} {entry['name']}:", "  "))
                for change in entry.get("changes") or []:
                    lines.extend(
                        _wrapped(
                            _change_line(change, entry["name"] + change["path"][len("value") :]),
                            "      ",
                        )
                    )
    if unchanged:
        lines.append(f"{unchanged} resource{'s' if unchanged != 1 else ''} unchanged.")
    if plan["operation"] == "refresh":
        lines.append(refresh_line(plan))
    elif plan["operation"] in _OTHER_ACTIONS:
        counts = plan["summary"]
        lines.append(f"Plan: {counts.get(plan['operation'], 0)} to {plan['operation']}, {counts.get('no_change', 0)} unchanged")
    elif plan["operation"] == "import":
        lines.append(summary_line(plan["summary"]).replace("Plan: ", f"Plan: {plan['summary'].get('import', 0)} to import, ", 1))
    else:
        lines.append(summary_line(plan["summary"]))
    return lines


def refresh_line(plan: dict[str, Any]) -> str:
    """``Refresh: 2 to take from the live objects, 5 unchanged; nothing changes in the cloud``."""
    counts = plan["summary"]
    verb = ("Refreshed", "took") if plan.get("done") else ("Refresh", "to take")
    return (
        f"{verb[0]}: {counts.get('change', 0)} {verb[1]} from the live objects, {counts.get('no_change', 0)} unchanged; "
        "nothing changes in the cloud"
    )


def print_plan(preview: dict[str, Any], fmt: str) -> None:
    """A dry run's plan as ``fmt`` says; a server that makes no plan (a Heat that is
    not stoker): its preview, as before."""
    plan = preview.get("plan")
    if plan is None:
        render.print_preview(preview, fmt)
        return
    if fmt == "json":
        click.echo(json.dumps(shown_document(plan), indent=4))
    elif fmt == "yaml":
        click.echo(
            yaml.safe_dump(shown_document(plan), default_flow_style=False, sort_keys=False),
            nl=False,
        )
    elif fmt in ("csv", "value", "shell"):
        rows = [
            {
                "address": e["address"],
                "action": e["action"],
                "type": e["type"],
                "reason": e["reason"],
            }
            for e in plan["resources"]
        ]
        render.print_list(
            rows, "csv" if fmt == "shell" else fmt, ["address", "action", "type", "reason"]
        )
    else:
        *lines, summary = plan_text(plan)
        for line in lines:
            click.echo(line)
        # The template each candidate list chose, and which an update changes; then the
        # summary, last.
        for key, columns in (
            ("implementations", ["resource_name", "resource_type", "template", "requires"]),
            ("implementation_changes", ["resource_name", "resource_type", "from", "to"]),
        ):
            if preview.get(key):
                render.print_list(preview[key], fmt, columns)
        click.echo(summary)


def save_plan(preview: dict[str, Any], path: str, where: str) -> None:
    """Write the plan, inputs included, to ``path`` (readable by its owner only: it
    holds the parameters' values)."""
    plan = preview.get("plan")
    if plan is None:
        raise Failure(
            f"--plan-out: {where} makes no plan document (a Heat that is not stoker); nothing was written"
        )
    text = json.dumps(plan, indent=2, sort_keys=False) + "\n"
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            file.write(text)
    except OSError as error:
        raise Failure(f"--plan-out {path}: cannot write the plan: {error.strerror or error}")
    click.echo(f"Plan saved to {path}: apply it with 'stoker stack apply {path}'", err=True)


def show_plan(preview: dict[str, Any], fmt: str, plan_out: str | None, where: str) -> None:
    """What ``--dry-run`` ends with: the plan printed, and saved with ``--plan-out``."""
    print_plan(preview, fmt)
    if plan_out:
        save_plan(preview, plan_out, where)


def read_plan(path: str) -> dict[str, Any]:
    hint = "save a plan with --plan-out on 'stoker stack create/update --dry-run'"
    try:
        text = Path(path).read_text()
    except OSError as error:
        raise StokerError(f"Cannot read the plan {path}: {error.strerror or error}", hint=hint)
    try:
        found = json.loads(text)
    except ValueError as error:
        raise StokerError(f"{path} is not a plan: it is not JSON ({error})", hint=hint)
    if not isinstance(found, dict):
        raise StokerError(f"{path} is not a plan: expected a JSON object", hint=hint)
    return found


@stack.command("apply")
@click.argument("plan_file", metavar="PLAN")
@click.option("--wait", is_flag=True, help="Show live progress until the action ends.")
@PROGRESS_FORMAT
@FORMAT
@click.pass_context
def stack_apply(ctx, plan_file, wait, progress_format, fmt):
    """Apply a plan saved with --plan-out: exactly the create or update it shows.

    Refused, saying why, when the stack changed since the plan was made (another
    update, a signal, a resource marked unhealthy) or its inputs would now plan
    otherwise: make and review a new plan then."""
    plan = read_plan(plan_file)
    json_lines = choose_messages(progress_format, wait, fmt)
    backend = backend_of(ctx)
    operation = plan.get("operation")
    name = (plan.get("stack") or {}).get("name") or ""
    if operation == "refresh":
        # Done when answered: no action runs, the plan shows what the stack took.
        backend.apply_plan(plan)
        click.echo(f"Stack {name}: refreshed as planned; the cloud was not changed")
        return
    action = "create" if operation in ("create", "import") else "update"
    with (
        progress_printer(wait, fmt, json_lines) as progress,
        Interruption(backend, name, action, progress) as interruption,
    ):
        result = backend.apply_plan(plan, progress)
    interruption.explain(result)
    finish_action(backend, result, "ADOPT" if operation == "import" else action.upper(), fmt)
