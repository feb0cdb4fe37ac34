"""Request bodies: what a stack create, update, preview or validate carries, read as
Heat reads it (``heat/api/openstack/v1/stacks.py`` InstantiationData).

A body carries ``template`` (an object, or YAML/JSON text) or ``template_url``,
``files`` (name -> text), ``environment`` (object or text) or ``environment_files``
(names in ``files``, merged in order; then ``environment`` is ignored, as in Heat),
``parameters``, and the arguments ``disable_rollback``, ``timeout_mins``, ``tags``,
``clear_parameters``. ``template_url`` is refused: this server never fetches a URL
(heatclient and ``openstack stack`` read local files and send their text).

Every field is checked for its type and bounds here, before the service sees it: a
wrong type is a 400 naming the field, never an exception deeper down; a parameter
value nests no deeper than a template may.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stoker.api.call import check_document, parse_bool, parse_int
from stoker.api.errors import BadRequestError
from stoker.service import Source, check_stack_name
from stoker.template.loader import DEFAULT_MAX_DEPTH

# Heat's snapshot name column is a String(255).
MAX_SNAPSHOT_NAME = 255


@dataclass
class Instantiation:
    stack_name: str | None
    template: Source | None
    environments: list[Source]
    parameters: dict[str, Any]
    files: dict[str, str]
    # None: not given (a create then disables rollback, Heat's default; an update keeps
    # the stack's own setting).
    disable_rollback: bool | None = None
    timeout_mins: int | None = None
    tags: list[str] | None = None
    clear_parameters: list[str] = field(default_factory=list)
    adopt_data: dict[str, Any] | None = None
    # Heat's: an update that starts from the live objects (docs/drift.md).
    converge: bool = False
    # stoker's: the stack takes the live objects' values, the cloud is not changed.
    refresh_only: bool = False


def _mapping(body: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = body.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise BadRequestError(f"'{key}' must be a JSON object, not {type(value).__name__}")
    return dict(value)


def _source(value: Any, name: str, what: str) -> Source:
    if isinstance(value, Mapping):
        return Source(dict(value), name)
    if isinstance(value, str | bytes):
        return Source(value, name)
    raise BadRequestError(f"{what} not in valid format: expected an object or YAML/JSON text, not {type(value).__name__}")


def _names(value: Any, key: str, what: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise BadRequestError(f"'{key}' must be a list of {what}, not {json.dumps(value)[:80]}")
    return value


def _parameters(body: Mapping[str, Any]) -> dict[str, Any]:
    """Parameter values: text, numbers, booleans, lists and maps (json and
    comma_delimited_list parameters), nested no deeper than a template may be."""
    parameters = _mapping(body, "parameters")
    for name, value in parameters.items():
        check_document(value, DEFAULT_MAX_DEPTH, what=f"The value of parameter {name}")
    return parameters


def _tags(value: Any) -> list[str]:
    """Heat's extract_tags: a list or comma-separated text; each tag a string of at most 80 characters."""
    if value is None or value == "":
        return []
    tags = value.split(",") if isinstance(value, str) else value
    if not isinstance(tags, list):
        raise BadRequestError(f"Invalid tags, not a list: {str(value)[:80]}")
    for tag in tags:
        if not isinstance(tag, str):
            raise BadRequestError(f'Invalid tag, "{str(tag)[:80]}" is not a string')
        if len(tag) > 80:
            raise BadRequestError(f'Invalid tag, "{tag[:80]}..." is longer than 80 characters')
    return [tag.strip() for tag in tags if tag.strip()]


