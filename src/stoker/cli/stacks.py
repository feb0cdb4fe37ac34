"""``stoker stack ...``: a stack's lifecycle (create, update, delete, suspend, resume,
check), its list and show, its resources, hooks, events and outputs; and ``stoker serve``.
Flags follow ``openstack stack ...`` where it has the same command. Registered on the
groups of ``cli/groups.py``."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from stoker.cli import completion, plans, render
from stoker.cli.groups import PLAN_OUT, event, hook, main, output, resource, stack
from stoker.cli.interrupt import Interruption, leaving_on_ctrl_c
from stoker.cli.invocation import (
    FORMAT,
    PROGRESS_FORMAT,
    Failure,
    backend_of,
    choose_columns,
    choose_messages,
    finish_action,
    given_parameters,
    progress_printer,
    reader_of,
    settings_of,
    stack_request,
    template_warnings,
    warn,
)
from stoker.sdk.exceptions import StokerError


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
@PLAN_OUT
@PROGRESS_FORMAT
@FORMAT
@click.pass_context
def stack_create(ctx, name, template, environments, parameters, parameter_files, wait, enable_rollback, timeout_mins, tags, dry_run, plan_out, progress_format, fmt):
    """Create a stack and wait for the create to end; --wait shows progress."""
    json_lines = choose_messages(progress_format, wait, fmt)
    backend = backend_of(ctx)
    request = stack_request(
        backend, template, environments, given_parameters(parameters, parameter_files),
        disable_rollback=not enable_rollback, timeout_mins=timeout_mins, tags=[t for t in tags.split(",") if t],
    )
    warn(template_warnings(backend, request))
    if plan_out and not dry_run:
        raise click.UsageError("--plan-out saves a dry run's plan: give --dry-run too")
    if dry_run:
        plans.show_plan(backend.preview_create(name, request), fmt, plan_out, backend.where)
        return
    with progress_printer(wait, fmt, json_lines) as progress, Interruption(backend, name, "create", progress) as interruption:
        result = backend.create_stack(name, request, progress)
    interruption.explain(result)
    finish_action(backend, result, "CREATE", fmt)


@stack.command("update")
@click.argument("name", shell_complete=completion.stacks)
@click.option("-t", "--template", "template", help="Path to the new template.")
@click.option("-e", "--environment", "environments", multiple=True, help="Path to an environment (repeatable).")
@click.option("--parameter", "parameters", multiple=True, help="KEY=VALUE (repeatable).")
@click.option("--parameter-file", "parameter_files", multiple=True, metavar="KEY=FILE", help="The file's text is the parameter's value (repeatable).")
@click.option("--existing", is_flag=True, help="Reuse the stack's template, environment and parameters; merge what is given.")
@click.option("--clear-parameter", "clear_parameters", multiple=True, help="Return this parameter to its default (repeatable).")
@click.option(
    "--rollback", type=click.Choice(["enabled", "disabled", "keep"]), default="keep", show_default=True,
    help="Roll back when the update fails (enabled), do not (disabled), or as the stack says (keep).",
)
@click.option("--timeout", "timeout_mins", type=click.IntRange(min=1), help="Stack update timeout in minutes.")
@click.option("--tags", default=None, help="Comma-separated tags; the update replaces the stack's (without --existing, no --tags clears them, as in Heat).")
@click.option("--wait", is_flag=True, help="Show live progress until the action ends.")
@click.option("--dry-run", is_flag=True, help="Only show what would change, and why.")
@click.option("--show-nested", is_flag=True, help="With --dry-run: Heat's resource_changes (-f json) list nested stacks' resources too (the plan always does).")
@click.option("--converge", is_flag=True, help="Start from the live objects: change back what drifted (see 'stoker stack drift').")
@click.option("--refresh-only", is_flag=True, help="Take the live objects' values into the stack as they are; change nothing in the cloud (see 'stoker stack drift').")
@PLAN_OUT
@PROGRESS_FORMAT
@FORMAT
@click.pass_context
def stack_update(
    ctx, name, template, environments, parameters, parameter_files, existing, clear_parameters, rollback, timeout_mins, tags, wait, dry_run, show_nested, converge, refresh_only,
    plan_out, progress_format, fmt,
):
    """Update a stack to a new template and/or parameters."""
    json_lines = choose_messages(progress_format, wait, fmt)
    backend = backend_of(ctx)
    if refresh_only:
        given = [
            option
            for option, value in (
                ("-t", template), ("-e", environments), ("--parameter", parameters), ("--parameter-file", parameter_files),
                ("--clear-parameter", clear_parameters), ("--rollback", rollback != "keep"), ("--timeout", timeout_mins),
                ("--tags", tags is not None), ("--converge", converge), ("--show-nested", show_nested),
            )
            if value
        ]
        if given:
            raise click.UsageError(f"--refresh-only takes the live objects into the stack as it is: it cannot be given {', '.join(given)}")
        if plan_out and not dry_run:
            raise click.UsageError("--plan-out saves a dry run's plan: give --dry-run too")
        plan_shown = backend.refresh_stack(name, dry_run)
        plans.show_plan(plan_shown, fmt, plan_out, backend.where)
        return
    request = stack_request(
        backend, template, environments, given_parameters(parameters, parameter_files), clear_parameters=list(clear_parameters),
        disable_rollback={"enabled": False, "disabled": True, "keep": None}[rollback], timeout_mins=timeout_mins,
        tags=None if tags is None else [tag for tag in tags.split(",") if tag], converge=converge,
    )
    warn(template_warnings(backend, request))
    if show_nested and not dry_run:
        raise click.UsageError("--show-nested shows a dry run's nested changes: give --dry-run too")
    if plan_out and not dry_run:
        raise click.UsageError("--plan-out saves a dry run's plan: give --dry-run too")
    if dry_run:
        plans.show_plan(backend.preview_update(name, request, existing, show_nested), fmt, plan_out, backend.where)
        return
    with progress_printer(wait, fmt, json_lines) as progress, Interruption(backend, name, "update", progress) as interruption:
        result = backend.update_stack(name, request, existing, progress)
    interruption.explain(result)
    finish_action(backend, result, "UPDATE", fmt)


@stack.command("delete")
@click.argument("names", nargs=-1, required=True, shell_complete=completion.stacks)
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--wait", is_flag=True, help="Show live progress until the action ends.")
@click.option("--dry-run", is_flag=True, help="Only show what the delete would do to each resource.")
@PROGRESS_FORMAT
@FORMAT
@click.pass_context
def stack_delete(ctx, names, yes, wait, dry_run, progress_format, fmt):
    """Delete stacks."""
    backend = backend_of(ctx)
    if dry_run:
        for name in names:
            plans.print_plan(backend.plan_action(name, "delete"), fmt)
        return
    json_lines = choose_messages(progress_format, wait)
    if not yes and sys.stdin.isatty():
        click.confirm(f"Are you sure you want to delete {', '.join(names)}?", abort=True)
    failed = []
    for name in names:
        with progress_printer(wait, "table", json_lines) as progress, Interruption(backend, name, "delete", progress):
            result = backend.delete_stack(name, progress)
        if result["stack_status"].endswith("_FAILED"):
            failed.append(f"Stack {result['stack_name']} {result['stack_status']}: {result['stack_status_reason']}")
        elif json_lines:
            click.echo(json.dumps({"stack_name": result["stack_name"], "stack_status": result["stack_status"]}), err=True)
        else:
            click.echo(f"Stack {result['stack_name']} {result['stack_status']}", err=True)
    if failed:
        raise Failure("; ".join(failed))


def _simple_action(action_name: str, help_text: str):
    @stack.command(action_name, help=help_text)
    @click.argument("names", nargs=-1, required=True, shell_complete=completion.stacks)
    @click.option("--wait", is_flag=True, help="Show live progress until the action ends.")
    @click.option("--dry-run", is_flag=True, help=f"Only show what the {action_name} would do to each resource.")
    @FORMAT
    @click.pass_context
    def command(ctx, names, wait, dry_run, fmt):
        backend = backend_of(ctx)
        if dry_run:
            for name in names:
                plans.print_plan(backend.plan_action(name, action_name), fmt)
            return
        rows, failed = [], []
        for name in names:
            result = backend.stack_action(name, action_name, progress_printer(wait, fmt))
            rows.append(render.stack_row(result))
            if result["stack_status"].endswith("_FAILED"):
                failed.append(f"Stack {result['stack_name']} {result['stack_status']}: {result['stack_status_reason']}")
        render.print_list(rows, fmt, ["ID", "Stack Name", "Stack Status", "Creation Time", "Updated Time"])
        if failed:
            raise Failure("; ".join(failed))

    return command


_simple_action("suspend", "Suspend stacks (resources in reverse dependency order).")
_simple_action("resume", "Resume suspended stacks.")
_simple_action("check", "Check that the resources of stacks are as recorded.")


# Heat's stack list: sort keys, and the filters it takes (status also as ACTION_STATUS).
STACK_SORT_KEYS = {"stack_name": "stack_name", "stack_status": "stack_status", "creation_time": "creation_time", "updated_time": "updated_time"}
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


def _stack_matches(stack: dict, filters: dict[str, set[str]]) -> bool:
    """Heat's list filters on a stack summary (status: ``FAILED`` or ``CREATE_FAILED``)."""
    state = stack["stack_status"]
    action, status = (state.split("_", 1) + [""])[:2]
    have = {"id": {stack["id"]}, "name": {stack["stack_name"]}, "status": {status, state}, "action": {action}}
    return all(have[key] & values for key, values in filters.items())


