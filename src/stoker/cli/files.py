"""The client's part of ``get_file`` and template resources, as python-heatclient does it,
and the one place the CLI reads template and environment files.

Every file is refused before it is read when it is over the size limit, and every
template is parsed by the guarded loader (``stoker.template.loader``) with the engine's
limits, once: the top-level template's parsed document goes to the service as it is, so
a bomb (aliases, nesting, size) is refused here exactly as the engine would refuse it.

Local files a template names (``get_file: x``, ``type: server.yaml``) and templates an
environment maps types to (``resource_registry: {"My::Server": server.yaml}``) are read
here and sent in the request's ``files`` map, keyed by the name as written; templates
read this way are searched in turn. The engine itself never reads the filesystem.

Unlike python-heatclient, only files in the directory of the file that names them (or
below it) are read: a template from elsewhere must not pull in /etc/passwd or ~/.ssh.
A tree of templates that share files across directories (``get_file: ../../x``, as in
openstack/heat-templates) is read with ``--files-root DIR``: then any file under DIR is.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import click

from stoker.template import loader
from stoker.template.errors import (
    Location,
    TemplateError,
    TemplateErrors,
    TemplateLimitError,
    format_path,
)

TEMPLATE_SUFFIXES = (".yaml", ".yml", ".template", ".json")
SIZE_HINT = "split it into nested templates, or raise STOKER_MAX_TEMPLATE_BYTES"


def read_limited(path: Path, max_bytes: int, what: str) -> bytes:
    """The bytes of ``path``, refused before reading when there are more than ``max_bytes``
    (the size is checked on the open file, and the read stops one byte past the limit for
    files whose size the system does not know, such as pipes)."""
    try:
        with path.open("rb") as stream:
            size = os.fstat(stream.fileno()).st_size
            data = b"" if size > max_bytes else stream.read(max_bytes + 1)
    except OSError as error:
        raise click.UsageError(f"cannot read {path}: {error.strerror or error}")
    if size > max_bytes or len(data) > max_bytes:
        measured = f"{size} bytes" if size > max_bytes else f"more than {max_bytes} bytes"
        raise TemplateErrors(
            [
                TemplateLimitError(
                    f"{what} size ({measured}) exceeds maximum allowed size ({max_bytes} bytes)",
                    location=Location(str(path), 1, 1),
                    hint=SIZE_HINT,
                )
            ]
        )
    return data


def parse_template(path: str, limits: loader.Limits) -> loader.Document:
    """A template file read and parsed once, with the engine's limits (size first)."""
    return read_template(path, limits)[0]


def read_template(path: str, limits: loader.Limits) -> tuple[loader.Document, str]:
    """A template file parsed once with the engine's limits (size first), and its text
    (what a server is sent: it places problems by line as the local parse does)."""
    text = read_limited(Path(path), limits.max_bytes, "Template")
    try:
        document = loader.parse(text, path, limits)
    except TemplateError as error:
        raise TemplateErrors([error])
    return document, text.decode("utf-8", errors="replace")


def _is_template(name: Any) -> bool:
    return (
        isinstance(name, str)
        and name.endswith(TEMPLATE_SUFFIXES)
        and "://" not in name.removeprefix("file://")
    )


def _document(text: str | bytes, limits: loader.Limits, file: str | None = None) -> loader.Document | None:
    """The document to look for file names in; None when the guarded loader refuses the
    text (the engine parses it again with the same limits and reports the problem with
    its place, as part of validating the template that names it)."""
    try:
        return loader.parse(text, file, limits)
    except TemplateError:
        return None


