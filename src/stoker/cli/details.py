"""Commands that read a stack as ``openstack stack ...`` reads it: one resource, one
event, the template, the environment, the files, the failures, the hooks waiting, and a
resource's metadata; ``stack event list --follow`` is in ``main``. Fields and column
names follow python-heatclient's (``heatclient/osc/v1``).

These read only: they never finish an interrupted action first (``main._reader``).
"""

from __future__ import annotations

import json
import re
from typing import Any

import click
import yaml

from stoker.cli import render
from stoker.cli.main import FORMAT, _reader, event, hook, resource, stack
from stoker.sdk.exceptions import StokerError
from stoker.store import ResourceRecord, StackRecord

# The event of a resource stopping at a hook: "CREATE paused until Hook pre-create is cleared".
_PAUSED = re.compile(r"paused until Hook (\S+) is cleared")


def _resource(service: Any, stack_record: StackRecord, name: str) -> ResourceRecord:
    for record in service.list_resources(stack_record.id):
        if record.name == name:
            return record
    raise StokerError(f"The Resource ({name}) could not be found in Stack {stack_record.name}.", hint=f"see 'stoker stack resource list {stack_record.name}'")


def _yaml_or_json(data: Any, fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(data, indent=4, default=str))
    else:
        click.echo(yaml.safe_dump(render._plain(data), default_flow_style=False, sort_keys=False).rstrip())


