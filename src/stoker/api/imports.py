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

from stoker.api import schemas
from stoker.api.call import Call, Reply
from stoker.api.errors import BadRequestError
from stoker.api.openapi_components import (
    IMPLEMENTATIONS,
    LOCATION,
    OBJECT,
    STRING,
    array,
    obj,
    ok,
    operation,
    ref,
)
from stoker.api.operations import Operation


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


# The create's body, and the objects its resources take over.
_BODY = {"allOf": [ref("StackCreate"), obj(
    {"resources": {"type": "object", "additionalProperties": STRING, "description": "resource name -> the id of the object it takes over"}},
    optional={"accept_differences": {"type": "boolean", "description": "take the objects over although their live properties differ from the template"}},
)]}

OPERATIONS = [
    Operation("POST", "/v1/{tenant_id}/imports", import_stack, "stacks:import", operation(
        "Import: a stack whose named resources take over objects that exist already (stoker's)",
        ok(obj({"stack": obj({"id": STRING, "links": array(ref("Link"))})}), "Created: the stack's import goes on", 201, LOCATION),
        tag="stacks", body=_BODY, faults=(409,),
        description="400 for a resource the template does not have, a type that cannot read its live object, an empty id, an object that does not exist, or differences not accepted: no stack is made. The stack's ADOPT action checks the objects again as it starts.",
    )),
    Operation("POST", "/v1/{tenant_id}/imports/preview", preview, "stacks:import", operation(
        "The plan of an import: what it takes over (and how it differs from the template) and makes (stoker's)",
        ok(obj({"plan": ref("Plan")}, {"resource_changes": OBJECT, "implementations": IMPLEMENTATIONS})),
        tag="stacks", body=_BODY, faults=(409,),
        description="400 as the import's (an object that does not exist included); differences are shown, not refused.",
    )),
]
