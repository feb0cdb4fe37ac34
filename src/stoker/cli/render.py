"""Printing results: tables (rich), JSON, and the live progress of an action.

Column names and JSON keys follow ``openstack stack ...`` (cliff uses the column
headers as JSON keys).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.table import Table

from stoker.store import EventRecord, ResourceRecord, StackRecord

out = Console(soft_wrap=True)
err = Console(stderr=True, soft_wrap=True)


def timestamp(value: datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else None


def stack_row(stack: StackRecord, parent: bool = False) -> dict[str, Any]:
    row = {
        "ID": stack.id,
        "Stack Name": stack.name,
        "Stack Status": stack.state,
        "Creation Time": timestamp(stack.created_at),
        "Updated Time": timestamp(stack.updated_at),
    }
    if parent:
        row["Parent"] = stack.owner_id
    return row


def stack_detail(stack: StackRecord, description: str, outputs: list[dict[str, Any]], parameters: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "id": stack.id,
        "stack_name": stack.name,
        "description": description,
        "creation_time": timestamp(stack.created_at),
        "updated_time": timestamp(stack.updated_at),
        "stack_status": stack.state,
        "stack_status_reason": stack.status_reason,
        "parameters": dict(parameters),
        "outputs": outputs,
        "disable_rollback": stack.disable_rollback,
        "timeout_mins": stack.timeout_mins,
        "tags": stack.tags or None,
        "parent": stack.owner_id,
    }


def resource_row(resource: ResourceRecord) -> dict[str, Any]:
    return {
        "resource_name": resource.name,
        "physical_resource_id": resource.physical_resource_id or "",
        "resource_type": resource.type,
        "resource_status": resource.state,
        "updated_time": timestamp(resource.updated_at or resource.created_at),
    }


def event_row(event: EventRecord) -> dict[str, Any]:
    return {
        "id": event.uuid,
        "resource_name": event.resource_name,
        "resource_status": f"{event.resource_action}_{event.resource_status}",
        "resource_status_reason": event.resource_status_reason,
        "event_time": timestamp(event.created_at),
    }


def event_line(event: EventRecord) -> str:
    """``openstack stack event list`` log format."""
    when = timestamp(event.created_at) or ""
    when = when.replace("T", " ")
    return f"{when} [{event.resource_name}]: {event.resource_action}_{event.resource_status}  {event.resource_status_reason}"


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, indent=2, sort_keys=True)
    return str(value)


def print_list(rows: Sequence[Mapping[str, Any]], fmt: str, columns: Sequence[str] | None = None) -> None:
    if fmt == "json":
        print(json.dumps(list(rows), indent=4, default=str))
        return
    if fmt == "value":
        for row in rows:
            print(" ".join(_cell(v) for v in row.values()))
        return
    table = Table(show_lines=False)
    headers = list(columns or (rows[0].keys() if rows else []))
    for header in headers:
        table.add_column(header, overflow="fold")
    for row in rows:
        table.add_row(*(_cell(row.get(h)) for h in headers))
    out.print(table)


def print_detail(detail: Mapping[str, Any], fmt: str) -> None:
    if fmt == "json":
        print(json.dumps(dict(detail), indent=4, default=str))
        return
    if fmt == "value":
        for value in detail.values():
            print(_cell(value))
        return
    table = Table(show_lines=False)
    table.add_column("Field")
    table.add_column("Value", overflow="fold")
    for key, value in detail.items():
        table.add_row(key, _cell(value))
    out.print(table)


_STATUS_STYLE = {"COMPLETE": "green", "FAILED": "bold red", "IN_PROGRESS": "yellow"}


class Progress:
    """Live progress: one line per event as it is recorded, and a running count."""

    def __init__(self, total: int | None = None, quiet: bool = False):
        self.total = total
        self.quiet = quiet
        self.done = 0
        self.failed = 0
        self.interactive = err.is_terminal

    def __call__(self, event: EventRecord) -> None:
        if event.resource_status == "COMPLETE" and event.resource_type != "OS::Heat::Stack":
            self.done += 1
        if event.resource_status == "FAILED":
            self.failed += 1
        if self.quiet:
            return
        style = _STATUS_STYLE.get(event.resource_status, "")
        line = event_line(event)
        if self.interactive:
            err.print(line, style=style, highlight=False, markup=False)
        else:
            print(line, file=sys.stderr, flush=True)
