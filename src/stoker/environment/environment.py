"""Environment files: parameters, parameter_defaults, resource_registry and friends.

Several environment files merge in order (later ones win, registries merge entry by
entry), as Heat merges ``-e`` files. Errors name the file, line and section.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stoker.template import loader
from stoker.template.errors import TemplateError, TemplateErrors

SECTIONS = (
    "parameters",
    "parameter_defaults",
    "resource_registry",
    "event_sinks",
    "encrypted_param_names",
    "parameter_merge_strategies",
)


@dataclass
class Environment:
    parameters: dict[str, Any] = field(default_factory=dict)
    parameter_defaults: dict[str, Any] = field(default_factory=dict)
    resource_registry: dict[str, Any] = field(default_factory=dict)
    event_sinks: list[Any] = field(default_factory=list)
    encrypted_param_names: list[str] = field(default_factory=list)
    parameter_merge_strategies: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "parameters": dict(self.parameters),
            "parameter_defaults": dict(self.parameter_defaults),
            "resource_registry": dict(self.resource_registry),
            "event_sinks": list(self.event_sinks),
            "encrypted_param_names": list(self.encrypted_param_names),
            "parameter_merge_strategies": dict(self.parameter_merge_strategies),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> Environment:
        data = data or {}
        return cls(
            parameters=dict(data.get("parameters") or {}),
            parameter_defaults=dict(data.get("parameter_defaults") or {}),
            resource_registry=dict(data.get("resource_registry") or {}),
            event_sinks=list(data.get("event_sinks") or []),
            encrypted_param_names=list(data.get("encrypted_param_names") or []),
            parameter_merge_strategies=dict(data.get("parameter_merge_strategies") or {}),
        )

    def merge(self, other: Environment) -> Environment:
        """A new environment with ``other`` layered on top of this one."""
        registry = dict(self.resource_registry)
        for key, value in other.resource_registry.items():
            if key == "resources" and isinstance(value, dict):
                merged = dict(registry.get("resources") or {})
                merged.update(value)
                registry["resources"] = merged
            else:
                registry[key] = value
        return Environment(
            parameters={**self.parameters, **other.parameters},
            parameter_defaults={**self.parameter_defaults, **other.parameter_defaults},
            resource_registry=registry,
            event_sinks=self.event_sinks + other.event_sinks,
            encrypted_param_names=self.encrypted_param_names + other.encrypted_param_names,
            parameter_merge_strategies={**self.parameter_merge_strategies, **other.parameter_merge_strategies},
        )

    def type_aliases(self) -> dict[str, str]:
        """Registry entries mapping one resource type to another type name."""
        return {
            key: value
            for key, value in self.resource_registry.items()
            if key != "resources" and isinstance(value, str)
        }


def parse(text: str | bytes, file: str | None = None) -> Environment:
    """Read one environment file; every problem is reported with its place."""
    document = loader.parse(text, file)
    data = document.data
    if data is None:
        return Environment()
    errors: list[TemplateError] = []

    def fail(message: str, path: str, hint: str | None = None) -> None:
        errors.append(TemplateError(message, path=path or None, location=document.locate(path), hint=hint))

    if not isinstance(data, dict):
        fail("An environment must be a map of sections (parameters, parameter_defaults, resource_registry, ...)", "")
        raise TemplateErrors(errors)
    for key, value in data.items():
        if key not in SECTIONS:
            from difflib import get_close_matches

            close = get_close_matches(str(key), SECTIONS, n=1)
            fail(
                f"environment has unknown section \"{key}\"",
                str(key),
                f"did you mean '{close[0]}'?" if close else "valid sections: " + ", ".join(SECTIONS),
            )
        elif key in ("parameters", "parameter_defaults", "resource_registry", "parameter_merge_strategies"):
            if value is not None and not isinstance(value, dict):
                fail(f"The {key} section must be a map", key)
        elif value is not None and not isinstance(value, list):
            fail(f"The {key} section must be a list", key)
    registry = data.get("resource_registry")
    if isinstance(registry, dict):
        for name, target in registry.items():
            if name == "resources":
                continue
            if not isinstance(target, str):
                fail("A resource_registry entry must map a type name to a type or template", f"resource_registry.{name}")
    if errors:
        raise TemplateErrors(errors)
    return Environment.from_dict(data)


def merge_all(environments: Iterable[Environment]) -> Environment:
    result = Environment()
    for environment in environments:
        result = result.merge(environment)
    return result
