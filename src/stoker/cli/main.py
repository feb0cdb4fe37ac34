"""``stoker``: the command line. Flags follow ``openstack stack ...`` where it has the
same command. Every error is one clear message and a non-zero exit, never a traceback
(set STOKER_DEBUG=1 to see one)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from stoker.cli import render
from stoker.sdk.exceptions import StokerError
from stoker.template.errors import TemplateErrors


def _choose_columns(ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> None:
    ctx.ensure_object(dict)
    ctx.find_root().obj["columns"] = list(value)


def FORMAT(command: Callable) -> Callable:  # noqa: N802 - a decorator named as the options it adds
    """``-f`` (cliff's formats: table, json, yaml, csv for lists, shell for one item,
    value) and ``-c`` (the columns or fields to show, repeatable), as openstack's."""
    command = click.option(
        "-c", "--column", "columns", multiple=True, expose_value=False, callback=_choose_columns, metavar="COLUMN",
        help="Show only this column (repeatable).",
    )(command)
    return click.option("-f", "--format", "fmt", type=click.Choice(render.FORMATS), default="table", show_default=True, help="Output format.")(command)


class Failure(Exception):
    """The action ran and ended FAILED: print the reason, exit 1."""


def _settings(obj: dict[str, Any]):
    from stoker.settings import Settings

    return Settings.from_env(database_url=obj.get("database_url"), plugin_dirs=list(obj.get("plugin_dirs") or []), os_cloud=obj.get("os_cloud"))


def _service(ctx: click.Context, recover: bool = True):
    """The embedded engine. A command that changes stacks (``recover``) first finishes the
    actions an engine that stopped mid-way left IN_PROGRESS; a read reads at once and
    says which stacks wait for that."""
    from stoker.service import Service

    obj = ctx.find_root().obj
    if "service" not in obj:
        settings = _settings(obj)
        service = obj["service"] = Service(settings)
        ctx.find_root().call_on_close(service.close)
        abandoned = service.abandoned_stacks()
        if abandoned and not os.environ.get("STOKER_NO_RECOVERY"):
            names = ", ".join(f"{s.name} ({s.state})" for s in abandoned)
            if not recover:
                click.echo(f"NOTE: actions interrupted by an engine restart: {names}; the next stoker command that changes stacks finishes them", err=True)
                return service
            click.echo(f"Resuming actions interrupted by an engine restart: {names}", err=True)
            recovered = obj["recovered"] = service.recover(listeners=[render.Progress()])
            for stack in recovered:
                click.echo(f"Stack {stack.name} {stack.state}: {stack.status_reason}", err=True)
    return obj["service"]


def _finished_by_recovery(ctx: click.Context, name: str):
    """The stack named ``name`` (or by id) whose interrupted delete this command's
    recovery just finished, if any: deleting it again is then already done."""
    for stack in ctx.find_root().obj.get("recovered") or ():
        if name in (stack.name, stack.id) and stack.state == "DELETE_COMPLETE":
            return stack
    return None


def _reader(ctx: click.Context):
    """The embedded engine for a command that only reads (see ``_service``)."""
    return _service(ctx, recover=False)


def _source(path: str):
    """An environment file, refused unread when over the size environments are read with."""
    from stoker.cli.files import read_limited
    from stoker.service import Source
    from stoker.template.loader import DEFAULT_MAX_TEMPLATE_BYTES

    return Source(read_limited(Path(path), DEFAULT_MAX_TEMPLATE_BYTES, "Environment"), str(path))


def _template(service, path: str):
    """A template file, read and parsed once with the service's limits: the service takes
    the parsed document as it is."""
    from stoker.cli.files import parse_template
    from stoker.service import Source

    return Source(parse_template(path, service.limits()), str(path))