def _sorted_page(items: list[dict], sort: str | None, keys: dict[str, str], limit: int | None, marker: str | None, ident: str = "id") -> list[dict]:
    """Heat's paging: sorted by ``key[:asc|desc]`` items (comma-separated), then the items
    after ``marker`` (an id), at most ``limit`` of them."""
    for item in reversed([part for part in (sort or "").split(",") if part]):
        key, _, direction = item.partition(":")
        if key not in keys or direction not in ("", "asc", "desc"):
            raise click.UsageError(f"--sort expects KEY[:asc|desc] with KEY one of {', '.join(keys)}, got {item!r}")
        def order(r: dict, field: str = keys[key]) -> tuple[bool, Any]:
            return (r.get(field) is None, r.get(field) or "")

        items = sorted(items, key=order, reverse=direction == "desc")
    if marker is not None:
        ids = [r[ident] for r in items]
        if marker not in ids:
            raise StokerError(f"The marker {marker} is not in the list", hint="give the id of an item of the previous page")
        items = items[ids.index(marker) + 1 :]
    return items[:limit] if limit is not None else items


@stack.command("list")
@click.option("--nested", is_flag=True, help="Include nested stacks (with their parent's id).")
@click.option("--hidden", is_flag=True, help="Include stacks with a hidden tag (STOKER_HIDDEN_STACK_TAGS).")
@click.option("--deleted", is_flag=True, help="Include deleted stacks (with their deletion time).")
@click.option("--all-projects", is_flag=True, help="Every project's stacks, with a Project column (against a server: a cloud admin's).")
@click.option("--tags", metavar="TAG1,TAG2...", help="Only stacks with all of these tags (see --tag-mode).")
@click.option(
    "--tag-mode", type=click.Choice(["any", "not", "not-any"]), default=None,
    help="With --tags: stacks with any of them (any), without all of them (not), or with none of them (not-any).",
)
@click.option("--filter", "filters", multiple=True, metavar="KEY=VALUE", help="Only stacks with this id, name, status or action (repeatable).")
@click.option("--sort", metavar="KEY[:asc|desc]", help="Sort by stack_name, stack_status, creation_time or updated_time (comma-separated).")
@click.option("--limit", type=click.IntRange(min=0), help="At most this many stacks.")
@click.option("--marker", metavar="ID", help="Only the stacks after this one (paging).")
@FORMAT
@click.pass_context
def stack_list(ctx, nested, hidden, deleted, all_projects, tags, tag_mode, filters, sort, limit, marker, fmt):
    """List the project's stacks (--all-projects: every project's)."""
    columns = ["ID", "Stack Name", *(["Project"] if all_projects else []), "Stack Status", "Creation Time", "Updated Time"]
    columns += (["Parent"] if nested else []) + (["Deletion Time"] if deleted else [])
    wanted = _filters(filters, STACK_FILTER_KEYS)
    if tag_mode and not tags:
        raise click.UsageError("--tag-mode says how --tags matches: give --tags too")
    tagged = {tag for tag in (tags or "").split(",") if tag}
    _sorted_page([], sort, STACK_SORT_KEYS, None, None)  # a bad --sort is refused before anything is read
    stacks = [
        s for s in reader_of(ctx).list_stacks(nested=nested, hidden=hidden, deleted=deleted, all_projects=all_projects)
        if _stack_matches(s, wanted) and (not tagged or _tags_match(set(s.get("tags") or ()), tagged, tag_mode))
    ]  # fmt: skip
    rows = [render.stack_row(s, parent=nested, deleted=deleted, project=all_projects) for s in _sorted_page(stacks, sort, STACK_SORT_KEYS, limit, marker)]
    render.print_list(rows, fmt, columns)