def instantiation(body: Any, patch: bool = False, need_template: bool = True) -> Instantiation:
    """Read a create/update/preview/validate body. ``patch`` (PATCH): no template means
    the stack's own."""
    if body is None:
        body = {}
    if not isinstance(body, Mapping):
        raise BadRequestError("The request body must be a JSON object")
    files = _mapping(body, "files")
    for name, text in files.items():
        if not isinstance(text, str):
            raise BadRequestError(f"files.{name} must be text (the file's content), not {type(text).__name__}")
    template = None
    if "template" in body and body["template"] is not None:
        template = _source(body["template"], _template_name(body), "Template")
    elif body.get("template_url"):
        raise BadRequestError(
            f"template_url is not supported ({body['template_url']}): this server never fetches URLs; "
            "send the template itself in 'template' (heatclient and 'openstack stack' do for a local file)"
        )
    elif need_template and not patch and body.get("adopt_stack_data") is None:
        raise BadRequestError("No template specified")
    environments = []
    names = body.get("environment_files")
    if names:
        for name in _names(names, "environment_files", "names in 'files'"):
            if name not in files:
                raise BadRequestError(f"Environment file {name} is not in 'files'", hint="send each environment file's text in 'files' under its name")
            environments.append(Source(files[name], str(name)))
    elif body.get("environment") is not None:
        environments.append(_source(body["environment"], "environment", "Environment"))
    timeout = body.get("timeout_mins")
    clear = _names(body.get("clear_parameters") or [], "clear_parameters", "parameter names")
    stack_name = body.get("stack_name")
    if stack_name is not None and not isinstance(stack_name, str):
        raise BadRequestError(f"'stack_name' must be text, not {type(stack_name).__name__}")
    return Instantiation(
        stack_name=stack_name,
        template=template,
        environments=environments,
        parameters=_parameters(body),
        files=files,
        disable_rollback=parse_bool("disable_rollback", body["disable_rollback"]) if body.get("disable_rollback") is not None else None,
        timeout_mins=(parse_int("timeout_mins", timeout) or None) if timeout not in (None, "") else None,
        tags=_tags(body["tags"]) if body.get("tags") is not None else None,
        clear_parameters=clear,
        adopt_data=_adopt_data(body.get("adopt_stack_data")),
        converge=parse_bool("converge", body["converge"]) if body.get("converge") is not None else False,
        refresh_only=parse_bool("refresh_only", body["refresh_only"]) if body.get("refresh_only") is not None else False,
    )


# What a refresh may not be given: it changes no template, parameter or setting.
_NOT_WITH_REFRESH = (
    "template", "template_url", "environment", "environment_files", "files", "parameters", "clear_parameters",
    "disable_rollback", "timeout_mins", "tags", "converge",
)


def refresh_only(body: Any) -> bool:
    """Whether an update's body asks for a refresh only (stoker's ``refresh_only``:
    docs/drift.md), refused with what else it gives: a refresh takes the live objects
    into the stack as it is."""
    if not isinstance(body, Mapping) or body.get("refresh_only") is None:
        return False
    if not parse_bool("refresh_only", body["refresh_only"]):
        return False
    given = [key for key in _NOT_WITH_REFRESH if body.get(key) not in (None, {}, [], "", False)]
    if given:
        raise BadRequestError(
            f"refresh_only takes the live objects into the stack as it is: it cannot be given {', '.join(given)}",
            hint="send {\"refresh_only\": true} alone, or make an update without it",
        )
    return True


def _template_name(body: Mapping[str, Any]) -> str:
    """stoker's ``template_name``: the name the client read the template by (its path),
    so that the problems of a template sent as text are placed as ``name:line:col``, as
    the ``stoker`` command places them on its own. Only messages use it."""
    name = body.get("template_name")
    if name is None:
        return "template"
    if not isinstance(name, str) or not name or len(name) > 4096:
        raise BadRequestError("'template_name' must be the template's file name (text, at most 4096 characters)")
    return name


def template_of(data: Instantiation) -> Source:
    """The template a create, preview or validate needs (adopt data may stand in for
    it on a create, which then does not ask)."""
    if data.template is None:
        raise BadRequestError("No template specified")
    return data.template


def _adopt_data(value: Any) -> dict[str, Any] | None:
    """``adopt_stack_data``: an object, or its JSON text (heatclient sends text); null is
    the same as absent."""
    if value is None:
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value, parse_constant=_not_a_number)
        except RecursionError:
            raise BadRequestError(f"Invalid adopt data: nested more than {DEFAULT_MAX_DEPTH} levels deep")
        except ValueError as error:
            raise BadRequestError(f"Invalid adopt data: {error}")
        check_document(value, DEFAULT_MAX_DEPTH + 1, what="The adopt data")
    if not isinstance(value, Mapping):
        raise BadRequestError(f"Invalid adopt data: expected a JSON object, not {type(value).__name__}")
    if isinstance(value.get("template"), Mapping):
        # The template inside nests no deeper than one sent as text.
        check_document(value["template"], DEFAULT_MAX_DEPTH, what="The adopt data's template")
    return dict(value)


def _not_a_number(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def stack_name(data: Instantiation) -> str:
    if not data.stack_name:
        raise BadRequestError("No stack name specified")
    check_stack_name(data.stack_name)  # the embedded engine's words, so the CLI says the same
    return data.stack_name


def snapshot_name(body: Any) -> str | None:
    """The body of a snapshot create: {"name": text or null}."""
    if body is None:
        return None
    if not isinstance(body, Mapping):
        raise BadRequestError("The request body must be a JSON object")
    name = body.get("name")
    if name is not None and not isinstance(name, str):
        raise BadRequestError(f"The snapshot's 'name' must be text, not {type(name).__name__}")
    if name is not None and len(name) > MAX_SNAPSHOT_NAME:
        raise BadRequestError(f"The snapshot's 'name' is longer than {MAX_SNAPSHOT_NAME} characters")
    return name