def _parameter_files(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--parameter-file KEY=FILE``: the file's text is the value (heatclient's)."""
    from stoker.cli.files import read_limited
    from stoker.template.loader import DEFAULT_MAX_TEMPLATE_BYTES

    values: dict[str, str] = {}
    for pair in pairs:
        if "=" not in pair:
            raise click.UsageError(f"--parameter-file expects KEY=FILE, got {pair!r}")
        key, path = pair.split("=", 1)
        data = read_limited(Path(path), DEFAULT_MAX_TEMPLATE_BYTES, f"Parameter file of {key.strip()}")
        try:
            values[key.strip()] = data.decode("utf-8")
        except UnicodeDecodeError:
            raise click.UsageError(f"--parameter-file {pair}: {path} is not UTF-8 text")
    return values


def _parameters(pairs: tuple[str, ...], files: tuple[str, ...] = ()) -> dict[str, str]:
    values: dict[str, str] = _parameter_files(files)
    for pair in pairs:
        for item in pair.split(";") if ";" in pair else [pair]:
            if "=" not in item:
                raise click.UsageError(f"--parameter expects KEY=VALUE, got {item!r}")
            key, value = item.split("=", 1)
            values[key.strip()] = value
    return values


def _files_for(service, source, environments=()) -> dict[str, str]:
    from stoker.cli.files import files_for

    return files_for(source, environments, service.limits())


def _report(error: BaseException) -> None:
    if isinstance(error, TemplateErrors):
        if len(error.errors) == 1:
            click.echo(f"ERROR: {error.errors[0]}", err=True)
        else:
            click.echo(f"ERROR: {len(error.errors)} problems found:", err=True)
            for problem in error.errors:
                click.echo(f"  - {problem}", err=True)
    else:
        click.echo(f"ERROR: {error}", err=True)


class StokerGroup(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (StokerError, Failure) as error:
            _report(error)
            sys.exit(1)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except BrokenPipeError:
            # The reader went away (`stoker ... | head`): stop quietly, as Unix tools do.
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(1)
        except Exception as error:  # noqa: BLE001 - last line of defence: no traceback for users
            if os.environ.get("STOKER_DEBUG"):
                raise
            click.echo(f"ERROR: internal error: {type(error).__name__}: {error} (set STOKER_DEBUG=1 for the traceback)", err=True)
            sys.exit(2)


@click.group(cls=StokerGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--database-url", envvar="STOKER_DATABASE_URL", help="SQLAlchemy URL of the store (default: SQLite file in ~/.local/share/stoker).")
@click.option("--plugin-dir", "plugin_dirs", multiple=True, help="Directory of resource plugins (repeatable).")
@click.option("--os-cloud", "os_cloud", metavar="NAME", help="The cloud of clouds.yaml that OpenStack resources are made in (default: OS_CLOUD, or the OS_* variables).")
@click.version_option(package_name="stoker")
@click.pass_context
def main(ctx: click.Context, database_url: str | None, plugin_dirs: tuple[str, ...], os_cloud: str | None) -> None:
    """stoker: orchestration of stacks from HOT templates."""
    ctx.obj = {"database_url": database_url, "plugin_dirs": plugin_dirs, "os_cloud": os_cloud}


@main.group()
def stack() -> None:
    """Stacks: create, list, show, update, delete, and their resources, events, outputs."""


def _finish(service, stack_record, action: str, fmt: str, show_outputs: bool = True) -> None:
    outputs = service.outputs(stack_record.id) if show_outputs and stack_record.deleted_at is None else []
    runtime_desc = ""
    if stack_record.deleted_at is None:
        runtime_desc = service.description_of(stack_record.id)
    parameters = service.stack_parameters(stack_record) if stack_record.deleted_at is None else {}
    detail = render.stack_detail(stack_record, runtime_desc, outputs, parameters)
    if fmt == "table":
        # A short summary, then the outputs as their own table: what the user came for.
        summary = {k: detail[k] for k in ("id", "stack_name", "stack_status", "stack_status_reason", "creation_time", "updated_time")}
        render.print_detail(summary, fmt)
        if outputs:
            render.print_list(
                [{"output_key": o["output_key"], "output_value": o.get("output_value") if "output_error" not in o else f"ERROR: {o['output_error']}", "description": o["description"]} for o in outputs],
                fmt,
            )
    else:
        render.print_detail(detail, fmt)
    if stack_record.status == "FAILED":
        raise Failure(f"Stack {stack_record.name} {stack_record.state}: {stack_record.status_reason}")
    if stack_record.action != action:
        # e.g. a failed create that was rolled back: say why it failed.
        failures = [e for e in service.store.list_events(stack_record.id, stack_record.name) if e.resource_action == action and e.resource_status == "FAILED"]
        why = failures[-1].resource_status_reason if failures else stack_record.status_reason
        raise Failure(f"Stack {stack_record.name} {action} failed and ended {stack_record.state}: {why}")


PLAN_WORDS = {"added": "to create", "updated": "to update in place", "replaced": "to replace", "deleted": "to delete"}


def _plan_values(change: dict) -> str:
    """``name: old -> new`` per changed property (a value known only during the update
    shows as such)."""

    def text(value: object) -> str:
        return json.dumps(value, sort_keys=True, default=str) if not isinstance(value, str) else value

    return "\n".join(
        f"{key}: {text(values['old'])} -> {'(known after the update)' if values.get('known_after') else text(values['new'])}"
        for key, values in (change.get("property_changes") or {}).items()
    )


def _print_preview(preview: dict, fmt: str) -> None:
    """A plan: each change with why and, for updates and replacements, each property's
    old -> new value; then a summary (values of hidden parameters come masked)."""
    if fmt == "json":
        click.echo(json.dumps(preview, indent=4))
        return
    changes = preview["resource_changes"]
    rows = [
        {"change": kind, "resource_name": r["resource_name"], "resource_type": r["resource_type"], "reason": r["reason"], "values": _plan_values(r)}
        for kind, resources in changes.items()
        for r in resources
    ]
    render.print_list(rows, fmt, ["change", "resource_name", "resource_type", "reason", "values"])
    # Where the environment lists candidate templates (seed 003): the choice, and what an
    # update changes.
    if preview.get("implementations"):
        render.print_list(preview["implementations"], fmt, ["resource_name", "resource_type", "template", "requires"])
    if preview.get("implementation_changes"):
        render.print_list(preview["implementation_changes"], fmt, ["resource_name", "resource_type", "from", "to"])
    if fmt == "table":
        counts = ", ".join(f"{len(changes.get(kind, []))} {words}" for kind, words in PLAN_WORDS.items())
        unchanged = len(changes.get("unchanged", []))
        click.echo(f"Plan: {counts}" + (f" ({unchanged} unchanged)" if unchanged else ""))


def _progress(wait: bool, fmt: str) -> list[Callable]:
    return [render.Progress(quiet=not wait)]


@stack.command("create")
@click.argument("name")
@click.option("-t", "--template", "template", required=True, help="Path to the template.")
@click.option("-e", "--environment", "environments", multiple=True, help="Path to an environment (repeatable).")
@click.option("--parameter", "parameters", multiple=True, help="KEY=VALUE (repeatable).")
@click.option("--parameter-file", "parameter_files", multiple=True, metavar="KEY=FILE", help="The file's text is the parameter's value (repeatable).")
@click.option("--wait", is_flag=True, help="Show live progress until the action ends.")
@click.option("--enable-rollback", is_flag=True, help="Delete what was created when the create fails.")
@click.option("--timeout", "timeout_mins", type=int, help="Stack creation timeout in minutes.")
@click.option("--tags", default="", help="Comma-separated tags.")
@click.option("--dry-run", is_flag=True, help="Only show what would be created.")
@FORMAT
@click.pass_context
def stack_create(ctx, name, template, environments, parameters, parameter_files, wait, enable_rollback, timeout_mins, tags, dry_run, fmt):
    """Create a stack. Embedded mode runs the action to its end; --wait shows progress."""
    service = _service(ctx)
    if dry_run:
        source = _template(service, template)
        envs = [_source(e) for e in environments]
        _print_preview(
            service.preview_create(
                name, source, envs, _parameters(parameters, parameter_files), files=_files_for(service, source, envs)
            ),
            fmt,
        )
        return
    source = _template(service, template)
    envs = [_source(e) for e in environments]
    result = service.create_stack(
        name,
        source,
        envs,
        _parameters(parameters, parameter_files),
        files=_files_for(service, source, envs),
        disable_rollback=not enable_rollback,
        timeout_mins=timeout_mins,
        tags=[t for t in tags.split(",") if t],
        listeners=_progress(wait, fmt),
    )
    _finish(service, result, "CREATE", fmt)


@stack.command("update")
@click.argument("name")
@click.option("-t", "--template", "template", help="Path to the new template.")
@click.option("-e", "--environment", "environments", multiple=True, help="Path to an environment (repeatable).")
@click.option("--parameter", "parameters", multiple=True, help="KEY=VALUE (repeatable).")
@click.option("--parameter-file", "parameter_files", multiple=True, metavar="KEY=FILE", help="The file's text is the parameter's value (repeatable).")
@click.option("--existing", is_flag=True, help="Reuse the stack's template, environment and parameters; merge what is given.")
@click.option("--clear-parameter", "clear_parameters", multiple=True, help="Return this parameter to its default (repeatable).")
@click.option("--wait", is_flag=True, help="Show live progress until the action ends.")
@click.option("--dry-run", is_flag=True, help="Only show what would change, and why.")
@FORMAT
@click.pass_context
def stack_update(ctx, name, template, environments, parameters, parameter_files, existing, clear_parameters, wait, dry_run, fmt):
    """Update a stack to a new template and/or parameters."""
    service = _service(ctx)
    if dry_run:
        source = _template(service, template) if template else None
        envs = [_source(e) for e in environments]
        files = _files_for(service, source, envs) if source or envs else None
        preview = service.preview_update(
            name, source, envs, _parameters(parameters, parameter_files), files=files, existing=existing
        )
        _print_preview(preview, fmt)
        return
    source = _template(service, template) if template else None
    envs = [_source(e) for e in environments]
    result = service.update_stack(
        name,
        source,
        envs,
        _parameters(parameters, parameter_files),
        files=_files_for(service, source, envs) if source or envs else None,
        existing=existing,
        listeners=_progress(wait, fmt),
        clear_parameters=clear_parameters,
    )
    _finish(service, result, "UPDATE", fmt)


@stack.command("delete")
@click.argument("names", nargs=-1, required=True)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--wait", is_flag=True, help="Show live progress until the action ends.")
@click.pass_context
def stack_delete(ctx, names, yes, wait):
    """Delete stacks."""
    service = _service(ctx)
    if not yes and sys.stdin.isatty():
        click.confirm(f"Are you sure you want to delete {', '.join(names)}?", abort=True)
    failed = []
    for name in names:
        result = _finished_by_recovery(ctx, name) or service.delete_stack(name, listeners=_progress(wait, "table"))
        if result.status == "FAILED":
            failed.append(f"Stack {result.name} {result.state}: {result.status_reason}")
        else:
            click.echo(f"Stack {result.name} {result.state}", err=True)
    if failed:
        raise Failure("; ".join(failed))


def _simple_action(action_name: str, help_text: str):
    @stack.command(action_name, help=help_text)
    @click.argument("names", nargs=-1, required=True)
    @click.option("--wait", is_flag=True, help="Show live progress until the action ends.")
    @FORMAT
    @click.pass_context
    def command(ctx, names, wait, fmt):
        from stoker.engine.states import Action

        service = _service(ctx)
        action = Action(action_name.upper())
        rows, failed = [], []
        for name in names:
            result = service.stack_action(name, action, listeners=_progress(wait, fmt))
            rows.append(render.stack_row(result))
            if result.status == "FAILED":
                failed.append(f"Stack {result.name} {result.state}: {result.status_reason}")
        render.print_list(rows, fmt, ["ID", "Stack Name", "Stack Status", "Creation Time", "Updated Time"])
        if failed:
            raise Failure("; ".join(failed))

    return command


_simple_action("suspend", "Suspend stacks (resources in reverse dependency order).")
_simple_action("resume", "Resume suspended stacks.")
_simple_action("check", "Check that the resources of stacks are as recorded.")


# Heat's stack list: sort keys, and the filters it takes (status also as ACTION_STATUS).
STACK_SORT_KEYS = {"stack_name": "name", "stack_status": "state", "creation_time": "created_at", "updated_time": "updated_at"}
STACK_FILTER_KEYS = ("id", "name", "status", "action")


def _filters(pairs: tuple[str, ...], allowed: tuple[str, ...]) -> dict[str, set[str]]:
    """``--filter KEY=VALUE`` (repeatable; values of one key any of, keys all of)."""
    found: dict[str, set[str]] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in allowed:
            raise click.UsageError(f"--filter expects KEY=VALUE with KEY one of {', '.join(allowed)}, got {pair!r}")
        found.setdefault(key, set()).add(value)
    return found


def _stack_matches(record, filters: dict[str, set[str]]) -> bool:
    for key, values in filters.items():
        if key == "status":
            if record.status not in values and record.state not in values:
                return False
        elif str(getattr(record, key)) not in values:
            return False
    return True


def _sorted_page(records: list, sort: str | None, keys: dict[str, str], limit: int | None, marker: str | None, ident: str = "id") -> list:
    """Heat's paging: sorted by ``key[:asc|desc]`` items (comma-separated), then the items
    after ``marker`` (an id), at most ``limit`` of them."""
    for item in reversed([part for part in (sort or "").split(",") if part]):
        key, _, direction = item.partition(":")
        if key not in keys or direction not in ("", "asc", "desc"):
            raise click.UsageError(f"--sort expects KEY[:asc|desc] with KEY one of {', '.join(keys)}, got {item!r}")
        records = sorted(records, key=lambda r, attr=keys[key]: (getattr(r, attr) is None, getattr(r, attr) or ""), reverse=direction == "desc")
    if marker is not None:
        ids = [getattr(r, ident) for r in records]
        if marker not in ids:
            raise StokerError(f"The marker {marker} is not in the list", hint="give the id of an item of the previous page")
        records = records[ids.index(marker) + 1 :]
    return records[:limit] if limit is not None else records


@stack.command("list")
@click.option("--nested", is_flag=True, help="Include nested stacks (with their parent's id).")
@click.option("--hidden", is_flag=True, help="Include stacks with a hidden tag (STOKER_HIDDEN_STACK_TAGS).")
@click.option("--filter", "filters", multiple=True, metavar="KEY=VALUE", help="Only stacks with this id, name, status or action (repeatable).")
@click.option("--sort", metavar="KEY[:asc|desc]", help="Sort by stack_name, stack_status, creation_time or updated_time (comma-separated).")
@click.option("--limit", type=click.IntRange(min=0), help="At most this many stacks.")
@click.option("--marker", metavar="ID", help="Only the stacks after this one (paging).")
@FORMAT
@click.pass_context
def stack_list(ctx, nested, hidden, filters, sort, limit, marker, fmt):
    """List stacks."""
    service = _reader(ctx)
    columns = ["ID", "Stack Name", "Stack Status", "Creation Time", "Updated Time"] + (
        ["Parent"] if nested else []
    )
    wanted = _filters(filters, STACK_FILTER_KEYS)
    records = [s for s in service.list_stacks(nested=nested, hidden=hidden) if _stack_matches(s, wanted)]
    rows = [render.stack_row(s, parent=nested) for s in _sorted_page(records, sort, STACK_SORT_KEYS, limit, marker)]
    render.print_list(rows, fmt, columns)


@stack.command("show")
@click.argument("name")
@FORMAT
@click.pass_context
def stack_show(ctx, name, fmt):
    """Show a stack."""
    service = _reader(ctx)
    record = service.get_stack(name)
    outputs = service.outputs(record.id)
    description = service.description_of(record.id)
    detail = render.stack_detail(record, description, outputs, service.stack_parameters(record))
    from stoker.engine.implementations import shown

    detail.update(shown(service.store, record))  # the candidate templates chosen (seed 003)
    render.print_detail(detail, fmt)


@stack.group("resource")
def resource() -> None:
    """Resources of a stack."""


@resource.command("list")
@click.argument("name")
@click.option("-n", "--nested-depth", "nested_depth", type=click.IntRange(min=0), default=0, help="Also list nested stacks' resources this many levels down.")
@FORMAT
@click.pass_context
def resource_list(ctx, name, nested_depth, fmt):
    """List a stack's resources."""
    service = _reader(ctx)
    columns = ["resource_name", "physical_resource_id", "resource_type", "resource_status", "updated_time"]
    if not nested_depth:
        render.print_list([render.resource_row(r) for r in service.list_resources(name)], fmt, columns)
        return
    rows = [{**render.resource_row(r), "stack_name": stack.name} for stack, r in service.list_resources_nested(name, nested_depth)]
    render.print_list(rows, fmt, [*columns, "stack_name"])


