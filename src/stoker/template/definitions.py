"""Resource and output definitions: what the template says about one resource or output.

A definition holds parsed data (functions not yet resolved). The engine binds it to a
resolver, after which ``properties()`` yields live ``Properties``. Definitions compare by
their template form, which is how update finds what changed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from stoker.sdk.properties import Properties, Schema
from stoker.template.functions.base import dependencies, referenced_attributes, to_template


def _unbound(value: Any) -> Any:
    raise RuntimeError("This resource definition is not bound to a stack; functions cannot be resolved")


@dataclass(frozen=True)
class ResourceDefinition:
    name: str
    resource_type: str
    properties_data: Mapping[str, Any] = field(default_factory=dict)
    metadata: Any = None
    depends_on: tuple[str, ...] = ()
    # Delete, Retain or Snapshot; a function (``{get_param: policy}``) until
    # ``Template.with_conditions`` resolves it with the stack's parameters.
    deletion_policy: Any = "Delete"
    update_policy: Any = None
    description: str = ""
    external_id: Any = None
    condition: Any = None
    resolver: Callable[[Any], Any] = field(default=_unbound, compare=False, repr=False)

    def bind(self, resolver: Callable[[Any], Any]) -> ResourceDefinition:
        return replace(self, resolver=resolver)

    def required_resource_names(self) -> set[str]:
        """Every resource this one needs: function references and depends_on."""
        names = set(dependencies(self.properties_data))
        names.update(dependencies(self.metadata))
        names.update(self.depends_on)
        names.discard(self.name)
        return names

    def referenced_attributes(self) -> set[tuple[str, str | None]]:
        found = set(referenced_attributes(self.properties_data))
        found.update(referenced_attributes(self.metadata))
        return found

    def properties(self, schema: Mapping[str, Schema], context: Any = None, accept_any: bool = False) -> Properties:
        return Properties(
            schema,
            self.properties_data,
            resolver=self.resolver,
            path=f"resources.{self.name}.properties",
            context=context,
            accept_any=accept_any,
        )

    def update_policy_properties(self, schema: Mapping[str, Schema], context: Any = None) -> Properties:
        """The update_policy section read against a plugin's ``update_policy_schema``."""
        return Properties(
            schema,
            self.update_policy or {},
            resolver=self.resolver,
            path=f"resources.{self.name}.update_policy",
            context=context,
        )

    @property
    def bound(self) -> bool:
        """Whether functions in it can be resolved (``bind`` gave it a stack's resolver)."""
        return self.resolver is not _unbound

    def resolved_metadata(self) -> Any:
        return self.resolver(self.metadata) if self.metadata is not None else {}

    def render(self) -> dict[str, Any]:
        """The definition in template form (functions as their ``{name: args}`` maps)."""
        body: dict[str, Any] = {"type": self.resource_type}
        if self.properties_data:
            body["properties"] = to_template(self.properties_data)
        if self.metadata is not None:
            body["metadata"] = to_template(self.metadata)
        if self.depends_on:
            body["depends_on"] = list(self.depends_on)
        if self.deletion_policy != "Delete":
            body["deletion_policy"] = to_template(self.deletion_policy)
        if self.update_policy is not None:
            body["update_policy"] = to_template(self.update_policy)
        if self.external_id is not None:
            body["external_id"] = to_template(self.external_id)
        if self.description:
            body["description"] = self.description
        if self.condition is not None:
            body["condition"] = to_template(self.condition)
        return body


@dataclass(frozen=True)
class OutputDefinition:
    name: str
    value: Any
    description: str = ""
    condition: Any = None

    def required_resource_names(self) -> set[str]:
        return set(dependencies(self.value))

    def referenced_attributes(self) -> set[tuple[str, str | None]]:
        return set(referenced_attributes(self.value))
