"""Where the reference's pages are read from: anything that answers the resource type
API's three reads in the API's shapes. The ``stoker`` command's backends (embedded or
``--url``) answer them, and so does the server's adapter over its own API calls
(``api.catalog.CallTypes``), so a page never says more or less than the API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol


class TypeSource(Protocol):
    def resource_types(
        self, filters: Mapping[str, str] | None = None, with_description: bool = False
    ) -> list[Any]:
        """``GET /resource_types``: with ``with_description``, a list of
        ``{"resource_type": name, "description": first paragraph}`` (HIDDEN types left out)."""

    def resource_type(self, type_name: str) -> dict[str, Any]:
        """``GET /resource_types/{type}``: the type's schema."""

    def resource_type_template(self, type_name: str, template_type: str) -> dict[str, Any] | None:
        """``GET /resource_types/{type}/template``: a template of one resource of the
        type; None where the caller may not have it (a page then shows no example)."""


def namespace_of(type_name: str) -> str:
    """The group a type is listed under: its name less the last part
    (``OS::Nova::Server`` -> ``OS::Nova``); a name without ``::`` is its own."""
    head, separator, _ = type_name.rpartition("::")
    return head if separator else type_name


def grouped(described: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The types by namespace, namespaces and types each in name order."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for item in sorted(described, key=lambda found: found["resource_type"]):
        groups.setdefault(namespace_of(item["resource_type"]), []).append(item)
    return sorted(groups.items())