@resource.group("mark")
def resource_mark() -> None:
    """Mark resources."""


@resource_mark.command("unhealthy")
@click.argument("name")
@click.argument("resource_name")
@click.argument("reason", required=False, default="")
@click.option("--reset", is_flag=True, help="Remove the unhealthy mark.")
@click.pass_context
def resource_mark_unhealthy(ctx, name, resource_name, reason, reset):
    """Mark a resource unhealthy (the next update replaces it), or --reset the mark."""
    _service(ctx).mark_unhealthy(name, resource_name, unhealthy=not reset, reason=reason)


@resource.command("signal")
@click.argument("name")
@click.argument("resource_name")
@click.option("-D", "--data", default="{}", help="JSON details of the signal.")
@click.pass_context
def resource_signal(ctx, name, resource_name, data):
    """Send a signal to a resource."""
    try:
        details = json.loads(data)
    except ValueError as error:
        raise click.UsageError(f"--data must be JSON: {error}")
    _service(ctx).signal_resource(name, resource_name, details)


@stack.group("hook")
def hook() -> None:
    """Hooks (breakpoints)."""


@hook.command("clear")
@click.argument("name")
@click.argument("resources", nargs=-1, required=True)
@click.option("--pre-create", "hook_name", flag_value="pre-create")
@click.option("--pre-update", "hook_name", flag_value="pre-update")
@click.option("--pre-delete", "hook_name", flag_value="pre-delete")
@click.option("--post-create", "hook_name", flag_value="post-create")
@click.option("--post-update", "hook_name", flag_value="post-update")
@click.option("--post-delete", "hook_name", flag_value="post-delete")
@click.pass_context
def hook_clear(ctx, name, resources, hook_name):
    """Clear the hook resources wait at (by default whichever it is)."""
    service = _service(ctx)
    for resource_name in resources:
        service.clear_hook(name, resource_name, hook_name)


