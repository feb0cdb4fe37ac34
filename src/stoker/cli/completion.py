"""Shell completion of the ``stoker`` command's arguments: stack names, the resource
names of the stack given earlier on the line, output keys, resource types.

Click runs these when the shell asks (``_STOKER_COMPLETE=bash_complete``, see
docs/shell-completion.md), before any command's callback: the engine is opened here
from the root options as parsed so far (``--url``, ``--database-url``, ``--project``,
their environment variables), read once, and closed. The embedded engine opens
without finishing interrupted actions, and a store that does not exist yet is not
made.

Must not: print anything but the candidates (no notes, no errors, no traceback: a
store or server that cannot answer gives no candidates), or change anything.
"""

from __future__ import annotations

import contextlib
import io
import os
from collections.abc import Callable, Iterable
from typing import Any

import click
from click.shell_completion import CompletionItem


def _sqlite_file_missing(database_url: str | None) -> bool:
    """A SQLite store that does not exist yet: opening it would make it."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    if not database_url:
        from stoker.settings import Settings

        database_url = Settings.from_env().database_url
    try:
        url = make_url(database_url)
    except ArgumentError:
        return True
    if not url.drivername.startswith("sqlite"):
        return False
    return not url.database or url.database == ":memory:" or not os.path.exists(url.database)


def _open(params: dict[str, Any]) -> Any:
    """The backend the command line so far points at, or None when it names a store
    that does not exist."""
    from stoker.cli.invocation import settings_of

    if params.get("url"):
        from stoker.cli.connection import remote_backend

        return remote_backend(params["url"], params.get("os_token"), params.get("os_cloud"))
    if _sqlite_file_missing(params.get("database_url")):
        return None
    from stoker.cli.embedded import EmbeddedBackend

    return EmbeddedBackend.open(settings_of(params), False, lambda: lambda event: None)


def _candidates(
    ctx: click.Context,
    incomplete: str,
    read: Callable[[Any], Iterable[str]],
    given: Iterable[str] = (),
) -> list[CompletionItem]:
    """What ``read`` finds through the engine, starting with ``incomplete`` and not
    ``given`` already; nothing when anything goes wrong."""
    if os.environ.get("STOKER_DEBUG"):
        return _read(ctx, incomplete, read, given)
    try:
        # Whatever the engine would say on stderr (a note about interrupted actions, a
        # warning) would land in the middle of the line being typed.
        with contextlib.redirect_stderr(io.StringIO()):
            return _read(ctx, incomplete, read, given)
    except (Exception, SystemExit):  # noqa: BLE001 - a completion that cannot be had is none
        return []


def _read(
    ctx: click.Context, incomplete: str, read: Callable[[Any], Iterable[str]], given: Iterable[str]
) -> list[CompletionItem]:
    backend = _open(ctx.find_root().params)
    if backend is None:
        return []
    try:
        found = list(read(backend))
    finally:
        backend.close()
    taken = set(given)
    return [
        CompletionItem(value)
        for value in dict.fromkeys(found)
        if value.startswith(incomplete) and value not in taken
    ]


def _given(ctx: click.Context, param: click.Parameter) -> list[str]:
    """The values a repeatable argument already has on the line."""
    value = ctx.params.get(param.name or "")
    return list(value) if isinstance(value, (list, tuple)) else []


def stacks(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """The names of the project's stacks."""
    return _candidates(
        ctx,
        incomplete,
        lambda backend: [s["stack_name"] for s in backend.list_stacks()],
        _given(ctx, param),
    )


def _stack_on_line(ctx: click.Context) -> str | None:
    """The stack named earlier on the line. Completing an option's value
    (``event list STACK --resource <TAB>``), click parses the line up to the option,
    whose value is missing, and stops before the stack: then the line is parsed again
    without that option (the words are in COMP_WORDS for every shell click completes)."""
    if ctx.params.get("name"):
        return ctx.params["name"]
    from click.shell_completion import _resolve_context, split_arg_string

    try:
        words = split_arg_string(os.environ.get("COMP_WORDS", ""))
        args = words[1 : int(os.environ.get("COMP_CWORD", len(words)))]
        if not args or not args[-1].startswith("-"):
            return None
        return _resolve_context(ctx.find_root().command, {}, words[0], args[:-1]).params.get("name")
    except (Exception, SystemExit):  # noqa: BLE001 - no stack found is no candidates
        return None


def resources(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """The resource names of the stack named earlier on the line (none before it is)."""
    stack = _stack_on_line(ctx)
    if not stack:
        return []
    return _candidates(
        ctx,
        incomplete,
        lambda backend: [r["resource_name"] for r in backend.list_resources(stack)],
        _given(ctx, param),
    )


def outputs(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """The output keys of the stack named earlier on the line."""
    stack = ctx.params.get("name")
    if not stack:
        return []
    return _candidates(
        ctx, incomplete, lambda backend: [o["output_key"] for o in backend.list_outputs(stack)]
    )


def resource_types(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    """The resource types the engine (or server) knows."""
    return _candidates(
        ctx, incomplete, lambda backend: [str(name) for name in backend.resource_types()]
    )