def _tags_match(have: set[str], tags: set[str], mode: str | None) -> bool:
    """Heat's tag filters: all of ``tags`` (tags), any (tags_any), not all (not_tags),
    none (not_tags_any)."""
    if mode == "any":
        return bool(have & tags)
    if mode == "not":
        return not tags <= have
    if mode == "not-any":
        return not have & tags
    return tags <= have


@stack.command("show")
@click.argument("name", shell_complete=completion.stacks)
@FORMAT
@click.pass_context
def stack_show(ctx, name, fmt):
    """Show a stack."""
    render.print_detail(render.stack_detail(reader_of(ctx).get_stack(name)), fmt)


@resource.command("list")
@click.argument("name", shell_complete=completion.stacks)
@click.option("-n", "--nested-depth", "nested_depth", type=click.IntRange(min=0), default=0, help="Also list nested stacks' resources this many levels down.")
@click.option(
    "--filter", "filters", multiple=True, metavar="KEY=VALUE",
    help="Only resources with this name, status, type, action, id or physical_resource_id (repeatable).",
)
@FORMAT
@click.pass_context
def resource_list(ctx, name, nested_depth, filters, fmt):
    """List a stack's resources."""
    from stoker.api.views import RESOURCE_FILTER_KEYS
    from stoker.cli.backend import link, stack_of_link

    columns = ["resource_name", "physical_resource_id", "resource_type", "resource_status", "updated_time"]
    wanted = {key: sorted(values) for key, values in _filters(filters, RESOURCE_FILTER_KEYS).items()}
    found = reader_of(ctx).list_resources(name, nested_depth, wanted)
    if not nested_depth:
        render.print_list([render.resource_row(r) for r in found], fmt, columns)
        return
    # The stack each belongs to, from its link to it (as heatclient reads it).
    rows = [{**render.resource_row(r), "stack_name": (stack_of_link(link(r, "stack")) or ("", ""))[0]} for r in found]
    render.print_list(rows, fmt, [*columns, "stack_name"])