@stack.group("event")
def event() -> None:
    """Events of a stack."""


@event.command("list")
@click.argument("name")
@click.option("--resource", "resource_name", help="Only this resource's events.")
@click.option("-n", "--nested-depth", "nested_depth", type=click.IntRange(min=0), default=0, help="Also list nested stacks' events this many levels down.")
@click.option("--follow", is_flag=True, help="Keep printing events as they are recorded, until interrupted (log format).")
@click.option("--limit", type=click.IntRange(min=0), help="At most this many events.")
@click.option("--marker", metavar="ID", help="Only the events after this one.")
@click.option("-f", "--format", "fmt", type=click.Choice(["log", *render.LIST_FORMATS]), default="log", show_default=True)
@click.option("-c", "--column", "columns", multiple=True, expose_value=False, callback=_choose_columns, metavar="COLUMN", help="Show only this column (repeatable).")
@click.pass_context
def event_list(ctx, name, resource_name, nested_depth, follow, limit, marker, fmt):
    """List a stack's events, oldest first. Nested stacks' events name the resource by
    its path from this stack (``group.0.server``)."""
    service = _reader(ctx)
    record = service.get_stack(name)
    paths = _nested_paths(service, record, nested_depth)
    events = _sorted_page(service.list_events(record.id, resource_name, nested_depth), None, {}, limit, marker, ident="uuid")
    if fmt != "log":
        if follow:
            raise click.UsageError("--follow prints events as they come: use it with the log format")
        render.print_list([render.event_row(e, paths.get(e.stack_id, "")) for e in events], fmt, ["id", "resource_name", "resource_status", "resource_status_reason", "event_time"])
        return
    for item in events:
        click.echo(render.event_line(item, paths.get(item.stack_id, "")))
    if follow:
        _follow(service, record, resource_name, nested_depth, events)


