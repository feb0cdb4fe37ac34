"""The OpenAPI 3.1 document of the Orchestration API v1, served at ``GET /openapi.json``;
and the version document at ``GET /``.

It describes every route the app serves: paths, methods, path and query parameters,
request bodies, and each response's status and body in Heat's shapes (the api-ref's,
``heat/api/openstack/v1/*`` and ``heat/engine/api.py``), a 4xx always being Heat's fault
body (``api.errors.fault``). It names the ``X-Auth-Token`` header as the credential and
marks the routes that need none (rule ``api.operations.PUBLIC``) and the one where it
is optional (``api.policy.SIGNAL_RULE``).

Each operation is described where it is declared, beside its handler, in its route
module's ``OPERATIONS`` (``api.operations``), with the schemas, parameters and responses
of ``api.openapi_components``; this module puts them together, section by section
(``SECTIONS``), with the path parameters of each path, and the components. The
descriptions are data written by hand, so that they say what a client may rely on rather
than what the code happens to do. Two tests keep the two honest: every route of the app
is in the document and every path of the document is a route
(``tests/unit/api/test_openapi.py``), and a schemathesis run checks the running server's
answers against it (``tests/acceptance/test_openapi.py``).

What this module must not do: decide anything about a request. It describes; the route
modules serve.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable

from starlette.requests import Request
from starlette.responses import JSONResponse

from stoker.api import (
    capabilities,
    catalog,
    cfn,
    imports,
    plans,
    policy,
    resources,
    software_configs,
    software_deployments,
    stacks,
)
from stoker.api.openapi_components import (
    NO_TOKEN,
    SCHEMAS,
    STRING,
    TOKEN,
    OperationSpec,
    Schema,
    array,
    obj,
    ok,
    path_parameters,
    ref,
)
from stoker.api.operations import PUBLIC, Operation, Public

OPENAPI_PATH = "/openapi.json"
# The CFN API's paths (api/cfn.py: its errors are AWS's, not a Fault).
CFN_PATHS = cfn.PATHS


async def versions(request: Request) -> JSONResponse:
    """``GET /``: the API versions (Heat answers 300 Multiple Choices)."""
    href = str(request.base_url).rstrip("/") + "/v1/"
    body = {"versions": [{"status": "CURRENT", "id": "v1.0", "links": [{"href": href, "rel": "self"}]}]}
    return JSONResponse(body, status_code=300)


async def serve_document(request: Request) -> JSONResponse:
    """``GET /openapi.json``: the document, no token needed (as ``GET /``)."""
    return JSONResponse(document(str(request.base_url)))


# Neither reads a body or a parameter: nothing to refuse, no fault.
OPERATIONS = [
    Operation("GET", "/", versions, PUBLIC, {
        "summary": "The API versions", "tags": ["versions"], "security": NO_TOKEN,
        "responses": ok(obj({"versions": array(obj({"id": STRING, "status": STRING, "links": array(ref("Link"))}))}), "Multiple Choices: the versions", 300),
    }, plain=True),
    Operation("GET", OPENAPI_PATH, serve_document, PUBLIC, {
        "summary": "This document", "tags": ["versions"], "security": NO_TOKEN,
        "responses": ok({"type": "object", "required": ["openapi", "paths"]}, "The OpenAPI document"),
    }, plain=True),
]

# The document's sections, in its order (the app matches the routes in api.routes's).
SECTIONS = [
    OPERATIONS, stacks.OPERATIONS, resources.OPERATIONS, cfn.OPERATIONS, catalog.OPERATIONS,
    software_configs.OPERATIONS, software_deployments.OPERATIONS, plans.OPERATIONS, imports.OPERATIONS, capabilities.OPERATIONS,
]


def _paths(operations: Iterable[Operation]) -> dict[str, dict[str, Schema]]:
    """The paths: each operation's description with its rule (``actions:<action>`` for
    the one whose body names it), the path's parameters first."""
    paths: dict[str, dict[str, Schema]] = {}
    for op in operations:
        spec = op.spec
        if spec is None:
            continue  # not API: the type reference's HTML pages
        if isinstance(spec, OperationSpec):
            rule = None if isinstance(op.rule, Public) else "actions:<action>" if op.rule == policy.ACTIONS else op.rule
            spec = spec.document(rule)
        shared = path_parameters(op.path)
        paths.setdefault(op.path, {})[op.method.lower()] = {**spec, "parameters": shared + spec.get("parameters", [])} if shared else spec
    return paths


_DOCUMENT: Schema = {
    "openapi": "3.1.0",
    "info": {
        "title": "stoker: the Orchestration API v1",
        "version": "1.0",
        "description": (
            "OpenStack Heat's Orchestration API v1 as stoker serves it, and stoker's own routes (docs/api.md). "
            "Every 4xx answers with Heat's fault body. Routes under /v1/{tenant_id} need an X-Auth-Token "
            "(in auth mode none, any token or none at all is accepted; docs/auth.md)."
        ),
    },
    "tags": [{"name": name} for name in ("versions", "stacks", "snapshots", "resources", "events", "signals", "templates", "resource_types", "build_info", "services", "software_configs", "software_deployments", "capabilities")],
    "paths": _paths(operation for section in SECTIONS for operation in section),
    "components": {
        "schemas": SCHEMAS,
        "securitySchemes": {"token": {"type": "apiKey", "in": "header", "name": "X-Auth-Token", "description": "A Keystone token, or a static token (docs/auth.md)"}},
    },
    "security": TOKEN,
}


def document(server_url: str | None = None) -> Schema:
    """The OpenAPI document (a copy, the caller's to change); ``server_url``: where the
    API is served, as its ``servers``."""
    result = copy.deepcopy(_DOCUMENT)
    if server_url:
        result["servers"] = [{"url": server_url.rstrip("/") or "/"}]
    return result
