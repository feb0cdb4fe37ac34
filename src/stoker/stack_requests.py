"""A stack request's pieces, and the parts of Heat's answers made from them without an
engine: the stack name rule, a template's or environment's ``Source``, a NUL character
refused in data a client already parsed, a new stack's row, and the parameters,
environment and nested parameters of Heat's template-validate answer.

Must not: touch the store or run anything (``service`` does, with these).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stoker.engine.states import Action, Status
from stoker.engine.validation import ValidationResult
from stoker.environment.environment import Environment
from stoker.identifiers import new_id
from stoker.masking import MASK
from stoker.sdk.exceptions import ValidationError
from stoker.store import StackRecord
from stoker.template import loader
from stoker.template.errors import TemplateError
from stoker.template.hot import Template

_STACK_NAME = re.compile(r"^[a-zA-Z][a-zA-Z0-9_.-]{0,254}$")


def check_stack_name(name: str | None) -> None:
    """Heat's stack name rule, in the words the API and the embedded engine both say."""
    if not _STACK_NAME.fullmatch(name or ""):
        raise ValidationError(
            f'Invalid stack name "{(name or "")[:300]}"',
            hint="a stack name starts with a letter and has only letters, digits, '_', '-' and '.', at most 255 characters",
        )


@dataclass
class Source:
    """Text of a template or environment and where it came from (for messages).

    ``text`` may also be data a client already parsed (the API's JSON objects): its
    problems are then named by template path only, as no line of it is the user's. Or a
    template the CLI parsed with the service's limits (cli/files.py): it is not parsed twice."""

    text: str | bytes | Mapping[str, Any] | loader.Document
    name: str | None = None


def refuse_nul(data: Any, where: str | None) -> None:
    """Refuse data a request gives already parsed (a template or environment object,
    files, parameter values) when a string of it holds a NUL character, at its path:
    as the loader refuses one in text (PostgreSQL cannot store it; no database gets it)."""
    path = loader.nul_place(data) if data else None
    if path is not None:
        shown = loader.shown_path(path)
        place = f"{where}.{shown}" if where and shown else (where or shown or None)
        raise TemplateError(
            "A NUL character (\\0) is not allowed in a template, environment, file or parameter value",
            path=place,
            hint=loader.NUL_HINT,
        )


def new_stack(
    name: str,
    parameters: dict[str, Any],
    disable_rollback: bool,
    timeout_mins: int | None,
    tags: Sequence[str],
) -> StackRecord:
    """A stack row before its first action (INIT_COMPLETE; the template id is set later)."""
    return StackRecord(
        id=new_id(),
        name=name,
        action=str(Action.INIT),
        status=str(Status.COMPLETE),
        status_reason="",
        raw_template_id=0,
        parameters=parameters,
        disable_rollback=disable_rollback,
        timeout_mins=timeout_mins,
        tags=list(tags),
    )


def validate_parameters(
    template: Template, given: Mapping[str, Any], defaults: Mapping[str, Any]
) -> dict[str, Any]:
    """Heat's format_validate_parameter for each of the template's parameters: the
    ``Default`` an environment's parameter_defaults sets, else the template's; ``Value``
    only for one the environment (or the request) gives a value, as Heat's
    ``if param.user_value``; a hidden one's masked."""
    parameters = {}
    for key, schema in template.parameters.items():
        entry = schema.to_validate_dict()
        if defaults.get(key) is not None:
            entry["Default"] = MASK if schema.hidden else defaults[key]
        if given.get(key):
            entry["Value"] = MASK if schema.hidden else given[key]
        parameters[key] = entry
    return parameters


def validate_environment(
    template: Template, environment: Environment, given: Mapping[str, Any]
) -> dict[str, Any]:
    """The environment as Heat's validate returns it (``user_env_as_dict``): four keys;
    the registry with its ``resources`` section, and each template file the template uses
    as a type (``inner.yaml: inner.yaml``), which Heat's registry records when asked."""
    registry = dict(environment.resource_registry)
    registry.setdefault("resources", {})
    for definition in template.resources.values():
        kind = definition.resource_type
        if isinstance(kind, str) and kind.endswith((".yaml", ".template")) and kind not in registry:
            registry[kind] = kind
    return {
        "resource_registry": registry,
        "parameters": dict(given),
        "parameter_defaults": dict(environment.parameter_defaults),
        "event_sinks": list(environment.event_sinks),
    }


def nested_parameters(result: ValidationResult) -> dict[str, Any]:
    """Heat's ``NestedParameters``: per nested stack resource, its type, the nested
    template's description and parameters (``Value``: what the parent gives it)."""
    nested = {}
    for name, child in result.nested.items():
        parameters = validate_parameters(child.template, child.given, child.defaults)
        body: dict[str, Any] = {
            "Type": result.template.resources[name].resource_type,
            "Description": child.template.description or "No description",
            "Parameters": parameters,
        }
        if child.template.parameter_groups:
            body["ParameterGroups"] = child.template.parameter_groups
        if child.nested:
            body["NestedParameters"] = nested_parameters(child)
        nested[name] = body
    return nested
