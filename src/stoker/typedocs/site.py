"""``stoker docs build DIR``: the reference as a static site, for publishing.

``DIR/index.html``, one ``DIR/<type>.html`` per type the source lists (HIDDEN ones are
not listed), and ``DIR/_static/`` with the one CSS file and the search script. Every
link is relative, so the site works from ``file://`` and under any path. Files of an
earlier build of types no longer listed are left as they are; the index no longer
links them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from stoker.sdk.exceptions import StokerError
from stoker.typedocs import pages
from stoker.typedocs.sources import TypeSource


def build(
    source: TypeSource, directory: Path, on_page: Callable[[str], None] = lambda _: None
) -> list[Path]:
    """Write the site into ``directory`` (made if missing); the files written. The
    index is written last, so it never links a page a failed build did not write.
    ``on_page`` is called with each type's name as its page is written."""
    _prepare(directory)
    described = source.resource_types(with_description=True)
    written = [
        _write(directory / pages.ASSETS_DIRECTORY / name, pages.asset(name))
        for name in pages.ASSETS
    ]
    for item in sorted(described, key=lambda found: found["resource_type"]):
        type_name = item["resource_type"]
        schema = source.resource_type(type_name)
        example = _example(source, type_name)
        written.append(
            _write(
                directory / pages.file_name(type_name),
                pages.type_page(schema, example, pages.STATIC_LINKS).encode(),
            )
        )
        on_page(type_name)
    written.append(
        _write(directory / "index.html", pages.index_page(described, pages.STATIC_LINKS).encode())
    )
    return written


def _example(source: TypeSource, type_name: str) -> dict | None:
    """The type's generated template; None where a server refuses it to the caller
    (403: its policy's ``stacks:generate_template``), as its own pages leave it out."""
    try:
        return source.resource_type_template(type_name, "hot")
    except StokerError as error:
        if getattr(error, "status", None) != 403:
            raise
        return None


def _prepare(directory: Path) -> None:
    if directory.exists() and not directory.is_dir():
        raise StokerError(
            f"{directory} is a file, not a directory",
            hint="name a directory to write the site into (it is made if missing)",
        )
    try:
        (directory / pages.ASSETS_DIRECTORY).mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StokerError(
            f"Cannot make the directory {directory}: {error.strerror}",
            hint="name a directory you may write in",
        )


def _write(path: Path, content: bytes) -> Path:
    try:
        path.write_bytes(content)
    except OSError as error:
        raise StokerError(
            f"Cannot write {path}: {error.strerror}", hint="name a directory you may write in"
        )
    return path
