"""Printing results: tables (rich), JSON, YAML (the live progress of an action is ``cli.progress``'s).

Column names and JSON keys follow ``openstack stack ...`` (cliff uses the column
headers as JSON keys).
"""

from __future__ import annotations

import csv
import json
import re
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import click
import yaml
from rich.console import Console
from rich.table import Table

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def timestamp(value: datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else None


def stack_row(stack: Mapping[str, Any], parent: bool = False, deleted: bool = False, project: bool = False) -> dict[str, Any]:
    """A row of ``stack list`` from Heat's stack summary (``deleted``: with its
    deletion time, as ``openstack stack list --deleted``; ``project``: with its project,
    as ``--all-projects`` lists them)."""
    row = {
        "ID": stack["id"],
        "Stack Name": stack["stack_name"],
        **({"Project": stack.get("project")} if project else {}),
        "Stack Status": stack["stack_status"],
        "Creation Time": stack.get("creation_time"),
        "Updated Time": stack.get("updated_time"),
    }
    if parent:
        row["Parent"] = stack.get("parent")
    if deleted:
        row["Deletion Time"] = stack.get("deletion_time")
    return row


# ``openstack stack show``'s fields: these first, then every other key of Heat's stack
# detail in the body's order, less the description's copy (heatclient's _show_stack).
DETAIL_FIRST = ("id", "stack_name", "description", "creation_time", "updated_time", "stack_status", "stack_status_reason", "parameters", "outputs", "links")
DETAIL_LEFT_OUT = frozenset({"template_description"})


def stack_detail(stack: Mapping[str, Any]) -> dict[str, Any]:
    """The fields ``stack show`` prints, from Heat's stack detail (outputs resolved;
    none for a deleted stack)."""
    detail = {key: stack.get(key) for key in DETAIL_FIRST}
    detail["description"] = stack.get("description") or ""
    detail["parameters"] = dict(stack.get("parameters") or {})
    detail["outputs"] = list(stack.get("outputs") or [])
    detail["links"] = list(stack.get("links") or [])
    detail.update({key: value for key, value in stack.items() if key not in detail and key not in DETAIL_LEFT_OUT})
    return detail


def resource_row(resource: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "resource_name": resource["resource_name"],
        "physical_resource_id": resource.get("physical_resource_id") or "",
        "resource_type": resource["resource_type"],
        "resource_status": resource["resource_status"],
        "updated_time": resource.get("updated_time"),
    }


def event_row(event: Mapping[str, Any], path: str = "") -> dict[str, Any]:
    """``path``: the nested stack's place (``group.0.``) for an event of a nested stack."""
    return {
        "resource_name": f"{path}{event['resource_name']}",
        "id": event["id"],
        "resource_status": event["resource_status"],
        "resource_status_reason": event.get("resource_status_reason"),
        "event_time": event.get("event_time"),
        "physical_resource_id": event.get("physical_resource_id"),
        "logical_resource_id": event.get("logical_resource_id"),
    }


# ``openstack stack event list``'s columns (heatclient's ListEvent, events with names).
EVENT_COLUMNS = ["resource_name", "id", "resource_status", "resource_status_reason", "event_time", "physical_resource_id", "logical_resource_id"]


def event_line(event: Mapping[str, Any], path: str = "") -> str:
    """``openstack stack event list`` log format (``path`` as for ``event_row``)."""
    when = (event.get("event_time") or "").replace("T", " ")
    return f"{when} [{path}{event['resource_name']}]: {event['resource_status']}  {event.get('resource_status_reason')}"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2, sort_keys=True)
    return str(value)


# cliff's formatters (what ``openstack ... -f`` offers): lists and single items.
LIST_FORMATS = ("table", "json", "yaml", "csv", "value")
DETAIL_FORMATS = ("table", "json", "yaml", "shell", "value")
FORMATS = ("table", "json", "yaml", "csv", "shell", "value")


def _selected(available: Sequence[str], columns: Sequence[str] | None = None) -> list[str]:
    """The columns ``-c`` chose (all when none), in the order given; an unknown one is
    cliff's error, naming those there are."""
    if columns is None:
        context = click.get_current_context(silent=True)
        columns = (context.find_root().obj or {}).get("columns") if context is not None else None
    if not columns:
        return list(available)
    unknown = [name for name in columns if name not in available]
    if unknown:
        raise click.UsageError(f"No recognized column names in {unknown}. Recognized columns are {tuple(available)}.")
    return list(columns)


def _table(headers: Sequence[str]) -> Table:
    table = Table(show_lines=False)
    for header in headers:
        # A terminal's width folds long cells; piped output never wraps (see _console).
        table.add_column(header, overflow="fold" if out.is_terminal else "ignore", no_wrap=not out.is_terminal)
    return table


def _print_table(table: Table) -> None:
    if out.is_terminal:
        out.print(table)
        return
    # Not a terminal: as wide as the table needs, so a pipe reads whole values
    # ("CREATE_COMPLETE", not "CREATE_COMPLE" / "TE").
    wide = Console(file=sys.stdout, width=table.__rich_measure__(out, out.options.update(width=1_000_000)).maximum + 4, soft_wrap=True)
    wide.print(table)


