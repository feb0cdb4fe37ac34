"""``stoker capabilities find`` and ``stoker template capabilities``: the introspection of
seed 003 on the command line. This module only reads local files into a files map (as
a client sends them to ``POST /capabilities/find`` and ``/template_capabilities``) and
prints; the work is ``stoker.environment.capabilities``', the same the API calls.
Registered on the root group of ``cli/groups.py``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click

from stoker.cli.catalog import template
from stoker.cli.groups import main
from stoker.cli.invocation import environment_source, reader_of

TEMPLATE_SUFFIXES = (".yaml", ".yml", ".template", ".json")


def _requirement(text: str) -> tuple[str, str]:
    key, separator, value = text.partition("=")
    if not separator or not key.strip():
        raise click.UsageError(f"-c expects NAME=VALUE (e.g. resource_type=OS::TripleO::Controller), got {text!r}")
    return key.strip(), value


def _name(path: Path) -> str:
    """How a file is named in the files map and the output: as the user reached it,
    without a leading ``./``."""
    return os.path.normpath(str(path))


def _paths(paths: tuple[str, ...], recursive: bool) -> list[Path]:
    """The template files under ``paths``: a file as given; a directory's templates
    (every level down with ``recursive``; hidden entries skipped, as a shell glob skips them)."""
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            if recursive:
                for root, directories, names in os.walk(path):
                    directories[:] = sorted(d for d in directories if not d.startswith("."))
                    found.extend(Path(root) / name for name in sorted(names) if name.endswith(TEMPLATE_SUFFIXES) and not name.startswith("."))
            else:
                found.extend(sorted(p for p in path.iterdir() if p.is_file() and p.name.endswith(TEMPLATE_SUFFIXES) and not p.name.startswith(".")))
        elif path.exists():
            found.append(path)
        else:
            raise click.UsageError(f"{given}: no such file or directory")
    return found


def _read_all(paths: list[Path], max_bytes: int) -> tuple[dict[str, str], list[str]]:
    from stoker.cli.files import read_limited
    from stoker.template.errors import TemplateErrors

    files: dict[str, str] = {}
    problems: list[str] = []
    for path in paths:
        try:
            files[_name(path)] = read_limited(path, max_bytes, "Template").decode("utf-8")
        except (click.UsageError, TemplateErrors, UnicodeDecodeError) as error:
            problems.append(f"{_name(path)}: {getattr(error, 'message', None) or error}")
    return files, problems


@main.group("capabilities")
def capabilities_group() -> None:
    """Template capabilities: find the templates that provide what you need."""


@capabilities_group.command("find")
@click.option("-r", "--recursive", is_flag=True, help="Look in directories at every level down.")
@click.option("-c", "--capability", "requirements", multiple=True, metavar="NAME=VALUE", help="A capability the template must declare, e.g. resource_type=OS::TripleO::Controller or deployment=puppet (repeatable; all must hold).")
@click.option("--format", "fmt", type=click.Choice(["value", "json"]), default="value", show_default=True, help="Output format.")
@click.argument("paths", nargs=-1, required=True)
@click.pass_context
def capabilities_find(ctx, recursive, requirements, fmt, paths):
    """Print the templates under PATHS whose capabilities satisfy every -c.

    \b
    stoker capabilities find -r -c resource_type=OS::TripleO::Controller .
    puppet/controller.yaml
    docker/controller.yaml"""
    wanted = [_requirement(text) for text in requirements]
    backend = reader_of(ctx)
    files, problems = _read_all(_paths(paths, recursive), backend.limits().max_bytes)
    found = backend.find_capabilities(files, wanted)
    matched, skipped = found["templates"], found.get("skipped") or []
    for problem in problems:
        click.echo(f"WARNING: skipped {problem}", err=True)
    for entry in skipped:
        click.echo(f"WARNING: skipped {entry['template']}: {entry['reason']}", err=True)
    if fmt == "json":
        click.echo(json.dumps({"templates": matched, "skipped": skipped}, indent=4))
        return
    for name in matched:
        click.echo(name)


@template.command("capabilities")
@click.option("-f", "--template-file", "templates", multiple=True, required=True, help="A template to inspect (repeatable).")
@click.option("-e", "--environment", "environments", multiple=True, help="An environment (repeatable): its lists' candidates count, and its requires resolves them.")
@click.option("--format", "fmt", type=click.Choice(["json", "yaml"]), default="json", show_default=True, help="Output format.")
@click.pass_context
def template_capabilities(ctx, templates, environments, fmt):
    """Print what the templates offer: each capability's values
    ({"deployment": ["puppet", "docker"]}) and, per resource type, the templates that
    may implement it ({"OS::TripleO::Controller": ["puppet/controller.yaml", ...]});
    with environments, their requires and how each of their lists resolves."""
    from stoker.cli.files import files_for

    backend = reader_of(ctx)
    files, problems = _read_all([Path(path) for path in templates], backend.limits().max_bytes)
    for problem in problems:
        raise click.UsageError(problem)
    sources = [environment_source(path) for path in environments]
    # The candidates the environments name, relative to each environment's directory.
    for name, text in files_for(None, sources, backend.limits()).items():
        files.setdefault(name, text)
    result = backend.template_capabilities(files, [_name(Path(path)) for path in templates], sources)
    for entry in result.get("skipped", []):
        click.echo(f"WARNING: skipped {entry['template']}: {entry['reason']}", err=True)
    if fmt == "yaml":
        import yaml

        click.echo(yaml.safe_dump(result, sort_keys=False, default_flow_style=False).rstrip())
    else:
        click.echo(json.dumps(result, indent=4))
