"""Combining several environment files (``-e a.yaml -e b.yaml``, or a request's
``environment_files``) into one, as Heat's ``heat/common/environment_util.py``
merge_environments does on the server.

Files combine in order. ``parameters`` and ``parameter_defaults`` follow
``parameter_merge_strategies``: per parameter, else the file's ``default``, else what an
earlier file chose for that parameter, else ``overwrite``. A parameter keeps the strategy
it was first given; a later file that asks for another is refused. ``merge`` and
``deep_merge`` combine by the parameter's type: comma_delimited_list values are joined
(lists extended, text joined with ","), json maps are merged (``deep_merge`` merges their
nested maps and lists too), strings are concatenated; a number is added to the earlier
value, which Heat's parse_param only lets through as text (two "1" make "11", a YAML
number is refused); booleans cannot be merged. As in Heat, once a section holds values, a later file's keys that no template
declares (the stack's, or one in ``files``) are dropped, and the first file's section is
taken whole. The other sections merge key by key (a later file's ``resources`` block
replaces an earlier one's, and a ``null`` entry is skipped); the registry is then loaded
(``environment.load_registry``) so what is stored holds no ``null`` (for a PATCH update
the nulls are kept, to remove the stack's own mappings when loaded over them).

The request's own parameters (``-P``, the body's ``parameters``) are not merged here:
they apply over the result, as stoker has always applied them. Heat starts this merge
from them instead (its API puts them in the environment's ``parameters`` first), so there
an environment file's value replaces a ``-P`` one of the same name.

This module owns the combining only: it does not read files (``environment.parse``) nor
resolve types (``registry``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

from stoker.environment.environment import Environment, load_registry
from stoker.template import loader
from stoker.template.errors import TemplateError

STRATEGIES = (OVERWRITE, MERGE, DEEP_MERGE) = ("overwrite", "merge", "deep_merge")
# Heat's parameter types (HOT and CFN spellings) as stoker names them.
_TYPE_NAMES = {
    "string": "string",
    "number": "number",
    "boolean": "boolean",
    "json": "json",
    "comma_delimited_list": "comma_delimited_list",
    "String": "string",
    "Number": "number",
    "Boolean": "boolean",
    "Json": "json",
    "CommaDelimitedList": "comma_delimited_list",
}
_TEMPLATE_VERSION_KEYS = ("heat_template_version", "HeatTemplateFormatVersion", "AWSTemplateFormatVersion")


class _Unmergeable(Exception):
    """Values Heat's merge functions fail on with a TypeError (a 500 there)."""


def merge_strategy(strategies: Mapping[str, Any] | None, name: str, chosen: Mapping[str, str] | None = None) -> str:
    """Heat's get_param_merge_strategy: the file's entry for ``name``, else the strategy
    already chosen for it, else the file's ``default``; an unknown one is the default."""
    if strategies is None:
        return OVERWRITE
    default = strategies.get("default", OVERWRITE)
    strategy = strategies.get(name, (chosen or {}).get(name, default))
    return strategy if strategy in STRATEGIES else default


def merge_list(old: Any, new: Any) -> Any:
    """Heat's merge_list: lists extend, comma-delimited text joins with ","."""
    if not old:
        return new
    if isinstance(new, list):
        if not isinstance(old, list):
            raise _Unmergeable(f"a list cannot be added to {type(old).__name__} {json.dumps(old)[:40]}")
        old.extend(new)
        return old
    if not isinstance(old, str) or not isinstance(new, str):
        raise _Unmergeable(f"{type(new).__name__} cannot be joined to {type(old).__name__}")
    return ",".join([old, new])


def merge_map(old: Any, new: Any, deep_merge: bool = False) -> Any:
    """Heat's merge_map: keys of ``new`` replace those of ``old`` (``null`` ones are
    skipped); with ``deep_merge`` nested maps merge, lists extend, strings concatenate."""
    if not old:
        return new
    if not isinstance(old, dict) or not isinstance(new, Mapping):
        raise _Unmergeable(f"{type(new).__name__} cannot be merged into {type(old).__name__}")
    for key, value in new.items():
        if value is None:
            continue
        if not deep_merge:
            old[key] = value
        elif isinstance(value, Mapping):
            before = old.get(key)
            old[key] = merge_map(before, value, deep_merge) if before else value
        elif isinstance(value, Sequence) and not isinstance(value, str):
            before = old.get(key)
            old[key] = merge_list(before, value) if before else value
        elif isinstance(value, str):
            before = old.get(key, "")
            if not isinstance(before, str):
                raise _Unmergeable(f"text cannot be appended to {type(before).__name__} at key {key}")
            old[key] = before + value
        else:
            old[key] = value
    return old


def _parse_value(value: Any, kind: str) -> Any:
    """Heat's parse_param: a json value as a map (its JSON text parsed); any other
    type's value must be text or a list."""
    if kind == "json":
        if not isinstance(value, str):
            value = json.dumps(value)
        if value:
            try:
                return json.loads(value)
            except ValueError as error:
                raise ValueError(f"Invalid parameter in environment {error}.")
        return value
    if not isinstance(value, str | list):
        raise ValueError("Invalid parameter in environment .")
    return value


