"""The reference's HTML: the index and one page per type, rendered with Jinja2 and
autoescape on, so every value from a schema (a plugin's docstring, a default, a
pattern) is text on the page, never markup. The CSS and the search script are files of
this package (``static/``), linked relatively, so the same pages work served and from
``file://``.

``Links`` says where the pages are relative to one another: a static site names its
files (``site``), the server its routes (``routes``); both keep every page and the
index in one directory, with the assets in ``_static/`` beside them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any
from urllib.parse import quote

import jinja2
import yaml

from stoker.typedocs import schema_view
from stoker.typedocs.sources import grouped, namespace_of

ASSETS = ("typedocs.css", "typedocs.js")
ASSETS_DIRECTORY = "_static"


@dataclass(frozen=True)
class Links:
    index: str  # the index, from any page
    page: Callable[[str], str]  # a type's page, from the index or another type's page


def file_name(type_name: str) -> str:
    """The static site's file of a type's page: ``OS::Nova::Server`` ->
    ``OS.Nova.Server.html``. One file per name and no two names alike: ``::`` becomes
    ``.``, letters, digits and ``-`` stay, and any other character (``.`` and ``_``
    too) becomes ``_<hex>_``; a name that would be ``index`` gets a ``_`` in front."""
    parts = []
    for piece in type_name.split("::"):
        parts.append(
            "".join(
                ch if (ch.isascii() and ch.isalnum()) or ch == "-" else f"_{ord(ch):x}_"
                for ch in piece
            )
        )
    stem = ".".join(parts)
    if stem.lower() == "index":
        stem = "_" + stem
    return stem + ".html"


STATIC_LINKS = Links(index="index.html", page=file_name)
# Served under /dashboard/types/: a page is ./{quoted name} (a name's "::" quoted, so
# that "OS:" is never read as a URL's scheme).
SERVED_LINKS = Links(index="./", page=lambda type_name: "./" + quote(type_name, safe=""))


@cache
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("stoker.typedocs", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    environment.globals["assets"] = ASSETS_DIRECTORY
    return environment


def asset(name: str) -> bytes:
    """One of ``ASSETS``, as the package holds it."""
    if name not in ASSETS:
        raise KeyError(name)
    return resources.files("stoker.typedocs").joinpath("static", name).read_bytes()


def index_page(described: list[dict[str, Any]], links: Links) -> str:
    """The index: ``described`` is the type list's answer with descriptions."""
    groups = [
        (
            namespace,
            [
                {
                    "name": item["resource_type"],
                    "href": links.page(item["resource_type"]),
                    "summary": item.get("description") or "",
                }
                for item in items
            ],
        )
        for namespace, items in grouped(described)
    ]
    return (
        _environment()
        .get_template("index.html")
        .render(groups=groups, count=len(described), links=links)
    )


def type_page(schema: dict[str, Any], example: dict[str, Any] | None, links: Links) -> str:
    """A type's page from its schema (the API's answer) and its generated template."""
    type_name = schema["resource_type"]
    return (
        _environment()
        .get_template("type.html")
        .render(
            name=type_name,
            namespace=namespace_of(type_name),
            description=schema_view.paragraphs(schema.get("description") or ""),
            support=schema_view.support_text(schema.get("support_status")),
            status=(schema.get("support_status") or {}).get("status") or "",
            properties=schema_view.property_rows(schema.get("properties") or {}),
            attributes=schema_view.attribute_rows(schema.get("attributes") or {}),
            groups=yaml.safe_dump(schema["properties_groups"], sort_keys=False, allow_unicode=True)
            if schema.get("properties_groups")
            else None,
            example=yaml.safe_dump(
                example, sort_keys=False, allow_unicode=True, default_flow_style=False
            )
            if example is not None
            else None,
            links=links,
        )
    )


def error_page(status: int, title: str, message: str, links: Links) -> str:
    """A refusal as a page: the status and the message the API answers it with."""
    return (
        _environment()
        .get_template("error.html")
        .render(status=status, title=title, message=message, links=links)
    )
