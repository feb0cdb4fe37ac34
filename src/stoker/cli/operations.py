"""``stoker stack`` commands beyond create/update/delete: snapshots, export, abandon,
adopt and cancel. Registered on the groups of ``stoker.cli.main``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from stoker.cli import completion, render
from stoker.cli.invocation import (
    FORMAT,
    Failure,
    backend_of,
    finish_action,
    given_parameters,
    progress_printer,
    reader_of,
    stack_request,
)
from stoker.cli.main import stack


@stack.group("snapshot")
def snapshot() -> None:
    """Snapshots of a stack."""


SNAPSHOT_FIELDS = ("id", "name", "status", "status_reason", "creation_time")


def _snapshot_row(found: dict) -> dict:
    return {key: found.get(key) for key in SNAPSHOT_FIELDS}


@snapshot.command("create")
@click.argument("name")
@click.option("--name", "snapshot_name", help="A name for the snapshot.")
@click.option("--wait", is_flag=True, help="Show live progress until the action ends.")
@FORMAT
@click.pass_context
def snapshot_create(ctx, name, snapshot_name, wait, fmt):
    """Snapshot a stack."""
    found = backend_of(ctx).create_snapshot(name, snapshot_name, progress_printer(wait, fmt))
    render.print_detail(_snapshot_row(found), fmt)
    if found["status"] != "COMPLETE":
        raise Failure(f"Snapshot {found['id']} {found['status']}: {found['status_reason']}")


@snapshot.command("list")
@click.argument("name", shell_complete=completion.stacks)
@FORMAT
@click.pass_context
def snapshot_list(ctx, name, fmt):
    """List a stack's snapshots."""
    render.print_list([_snapshot_row(r) for r in reader_of(ctx).list_snapshots(name)], fmt, list(SNAPSHOT_FIELDS))


@snapshot.command("show")
@click.argument("name", shell_complete=completion.stacks)
@click.argument("snapshot_id")
@FORMAT
@click.pass_context
def snapshot_show(ctx, name, snapshot_id, fmt):
    """Show a snapshot, with its data (hidden parameters' values masked)."""
    found = reader_of(ctx).get_snapshot(name, snapshot_id)
    render.print_detail({**_snapshot_row(found), "data": found.get("data")}, fmt)


@snapshot.command("delete")
@click.argument("name", shell_complete=completion.stacks)
@click.argument("snapshot_id")
@click.pass_context
def snapshot_delete(ctx, name, snapshot_id):
    """Delete a snapshot."""
    backend_of(ctx).delete_snapshot(name, snapshot_id)


@snapshot.command("restore")
@click.argument("name", shell_complete=completion.stacks)
@click.argument("snapshot_id")
@click.option("--wait", is_flag=True, help="Show live progress until the action ends.")
@FORMAT
@click.pass_context
def snapshot_restore(ctx, name, snapshot_id, wait, fmt):
    """Restore a stack to a snapshot."""
    backend = backend_of(ctx)
    finish_action(backend, backend.restore_snapshot(name, snapshot_id, progress_printer(wait, fmt)), "RESTORE", fmt)


@stack.command("export")
@click.argument("name", shell_complete=completion.stacks)
@click.option("--output-file", type=click.Path(dir_okay=False, writable=True), help="Write the data here instead of stdout.")
@click.pass_context
def stack_export(ctx, name, output_file):
    """Export a stack's data (template, environment, resources) for adopting elsewhere.

    The data carries hidden parameters' values in clear, as adopt needs them: keep the
    file as secret as the parameters."""
    _write_json(reader_of(ctx).export_stack(name), output_file)


@stack.command("abandon")
@click.argument("name", shell_complete=completion.stacks)
@click.option("--output-file", type=click.Path(dir_okay=False, writable=True), help="Write the data here instead of stdout.")
@click.pass_context
def stack_abandon(ctx, name, output_file):
    """Forget a stack but leave its resources in place (needs STOKER_ENABLE_STACK_ABANDON)."""
    _write_json(backend_of(ctx).abandon_stack(name), output_file)


# How many templates' worth of bytes adopt data may hold.
ADOPT_DATA_TEMPLATES = 16


@stack.command("adopt")
@click.argument("name")
@click.option("--adopt-file", required=True, type=click.Path(exists=True, dir_okay=False), help="Data from stack abandon or export.")
@click.option("-e", "--environment", "environments", multiple=True, help="Path to an environment (repeatable).")
@click.option("--parameter", "parameters", multiple=True, help="KEY=VALUE (repeatable).")
@click.option("--enable-rollback", is_flag=True)
@click.option("--timeout", "timeout_mins", type=int)
@click.option("--wait", is_flag=True, help="Show live progress until the action ends.")
@FORMAT
@click.pass_context
def stack_adopt(ctx, name, adopt_file, environments, parameters, enable_rollback, timeout_mins, wait, fmt):
    """Adopt a stack's resources from exported data (needs STOKER_ENABLE_STACK_ADOPT)."""
    from stoker.cli.files import read_limited
    from stoker.template import loader
    from stoker.template.errors import TemplateError, TemplateErrors

    backend = backend_of(ctx)
    # Adopt data holds a template and every resource's data: a template's limits, with
    # room for the resources (size) and the two levels the template sits under (depth).
    limits = loader.Limits(max_bytes=ADOPT_DATA_TEMPLATES * backend.limits().max_bytes, max_depth=loader.DEFAULT_MAX_DEPTH + 2)
    text = read_limited(Path(adopt_file), limits.max_bytes, "Adopt data")
    try:
        data = loader.load_json(text.decode("utf-8", errors="replace"), adopt_file, limits).data
    except TemplateError as error:
        raise TemplateErrors([error])
    request = stack_request(backend, None, environments, given_parameters(parameters), disable_rollback=not enable_rollback, timeout_mins=timeout_mins)
    finish_action(backend, backend.adopt_stack(name, data, request, progress_printer(wait, fmt)), "ADOPT", fmt)


def _write_json(data: dict, output_file: str | None) -> None:
    text = json.dumps(data, indent=4, default=str)
    if output_file:
        Path(output_file).write_text(text + "\n")
    else:
        click.echo(text)


@stack.command("cancel")
@click.argument("names", nargs=-1, required=True, shell_complete=completion.stacks)
@click.option("--no-rollback", is_flag=True, help="Stop without rolling back.")
@click.pass_context
def stack_cancel(ctx, names, no_rollback):
    """Cancel a create or update in progress (rolling back unless --no-rollback)."""
    backend = backend_of(ctx)
    for name in names:
        found = backend.cancel_stack(name, rollback=not no_rollback)
        click.echo(f"Stack {found['stack_name']}: cancel requested", err=True)
