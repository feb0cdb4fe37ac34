"""The CloudFormation-compatible metadata API heat-api-cfn serves, the part agents use:
``DescribeStackResource`` at ``/cfn/v1/`` (GET or POST, query or form parameters), as
os-collect-config's ``cfn`` collector and heat-cfntools' ``cfn-get-metadata`` and
``cfn-init`` call it for a POLL_SERVER_CFN server's or an AWS::CloudFormation::Init
resource's ``Metadata``.

Requests carry no token: they are signed with a stack user's EC2 keypair (AWS signature
version 2), and the signature is verified by Keystone's ``/v3/ec2tokens`` (as Heat's
``ec2token`` middleware does), which answers with a token of the keypair's user and
project. Keystone lets only services do that, so the API needs ``stoker serve
--auth-mode keystone``: it asks with stoker's service user's credentials. The stack is
then found by name in the token's project, and its resource's metadata is answered as
JSON (``Content-Type`` or ``Accept`` naming JSON, as the cfn collector sends) or as the
AWS XML heat-cfntools parses. Errors are AWS's: ``ErrorResponse`` with a code and a
message.

Must not: log a signature or a secret key.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from xml.sax.saxutils import escape

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from stoker.reads import Project
from stoker.store import StackRecord

LOG = logging.getLogger(__name__)

PATH = "/cfn/v1/"
ACTION = "DescribeStackResource"
# Roles that may read a stack's resource metadata through it (Heat's resource:metadata).
READING_ROLES = {"heat_stack_user", "reader", "member", "admin"}


class CfnError(Exception):
    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _error(error: CfnError, as_json: bool) -> Response:
    body = {
        "ErrorResponse": {"Error": {"Type": "Sender", "Code": error.code, "Message": error.message}}
    }
    if as_json:
        return Response(json.dumps(body), status_code=error.status, media_type="application/json")
    xml = f"<ErrorResponse><Error><Type>Sender</Type><Code>{escape(error.code)}</Code><Message>{escape(error.message)}</Message></Error></ErrorResponse>"
    return Response(xml, status_code=error.status, media_type="application/xml")


def _verify(verifier: Any, request: Request, params: dict[str, str]) -> dict[str, Any]:
    """Keystone's token for the keypair that signed the request (``ec2tokens``)."""
    if verifier is None:
        raise CfnError(
            403,
            "AccessDenied",
            "The CFN API verifies signatures with Keystone: serve with --auth-mode keystone",
        )
    signature, access = params.get("Signature"), params.get("AWSAccessKeyId")
    if not signature or not access:
        raise CfnError(
            403,
            "MissingAuthenticationToken",
            "The request must be signed: Signature and AWSAccessKeyId are required",
        )
    credentials = {
        "access": access,
        "signature": signature,
        "host": request.headers.get("host", ""),
        "verb": request.method,
        "path": request.url.path,
        "params": {key: value for key, value in params.items() if key != "Signature"},
        "headers": {},
        "body_hash": "",
    }
    url = f"{str(verifier.auth_url).rstrip('/').removesuffix('/v3')}/v3/ec2tokens"
    answer = verifier.service_session().post(
        url, json={"credentials": credentials}, raise_exc=False
    )
    if answer.status_code != 200:
        LOG.info(
            "Keystone refused an EC2 signature for access key %s: %s", access, answer.status_code
        )
        raise CfnError(
            403,
            "SignatureDoesNotMatch",
            "The request signature does not match: Keystone refused the keypair's signature",
        )
    return answer.json()["token"]


def _stack(service: Any, token: dict[str, Any], name: str) -> StackRecord:
    project_id = str((token.get("project") or {}).get("id") or "")
    roles = {role.get("name") for role in token.get("roles") or []}
    if not roles & READING_ROLES:
        raise CfnError(
            403, "AccessDenied", "The keypair's user may not read this stack's resources"
        )
    try:
        return service.get_stack(name, Project(project_id))
    except Exception as error:
        raise CfnError(400, "ValidationError", f"Stack with id {name} does not exist") from error


def describe(service: Any, stack: StackRecord, logical_id: str) -> dict[str, Any]:
    record = next((r for r in service.list_resources(stack.id) if r.name == logical_id), None)
    if record is None:
        raise CfnError(
            400, "ValidationError", f"Resource {logical_id} does not exist in stack {stack.name}"
        )
    metadata = service.resource_metadata(stack, logical_id)
    return {
        "StackId": stack.id,
        "StackName": stack.name,
        "LogicalResourceId": record.name,
        "PhysicalResourceId": record.physical_resource_id or "",
        "ResourceType": record.type,
        "ResourceStatus": record.state,
        "ResourceStatusReason": record.status_reason or "",
        "LastUpdatedTimestamp": str(record.updated_at or record.created_at or ""),
        "Description": "",
        "Metadata": metadata,
    }


async def serve(request: Request) -> Response:
    params = dict(request.query_params)
    if request.method == "POST":
        params.update({key: str(value) for key, value in (await request.form()).items()})
    accepts = f"{request.headers.get('content-type', '')} {request.headers.get('accept', '')}"
    as_json = "json" in accepts
    try:
        if params.get("Action") != ACTION:
            raise CfnError(
                400,
                "InvalidAction",
                f"The action {params.get('Action')!r} is not valid for this web service: stoker's CFN API serves {ACTION} only",
            )
        for required in ("StackName", "LogicalResourceId"):
            if not params.get(required):
                raise CfnError(
                    400, "MissingParameter", f"The request must contain the parameter {required}"
                )
        token = await run_in_threadpool(
            _verify, getattr(request.app.state, "cfn_verifier", None), request, params
        )
        service = request.app.state.service
        stack = await run_in_threadpool(_stack, service, token, params["StackName"])
        detail = await run_in_threadpool(describe, service, stack, params["LogicalResourceId"])
    except CfnError as error:
        return _error(error, as_json)
    body = {
        "DescribeStackResourceResponse": {
            "DescribeStackResourceResult": {"StackResourceDetail": detail}
        }
    }
    if as_json:
        return Response(json.dumps(body), media_type="application/json")
    fields = "".join(
        f"<{key}>{escape(json.dumps(value) if key == 'Metadata' else str(value))}</{key}>"
        for key, value in detail.items()
    )
    xml = f'<DescribeStackResourceResponse xmlns="http://cloudformation.amazonaws.com/doc/2010-05-15/"><DescribeStackResourceResult><StackResourceDetail>{fields}</StackResourceDetail></DescribeStackResourceResult></DescribeStackResourceResponse>'
    return Response(xml, media_type="application/xml")


routes = [Route(PATH, serve, methods=["GET", "POST"])]
