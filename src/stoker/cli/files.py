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
from pathlib import Path
from typing import Any

import click

from stoker.environment.capabilities import registry_templates
from stoker.template import loader
from stoker.template.errors import Location, TemplateError, TemplateErrors, TemplateLimitError

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


def _load(text: str | bytes, limits: loader.Limits) -> Any:
    """Data to look for file names in; None when the guarded loader refuses the text
    (the engine parses it again with the same limits and reports the problem with its
    place, as part of validating the template that names it)."""
    try:
        return loader.parse(text, None, limits).data
    except TemplateError:
        return None


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


def _read(name: str, base: Path, what: str, max_bytes: int, root: Path | None = None) -> str:
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
    pending: list[tuple[str, Path, str]] = []  # (name, directory it is relative to, what names it)
    if template is not None:
        base = (Path(template.name).parent if template.name else Path.cwd()).resolve()
        text = template.text
        data = text.data if isinstance(text, loader.Document) else _load(text, limits)
        pending.extend((name, base, what) for what, name in _named(data))
    for environment in environments:
        base = (Path(environment.name).parent if environment.name else Path.cwd()).resolve()
        data = _load(environment.text, loader.DEFAULT_LIMITS)
        registry = data.get("resource_registry") if isinstance(data, dict) else None
        for target in registry_templates(registry if isinstance(registry, dict) else {}):
            if _is_template(target):
                pending.append((target, base, "resource_registry"))
    while pending:
        name, base, what = pending.pop()
        if name in files:
            continue
        text = files[name] = _read(name, base, what, limits.max_bytes, root)
        if _is_template(name):
            nested_base = (base / name.removeprefix("file://")).resolve().parent
            pending.extend(
                (inner, nested_base, f"{kind} in {name}") for kind, inner in _named(_load(text, limits))
            )
    return files