DOCUMENT_FORMAT = click.option("-f", "--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True, help="Output format.")


@resource.command("show")
@click.argument("name")
@click.argument("resource_name")
@click.option("--with-attr", "with_attrs", multiple=True, metavar="ATTRIBUTE", help="Also show this attribute's value (repeatable).")
@FORMAT
@click.pass_context
def resource_show(ctx, name, resource_name, with_attrs, fmt):
    """Show one resource of a stack, with its attributes."""
    service = _reader(ctx)
    record = service.get_stack(name)
    found = _resource(service, record, resource_name)
    attributes = service.resource_attributes(record, resource_name)
    missing = [attr for attr in with_attrs if attr not in attributes]
    if missing:
        raise StokerError(f"The Referenced Attribute ({resource_name} {missing[0]}) is incorrect.", hint="attributes: " + ", ".join(sorted(attributes)))
    render.print_detail(
        {
            "attributes": attributes,
            "creation_time": render.timestamp(found.created_at),
            "description": "",
            "logical_resource_id": found.name,
            "physical_resource_id": found.physical_resource_id or "",
            "required_by": service.required_by(record).get(found.name, []),
            "resource_name": found.name,
            "resource_status": found.state,
            "resource_status_reason": found.status_reason or "",
            "resource_type": found.type,
            "updated_time": render.timestamp(found.updated_at or found.created_at),
        },
        fmt,
    )


@resource.command("metadata")
@click.argument("name")
@click.argument("resource_name")
@DOCUMENT_FORMAT
@click.pass_context
def resource_metadata(ctx, name, resource_name, fmt):
    """Show a resource's metadata."""
    service = _reader(ctx)
    record = service.get_stack(name)
    _resource(service, record, resource_name)
    metadata = service.resource_metadata(record, resource_name)
    click.echo(json.dumps(metadata, indent=2, default=str) if fmt == "json" else yaml.safe_dump(render._plain(metadata), default_flow_style=False).rstrip())


@event.command("show")
@click.argument("name")
@click.argument("resource_name")
@click.argument("event_id")
@FORMAT
@click.pass_context
def event_show(ctx, name, resource_name, event_id, fmt):
    """Show one event of a resource."""
    service = _reader(ctx)
    record = service.get_stack(name)
    for item in service.list_events(record.id, resource_name):
        if item.uuid == event_id:
            render.print_detail(
                {
                    "id": item.uuid,
                    "event_time": render.timestamp(item.created_at),
                    "logical_resource_id": item.resource_name,
                    "physical_resource_id": item.physical_resource_id or "",
                    "resource_name": item.resource_name,
                    "resource_status": f"{item.resource_action}_{item.resource_status}",
                    "resource_status_reason": item.resource_status_reason,
                    "resource_type": item.resource_type,
                    "stack_name": record.name,
                },
                fmt,
            )
            return
    raise StokerError(f"The Event ({event_id}) could not be found.", hint=f"see 'stoker stack event list {record.name} --resource {resource_name} -f table'")


@stack.group("template")
def stack_template() -> None:
    """A stack's template."""


@stack_template.command("show")
@click.argument("name")
@DOCUMENT_FORMAT
@click.pass_context
def template_show(ctx, name, fmt):
    """Show the template a stack was made from (its last update's)."""
    _yaml_or_json(_reader(ctx).template_of(name), fmt)


@stack.group("environment")
def stack_environment() -> None:
    """A stack's environment."""


@stack_environment.command("show")
@click.argument("name")
@DOCUMENT_FORMAT
@click.pass_context
def environment_show(ctx, name, fmt):
    """Show a stack's environment (hidden parameters' values masked)."""
    _yaml_or_json(_reader(ctx).environment_of(name), fmt)


@stack.group("file")
def stack_file() -> None:
    """The files a stack's template and environments read."""


@stack_file.command("list")
@click.argument("name")
@DOCUMENT_FORMAT
@click.pass_context
def file_list(ctx, name, fmt):
    """Show the files given with a stack (nested templates, get_file files)."""
    service = _reader(ctx)
    record = service.get_stack(name)
    _yaml_or_json(dict(service.store.get_template(record.raw_template_id).files or {}), fmt)


@stack.group("failures")
def failures() -> None:
    """Why a stack failed."""


@failures.command("list")
@click.argument("name")
@click.option("--long", "long_format", is_flag=True, help="Also show the events of each failed resource.")
@click.pass_context
def failures_list(ctx, name, long_format):
    """List the failed resources of a stack and of its nested stacks, each with its path
    and reason (as ``openstack stack failures list``)."""
    service = _reader(ctx)
    record = service.get_stack(name)
    for path, found, stack_record in _failed(service, record, record.name):
        click.echo(f"{path}:")
        click.echo(f"  resource_type: {found.type}")
        click.echo(f"  physical_resource_id: {found.physical_resource_id or ''}")
        click.echo(f"  status: {found.state}")
        reason = "\n".join(f"    {line}" for line in (found.status_reason or "").splitlines() or [""])
        click.echo(f"  status_reason: |\n{reason}")
        if long_format:
            click.echo("  events:")
            for item in service.list_events(stack_record.id, found.name):
                click.echo(f"    - {render.event_line(item)}")


def _failed(service: Any, record: StackRecord, path: str) -> list[tuple[str, ResourceRecord, StackRecord]]:
    """The failed resources under ``record``: a failed nested stack's own failures stand
    for it (the deepest cause), as heatclient's failures list."""
    found = []
    children = {child.id: child for child in service.store.child_stacks(record.id)}
    for item in service.list_resources(record.id):
        if item.status != "FAILED":
            continue
        child = children.get(item.physical_resource_id or "")
        deeper = _failed(service, child, f"{path}.{item.name}") if child is not None else []
        found.extend(deeper or [(f"{path}.{item.name}", item, record)])
    return found


@hook.command("poll")
@click.argument("name")
@click.option("-n", "--nested-depth", "nested_depth", type=click.IntRange(min=0), default=0, help="Also look this many levels of nested stacks down.")
@FORMAT
@click.pass_context
def hook_poll(ctx, name, nested_depth, fmt):
    """List the resources waiting at a hook, with the event that paused each."""
    service = _reader(ctx)
    rows = []
    for owner, found in service.list_resources_nested(name, nested_depth):
        if not found.hook:
            continue
        paused = [e for e in service.list_events(owner.id, found.name) if _PAUSED.search(e.resource_status_reason or "")]
        rows.append(
            {
                "Resource Name": found.name,
                "Resource Status": found.state,
                "Resource Status Reason": paused[-1].resource_status_reason if paused else f"Hook {found.hook} is pending",
                "Event Time": render.timestamp(paused[-1].created_at) if paused else None,
                "Stack Name": owner.name,
            }
        )
    render.print_list(rows, fmt, ["Resource Name", "Resource Status", "Resource Status Reason", "Event Time"] + (["Stack Name"] if nested_depth else []))