def _named(data: Any) -> Iterator[tuple[str, str, tuple]]:
    """(what, name, template path) of the files a template refers to: get_file targets
    and the templates of template resources (a group's members included)."""
    stack: list[tuple[Any, tuple]] = [(data, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, dict):
            if len(node) == 1 and isinstance(node.get("get_file"), str):
                yield "get_file", node["get_file"], path + ("get_file",)
            if _is_template(node.get("type")):
                yield "type", node["type"], path + ("type",)
            stack.extend((value, path + (key,)) for key, value in node.items())
        elif isinstance(node, list):
            stack.extend((item, path + (index,)) for index, item in enumerate(node))


def _registry_paths(registry: Any, path: tuple = ("resource_registry",)) -> Iterator[tuple[str, tuple]]:
    """(template name, path) of what an environment's registry maps types to (as
    ``registry_templates`` finds them)."""
    if not isinstance(registry, dict):
        return
    for key, value in registry.items():
        if key in ("hooks", "restricted_actions"):
            continue
        if isinstance(value, str):
            yield value, path + (key,)
        elif isinstance(value, list):
            yield from ((item, path + (key, index)) for index, item in enumerate(value) if isinstance(item, str))
        elif isinstance(value, dict):
            yield from _registry_paths(value, path + (key,))


@dataclass(frozen=True)
class _Place:
    """Where a file is named: the document that names it and the path in it."""

    document: loader.Document | None
    path: tuple

    def error(self, message: str, hint: str | None) -> TemplateErrors:
        where = format_path(self.path) or None
        location = self.document.locate(where) if self.document is not None else None
        return TemplateErrors([TemplateError(message, path=where, location=location, hint=hint)])


def _read(name: str, base: Path, what: str, max_bytes: int, root: Path | None = None, place: _Place | None = None) -> str:
    local = name.removeprefix("file://")
    if "://" in local:
        raise click.UsageError(f"{what} {name}: only local files can be sent")
    path = (base / local).resolve()
    allowed = root or base
    if not path.is_relative_to(allowed):
        if root is not None:
            raise click.UsageError(f"{what} {name}: only files under --files-root ({root}) are read; {path} is not")
        raise click.UsageError(
            f"{what} {name}: only files in the template's directory ({base}) are read; copy the file there, "
            "or name a directory above both with --files-root DIR (STOKER_FILES_ROOT)"
        )
    if place is not None and not path.exists():
        # A mistake in the file that names it: placed there, as any other problem of it.
        shown = os.path.relpath(path) if path.is_relative_to(Path.cwd()) else str(path)
        looked = f" (looked for {shown})" if shown != local else ""
        raise place.error(f"The file {name} does not exist{looked}", f"correct the name, or create {shown}")
    try:
        data = read_limited(path, max_bytes, f"{what} {name}:")
    except click.UsageError as error:
        raise click.UsageError(f"{what} {name}: {error.message}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise click.UsageError(f"{what} {name}: cannot read {path}: {error}")


def files_for(
    template: Any | None, environments: Iterable[Any] = (), limits: loader.Limits = loader.DEFAULT_LIMITS, root: Path | None = None
) -> dict[str, str]:
    """The files map for a template (a ``Source``, its text parsed already or not) and its
    environments. Every file read is at most ``limits.max_bytes``; with ``root``, files
    anywhere under it are read, else only those under the directory of what names them."""
    root = root.resolve() if root is not None else None
    files: dict[str, str] = {}
    # (name, directory it is relative to, what names it, where it is named)
    pending: list[tuple[str, Path, str, _Place]] = []
    if template is not None:
        base = (Path(template.name).parent if template.name else Path.cwd()).resolve()
        text = template.text
        document = text if isinstance(text, loader.Document) else _document(text, limits)
        data = document.data if document is not None else None
        pending.extend((name, base, what, _Place(document, path)) for what, name, path in _named(data))
    for environment in environments:
        base = (Path(environment.name).parent if environment.name else Path.cwd()).resolve()
        document = _document(environment.text, loader.DEFAULT_LIMITS, environment.name)
        data = document.data if document is not None else None
        registry = data.get("resource_registry") if isinstance(data, dict) else None
        for target, path in _registry_paths(registry):
            if _is_template(target):
                pending.append((target, base, "resource_registry", _Place(document, path)))
    while pending:
        name, base, what, place = pending.pop()
        if name in files:
            continue
        text = files[name] = _read(name, base, what, limits.max_bytes, root, place)
        if _is_template(name):
            nested_base = (base / name.removeprefix("file://")).resolve().parent
            nested = _document(text, limits, name)
            pending.extend(
                (inner, nested_base, f"{kind} in {name}", _Place(nested, path))
                for kind, inner, path in _named(nested.data if nested is not None else None)
            )
    return files