def _nested_paths(service, record, depth: int) -> dict[str, str]:
    """Nested stack id -> the path of resource names from ``record`` to it."""
    paths = {record.id: ""}
    if depth:
        for owner, found in service.list_resources_nested(record.id, depth):
            if found.physical_resource_id and owner.id in paths:
                paths.setdefault(found.physical_resource_id, f"{paths[owner.id]}{found.name}.")
    return {stack_id: path for stack_id, path in paths.items() if stack_id != record.id}


def _follow(service, record, resource_name, nested_depth, seen) -> None:
    """Print each new event once a second until interrupted (nested stacks made meanwhile
    included)."""
    import time

    known = {e.uuid for e in seen}
    try:
        while True:
            time.sleep(1)
            paths = _nested_paths(service, record, nested_depth)
            for item in service.list_events(record.id, resource_name, nested_depth):
                if item.uuid not in known:
                    known.add(item.uuid)
                    click.echo(render.event_line(item, paths.get(item.stack_id, "")))
    except KeyboardInterrupt:
        return


@stack.group("output")
def output() -> None:
    """Outputs of a stack."""


@output.command("show")
@click.argument("name")
@click.argument("output_name", required=False)
@click.option("--all", "show_all", is_flag=True, help="Show every output.")
@FORMAT
@click.pass_context
def output_show(ctx, name, output_name, show_all, fmt):
    """Show one output of a stack, or all of them with --all."""
    if not output_name and not show_all:
        raise click.UsageError("give an OUTPUT name or --all")
    service = _reader(ctx)
    outputs = service.outputs(name, None if show_all else [output_name])
    if not outputs:
        raise StokerError(f"Specified output key {output_name} not found.", hint=f"see 'stoker stack output list {name}'")
    if show_all:
        detail = {o["output_key"]: {k: v for k, v in o.items()} for o in outputs}
        render.print_detail(detail, fmt)
        return
    render.print_detail(outputs[0], fmt)


