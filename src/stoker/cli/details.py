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

from stoker.cli import completion, render
from stoker.cli.backend import link, stack_of_link
from stoker.cli.groups import event, hook, resource, stack
from stoker.cli.invocation import FORMAT, reader_of
from stoker.sdk.exceptions import StokerError

# The event of a resource stopping at a hook: "CREATE paused until Hook pre-create is cleared".
_PAUSED = re.compile(r"paused until Hook (\S+) is cleared")
_CLEARED = re.compile(r"^Hook (\S+) is cleared$")


def _yaml_or_json(data: Any, fmt: str) -> None:
    if fmt == "json":
        click.echo(json.dumps(data, indent=4, default=str))
    else:
        click.echo(yaml.safe_dump(render._plain(data), default_flow_style=False, sort_keys=False).rstrip())


DOCUMENT_FORMAT = click.option("-f", "--format", "fmt", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True, help="Output format.")


@resource.command("show")
@click.argument("name", shell_complete=completion.stacks)
@click.argument("resource_name", shell_complete=completion.resources)
@click.option("--with-attr", "with_attrs", multiple=True, metavar="ATTRIBUTE", help="Also show this attribute's value (repeatable).")
@FORMAT
@click.pass_context
def resource_show(ctx, name, resource_name, with_attrs, fmt):
    """Show one resource of a stack, with its attributes."""
    found = reader_of(ctx).get_resource(name, resource_name)
    attributes = found.get("attributes") or {}
    missing = [attr for attr in with_attrs if attr not in attributes]
    if missing:
        raise StokerError(f"The Referenced Attribute ({resource_name} {missing[0]}) is incorrect.", hint="attributes: " + ", ".join(sorted(attributes)))
    render.print_detail(
        {
            "attributes": attributes,
            "creation_time": found.get("creation_time"),
            "description": found.get("description") or "",
            "logical_resource_id": found["logical_resource_id"],
            "physical_resource_id": found.get("physical_resource_id") or "",
            "required_by": found.get("required_by") or [],
            "resource_name": found["resource_name"],
            "resource_status": found["resource_status"],
            "resource_status_reason": found.get("resource_status_reason") or "",
            "resource_type": found["resource_type"],
            "updated_time": found.get("updated_time"),
        },
        fmt,
    )


@resource.command("metadata")
@click.argument("name", shell_complete=completion.stacks)
@click.argument("resource_name", shell_complete=completion.resources)
@DOCUMENT_FORMAT
@click.pass_context
def resource_metadata(ctx, name, resource_name, fmt):
    """Show a resource's metadata."""
    metadata = reader_of(ctx).resource_metadata(name, resource_name)
    click.echo(json.dumps(metadata, indent=2, default=str) if fmt == "json" else yaml.safe_dump(render._plain(metadata), default_flow_style=False).rstrip())


@event.command("show")
@click.argument("name", shell_complete=completion.stacks)
@click.argument("resource_name", shell_complete=completion.resources)
@click.argument("event_id")
@FORMAT
@click.pass_context
def event_show(ctx, name, resource_name, event_id, fmt):
    """Show one event of a resource."""
    backend = reader_of(ctx)
    stack_name, _ = backend.identify_stack(name)
    item = backend.get_event(name, resource_name, event_id)
    if item is None:
        raise StokerError(f"The Event ({event_id}) could not be found.", hint=f"see 'stoker stack event list {stack_name} --resource {resource_name} -f table'")
    render.print_detail(
        {
            "id": item["id"],
            "event_time": item.get("event_time"),
            "logical_resource_id": item["logical_resource_id"],
            "physical_resource_id": item.get("physical_resource_id") or "",
            "resource_name": item["resource_name"],
            "resource_status": item["resource_status"],
            "resource_status_reason": item.get("resource_status_reason"),
            "resource_type": item.get("resource_type"),
            "stack_name": stack_name,
        },
        fmt,
    )


@stack.group("template")
def stack_template() -> None:
    """A stack's template."""


@stack_template.command("show")
@click.argument("name", shell_complete=completion.stacks)
@DOCUMENT_FORMAT
@click.pass_context
def template_show(ctx, name, fmt):
    """Show the template a stack was made from (its last update's)."""
    _yaml_or_json(reader_of(ctx).template_of(name), fmt)


@stack.group("environment")
def stack_environment() -> None:
    """A stack's environment."""