@resource.group("mark")
def resource_mark() -> None:
    """Mark resources."""


@resource_mark.command("unhealthy")
@click.argument("name", shell_complete=completion.stacks)
@click.argument("resource_name", shell_complete=completion.resources)
@click.argument("reason", required=False, default="")
@click.option("--reset", is_flag=True, help="Remove the unhealthy mark.")
@click.pass_context
def resource_mark_unhealthy(ctx, name, resource_name, reason, reset):
    """Mark a resource unhealthy (the next update replaces it), or --reset the mark."""
    backend_of(ctx).mark_unhealthy(name, resource_name, not reset, reason)


@resource.command("signal")
@click.argument("name", shell_complete=completion.stacks)
@click.argument("resource_name", shell_complete=completion.resources)
@click.option("-D", "--data", default="{}", help="JSON details of the signal.")
@click.pass_context
def resource_signal(ctx, name, resource_name, data):
    """Send a signal to a resource."""
    try:
        details = json.loads(data)
    except ValueError as error:
        raise click.UsageError(f"--data must be JSON: {error}")
    if not isinstance(details, dict):
        raise click.UsageError("--data must be a JSON object")
    backend_of(ctx).signal_resource(name, resource_name, details)


@hook.command("clear")
@click.argument("name", shell_complete=completion.stacks)
@click.argument("resources", nargs=-1, required=True, shell_complete=completion.resources)
@click.option("--pre-create", "hook_name", flag_value="pre-create")
@click.option("--pre-update", "hook_name", flag_value="pre-update")
@click.option("--pre-delete", "hook_name", flag_value="pre-delete")
@click.option("--post-create", "hook_name", flag_value="post-create")
@click.option("--post-update", "hook_name", flag_value="post-update")
@click.option("--post-delete", "hook_name", flag_value="post-delete")
@click.pass_context
def hook_clear(ctx, name, resources, hook_name):
    """Clear the hook resources wait at (by default whichever it is)."""
    backend = backend_of(ctx)
    for resource_name in resources:
        backend.clear_hook(name, resource_name, hook_name)


