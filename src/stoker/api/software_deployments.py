"""Software deployment routes of the Orchestration API v1, with Heat's paths, status
codes and bodies (``heat/api/openstack/v1/software_deployments.py``, api-ref
``software-config.inc``):

    GET    /v1/{tenant_id}/software_deployments                      200 {"software_deployments": [...]}
    POST   /v1/{tenant_id}/software_deployments                      200 {"software_deployment": {...}}
    GET    /v1/{tenant_id}/software_deployments/{deployment_id}      200 {"software_deployment": {...}}
    PUT    /v1/{tenant_id}/software_deployments/{deployment_id}      200 {"software_deployment": {...}}
    DELETE /v1/{tenant_id}/software_deployments/{deployment_id}      204
    GET    /v1/{tenant_id}/software_deployments/metadata/{server_id} 200 {"metadata": [config...]}

The list takes ``server_id`` to show one server's deployments. An unknown deployment is
404; a deployment of a config that does not exist is 400 (Heat's Invalid). Beyond Heat,
a create may give the deployment's ``id`` (as the resource plugins do) and an update
its ``updated_at``. What the caller's project does not own is as absent (issue 26,
``engine.software_deployments``): another project's deployment is 404, its config 400
as a missing one, its server 404 (create and metadata), and only a cloud admin names
another project as ``stack_user_project_id`` (403).

The request's shape (types, NUL characters) is checked here; Heat's rules for what a
deployment may hold are the SDK's, applied in ``engine.software_deployments``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.api import projects
from stoker.api.call import Call, Reply
from stoker.api.errors import BadRequestError
from stoker.api.openapi_components import (
    OBJECT,
    STRING,
    array,
    empty,
    nullable,
    obj,
    ok,
    operation,
    query,
    ref,
)
from stoker.api.operations import Operation
from stoker.api.software_configs import refuse_nul
from stoker.engine.software_deployments import StoredSoftwareDeployments
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.software_config import (
    DeploymentConfigNotFoundError,
    SoftwareDeploymentNotFoundError,
)

# The fields of a create and of an update (Heat's controller reads these, and ignores
# any other key of the body).
CREATE_FIELDS = ("id", "config_id", "server_id", "input_values", "action", "status", "status_reason", "stack_user_project_id")
UPDATE_FIELDS = ("config_id", "input_values", "output_values", "action", "status", "status_reason", "updated_at")
_MAPS = frozenset({"input_values", "output_values"})


def _deployments(call: Call) -> StoredSoftwareDeployments:
    caller = projects.project(call)  # only the caller's project's are found
    # masked: what a stack's hidden parameters produced is shown as ******.
    return StoredSoftwareDeployments(call.service.store, tenant=caller.id, admin=caller.admin, masked=True)


def _fields(call: Call, names: tuple[str, ...]) -> dict[str, Any]:
    """The body's given (non-null) values of ``names``, each of its expected type."""
    body = call.body
    if not isinstance(body, Mapping):
        raise BadRequestError(
            "The request body must be a JSON object describing the software deployment",
            hint='e.g. {"config_id": "<config id>", "server_id": "<server id>", "action": "CREATE", "status": "IN_PROGRESS"}',
        )
    fields: dict[str, Any] = {}
    for name in names:
        value = body.get(name)
        if value is None:
            continue
        expected, kind = (Mapping, "map") if name in _MAPS else (str, "string")
        if not isinstance(value, expected):
            raise BadRequestError(f'The software deployment\'s "{name}" must be a {kind}, not {type(value).__name__}')
        refuse_nul(value, f'The software deployment\'s "{name}"')
        fields[name] = value
    return fields


def _refused(error: ValidationError) -> BadRequestError:
    return BadRequestError(f"The software deployment is not valid: {error}")


def _deployment_id(call: Call) -> str:
    deployment_id = call.path("deployment_id")
    if "\x00" in deployment_id:
        raise SoftwareDeploymentNotFoundError(deployment_id)  # no deployment has such an id
    return deployment_id


def index(call: Call) -> dict[str, Any]:
    """``GET /software_deployments``: oldest first; ``server_id``: only that server's."""
    server_id = call.params.get("server_id") or None
    if server_id is not None:
        refuse_nul(server_id, 'The "server_id" query parameter')
    return {"software_deployments": _deployments(call).list(server_id=server_id)}


