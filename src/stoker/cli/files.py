"""The client's part of ``get_file`` and template resources, as python-heatclient does it.

Local files a template names (``get_file: x``, ``type: server.yaml``) and templates an
environment maps types to (``resource_registry: {"My::Server": server.yaml}``) are read
here and sent in the request's ``files`` map, keyed by the name as written; templates
read this way are searched in turn. The engine itself never reads the filesystem.

Unlike python-heatclient, only files in the directory of the file that names them (or
below it) are read: a template from elsewhere must not pull in /etc/passwd or ~/.ssh.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import click
import yaml

TEMPLATE_SUFFIXES = (".yaml", ".yml", ".template", ".json")


def _is_template(name: Any) -> bool:
    return (
        isinstance(name, str)
        and name.endswith(TEMPLATE_SUFFIXES)
        and "://" not in name.removeprefix("file://")
    )


def _load(text: str | bytes) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return None  # the engine reports the syntax error with its place


def _named(data: Any) -> Iterator[tuple[str, str]]:
    """(what, name) of the files a template refers to: get_file targets and the
    templates of template resources (a group's members included)."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if len(node) == 1 and isinstance(node.get("get_file"), str):
                yield "get_file", node["get_file"]
            if _is_template(node.get("type")):
                yield "type", node["type"]
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)


def _read(name: str, base: Path, what: str) -> str:
    local = name.removeprefix("file://")
    if "://" in local:
        raise click.UsageError(f"{what} {name}: only local files can be sent")
    path = (base / local).resolve()
    if not path.is_relative_to(base):
        raise click.UsageError(
            f"{what} {name}: only files in the template's directory ({base}) are read; copy the file there"
        )
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError) as error:
        raise click.UsageError(
            f"{what} {name}: cannot read {path}: {getattr(error, 'strerror', None) or error}"
        )


def files_for(template: Any | None, environments: Iterable[Any] = ()) -> dict[str, str]:
    """The files map for a template (a ``Source``) and its environments."""
    files: dict[str, str] = {}
    pending: list[tuple[str, Path, str]] = []  # (name, directory it is relative to, what names it)
    if template is not None:
        base = (Path(template.name).parent if template.name else Path.cwd()).resolve()
        pending.extend((name, base, what) for what, name in _named(_load(template.text)))
    for environment in environments:
        base = (Path(environment.name).parent if environment.name else Path.cwd()).resolve()
        data = _load(environment.text)
        registry = data.get("resource_registry") if isinstance(data, dict) else None
        for target in (registry if isinstance(registry, dict) else {}).values():
            if _is_template(target):
                pending.append((target, base, "resource_registry"))
    while pending:
        name, base, what = pending.pop()
        if name in files:
            continue
        text = files[name] = _read(name, base, what)
        if _is_template(name):
            nested_base = (base / name.removeprefix("file://")).resolve().parent
            pending.extend(
                (inner, nested_base, f"{kind} in {name}") for kind, inner in _named(_load(text))
            )
    return files