@event.command("list")
@click.argument("name", shell_complete=completion.stacks)
@click.option("--resource", "resource_name", shell_complete=completion.resources, help="Only this resource's events.")
@click.option("-n", "--nested-depth", "nested_depth", type=click.IntRange(min=0), default=0, help="Also list nested stacks' events this many levels down.")
@click.option("--follow", is_flag=True, help="Keep printing events as they are recorded, until interrupted (log format, or json: one event object a line).")
@click.option("--limit", type=click.IntRange(min=0), help="At most this many events.")
@click.option("--marker", metavar="ID", help="Only the events after this one.")
@click.option("-f", "--format", "fmt", type=click.Choice(["log", *render.LIST_FORMATS]), default="log", show_default=True)
@click.option("-c", "--column", "columns", multiple=True, expose_value=False, callback=choose_columns, metavar="COLUMN", help="Show only this column (repeatable).")
@click.pass_context
def event_list(ctx, name, resource_name, nested_depth, follow, limit, marker, fmt):
    """List a stack's events, oldest first. Nested stacks' events name the resource by
    its path from this stack (``group.0.server``)."""
    if fmt not in ("log", "json") and follow:
        raise click.UsageError("--follow prints events as they come: use it with the log format, or json (one event object a line)")
    backend = reader_of(ctx)
    _, stack_id = backend.identify_stack(name)
    paths = _nested_paths(backend, stack_id, nested_depth)
    events = _sorted_page(backend.list_events(stack_id, resource_name, nested_depth), None, {}, limit, marker)
    if follow and fmt == "json":
        # JSON lines: each event a row of -f json's list, on a line of its own, flushed.
        for item in events:
            _json_line(render.event_row(item, _path_of(item, paths)))
        _follow(backend, stack_id, resource_name, nested_depth, events, lambda item, path: _json_line(render.event_row(item, path)))
        return
    if fmt != "log":
        render.print_list([render.event_row(e, _path_of(e, paths)) for e in events], fmt, render.EVENT_COLUMNS)
        return
    for item in events:
        click.echo(render.event_line(item, _path_of(item, paths)))
    if follow:
        _follow(backend, stack_id, resource_name, nested_depth, events, lambda item, path: click.echo(render.event_line(item, path)))


def _json_line(row: dict) -> None:
    sys.stdout.write(json.dumps(row, default=str) + "\n")
    sys.stdout.flush()


def _path_of(event: dict, paths: dict[str, str]) -> str:
    from stoker.cli.backend import link, stack_of_link

    owner = stack_of_link(link(event, "stack"))
    return paths.get(owner[1], "") if owner else ""


def _nested_paths(backend, stack_id: str, depth: int) -> dict[str, str]:
    """Nested stack id -> the path of resource names from the stack to it."""
    from stoker.cli.backend import link, stack_of_link

    paths = {stack_id: ""}
    if depth:
        for found in backend.list_resources(stack_id, depth):
            owner, nested = stack_of_link(link(found, "stack")), stack_of_link(link(found, "nested"))
            if owner and nested and owner[1] in paths:
                paths.setdefault(nested[1], f"{paths[owner[1]]}{found['resource_name']}.")
    return {key: path for key, path in paths.items() if key != stack_id}


