"""stoker's import route: ``POST /v1/{tenant_id}/imports`` makes a stack whose named
resources take over objects that exist already (docs/import.md).

The body is a create's (``stack_name``, ``template``, ``environment``, ``parameters``,
``files``) with ``resources``, resource name -> the object's id, and
``accept_differences`` (take the objects over although their live properties differ
from the template). It answers 201 with the new stack's id and link, as a create does;
the import's check and take-over go on in the stack's ADOPT action.
"""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from stoker.api import schemas
from stoker.api.call import Call, Reply, endpoint
from stoker.api.errors import BadRequestError


def _imports(body: Any) -> dict[str, str]:
    given = body.get("resources") if isinstance(body, dict) else None
    if not isinstance(given, dict) or not given:
        raise BadRequestError(
            "'resources' must map each resource to import to its object's id",
            hint='{"resources": {"web": "<server id>"}}',
        )
    for name, physical_id in given.items():
        if not isinstance(physical_id, str) or not physical_id.strip():
            raise BadRequestError(f"resources.{name} must be the object's id (non-empty text)")
    return dict(given)


def _request(call: Call) -> tuple[schemas.Instantiation, dict[str, str], bool]:
    body = call.body
    imports = _imports(body)
    data = schemas.instantiation(
        {key: value for key, value in body.items() if key not in ("resources", "accept_differences")}
    )
    accept = body.get("accept_differences")
    accepted = schemas.parse_bool("accept_differences", accept) if accept is not None else False
    return data, imports, accepted


def preview(call: Call) -> Any:
    """``POST /v1/{tenant_id}/imports/preview``: the import's plan (``{"plan": ...}``,
    docs/plans.md); the objects are read, nothing is made."""
    data, imports, accepted = _request(call)
    return call.service.plan_import(
        schemas.stack_name(data),
        schemas.template_of(data),
        imports,
        data.environments,
        data.parameters,
        files=data.files,
        accept_differences=accepted,
        project_id=call.context.tenant_id,
    )


def import_stack(call: Call) -> Reply:
    body = call.body
    imports = _imports(body)
    data = schemas.instantiation(
        {
            key: value
            for key, value in body.items()
            if key not in ("resources", "accept_differences")
        }
    )
    accept = body.get("accept_differences")
    stack = call.service.import_stack(
        schemas.stack_name(data),
        schemas.template_of(data),
        imports,
        data.environments,
        data.parameters,
        files=data.files,
        accept_differences=schemas.parse_bool("accept_differences", accept)
        if accept is not None
        else False,
        project_id=call.context.tenant_id,
    )
    href = call.stack_url(stack)
    return Reply(201, {"stack": {"id": stack.id, "links": [call.link(href)]}}, {"Location": href})


routes = [
    Route("/v1/{tenant_id}/imports", endpoint(import_stack), methods=["POST"]),
    Route("/v1/{tenant_id}/imports/preview", endpoint(preview), methods=["POST"]),
]
