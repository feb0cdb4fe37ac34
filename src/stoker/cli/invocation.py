"""What every ``stoker`` command shares: the engine it talks to (a server or the embedded
engine, opened once per invocation), the requests it builds from its flags (template,
environments, parameters, files), the output flags, and how an error is reported.

Must not: define commands (``main`` and its siblings do), or print anything but errors.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from stoker.cli import render
from stoker.sdk.exceptions import StokerError
from stoker.template.errors import TemplateErrors


def choose_columns(ctx: click.Context, _param: click.Parameter, value: tuple[str, ...]) -> None:
    ctx.ensure_object(dict)
    ctx.find_root().obj["columns"] = list(value)


def _remember(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """An output option every command shares, kept where ``render`` reads it."""
    root = ctx.find_root()
    if root.obj is None:
        root.obj = {}
    root.obj[param.name] = value
    return value


PROGRESS_FORMAT = click.option(
    "--progress-format",
    "progress_format",
    type=click.Choice(["auto", "log", "json"]),
    default="auto",
    show_default=True,
    help="With --wait: the events, warnings and notes on stderr as log lines, or as JSON lines (one object a line: an event as 'stack event list -f json' gives it, or {\"warning\"|\"note\"|\"error\": TEXT}) for machines; auto: JSON lines with -f json.",
)


def FORMAT(command: Callable) -> Callable:  # noqa: N802 - a decorator named as the options it adds
    """``-f`` (cliff's formats: table, json, yaml, csv for lists, shell for one item,
    value), ``-c`` (the columns or fields to show, repeatable), and the table and shell
    formatters' options, as openstack's (cliff's ``--max-width``, ``--fit-width``,
    ``--prefix``)."""
    command = click.option(
        "--max-width",
        "max_width",
        type=int,
        envvar="CLIFF_MAX_TERM_WIDTH",
        default=None,
        expose_value=False,
        callback=_remember,
        metavar="N",
        help="Table: at most N characters wide, long values wrapped at spaces or cut with '…' (default: CLIFF_MAX_TERM_WIDTH, else a terminal's width; 0: no limit).",
    )(command)
    command = click.option(
        "--fit-width",
        "fit_width",
        is_flag=True,
        default=None,
        envvar="CLIFF_FIT_WIDTH",
        expose_value=False,
        callback=_remember,
        help="Table: fit the terminal's width (COLUMNS) even when not printing to a terminal (also CLIFF_FIT_WIDTH=1).",
    )(command)
    command = click.option(
        "--prefix",
        "prefix",
        default="",
        expose_value=False,
        callback=_remember,
        metavar="PREFIX",
        help="-f shell: put PREFIX before every variable name.",
    )(command)
    command = click.option(
        "-c",
        "--column",
        "columns",
        multiple=True,
        expose_value=False,
        callback=choose_columns,
        metavar="COLUMN",
        help="Show only this column (repeatable).",
    )(command)
    return click.option(
        "-f",
        "--format",
        "fmt",
        type=click.Choice(render.FORMATS),
        default="table",
        show_default=True,
        help="Output format.",
    )(command)


class Failure(Exception):
    """The action ran and ended FAILED: print the reason, exit 1."""


def settings_of(obj: dict[str, Any]):
    from stoker.settings import Settings

    settings = Settings.from_env(
        database_url=obj.get("database_url"),
        plugin_dirs=list(obj.get("plugin_dirs") or []),
        os_cloud=obj.get("os_cloud"),
    )
    if obj.get("project"):
        settings.project = obj["project"]
    return settings


def backend_of(ctx: click.Context, recover: bool = True):
    """The engine this command talks to (``cli.connection``): a server (``--url``), or
    the embedded engine. On the embedded engine a command that changes stacks
    (``recover``) first finishes the actions an engine that stopped mid-way left
    IN_PROGRESS; a read reads at once and says which stacks wait for that."""
    obj = ctx.find_root().obj
    if "backend" not in obj:
        if obj.get("url"):
            from stoker.cli.connection import remote_backend

            backend = remote_backend(obj["url"], obj.get("os_token"), obj.get("os_cloud"))
        else:
            from stoker.cli.embedded import EmbeddedBackend
            from stoker.cli.progress import Progress

            backend = EmbeddedBackend.open(settings_of(obj), recover, lambda: Progress())
        obj["backend"] = backend
        ctx.find_root().call_on_close(backend.close)
    return obj["backend"]


def reader_of(ctx: click.Context):
    """The engine for a command that only reads (see ``backend_of``)."""
    return backend_of(ctx, recover=False)


def environment_source(path: str):
    """An environment file, refused unread when over the size environments are read with."""
    from stoker.cli.backend import Source
    from stoker.cli.files import read_limited
    from stoker.template.loader import DEFAULT_MAX_TEMPLATE_BYTES

    return Source(read_limited(Path(path), DEFAULT_MAX_TEMPLATE_BYTES, "Environment"), str(path))


def stack_request(
    backend,
    template: str | None,
    environments: tuple[str, ...] = (),
    parameters: dict | None = None,
    **settings: Any,
):
    """A ``StackRequest`` from the command line: the template read and parsed once with
    the backend's limits (the embedded engine takes the parsed document as it is; a
    server is sent the text), the environments, and the files both name."""
    from stoker.cli.backend import Source, StackRequest
    from stoker.cli.files import files_for, read_template

    source, text = None, None
    if template:
        document, text = read_template(template, backend.limits())
        source = Source(document, str(template))
    envs = [environment_source(e) for e in environments]
    root = (click.get_current_context().find_root().obj or {}).get("files_root")
    files = (
        files_for(source, envs, backend.limits(), Path(root) if root else None)
        if source or envs
        else None
    )
    if envs:
        # As heatclient sends them (and Heat keeps them): the environments are files of
        # the stack too, under the names they are given by.
        files = {
            **(files or {}),
            **{str(env.name): env.text.decode("utf-8", errors="replace") for env in envs},
        }
    return StackRequest(
        template=source,
        template_text=text,
        environments=envs,
        parameters=dict(parameters or {}),
        files=files,
        **settings,
    )


def template_warnings(backend, request) -> list[str]:
    """What Heat accepts silently in the request's files that the author probably did not
    mean, each placed: a key written twice (template or environment, last wins), and a
    function name one edit away from the version's (``template.typos``), in the template
    and in every template of its files (nested stacks, provider templates). Read here, on
    the client, so a create, update or preview says it whichever engine runs it."""
    from stoker.cli.backend import Source
    from stoker.template import loader
    from stoker.template.errors import TemplateError
    from stoker.template.hot import Template
    from stoker.template.typos import file_templates, function_typos

    found: list[str] = []
    for environment in request.environments:
        try:
            found.extend(str(w) for w in loader.parse(environment.text, environment.name, loader.DEFAULT_LIMITS).warnings)
        except TemplateError:
            pass  # the engine reports it with its place
    schemas: dict[str, Any] = {}

    def schema_of(type_name: str) -> Any:
        if type_name not in schemas:
            try:
                schemas[type_name] = backend.resource_type(type_name)
            except StokerError:  # not a registered type (a template resource, a typo)
                schemas[type_name] = None
        return schemas[type_name]

    def read(document: Any) -> None:
        try:
            template = Template.parse(document, request.files, collect=True)
        except TemplateError:
            return  # the engine reports why
        found.extend(str(w) for w in template.warnings)
        found.extend(str(w) for w in function_typos(template, schema_of))

    source = request.template
    if isinstance(source, Source) and isinstance(source.text, loader.Document):
        read(source.text)
    for template in file_templates(request.files):
        found.extend(str(w) for w in template.warnings)
        found.extend(str(w) for w in function_typos(template, schema_of))
    return list(dict.fromkeys(found))


# What the command writes on stderr: "log" (lines for a person) or "json" (one JSON object
# a line, for machines: a create or update with ``--wait -f json`` or ``--progress-format
# json``). Set once by the command (``choose_messages``); one process runs one command.
_MESSAGES = {"format": "log"}


def choose_messages(progress_format: str, wait: bool, fmt: str = "table") -> bool:
    """``--progress-format``'s choice for this command: ``auto`` is JSON lines when the
    command waits and prints its result as JSON (``--wait -f json``), else log lines.
    From here on warnings, notes and the final error are written in that format too;
    True when it is JSON."""
    json_lines = progress_format == "json" or (progress_format == "auto" and wait and fmt == "json")
    _MESSAGES["format"] = "json" if json_lines else "log"
    return json_lines


def messages_as_json() -> bool:
    return _MESSAGES["format"] == "json"


def message_text(kind: str, text: str, **more: Any) -> str:
    """A message of ``message``, as the line it writes (without its newline)."""
    if messages_as_json():
        return json.dumps({kind: text, **more})
    return text if kind == "note" else f"{kind.upper()}: {text}"


def message(kind: str, text: str, **more: Any) -> None:
    """One message of the command's own on stderr: ``KIND: text`` (a warning, an error)
    or plain (a note) for a person, ``{"<kind>": text, ...}`` for a machine."""
    click.echo(message_text(kind, text, **more), err=True)


def warn(lines: list[str]) -> None:
    for line in lines:
        message("warning", line)


def parameter_file_values(pairs: tuple[str, ...]) -> dict[str, str]:
    """``--parameter-file KEY=FILE``: the file's text is the value (heatclient's)."""
    from stoker.cli.files import read_limited
    from stoker.template.loader import DEFAULT_MAX_TEMPLATE_BYTES

    values: dict[str, str] = {}
    for pair in pairs:
        if "=" not in pair:
            raise click.UsageError(f"--parameter-file expects KEY=FILE, got {pair!r}")
        key, path = pair.split("=", 1)
        data = read_limited(
            Path(path), DEFAULT_MAX_TEMPLATE_BYTES, f"Parameter file of {key.strip()}"
        )
        try:
            values[key.strip()] = data.decode("utf-8")
        except UnicodeDecodeError:
            raise click.UsageError(f"--parameter-file {pair}: {path} is not UTF-8 text")
    return values


def given_parameters(pairs: tuple[str, ...], files: tuple[str, ...] = ()) -> dict[str, str]:
    values: dict[str, str] = parameter_file_values(files)
    for pair in pairs:
        for item in pair.split(";") if ";" in pair else [pair]:
            if "=" not in item:
                raise click.UsageError(f"--parameter expects KEY=VALUE, got {item!r}")
            key, value = item.split("=", 1)
            values[key.strip()] = value
    return values


# Heat's words for a ``get_param`` of a parameter the template does not declare, which
# its clients match (the API keeps them): said plainly here, for a person.
_UNDECLARED_PARAMETER = re.compile(r"Property error: : (?P<path>[^:]+): : The Parameter \((?P<name>[^)]*)\) was not provided\.")


def plain(problem: object) -> str:
    """A problem as the command line says it."""
    return _UNDECLARED_PARAMETER.sub(
        r"\g<path>: The Parameter (\g<name>) is not declared (declare it under 'parameters', or correct the name)",
        str(problem),
    )


def report(error: BaseException) -> None:
    """One ``ERROR:`` message; several problems (of a template, found here or by a
    server) one a line."""
    problems = (
        error.errors
        if isinstance(error, TemplateErrors)
        else getattr(error, "problems", None) or []
    )
    if messages_as_json():
        told = [plain(problem) for problem in problems] or [plain(error)]
        message("error", told[0] if len(told) == 1 else f"{len(told)} problems found", **({"problems": told} if len(told) > 1 else {}))
        return
    if len(problems) > 1:
        click.echo(f"ERROR: {len(problems)} problems found:", err=True)
        for problem in problems:
            click.echo(f"  - {plain(problem)}", err=True)
    elif problems:
        click.echo(f"ERROR: {plain(problems[0])}", err=True)
    else:
        click.echo(f"ERROR: {plain(error)}", err=True)


def finish_action(backend, stack: dict, action: str, fmt: str) -> None:
    """Print a stack an action ended with (Heat's stack detail); exit 1 when it failed."""
    detail = render.stack_detail(stack)
    outputs = detail["outputs"]
    if fmt == "table":
        # A short summary, then the outputs as their own table: what the user came for.
        summary = {
            k: detail[k]
            for k in (
                "id",
                "stack_name",
                "stack_status",
                "stack_status_reason",
                "creation_time",
                "updated_time",
            )
        }
        render.print_detail(summary, fmt)
        if outputs:
            render.print_list(
                [
                    {
                        "output_key": o["output_key"],
                        "output_value": o.get("output_value")
                        if "output_error" not in o
                        else f"ERROR: {o['output_error']}",
                        "description": o["description"],
                    }
                    for o in outputs
                ],
                fmt,
            )
    else:
        render.print_detail(detail, fmt)
    state = stack["stack_status"]
    if state.endswith("_FAILED"):
        raise Failure(f"Stack {stack['stack_name']} {state}: {stack['stack_status_reason']}")
    if not state.startswith(f"{action}_"):
        # e.g. a failed create that was rolled back: say why it failed.
        failures = [
            e
            for e in backend.list_events(stack["id"], stack["stack_name"])
            if e["resource_status"] == f"{action}_FAILED"
        ]
        why = failures[-1]["resource_status_reason"] if failures else stack["stack_status_reason"]
        raise Failure(f"Stack {stack['stack_name']} {action} failed and ended {state}: {why}")


def progress_printer(wait: bool, fmt: str = "table", json_lines: bool = False):
    """The live progress of an action (``cli.progress``): the events on stderr with
    ``wait`` (``json_lines``: as JSON, one a line), nested stacks' resources named by
    their path (the command's engine says who owns a nested stack)."""
    from stoker.cli.progress import Progress

    context = click.get_current_context(silent=True)
    backend = (context.find_root().obj or {}).get("backend") if context is not None else None
    return Progress(quiet=not wait, json_lines=json_lines, owner_of=backend.stack_owner if backend is not None else None)