@output.command("list")
@click.argument("name")
@FORMAT
@click.pass_context
def output_list(ctx, name, fmt):
    """List a stack's outputs."""
    service = _reader(ctx)
    rows = [{"output_key": o["output_key"], "description": o["description"]} for o in service.outputs(name)]
    render.print_list(rows, fmt, ["output_key", "description"])


@main.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8004, type=int, show_default=True, help="Port to listen on (Heat's is 8004).")
@click.option(
    "--auth-mode",
    type=click.Choice(["none", "token", "keystone"]),
    default=None,
    help="How callers authenticate (default: STOKER_AUTH_MODE, else none, which serves loopback only). See docs/auth.md.",
)
@click.option("--auth-tokens-file", default=None, metavar="FILE", help="The static tokens of --auth-mode token (default: STOKER_AUTH_TOKENS_FILE).")
@click.option("--policy-file", default=None, metavar="FILE", help="An oslo.policy file over Heat's defaults (default: STOKER_POLICY_FILE).")
@click.pass_context
def serve(ctx, host, port, auth_mode, auth_tokens_file, policy_file):
    """Run the Orchestration API v1 (Heat's REST API) at http://HOST:PORT/v1/{tenant_id}.

    python-heatclient and 'openstack stack ...' work against it; actions run as
    background jobs of this process, on the same store as the stoker command."""
    from stoker.api import serve as run_server

    obj = ctx.find_root().obj
    settings = _settings(obj)
    for name, value in (("auth_mode", auth_mode), ("auth_tokens_file", auth_tokens_file), ("policy_file", policy_file)):
        if value is not None:
            setattr(settings, name, value)
    run_server(host, port, settings)


# The other commands live beside this module; importing them registers them.
from stoker.cli import capabilities, catalog, details, operations  # noqa: E402,F401

if __name__ == "__main__":  # pragma: no cover
    main()