def _combine(old: dict[str, Any], key: str, value: Any, kind: str, deep_merge: bool) -> None:
    """Heat's param_merge, by the parameter's type."""
    value = _parse_value(value, kind)
    if kind == "json":
        old[key] = merge_map(old.get(key, {}), value, deep_merge)
    elif kind == "comma_delimited_list":
        old[key] = merge_list(old.get(key), value)
    elif kind == "string":
        before = old.get(key, "")
        if not isinstance(before, str) or not isinstance(value, str):
            raise _Unmergeable(f"{type(value).__name__} cannot be appended to {type(before).__name__}")
        old[key] = before + value
    elif kind == "number":
        try:
            old[key] = old.get(key, 0) + value
        except TypeError as error:
            raise _Unmergeable(str(error))
    else:
        raise TemplateError(f"Invalid merge strategy '{MERGE}' for parameter '{key}'.", path=f"parameter_merge_strategies.{key}", hint=f"a {kind} parameter can only be overwritten")


def merge_parameters(
    old: dict[str, Any],
    new: Mapping[str, Any],
    types: Mapping[str, str] | None,
    strategies_in_file: Mapping[str, Any],
    chosen: dict[str, str],
    file: str,
    section: str = "parameters",
) -> dict[str, Any]:
    """One file's ``parameters`` (or ``parameter_defaults``) merged into ``old``: Heat's
    merge_parameters. ``chosen`` records each parameter's strategy across files.
    ``types`` None (no template at hand): every key counts and is overwritten."""
    def declared(key: str, value: Any) -> bool:
        return value is not None and (types is None or key in types)

    for key, value in new.items():
        if not declared(key, value):
            continue
        strategy = merge_strategy(strategies_in_file, key, chosen)
        if key not in chosen:
            chosen[key] = strategy
        elif strategy != chosen[key]:
            raise TemplateError(
                f"Conflicting merge strategy '{strategy}' for parameter '{key}' in file '{file}'.",
                path=f"parameter_merge_strategies.{key}",
                hint=f"an earlier environment file chose '{chosen[key]}' for it; a parameter keeps the strategy it was first given",
            )
    if not old:
        return dict(new)
    for key, value in new.items():
        if not declared(key, value):
            continue
        strategy = chosen[key] if types is not None else OVERWRITE
        if strategy == OVERWRITE:
            old[key] = value
            continue
        assert types is not None  # without them every strategy is overwrite
        try:
            _combine(old, key, value, types[key], deep_merge=strategy == DEEP_MERGE)
        except ValueError as error:
            raise TemplateError(str(error), path=f"{section}.{key}", hint=f"the {types[key]} value given in file '{file}' cannot be {strategy.replace('_', ' ')}d")
        except _Unmergeable as error:
            raise TemplateError(
                f"Cannot {strategy.replace('_', ' ')} parameter '{key}' from file '{file}': {error}",
                path=f"{section}.{key}",
            )
    return old


def merge_environments(environments: Sequence[tuple[str, Environment]], types: Mapping[str, str] | None = None, loaded: bool = True) -> Environment:
    """Environment files combined in order (Heat's merge_environments), as one
    environment to store. ``types``: the parameter types of the stack's template and of
    the templates in its files (``parameter_types``). Not ``loaded``: the registry keeps
    its ``null`` entries, to remove mappings when it is loaded over a stack's own
    environment (a PATCH update, ``Environment.merge``)."""
    sections: dict[str, Any] = {"parameters": {}, "parameter_defaults": {}, "resource_registry": {}, "event_sinks": [], "encrypted_param_names": [], "requires": {}}
    chosen: dict[str, str] = {}
    for file, environment in environments:
        data = copy.deepcopy(environment.to_dict())
        strategies = data.pop("parameter_merge_strategies", None) or {}
        for section, value in data.items():
            if not value:
                continue
            if section in ("parameters", "parameter_defaults"):
                sections[section] = merge_parameters(sections[section], value, types, strategies, chosen, file, section)
            elif isinstance(value, list):
                # Heat's merge_map fails on two lists; one after the other is what was meant.
                sections[section] = sections[section] + value
            else:
                sections[section] = merge_map(sections[section], value)
    return Environment(
        parameters=sections["parameters"],
        parameter_defaults=sections["parameter_defaults"],
        resource_registry=load_registry({}, sections["resource_registry"]) if loaded else sections["resource_registry"],
        event_sinks=sections["event_sinks"],
        encrypted_param_names=sections["encrypted_param_names"],
        requires=sections["requires"],  # key by key, the later file winning
    )


def parameter_types(template_parameters: Mapping[str, Any], files: Mapping[str, str] | None = None) -> dict[str, str]:
    """Parameter name -> type for merging: Heat's all_param_schemata. The templates in
    ``files`` (nested ones) count; the stack's own template wins. A file that is not a
    template is skipped."""
    types: dict[str, str] = {}
    for name, text in (files or {}).items():
        try:
            data = loader.parse(text, name).data
        except Exception:  # noqa: BLE001 - Heat skips what does not parse; so do we
            continue
        if not isinstance(data, Mapping) or not any(key in data for key in _TEMPLATE_VERSION_KEYS):
            continue
        declared = data.get("parameters", data.get("Parameters"))
        if not isinstance(declared, Mapping):
            continue
        for parameter, body in declared.items():
            kind = body.get("type", body.get("Type")) if isinstance(body, Mapping) else None
            if isinstance(kind, str) and kind in _TYPE_NAMES:
                types[str(parameter)] = _TYPE_NAMES[kind]
    for name, schema in template_parameters.items():
        types[name] = _TYPE_NAMES.get(schema.type, schema.type)
    return types
