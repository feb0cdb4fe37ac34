"""Software config routes of the Orchestration API v1: list (``limit``, ``marker``),
create, show and delete, with Heat's paths, status codes and bodies
(``heat/api/openstack/v1/software_configs.py``, api-ref ``software-config.inc``):

    GET    /v1/{tenant_id}/software_configs              200 {"software_configs": [summary...]}
    POST   /v1/{tenant_id}/software_configs              200 {"software_config": {...}}
    GET    /v1/{tenant_id}/software_configs/{config_id}  200 {"software_config": {...}}
    DELETE /v1/{tenant_id}/software_configs/{config_id}  204; 404 when there is none

The request's shape is checked here; what a config may hold is checked where every
config is, in ``engine.software_configs`` (the same checks a resource's config gets).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.api import projects
from stoker.api.call import Call, Reply
from stoker.api.errors import BadRequestError
from stoker.api.openapi_components import (
    ANY,
    COUNT,
    OBJECT,
    STRING,
    array,
    empty,
    flag,
    nullable,
    obj,
    ok,
    operation,
    query,
    ref,
)
from stoker.api.operations import Operation
from stoker.engine.software_configs import MAX_NAME_LENGTH, StoredSoftwareConfigs


def _configs(call: Call, every_project: bool = False) -> StoredSoftwareConfigs:
    caller = projects.project(call)  # only the caller's project's are found
    # masked: what a stack's hidden parameters produced is shown as ******.
    return StoredSoftwareConfigs(call.service.store, tenant=caller.id, admin=caller.admin or every_project, masked=True)


def _text_field(body: Mapping[str, Any], key: str) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequestError(f'The software config\'s "{key}" must be a string, not {type(value).__name__}')
    if len(value) > MAX_NAME_LENGTH:
        raise BadRequestError(f'The software config\'s "{key}" is longer than {MAX_NAME_LENGTH} characters')
    return value


def refuse_nul(body: Any, what: str = "The software config") -> None:
    """A NUL character cannot be stored in PostgreSQL's JSON or text (SQLite would keep
    it): refused on every database alike, rather than a 500 on one of them."""
    pending = [body]
    while pending:
        value = pending.pop()
        if isinstance(value, str):
            if "\x00" in value:
                raise BadRequestError(f"{what} holds a NUL character (\\u0000), which cannot be stored")
        elif isinstance(value, Mapping):
            pending.extend(value.keys())
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)


def index(call: Call) -> dict[str, Any]:
    """``GET /software_configs``: summaries, newest first; ``limit`` and ``marker`` (a
    config id; an unknown one is ignored, as Heat ignores it). ``global_tenant``: every
    project's (Heat's global_index), once ``software_configs:global_index`` let the
    caller through (``api.call``; it denies everybody by default)."""
    every_project = call.bool_param("global_tenant")  # not a boolean: 400, as Heat
    limit = call.int_param("limit")
    marker = call.params.get("marker") or None
    return {"software_configs": _configs(call, every_project).list(limit=limit, marker=marker)}


def create(call: Call) -> dict[str, Any]:
    """``POST /software_configs``: 200 with the stored config, normalised as Heat stores it."""
    body = call.body
    if not isinstance(body, Mapping):
        raise BadRequestError("The request body must be a JSON object describing the software config", hint="e.g. {\"name\": \"c\", \"group\": \"script\", \"config\": \"#!/bin/sh\"}")
    refuse_nul(body)
    options = body.get("options")
    if options is not None and not isinstance(options, Mapping):
        raise BadRequestError(f'The software config\'s "options" must be a map, not {type(options).__name__}')
    created = _configs(call).create(
        name=_text_field(body, "name"),
        group=_text_field(body, "group"),
        config=body.get("config"),
        inputs=body.get("inputs"),
        outputs=body.get("outputs"),
        options=options,
    )
    return {"software_config": created}


def show(call: Call) -> dict[str, Any]:
    return {"software_config": _configs(call).show(call.path("config_id"))}


def delete(call: Call) -> Reply:
    _configs(call).delete(call.path("config_id"))
    return Reply(204, empty=True)


COLLECTION = "/v1/{tenant_id}/software_configs"
CONFIG = COLLECTION + "/{config_id}"

_CONFIG = ok(obj({"software_config": ref("SoftwareConfig")}))

OPERATIONS = [
    Operation("GET", COLLECTION, index, "software_configs:index", operation(
        "List the software configs", ok(obj({"software_configs": array(ref("SoftwareConfigSummary"))})), tag="software_configs",
        parameters=[query("limit", COUNT, "at most this many"), query("marker", STRING, "the id of the last config of the previous page"), flag("global_tenant", "every project's (denied by default)")],
    )),
    Operation("POST", COLLECTION, create, "software_configs:create", operation(
        "Create a software config", _CONFIG, tag="software_configs",
        body=obj(optional={"name": nullable({"type": "string", "maxLength": 255}), "group": nullable({"type": "string", "maxLength": 255}), "config": ANY, "inputs": nullable(array(OBJECT)), "outputs": nullable(array(OBJECT)), "options": nullable(OBJECT)}),
    )),
    Operation("GET", CONFIG, show, "software_configs:show", operation("Show a software config", _CONFIG, tag="software_configs")),
    Operation("DELETE", CONFIG, delete, "software_configs:delete", operation("Delete a software config", empty(204, "Deleted"), tag="software_configs")),
]