def create(call: Call) -> dict[str, Any]:
    """``POST /software_deployments``: 200 with the stored deployment."""
    fields = _fields(call, CREATE_FIELDS)
    for name in ("config_id", "server_id"):
        if name not in fields:
            raise BadRequestError(f'The software deployment\'s "{name}" is required')
    try:
        created = _deployments(call).create(
            server_id=fields["server_id"],
            config_id=fields["config_id"],
            input_values=fields.get("input_values"),
            action=fields.get("action", "INIT"),
            status=fields.get("status", "COMPLETE"),
            status_reason=fields.get("status_reason", ""),
            deployment_id=fields.get("id"),
            stack_user_project_id=fields.get("stack_user_project_id"),
        )
    except DeploymentConfigNotFoundError:
        raise
    except ValidationError as error:
        raise _refused(error) from None
    return {"software_deployment": created}


def show(call: Call) -> dict[str, Any]:
    return {"software_deployment": _deployments(call).show(_deployment_id(call))}


def update(call: Call) -> dict[str, Any]:
    """``PUT /software_deployments/{id}``: only the fields given non-empty values change
    (Heat's rule); 200 with the deployment."""
    fields = _fields(call, UPDATE_FIELDS)
    try:
        updated = _deployments(call).update(_deployment_id(call), **fields)
    except DeploymentConfigNotFoundError:
        raise
    except ValidationError as error:
        raise _refused(error) from None
    return {"software_deployment": updated}


def delete(call: Call) -> Reply:
    _deployments(call).delete(_deployment_id(call))
    return Reply(204, empty=True)


def metadata(call: Call) -> dict[str, Any]:
    """``GET /software_deployments/metadata/{server_id}``: the configs deployed to the
    server, by config name, as its agent reads them."""
    server_id = call.path("server_id")
    refuse_nul(server_id, "The server id")
    return {"metadata": _deployments(call).metadata(server_id)}


COLLECTION = "/v1/{tenant_id}/software_deployments"
DEPLOYMENT = COLLECTION + "/{deployment_id}"
METADATA = COLLECTION + "/metadata/{server_id}"

_DEPLOYMENT = ok(obj({"software_deployment": ref("SoftwareDeployment")}))
_TEXT = nullable(STRING)

OPERATIONS = [
    Operation("GET", COLLECTION, index, "software_deployments:index", operation(
        "List the software deployments", ok(obj({"software_deployments": array(ref("SoftwareDeployment"))})), tag="software_deployments",
        parameters=[query("server_id", STRING, "only this server's")],
    )),
    Operation("POST", COLLECTION, create, "software_deployments:create", operation(
        "Create a software deployment", _DEPLOYMENT, tag="software_deployments",
        body=obj({"config_id": STRING, "server_id": STRING}, {"id": _TEXT, "input_values": nullable(OBJECT), "action": _TEXT, "status": _TEXT, "status_reason": _TEXT, "stack_user_project_id": _TEXT}),
        description=(
            "400 for a config that is not the project's (as for a missing one); 404 for a server of another project's stack; "
            "403 for a stack_user_project_id other than the caller's project, unless the caller is a cloud admin."
        ),
    )),
    Operation("GET", METADATA, metadata, "software_deployments:metadata", operation(
        "The configs deployed to a server, for its agent", ok(obj({"metadata": array(ref("SoftwareConfig"))})), tag="software_deployments",
        description="404 for a server of another project's stack.",
    )),
    Operation("GET", DEPLOYMENT, show, "software_deployments:show", operation("Show a software deployment", _DEPLOYMENT, tag="software_deployments")),
    Operation("PUT", DEPLOYMENT, update, "software_deployments:update", operation(
        "Update a software deployment", _DEPLOYMENT, tag="software_deployments",
        body=obj(optional={"config_id": _TEXT, "input_values": nullable(OBJECT), "output_values": nullable(OBJECT), "action": _TEXT, "status": _TEXT, "status_reason": _TEXT, "updated_at": _TEXT}),
    )),
    Operation("DELETE", DEPLOYMENT, delete, "software_deployments:delete", operation("Delete a software deployment", empty(204, "Deleted"), tag="software_deployments")),
]
