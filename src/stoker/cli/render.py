"""Printing results: tables (rich), JSON, YAML (the live progress of an action is ``cli.progress``'s).

Column names and JSON keys follow ``openstack stack ...`` (cliff uses the column
headers as JSON keys).
"""

from __future__ import annotations

import csv
import json
import os
import re
import shutil
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import click
import yaml
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

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


def selected_fields(available: Sequence[str] | None) -> list[str]:
    """The fields ``-c`` chose among ``available`` (all when none; None: only what was
    chosen, unchecked)."""
    if available is None:
        context = click.get_current_context(silent=True)
        return list((context.find_root().obj or {}).get("columns") or []) if context is not None else []
    return _selected(available)


def shell_prefix() -> str:
    """``--prefix`` of this command (cliff's, for ``-f shell``)."""
    context = click.get_current_context(silent=True)
    return str((context.find_root().obj or {}).get("prefix") or "") if context is not None else ""


# cliff's table options (``--max-width``, ``--fit-width``) and their environment variables,
# for the commands whose options do not include them.
MAX_WIDTH_VARIABLE = "CLIFF_MAX_TERM_WIDTH"
FIT_WIDTH_VARIABLE = "CLIFF_FIT_WIDTH"
# The characters a table of n columns spends beside its cells: a border at each side and
# between two columns, and a space of padding at each side of every cell.
_BORDERS_PER_COLUMN = 3
# A column cut below its longest word keeps at least this many characters.
_NARROWEST = 4


def _options() -> dict[str, Any]:
    context = click.get_current_context(silent=True)
    return (context.find_root().obj or {}) if context is not None else {}


def table_width() -> int | None:
    """How wide a table may be, in characters; None: as wide as its values.

    ``--max-width N`` (else CLIFF_MAX_TERM_WIDTH): N, or no limit when N < 1. Otherwise
    a terminal's width (COLUMNS, else the terminal's size) when printing to a terminal
    or with ``--fit-width`` (else CLIFF_FIT_WIDTH=1); printed to a pipe or a file, a
    table is as wide as its values, so a reader gets every value whole."""
    options = _options()
    max_width = options.get("max_width")
    if max_width is None and os.environ.get(MAX_WIDTH_VARIABLE, "").strip():
        try:
            max_width = int(os.environ[MAX_WIDTH_VARIABLE])
        except ValueError:
            raise click.UsageError(f"{MAX_WIDTH_VARIABLE} must be a number of characters, got {os.environ[MAX_WIDTH_VARIABLE]!r}")
    if max_width is not None:
        return max_width if max_width > 0 else None
    fit = options.get("fit_width") or os.environ.get(FIT_WIDTH_VARIABLE, "").strip() not in ("", "0")
    if fit or out.is_terminal:
        return shutil.get_terminal_size().columns
    return None


def _longest_word(text: str) -> int:
    return max((cell_len(word) for word in text.split()), default=0)


def _longest_line(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


def column_widths(cells: Sequence[Sequence[str]], width: int) -> list[int] | None:
    """Widths for the columns of ``cells`` (the header row first) in a table at most
    ``width`` wide; None when every value fits whole.

    Values wrap at spaces and never inside a word (an id, a secret, a JSON string):
    the widest columns narrow first, down to their longest word. Only when the longest
    words alone are too wide do the widest columns narrow further, and a word cut there
    ends with '…'."""
    columns = list(zip(*cells, strict=True)) if cells else []
    natural = [max(_longest_line(value) for value in column) for column in columns]
    words = [max(_longest_word(value) for value in column) for column in columns]
    room = width - _BORDERS_PER_COLUMN * len(columns) - 1
    if sum(natural) <= room:
        return None
    widths = list(natural)
    for floor in (words, [min(_NARROWEST, n) for n in natural]):
        while sum(widths) > room:
            narrowable = [i for i, w in enumerate(widths) if w > floor[i]]
            if not narrowable:
                break
            widest = max(narrowable, key=lambda i: widths[i])
            widths[widest] -= 1
    return widths


def _print_rows(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """A table of ``rows`` (each cell's text) under ``headers``, as wide as
    ``table_width`` allows."""
    width = table_width()
    widths = column_widths([list(headers), *rows], width) if width is not None else None
    table = Table(show_lines=False)
    for index, header in enumerate(headers):
        if width is None:
            # As wide as the values: a pipe reads whole values ("CREATE_COMPLETE", not
            # "CREATE_COMPLE" / "TE").
            table.add_column(header, overflow="ignore", no_wrap=True)
        else:
            # Wrapped at spaces; a word longer than its column is cut with '…', never
            # folded onto the next line, where it would read as two values.
            table.add_column(header, overflow="ellipsis", width=widths[index] if widths else None)
    for row in rows:
        # Text, not markup: a value is shown as it is ("[x]" stays "[x]").
        table.add_row(*(Text(cell) for cell in row))
    if width is None:
        width = table.__rich_measure__(out, out.options.update(width=1_000_000)).maximum
    console = out if out.is_terminal and width <= out.width else Console(file=sys.stdout, width=width, soft_wrap=True, force_terminal=out.is_terminal)
    console.print(table)


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
        _print_rows(headers, [[_cell(row.get(h)) for h in headers] for row in rows])


def shell_name(key: str, prefix: str = "") -> str:
    """The shell variable ``key`` is printed as by ``-f shell``: the prefix, then the key
    with each character a shell name cannot hold (not a letter, digit or ``_``) as
    ``_``; a name that would start with a digit starts with ``_`` (``2nd-ip`` ->
    ``_2nd_ip``)."""
    name = re.sub(r"[^a-zA-Z0-9_]", "_", f"{prefix}{key}")
    return f"_{name}" if not name or name[0].isdigit() else name


def _shell_quoted(text: str) -> str:
    """``text`` in double quotes, as a POSIX shell reads it back unchanged."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$").replace("`", "\\`") + '"'


def print_shell(values: Mapping[str, Any], prefix: str = "") -> None:
    """``name="value"`` lines a shell can ``eval`` (cliff's ``-f shell``): a string as it
    is, anything else as JSON (null as empty). Two keys that make the same name are
    refused, naming both, rather than one silently overwriting the other."""
    names: dict[str, str] = {}
    for key in values:
        name = shell_name(key, prefix)
        if name in names:
            raise click.UsageError(
                f"-f shell: {names[name]!r} and {key!r} are both the shell variable {name}; show one with -c {names[name]} (or -c {key})"
            )
        names[name] = key
    for name, key in names.items():
        print(f"{name}={_shell_quoted(value_text(values[key]))}")


def value_text(value: Any) -> str:
    """A value as one field of plain output: a string as it is, null as nothing, a
    map, list, number or boolean as JSON (what ``jq`` reads)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, default=str)


def print_detail(detail: Mapping[str, Any], fmt: str, selected: Sequence[str] | None = None, prefix: str | None = None) -> None:
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
        print_shell({key: _cell(value) for key, value in shown.items()}, shell_prefix() if prefix is None else prefix)
    elif fmt == "csv":
        _csv([["Field", "Value"], *[[key, value] for key, value in shown.items()]])
    else:
        _print_rows(["Field", "Value"], [[key, _cell(value)] for key, value in shown.items()])


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
