"""``stoker stack`` commands beyond create/update/delete: snapshots, export, abandon,
adopt, import and cancel. Registered on the groups of ``cli/groups.py``."""

from __future__ import annotations

import json
from pathlib import Path

import click

from stoker.cli import completion, plans, render
from stoker.cli.groups import PLAN_OUT, stack
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
@click.option("--dry-run", is_flag=True, help="Only show what the snapshot would do to each resource.")
@FORMAT
@click.pass_context
def snapshot_create(ctx, name, snapshot_name, wait, dry_run, fmt):
    """Snapshot a stack."""
    if dry_run:
        plans.print_plan(backend_of(ctx).plan_action(name, "snapshot"), fmt)
        return
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
@click.option("--dry-run", is_flag=True, help="Only show the update the restore would run: each resource's action, and why.")
@FORMAT
@click.pass_context
def snapshot_restore(ctx, name, snapshot_id, wait, dry_run, fmt):
    """Restore a stack to a snapshot."""
    backend = backend_of(ctx)
    if dry_run:
        plans.print_plan(backend.plan_action(name, "restore", snapshot_id), fmt)
        return
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


DRIFT_COLUMNS = ["resource", "resource_type", "status", "detail"]


def _drift_detail(result: dict) -> str:
    if result.get("properties"):
        return "; ".join(
            f"{p['name']}: expected {json.dumps(p['expected'], default=str)}, actual {json.dumps(p['actual'], default=str)}" for p in result["properties"]
        )
    return result.get("reason") or ""


@stack.command("drift")
@click.argument("name", shell_complete=completion.stacks)
@click.option("--last", is_flag=True, help="Show the last detection instead of detecting now.")
@FORMAT
@click.pass_context
def stack_drift(ctx, name, last, fmt):
    """Compare every resource (nested stacks' too) with its live object.

    Each resource is IN_SYNC, MODIFIED (each property's expected and actual value),
    DELETED (its object is gone) or NOT_CHECKED (with why). The result is kept: `stack
    show` gives its counts and `--last` shows it again without asking the cloud."""
    if last:
        found = reader_of(ctx).last_drift(name)
        if found is None:
            raise Failure(f"No drift detection has run on stack {name}: run 'stoker stack drift {name}' first")
    else:
        found = backend_of(ctx).detect_drift(name)
    if fmt in ("json", "yaml"):
        render.print_detail(found, fmt)
        return
    rows = [{"resource": r["path"], "resource_type": r["resource_type"], "status": r["status"], "detail": _drift_detail(r)} for r in found["resources"]]
    render.print_list(rows, fmt, DRIFT_COLUMNS)
    summary = found["summary"]
    counts = ", ".join(f"{summary[key]} {key.upper()}" for key in ("modified", "deleted", "in_sync", "not_checked") if summary.get(key))
    click.echo(f"Stack {found['stack_name']}: {summary['stack_status']} ({counts or 'no resources'}), detected at {found['detected_at']}", err=True)


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


@stack.command("import")
@click.argument("name")
@click.option("-t", "--template", "template", required=True, help="Path to the template.")
@click.option("--resource", "resources", multiple=True, required=True, metavar="NAME=ID", help="Take over the object ID as the template's resource NAME (repeatable).")
@click.option("-e", "--environment", "environments", multiple=True, help="Path to an environment (repeatable).")
@click.option("--parameter", "parameters", multiple=True, help="KEY=VALUE (repeatable).")
@click.option("--accept-differences", is_flag=True, help="Take the objects over although their live properties differ from the template.")
@click.option("--wait", is_flag=True, help="Show live progress until the action ends.")
@click.option("--dry-run", is_flag=True, help="Only show the plan: what is taken over (and how it differs from the template), what is created.")
@PLAN_OUT
@FORMAT
@click.pass_context
def stack_import(ctx, name, template, resources, environments, parameters, accept_differences, wait, dry_run, plan_out, fmt):
    """Make a stack that takes over objects which exist already; the template's other
    resources are created. The objects are first compared with the template: differences
    refuse the import (listed in the error) unless --accept-differences."""
    if plan_out and not dry_run:
        raise click.UsageError("--plan-out saves a dry run's plan: give --dry-run too")
    imports: dict[str, str] = {}
    for given in resources:
        resource_name, sep, physical_id = given.partition("=")
        if not sep or not resource_name.strip() or not physical_id.strip():
            raise click.BadParameter(f"{given!r} is not NAME=ID (the template's resource name, then the object's id)", param_hint="--resource")
        if resource_name.strip() in imports:
            raise click.BadParameter(f"resource {resource_name.strip()} is named twice", param_hint="--resource")
        imports[resource_name.strip()] = physical_id.strip()
    backend = backend_of(ctx)
    request = stack_request(backend, template, environments, given_parameters(parameters))
    if dry_run:
        from stoker.cli import plans

        plans.show_plan(backend.preview_import(name, request, imports, accept_differences), fmt, plan_out, backend.where)
        return
    finish_action(backend, backend.import_stack(name, request, imports, accept_differences, progress_printer(wait, fmt)), "ADOPT", fmt)


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
