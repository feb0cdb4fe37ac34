"""Request bodies: what a stack create, update, preview or validate carries, read as
Heat reads it (``heat/api/openstack/v1/stacks.py`` InstantiationData).

A body carries ``template`` (an object, or YAML/JSON text) or ``template_url``,
``files`` (name -> text), ``environment`` (object or text) or ``environment_files``
(names in ``files``, merged in order; then ``environment`` is ignored, as in Heat),
``parameters``, and the arguments ``disable_rollback``, ``timeout_mins``, ``tags``,
``clear_parameters``. ``template_url`` is refused: this server never fetches a URL
(heatclient and ``openstack stack`` read local files and send their text).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stoker.api.call import parse_bool, parse_int
from stoker.api.errors import BadRequestError
from stoker.service import Source


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


def _tags(value: Any) -> list[str]:
    """Heat's extract_tags: a list or comma-separated text; each tag a string of at most 80 characters."""
    if value is None or value == "":
        return []
    tags = value.split(",") if isinstance(value, str) else value
    if not isinstance(tags, list):
        raise BadRequestError(f"Invalid tags, not a list: {value}")
    for tag in tags:
        if not isinstance(tag, str):
            raise BadRequestError(f'Invalid tag, "{tag}" is not a string')
        if len(tag) > 80:
            raise BadRequestError(f'Invalid tag, "{tag}" is longer than 80 characters')
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
            raise BadRequestError(f"files.{name} must be text (the file's content)")
    template = None
    if "template" in body and body["template"] is not None:
        template = _source(body["template"], "template", "Template")
    elif body.get("template_url"):
        raise BadRequestError(
            f"template_url is not supported ({body['template_url']}): this server never fetches URLs; "
            "send the template itself in 'template' (heatclient and 'openstack stack' do for a local file)"
        )
    elif need_template and not patch and "adopt_stack_data" not in body:
        raise BadRequestError("No template specified")
    environments = []
    names = body.get("environment_files")
    if names:
        if not isinstance(names, list):
            raise BadRequestError("environment_files must be a list of names in 'files'")
        for name in names:
            if name not in files:
                raise BadRequestError(f"Environment file {name} is not in 'files'", hint="send each environment file's text in 'files' under its name")
            environments.append(Source(files[name], str(name)))
    elif body.get("environment") is not None:
        environments.append(_source(body["environment"], "environment", "Environment"))
    timeout = body.get("timeout_mins")
    clear = body.get("clear_parameters") or []
    if not isinstance(clear, list):
        raise BadRequestError("clear_parameters must be a list of parameter names")
    adopt_data = body.get("adopt_stack_data")
    if isinstance(adopt_data, str):
        try:
            adopt_data = json.loads(adopt_data)
        except ValueError as error:
            raise BadRequestError(f"Invalid adopt data: {error}")
    stack_name = body.get("stack_name")
    return Instantiation(
        stack_name=str(stack_name) if stack_name is not None else None,
        template=template,
        environments=environments,
        parameters=_mapping(body, "parameters"),
        files=files,
        disable_rollback=parse_bool("disable_rollback", body["disable_rollback"]) if body.get("disable_rollback") is not None else None,
        timeout_mins=(parse_int("timeout_mins", timeout) or None) if timeout not in (None, "") else None,
        tags=_tags(body["tags"]) if body.get("tags") is not None else None,
        clear_parameters=[str(name) for name in clear],
        adopt_data=adopt_data,
    )


def stack_name(data: Instantiation) -> str:
    if not data.stack_name:
        raise BadRequestError("No stack name specified")
    return data.stack_name