def _csv(rows: Sequence[Sequence[Any]]) -> None:
    writer = csv.writer(sys.stdout, quoting=csv.QUOTE_NONNUMERIC, lineterminator="\n")
    for row in rows:
        writer.writerow([value if isinstance(value, (int, float)) and not isinstance(value, bool) else _cell(value) for value in row])


def print_list(rows: Sequence[Mapping[str, Any]], fmt: str, columns: Sequence[str] | None = None, selected: Sequence[str] | None = None) -> None:
    """Rows under ``columns`` (default: the first row's keys), as ``fmt`` says; ``-c``
    picks columns."""
    headers = _selected(list(columns or (rows[0].keys() if rows else [])), selected)
    if fmt == "json":
        print(json.dumps([{h: row.get(h) for h in headers} for row in rows], indent=4, default=str))
    elif fmt == "yaml":
        print(yaml.safe_dump([{h: _plain(row.get(h)) for h in headers} for row in rows], default_flow_style=False, sort_keys=False), end="")
    elif fmt == "csv":
        _csv([headers, *[[row.get(h) for h in headers] for row in rows]])
    elif fmt == "value":
        for row in rows:
            print(" ".join(_cell(row.get(h)) for h in headers))
    elif fmt == "shell":
        raise click.UsageError("-f shell shows one item: use it with a show command (lists take table, json, yaml, csv or value)")
    else:
        table = _table(headers)
        for row in rows:
            table.add_row(*(_cell(row.get(h)) for h in headers))
        _print_table(table)


def _shell_name(key: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_]", "_", key)


def print_detail(detail: Mapping[str, Any], fmt: str, selected: Sequence[str] | None = None, prefix: str = "") -> None:
    """One item's fields, as ``fmt`` says (``shell``: ``name="value"`` lines a shell can
    ``eval``, as cliff's); ``-c`` picks fields."""
    keys = _selected(list(detail.keys()), selected)
    shown = {key: detail[key] for key in keys}
    if fmt == "json":
        print(json.dumps(shown, indent=4, default=str))
    elif fmt == "yaml":
        print(yaml.safe_dump({key: _plain(value) for key, value in shown.items()}, default_flow_style=False, sort_keys=False), end="")
    elif fmt == "value":
        for value in shown.values():
            print(_cell(value))
    elif fmt == "shell":
        for key, value in shown.items():
            text = _cell(value).replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("`", "\\`")
            print(f'{prefix}{_shell_name(key)}="{text}"')
    elif fmt == "csv":
        _csv([["Field", "Value"], *[[key, value] for key, value in shown.items()]])
    else:
        table = _table(["Field", "Value"])
        for key, value in shown.items():
            table.add_row(key, _cell(value))
        _print_table(table)


def _plain(value: Any) -> Any:
    """A value YAML can write as plain data (datetimes and the like as text)."""
    if isinstance(value, Mapping):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return str(value)


PLAN_WORDS = {"added": "to create", "updated": "to update in place", "replaced": "to replace", "deleted": "to delete"}


def plan_values(change: dict) -> str:
    """``name: old -> new`` per changed property (a value known only during the update
    shows as such)."""

    def text(value: object) -> str:
        return json.dumps(value, sort_keys=True, default=str) if not isinstance(value, str) else value

    return "\n".join(
        f"{key}: {text(values['old'])} -> {'(known after the update)' if values.get('known_after') else text(values['new'])}"
        for key, values in (change.get("property_changes") or {}).items()
    )


def print_preview(preview: dict, fmt: str) -> None:
    """A plan: each change with why and, for updates and replacements, each property's
    old -> new value; then a summary (values of hidden parameters come masked)."""
    if fmt == "json":
        click.echo(json.dumps(preview, indent=4))
        return
    changes = preview["resource_changes"]
    rows = [
        {
            "change": kind,
            # a nested stack's resource by its path (show_nested): web.server
            "resource_name": f"{r['nested_in']}.{r['resource_name']}" if r.get("nested_in") else r["resource_name"],
            "resource_type": r["resource_type"], "reason": r["reason"], "values": plan_values(r),
        }
        for kind, resources in changes.items()
        for r in resources
    ]
    print_list(rows, fmt, ["change", "resource_name", "resource_type", "reason", "values"])
    # Where the environment lists candidate templates (seed 003): the choice, and what an
    # update changes.
    if preview.get("implementations"):
        print_list(preview["implementations"], fmt, ["resource_name", "resource_type", "template", "requires"])
    if preview.get("implementation_changes"):
        print_list(preview["implementation_changes"], fmt, ["resource_name", "resource_type", "from", "to"])
    if fmt == "table":
        counts = ", ".join(f"{len(changes.get(kind, []))} {words}" for kind, words in PLAN_WORDS.items())
        unchanged = len(changes.get("unchanged", []))
        click.echo(f"Plan: {counts}" + (f" ({unchanged} unchanged)" if unchanged else ""))
