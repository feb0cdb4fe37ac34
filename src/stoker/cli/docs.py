"""``stoker docs build DIR``: the resource type reference as a static site
(``typedocs.site``), read from the engine the command talks to, embedded or ``--url``,
through the resource type API's reads, so it documents exactly what that engine offers."""

from __future__ import annotations

from pathlib import Path

import click

from stoker.cli.groups import main
from stoker.cli.invocation import reader_of


@main.group("docs")
def docs() -> None:
    """Documentation made from the engine: the resource type reference."""


@docs.command("build")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("-q", "--quiet", is_flag=True, help="Print nothing but errors.")
@click.pass_context
def docs_build(ctx, directory: Path, quiet: bool):
    """Write the resource type reference into DIRECTORY (made if missing): index.html,
    grouped by namespace with search as you type, and a page per type (HIDDEN types
    are left out), with relative links, so it works from file:// and anywhere it is
    published."""
    from stoker.typedocs.site import build

    pages: list[str] = []
    build(reader_of(ctx), directory, pages.append)
    if not quiet:
        click.echo(
            f"Wrote {len(pages)} resource type pages and {directory / 'index.html'}", err=True
        )