def _follow(backend, stack_id: str, resource_name, nested_depth, seen, show) -> None:
    """Print each new event as it comes until interrupted (nested stacks made meanwhile
    included)."""
    paths = _nested_paths(backend, stack_id, nested_depth)
    try:
        with leaving_on_ctrl_c():
            for item in backend.follow_events(stack_id, resource_name, nested_depth, {e["id"] for e in seen}):
                owner = _owner_id(item)
                if owner and owner != stack_id and owner not in paths:
                    paths = _nested_paths(backend, stack_id, nested_depth)  # a nested stack made meanwhile
                show(item, _path_of(item, paths))
    except KeyboardInterrupt:  # off the main thread, where no handler can be set
        return


def _owner_id(event: dict) -> str | None:
    from stoker.cli.backend import link, stack_of_link

    owner = stack_of_link(link(event, "stack"))
    return owner[1] if owner else None


@output.command("show")
@click.argument("name", shell_complete=completion.stacks)
@click.argument("output_name", required=False, shell_complete=completion.outputs)
@click.option("--all", "show_all", is_flag=True, help="Show every output.")
@FORMAT
@click.pass_context
def output_show(ctx, name, output_name, show_all, fmt):
    """Show one output of a stack, or all of them with --all.

    -f value prints the output's value alone, as a script wants it: a string as it is,
    a map or list as JSON. --all -f shell prints each output's value as a shell
    variable (eval "$(stoker stack output show STACK --all -f shell)"), the output key
    with every character other than a letter, digit or _ as _ (--prefix puts a prefix
    before each)."""
    if not output_name and not show_all:
        raise click.UsageError("give an OUTPUT name or --all")
    backend = reader_of(ctx)
    if show_all:
        outputs = backend.get_stack(name).get("outputs") or []
        if fmt == "shell":
            _output_errors(outputs)
            chosen = render.selected_fields([o["output_key"] for o in outputs])
            render.print_shell({o["output_key"]: o.get("output_value") for o in outputs if o["output_key"] in chosen}, render.shell_prefix())
            return
        render.print_detail({o["output_key"]: dict(o) for o in outputs}, fmt)
        return
    found = backend.get_output(name, output_name)
    if found is None:
        raise StokerError(f"Specified output key {output_name} not found.", hint=f"see 'stoker stack output list {name}'")
    if fmt == "value" and not render.selected_fields(None):
        _output_errors([found])
        click.echo(render.value_text(found.get("output_value")))
        return
    render.print_detail(found, fmt)


def _output_errors(outputs: list[dict]) -> None:
    """Say on stderr which outputs have no value, and why (their value prints empty)."""
    for found in outputs:
        if "output_error" in found:
            click.echo(f"WARNING: output {found['output_key']} has no value: {found['output_error']}", err=True)


@output.command("list")
@click.argument("name", shell_complete=completion.stacks)
@FORMAT
@click.pass_context
def output_list(ctx, name, fmt):
    """List a stack's outputs."""
    rows = [{"output_key": o["output_key"], "description": o["description"]} for o in reader_of(ctx).list_outputs(name)]
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
@click.option(
    "--job-queue",
    type=click.Choice(["local", "procrastinate"]),
    default=None,
    help="Where stack actions run: this process (local), or 'stoker worker' processes over PostgreSQL (procrastinate). Default: STOKER_JOB_QUEUE, else local.",
)
@click.option("--with-worker", is_flag=True, default=None, help="With --job-queue procrastinate: also run a worker in this process.")
@click.pass_context
def serve(ctx, host, port, auth_mode, auth_tokens_file, policy_file, job_queue, with_worker):
    """Run the Orchestration API v1 (Heat's REST API) at http://HOST:PORT/v1/{tenant_id}.

    python-heatclient and 'openstack stack ...' work against it; actions run as
    background jobs of this process, on the same store as the stoker command, or on
    'stoker worker' processes (--job-queue procrastinate, docs/workers.md)."""
    from stoker.api import serve as run_server

    obj = ctx.find_root().obj
    settings = settings_of(obj)
    for name, value in (
        ("auth_mode", auth_mode), ("auth_tokens_file", auth_tokens_file), ("policy_file", policy_file), ("job_queue", job_queue), ("serve_with_worker", with_worker),
    ):
        if value is not None:
            setattr(settings, name, value)
    run_server(host, port, settings)

