"""Environment files: parameters, parameter_defaults, resource_registry and friends.

Reading one file is here; combining several ``-e`` files (parameter_merge_strategies)
is ``environment.merge``. Loading one environment over another (a PATCH update over the
stack's own, adopt data) is ``Environment.merge``: Heat's ``Environment.load``, where a
``null`` registry entry removes a mapping (``Prefix::*: null`` every mapping under the
prefix). Errors name the file, line and section.

``event_sinks`` are refused: Heat's only sink type (``zaqar-queue``) needs Zaqar, and
stoker's events are read through its API and CLI.
"""

from __future__ import annotations

import copy
import fnmatch
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from stoker.environment.capabilities import check_candidates, check_requires
from stoker.template import loader
from stoker.template.errors import TemplateError, TemplateErrors

SECTIONS = (
    "parameters",
    "parameter_defaults",
    "resource_registry",
    "event_sinks",
    "encrypted_param_names",
    "parameter_merge_strategies",
    "requires",  # capabilities resolution (environment.capabilities)
)
# Heat's HOOK_TYPES and RESTRICTED_ACTIONS (heat/engine/environment.py).
HOOK_TYPES = ("pre-create", "pre-update", "pre-delete", "post-create", "post-update", "post-delete")
RESTRICTED_ACTIONS = ("update", "replace")
EVENT_SINKS_REFUSED = (
    "event_sinks are not supported: Heat's only event sink type, zaqar-queue, needs Zaqar, "
    "which stoker does not have"
)
EVENT_SINKS_HINT = (
    "remove the event_sinks section; read a stack's events with 'stoker event list STACK' "
    "or GET /v1/{project}/stacks/{name}/{id}/events"
)


@dataclass
class Environment:
    parameters: dict[str, Any] = field(default_factory=dict)
    parameter_defaults: dict[str, Any] = field(default_factory=dict)
    resource_registry: dict[str, Any] = field(default_factory=dict)
    event_sinks: list[Any] = field(default_factory=list)
    encrypted_param_names: list[str] = field(default_factory=list)
    parameter_merge_strategies: dict[str, Any] = field(default_factory=dict)
    # capability name -> value(s): chooses among a registry list's candidate templates
    requires: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "parameters": dict(self.parameters),
            "parameter_defaults": dict(self.parameter_defaults),
            "resource_registry": dict(self.resource_registry),
            "event_sinks": list(self.event_sinks),
            "encrypted_param_names": list(self.encrypted_param_names),
            "parameter_merge_strategies": dict(self.parameter_merge_strategies),
            # only when set: what is stored and shown for other environments is unchanged
            **({"requires": dict(self.requires)} if self.requires else {}),
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
            requires=dict(data.get("requires") or {}),
        )

    def merge(self, other: Environment) -> Environment:
        """A new environment with ``other`` loaded on top of this one (Heat's
        ``Environment.load``): registry entries load one by one (``null`` removes),
        parameters and parameter_defaults are replaced key by key."""
        return Environment(
            parameters={**self.parameters, **other.parameters},
            parameter_defaults={**self.parameter_defaults, **other.parameter_defaults},
            resource_registry=load_registry(self.resource_registry, other.resource_registry),
            event_sinks=self.event_sinks + other.event_sinks,
            encrypted_param_names=self.encrypted_param_names + other.encrypted_param_names,
            parameter_merge_strategies={**self.parameter_merge_strategies, **other.parameter_merge_strategies},
            requires={**self.requires, **other.requires},
        )

    def type_aliases(self) -> dict[str, Any]:
        """The registry that resolves this stack's type names (ResourceRegistry.get_class):
        mappings, ``Prefix::*`` globs and the per-resource ``resources`` section; with
        ``requires``, which a list of candidate templates is resolved by."""
        from stoker.environment.capabilities import Aliases

        return Aliases(self.resource_registry, self.requires)


def load_registry(registry: Mapping[str, Any], snippet: Mapping[str, Any]) -> dict[str, Any]:
    """``snippet`` loaded over a copy of ``registry`` as Heat's ResourceRegistry._load_registry
    loads it: maps (``resources``, a resource's block) load entry by entry, ``hooks`` and
    ``restricted_actions`` are set whole, ``null`` removes the entry (a name ending in
    ``*`` removes every mapping it prefixes, at its level)."""
    result = copy.deepcopy(dict(registry))
    _load_into(result, snippet)
    return result


