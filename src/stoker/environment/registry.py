"""The resource type registry: type names to plugin classes.

Built-in types and plugin types register here once per process; an environment's
``resource_registry`` overlays aliases per stack. Registration checks each plugin's
schemas so a broken plugin is refused with its name before any template uses it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from difflib import get_close_matches
from typing import Any

from stoker.sdk import properties_group
from stoker.sdk.clients import ClientRegistry
from stoker.sdk.exceptions import SchemaError
from stoker.sdk.resource import Resource

LOG = logging.getLogger(__name__)


class UnknownResourceTypeError(LookupError):
    def __init__(self, type_name: str, known: list[str]):
        close = get_close_matches(type_name, known, n=1)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        super().__init__(f"The Resource Type ({type_name}) could not be found.{hint}")
        self.type_name = type_name


class TemplateNotFoundError(UnknownResourceTypeError):
    """A template resource whose template is not in the request's files map."""

    def __init__(self, template_name: str):
        LookupError.__init__(
            self,
            f'Could not fetch remote template "{template_name}": it is not in the files map '
            "(the stoker command sends templates found beside the template or environment that names them)",
        )
        self.type_name = template_name


def check_plugin(type_name: str, cls: type) -> list[str]:
    """Every mistake in a plugin class's declarations."""
    owner = f"{type_name} ({cls.__module__}.{cls.__qualname__})"
    if not isinstance(cls, type) or not issubclass(cls, Resource):
        return [f"{owner}: a resource plugin must extend stoker.sdk.resource.Resource"]
    problems = []
    for name, schema in cls.properties_schema.items():
        problems.extend(schema.check(owner, name))
    for name, schema in cls.attributes_schema.items():
        chain = schema.support_status.chain_error()
        if chain:
            problems.append(f"{owner}: attribute {name}: {chain}")
    chain = cls.support_status.chain_error()
    if chain:
        problems.append(f"{owner}: {chain}")
    problems.extend(f"{owner}: {p}" for p in properties_group.check_schema(cls.properties_groups_schema, cls.properties_schema))
    return problems


@dataclass
class ResourceRegistry:
    types: dict[str, type[Resource]] = field(default_factory=dict)
    constraints: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    clients: ClientRegistry = field(default_factory=ClientRegistry)
    # The operator's settings client plugins read (``ClientPlugin.settings``), e.g.
    # allow_image_urls.
    client_settings: dict[str, Any] = field(default_factory=dict)

    def register(self, type_name: str, cls: type[Resource]) -> None:
        problems = check_plugin(type_name, cls)
        if problems:
            raise SchemaError("; ".join(problems))
        self.types[type_name] = cls

    def register_mapping(self, mapping: Mapping[str, type], source: str) -> None:
        for type_name, cls in mapping.items():
            try:
                self.register(type_name, cls)
            except SchemaError as error:
                message = f"plugin {source}: {error.message}"
                LOG.warning("Skipping %s", message)
                self.problems.append(message)

    def known_types(self) -> list[str]:
        return sorted(self.types)

    def get_class(self, type_name: str, aliases: Mapping[str, str] | None = None, files: Mapping[str, str] | None = None) -> type[Resource]:
        """The class for ``type_name`` after the environment's aliases. A name that is a
        template (``server.yaml``) is a template resource whose text is in ``files``."""
        from stoker.resources.heat.template_resource import is_template_name, template_class

        seen = set()
        name = type_name
        while aliases and name in aliases and name not in seen:
            seen.add(name)
            name = aliases[name]
        if is_template_name(name) and name not in self.types:
            text = (files or {}).get(name)
            if text is None:
                raise TemplateNotFoundError(name)
            return template_class(type_name, name, text, files or {})
        cls = self.types.get(name)
        if cls is None:
            raise UnknownResourceTypeError(name, self.known_types())
        return cls