@stack_environment.command("show")
@click.argument("name", shell_complete=completion.stacks)
@DOCUMENT_FORMAT
@click.pass_context
def environment_show(ctx, name, fmt):
    """Show a stack's environment (hidden parameters' values masked)."""
    _yaml_or_json(reader_of(ctx).environment_of(name), fmt)


@stack.group("file")
def stack_file() -> None:
    """The files a stack's template and environments read."""


@stack_file.command("list")
@click.argument("name", shell_complete=completion.stacks)
@DOCUMENT_FORMAT
@click.pass_context
def file_list(ctx, name, fmt):
    """Show the files given with a stack (nested templates, get_file files)."""
    _yaml_or_json(reader_of(ctx).files_of(name), fmt)


@stack.group("failures")
def failures() -> None:
    """Why a stack failed."""


@failures.command("list")
@click.argument("name", shell_complete=completion.stacks)
@click.option("--long", "long_format", is_flag=True, help="Also show the events of each failed resource.")
@click.pass_context
def failures_list(ctx, name, long_format):
    """List the failed resources of a stack and of its nested stacks, each with its path
    and reason (as ``openstack stack failures list``)."""
    backend = reader_of(ctx)
    stack_name, stack_id = backend.identify_stack(name)
    for path, found, owner_id in _failed(backend, stack_id, stack_name):
        click.echo(f"{path}:")
        click.echo(f"  resource_type: {found['resource_type']}")
        click.echo(f"  physical_resource_id: {found.get('physical_resource_id') or ''}")
        click.echo(f"  status: {found['resource_status']}")
        reason = "\n".join(f"    {line}" for line in (found.get("resource_status_reason") or "").splitlines() or [""])
        click.echo(f"  status_reason: |\n{reason}")
        if long_format:
            click.echo("  events:")
            for item in backend.list_events(owner_id, found["resource_name"]):
                click.echo(f"    - {render.event_line(item)}")


def _failed(backend: Any, stack_id: str, path: str) -> list[tuple[str, dict[str, Any], str]]:
    """The failed resources under a stack (path, resource, its stack's id): a failed
    nested stack's own failures stand for it (the deepest cause), as heatclient's
    failures list."""
    found = []
    for item in backend.list_resources(stack_id):
        if not item["resource_status"].endswith("_FAILED"):
            continue
        child = stack_of_link(link(item, "nested"))
        deeper = _failed(backend, child[1], f"{path}.{item['resource_name']}") if child is not None else []
        found.extend(deeper or [(f"{path}.{item['resource_name']}", item, stack_id)])
    return found


@hook.command("poll")
@click.argument("name", shell_complete=completion.stacks)
@click.option("-n", "--nested-depth", "nested_depth", type=click.IntRange(min=0), default=0, help="Also look this many levels of nested stacks down.")
@FORMAT
@click.pass_context
def hook_poll(ctx, name, nested_depth, fmt):
    """List the resources waiting at a hook, with the event that paused each (as
    heatclient finds them: a hook's pause not followed by its clearing)."""
    backend = reader_of(ctx)
    _, stack_id = backend.identify_stack(name)
    paused: dict[tuple[str, str], dict[str, Any]] = {}
    for item in backend.list_events(stack_id, None, nested_depth):
        owner = stack_of_link(link(item, "stack")) or ("", stack_id)
        key = (owner[1], item["resource_name"])
        reason = item.get("resource_status_reason") or ""
        if _PAUSED.search(reason):
            paused[key] = {**item, "stack_name": owner[0]}
        elif _CLEARED.match(reason):
            paused.pop(key, None)
    states = {}
    for found in backend.list_resources(stack_id, nested_depth):
        owner = stack_of_link(link(found, "stack")) or ("", stack_id)
        states[(owner[1], found["resource_name"])] = found["resource_status"]
    rows = [
        {
            "Resource Name": item["resource_name"],
            "Resource Status": states.get(key, item["resource_status"]),
            "Resource Status Reason": item.get("resource_status_reason"),
            "Event Time": item.get("event_time"),
            "Stack Name": item["stack_name"],
        }
        for key, item in paused.items()
        if key in states
    ]
    render.print_list(rows, fmt, ["Resource Name", "Resource Status", "Resource Status Reason", "Event Time"] + (["Stack Name"] if nested_depth else []))