def _load_into(level: dict[str, Any], snippet: Mapping[str, Any]) -> None:
    for key, value in snippet.items():
        if value is None:
            if key.endswith("*"):
                for name in [name for name, entry in level.items() if not isinstance(entry, Mapping) and name not in ("hooks", "restricted_actions") and name.startswith(key[:-1])]:
                    del level[name]
            else:
                level.pop(key, None)
        elif key in ("hooks", "restricted_actions"):
            level[key] = copy.deepcopy(value)
        elif isinstance(value, Mapping):
            below = level.get(key)
            if not isinstance(below, dict):
                below = level[key] = {}
            _load_into(below, value)
        else:
            level[key] = value


def restricted_actions(registry: Mapping[str, Any], resource_name: str) -> set[str]:
    """The actions (update, replace) the registry's ``resources`` section restricts on
    ``resource_name``: every entry whose name pattern matches (Heat's
    get_rsrc_restricted_actions)."""
    entries = registry.get("resources") if isinstance(registry, Mapping) else None
    found: set[str] = set()
    for pattern, entry in (entries or {}).items() if isinstance(entries, Mapping) else ():
        if not isinstance(entry, Mapping) or not fnmatch.fnmatchcase(resource_name, str(pattern)):
            continue
        actions = entry.get("restricted_actions")
        if isinstance(actions, str):
            found.add(actions)
        elif isinstance(actions, list):
            found.update(actions)
    return found


def _check_registry(level: Mapping[str, Any], path: str, fail) -> None:
    """Heat's is_hook_definition and is_valid_restricted_action, at every level."""
    for key, value in level.items():
        where = f"{path}.{key}"
        if value is None:
            continue
        if key == "hooks":
            hooks = [value] if isinstance(value, str) else value
            if not isinstance(hooks, list) or not all(hook in HOOK_TYPES for hook in hooks):
                fail(f'Invalid hook type "{value}" for resource breakpoint, acceptable hook types are: {HOOK_TYPES}', where)
        elif key == "restricted_actions":
            actions = [value] if isinstance(value, str) else value
            if not isinstance(actions, list) or not all(action in RESTRICTED_ACTIONS for action in actions):
                fail(f'Invalid restricted_action type "{value}" for resource, acceptable restricted_action types are: {RESTRICTED_ACTIONS}', where)
        elif isinstance(value, Mapping):
            if path == "resource_registry" and key != "resources":
                fail("A resource_registry entry must map a type name to a type or template", where)
            else:
                _check_registry(value, where, fail)
        elif check_candidates(value, where, fail):
            continue  # a list of candidate templates, chosen by requires
        elif not isinstance(value, str):
            fail("A resource_registry entry must map a type name to a type or template (or null, to remove a mapping)", where)


def parse(text: str | bytes, file: str | None = None) -> Environment:
    """Read one environment file; every problem is reported with its place."""
    document = loader.parse_environment(text, file)
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
        elif value is None:
            # Heat's environment_format.validate refuses a section left empty ("parameters:")
            fail(f"environment has empty section \"{key}\"", str(key), "give the section its entries, or remove it")
        elif key in ("parameters", "parameter_defaults", "resource_registry", "parameter_merge_strategies", "requires"):
            if not isinstance(value, dict):
                fail(f"The {key} section must be a map", key)
        elif not isinstance(value, list):
            fail(f"The {key} section must be a list", key)
    registry = data.get("resource_registry")
    if isinstance(registry, dict):
        resources = registry.get("resources")
        if resources is not None and not isinstance(resources, dict):
            fail("The resources section of resource_registry must map resource names (or patterns) to their entries", "resource_registry.resources")
        else:
            _check_registry(registry, "resource_registry", fail)
    check_requires(data.get("requires"), fail)
    if data.get("event_sinks"):
        fail(EVENT_SINKS_REFUSED, "event_sinks", EVENT_SINKS_HINT)
    if errors:
        raise TemplateErrors(errors)
    return Environment.from_dict(data)


def merge_all(environments: Iterable[Environment]) -> Environment:
    """Environments loaded one over another (``Environment.merge``)."""
    result = Environment()
    for environment in environments:
        result = result.merge(environment)
    return result
