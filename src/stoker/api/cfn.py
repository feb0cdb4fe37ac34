"""The CloudFormation-compatible API heat-api-cfn serves, the part a server's agents use:
``DescribeStackResource``, at ``/cfn/v1/`` and at ``/v1/`` (heat-cfntools' ``cfn-init``
and ``cfn-get-metadata`` call ``<host>:<port>/v1/``, a path they do not let be changed),
GET or POST, its parameters in the query or a form body, as Heat's ``StackController``
takes them.

A request carries no token: it is signed with a server's EC2 keypair (AWS signature
version 2 with its fields in the query, as os-collect-config's ``cfn`` collector signs;
or version 4 in the ``Authorization`` header, as boto, under heat-cfntools, signs). The
keypair is one stoker issued (``server_transport.give_stack_user``) and keeps the secret
of, so:

- in keystone mode the signature is verified by Keystone's ``/v3/ec2tokens``, asked with
  stoker's service user's session, as Heat's ``ec2token`` middleware does (the keypair
  is also the stack user's Keystone EC2 credential);
- in none and token modes stoker verifies it itself with keystoneclient's ``Ec2Signer``
  (the code Keystone verifies with), trying the host without its port too, as Keystone
  does, and refusing a signed timestamp more than 15 minutes away (Keystone's
  ``auth_ttl``).

Authorisation is Heat's for stack users: a keypair reads its own server's resource only
(Heat's ``_authorize_stack_user``); anything else is AccessDenied. The answer is Heat's:
``DescribeStackResourceResponse`` in XML (``Metadata`` as JSON text), or in JSON with
``ContentType=JSON`` (as boto asks); errors are Heat's AWS ``ErrorResponse``.

Must not: log or answer a signature or a secret key.
"""

from __future__ import annotations

import datetime
import hashlib
import hmac
import json
import logging
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl
from xml.etree import ElementTree

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from stoker.api.openapi_components import NO_TOKEN, OBJECT, STRING, obj, query
from stoker.api.operations import PUBLIC, Operation
from stoker.api.views import isotime
from stoker.store import ResourceRecord, StackRecord

LOG = logging.getLogger(__name__)

PATHS = ("/cfn/v1/", "/v1/")
ACTION = "DescribeStackResource"
# Seconds a signed timestamp may be away from now (Keystone's [credential] auth_ttl).
SIGNATURE_TTL_S = 15 * 60
# Bytes of a request body: a DescribeStackResource form is a few hundred.
MAX_BODY_BYTES = 64 * 1024
# Keys whose values Heat's serializer writes as JSON text inside the XML.
JSON_ONLY_KEYS = ("TemplateBody", "Metadata")


class CfnError(Exception):
    """An AWS error as Heat's ``heat.api.aws.exception`` answers it: its HTTP status,
    its code (the ``title``), its fixed explanation and a detail after a colon."""

    def __init__(
        self,
        status: int,
        code: str,
        explanation: str,
        detail: str | None = None,
        sender: bool = True,
    ):
        super().__init__(explanation)
        self.status, self.code, self.explanation, self.detail = status, code, explanation, detail
        self.type = "Sender" if sender else "Server"

    @property
    def message(self) -> str:
        return f"{self.explanation}:{self.detail}" if self.detail else self.explanation


def incomplete_signature() -> CfnError:
    return CfnError(
        400, "IncompleteSignature", "The request signature does not conform to AWS standards"
    )


def missing_authentication_token() -> CfnError:
    return CfnError(
        403, "MissingAuthenticationToken", "Does not contain a valid AWS Access Key or certificate"
    )


def invalid_client_token_id() -> CfnError:
    return CfnError(
        403, "InvalidClientTokenId", "The certificate or AWS Key ID provided does not exist"
    )


def signature_does_not_match(detail: str | None = None) -> CfnError:
    return CfnError(
        403,
        "SignatureDoesNotMatch",
        "The request signature we calculated does not match the signature you provided",
        detail,
    )


def access_denied(detail: str | None = None) -> CfnError:
    return CfnError(403, "AccessDenied", "User is not authorized to perform action", detail)


def request_expired() -> CfnError:
    return CfnError(400, "RequestExpired", "Request expired or more than 15mins in the future")


# -- answers -----------------------------------------------------------------------------


def _element(parent: ElementTree.Element, value: Any) -> None:
    """Heat's ``XMLResponseSerializer.object_to_element``."""
    if isinstance(value, list):
        for item in value:
            _element(ElementTree.SubElement(parent, "member"), item)
    elif isinstance(value, dict):
        for key, item in value.items():
            child = ElementTree.SubElement(parent, key)
            if key in JSON_ONLY_KEYS:
                if item:
                    child.text = json.dumps(item)
            else:
                _element(child, item)
    else:
        parent.text = str(value)


def to_xml(body: Mapping[str, Any]) -> bytes:
    ((root_name, content),) = body.items()
    root = ElementTree.Element(root_name)
    _element(root, content)
    return ElementTree.tostring(root)


def answer(body: Mapping[str, Any], as_json: bool, status: int = 200) -> Response:
    if as_json:
        return Response(json.dumps(body), status_code=status, media_type="application/json")
    return Response(to_xml(body), status_code=status, media_type="application/xml")


def error_answer(error: CfnError, as_json: bool) -> Response:
    body = {
        "ErrorResponse": {
            "Error": {"Type": error.type, "Code": error.code, "Message": error.message}
        }
    }
    return answer(body, as_json, error.status)


# -- the signature -----------------------------------------------------------------------


def _authorization(headers: Mapping[str, str], name: str) -> str | None:
    found = re.search(rf"{name}=([^,\s]+)", headers.get("authorization", ""))
    return found.group(1) if found else None


def signature_of(params: Mapping[str, str], headers: Mapping[str, str]) -> str | None:
    return (
        params.get("Signature")
        or params.get("X-Amz-Signature")
        or _authorization(headers, "Signature")
    )


def access_of(params: Mapping[str, str], headers: Mapping[str, str]) -> str | None:
    """The access key: a v2 field, or the first part of a v4 credential scope."""
    if params.get("AWSAccessKeyId"):
        return params["AWSAccessKeyId"]
    scope = params.get("X-Amz-Credential") or _authorization(headers, "Credential")
    return scope.split("/", 1)[0] if scope else None


def _header_name(name: str) -> str:
    # Ec2Signer reads "Authorization" and "X-Amz-Date" by these names, as WebOb gives them.
    return "-".join(part.capitalize() for part in name.split("-"))


def credentials_of(
    request: Request, params: Mapping[str, str], body: bytes, access: str, signature: str
) -> dict[str, Any]:
    """What Heat's ec2token middleware sends Keystone, and what a signature is computed on."""
    return {
        "access": access,
        "signature": signature,
        "host": request.headers.get("host", ""),
        "verb": request.method,
        "path": request.url.path,
        "params": {key: value for key, value in params.items() if key != "Signature"},
        "headers": {_header_name(key): value for key, value in request.headers.items()},
        "body_hash": hashlib.sha256(body).hexdigest(),
    }


def _signed_at(credentials: Mapping[str, Any]) -> datetime.datetime | None:
    text = (
        credentials["params"].get("Timestamp")
        or credentials["headers"].get("X-Amz-Date")
        or credentials["params"].get("X-Amz-Date")
    )
    if not text:
        return None  # the signer left it out on purpose (Keystone's _check_timestamp)
    for layout in ("%Y-%m-%dT%H:%M:%SZ", "%Y%m%dT%H%M%SZ", "%Y-%m-%dT%H:%M:%S.%fZ"):
        try:
            return datetime.datetime.strptime(text, layout).replace(tzinfo=datetime.UTC)
        except ValueError:
            continue
    raise incomplete_signature()


def check_timestamp(credentials: Mapping[str, Any]) -> None:
    signed = _signed_at(credentials)
    if (
        signed is not None
        and abs((datetime.datetime.now(datetime.UTC) - signed).total_seconds()) > SIGNATURE_TTL_S
    ):
        raise request_expired()


def verify_locally(credentials: dict[str, Any], secret: str) -> None:
    """Compute the signature with the keypair's secret, as Keystone's ec2tokens does."""
    from keystoneclient.contrib.ec2.utils import Ec2Signer

    check_timestamp(credentials)
    hosts = [credentials["host"]]
    if ":" in credentials["host"]:
        # Some clients sign the host without its port (Keystone tries both).
        hosts.append(credentials["host"].rsplit(":", 1)[0])
    for host in hosts:
        try:
            # A signer keeps state between calls: one per computation.
            expected = Ec2Signer(secret).generate(
                {**credentials, "host": host, "params": dict(credentials["params"])}
            )
        except Exception as error:  # noqa: BLE001 - Ec2Signer raises bare Exception for a malformed request
            raise signature_does_not_match(str(error)) from error
        if hmac.compare_digest(str(expected), str(credentials["signature"])):
            return
    raise signature_does_not_match()


def verify_with_keystone(verifier: Any, credentials: dict[str, Any]) -> dict[str, Any]:
    """Keystone's token for the keypair's user (``/v3/ec2tokens``, as a service asks)."""
    url = f"{str(verifier.auth_url).rstrip('/').removesuffix('/v3')}/v3/ec2tokens"
    try:
        reply = verifier.service_session().post(
            url, json={"credentials": credentials}, raise_exc=False
        )
    except Exception as error:  # noqa: BLE001 - keystoneauth's connection errors
        LOG.warning("Keystone could not be asked to verify an EC2 signature: %s", error)
        raise CfnError(
            503,
            "ServiceUnavailable",
            "Service temporarily unavailable",
            "Keystone cannot be reached",
            sender=False,
        ) from error
    if reply.status_code != 200:
        LOG.info("Keystone refused an EC2 signature (HTTP %s)", reply.status_code)
        raise signature_does_not_match("Keystone refused the signature")
    token: dict[str, Any] = reply.json()["token"]
    return token


# -- the action --------------------------------------------------------------------------


def _names_stack(stack_name: str, stack: StackRecord) -> bool:
    """Whether StackName (a name, an id or an ARN, as Heat's ``_get_identity``) is ``stack``."""
    if stack_name.startswith("arn:openstack:heat:"):
        path = stack_name.split(":stacks/", 1)[-1].split("/")
        return len(path) >= 2 and path[0] == stack.name and path[1] == stack.id
    return stack_name in (stack.name, stack.id)


def resource_detail(stack: StackRecord, record: ResourceRecord, metadata: Any) -> dict[str, Any]:
    """Heat's ``StackResourceDetail`` (``format_resource_detail``)."""
    project = stack.project_id or ""
    return {
        "Description": str((record.definition or {}).get("description") or ""),
        "LastUpdatedTimestamp": isotime(record.updated_at or record.created_at) or "",
        "LogicalResourceId": record.name,
        "Metadata": metadata,
        "PhysicalResourceId": record.physical_resource_id or "",
        "ResourceStatusReason": record.status_reason or "",
        "ResourceType": record.type,
        "StackId": f"arn:openstack:heat::{project}:stacks/{stack.name}/{stack.id}",
        "StackName": stack.name,
        "ResourceStatus": record.state,
    }


def describe(request: Request, params: dict[str, str], body: bytes) -> dict[str, Any]:
    """In a worker thread: verify, authorise, read. Raises CfnError."""
    for name, value in params.items():
        if "\x00" in name or "\x00" in value:
            # No text stoker keeps or looks up may hold one (PostgreSQL's cannot).
            raise CfnError(
                400,
                "InvalidParameterValue",
                "A bad or out-of-range value was supplied",
                f"the parameter {name!r} has a NUL character (\\u0000): remove it",
            )
    headers = {key.lower(): value for key, value in request.headers.items()}
    signature = signature_of(params, headers)
    if not signature:
        raise incomplete_signature()
    access = access_of(params, headers)
    if not access:
        raise missing_authentication_token()
    service = request.app.state.service
    holder = service.keypair_holder(access)
    if holder is None:
        raise invalid_client_token_id()
    stack, record, secret = holder
    credentials = credentials_of(request, params, body, access, signature)
    verifier = getattr(request.app.state, "cfn_verifier", None)
    if verifier is not None:
        verify_with_keystone(verifier, credentials)
    else:
        verify_locally(credentials, secret)
    action = params.get("Action")
    if action != ACTION:
        raise CfnError(
            400,
            "InvalidAction",
            "The action or operation requested is invalid",
            f"stoker's CFN API serves {ACTION} only, not {action!r}",
        )
    for required in ("StackName", "LogicalResourceId"):
        if not params.get(required):
            raise CfnError(
                400, "MissingParameter", "A mandatory input parameter is missing", required
            )
    if not _names_stack(params["StackName"], stack) or params["LogicalResourceId"] != record.name:
        # Heat's stack-user rule: a keypair reads its own server's resource only.
        raise access_denied()
    metadata = service.agent_metadata(stack, record)
    return {
        f"{ACTION}Response": {
            f"{ACTION}Result": {"StackResourceDetail": resource_detail(stack, record, metadata)}
        }
    }


async def _body(request: Request) -> bytes:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise CfnError(400, "RequestLimitExceeded", "Payload exceeds maximum allowed size")
    return body


async def serve(request: Request) -> Response:
    params = dict(request.query_params)
    try:
        body = await _body(request)
    except CfnError as error:
        return error_answer(error, params.get("ContentType") == "JSON")
    if request.method == "POST" and request.headers.get("content-type", "").startswith(
        "application/x-www-form-urlencoded"
    ):
        params.update(
            {
                key: value
                for key, value in parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True)
            }
        )
    as_json = params.get("ContentType") == "JSON"
    try:
        result = await run_in_threadpool(describe, request, params, body)
    except CfnError as error:
        return error_answer(error, as_json)
    except Exception:
        LOG.exception("the CFN API failed to answer %s", params.get("Action"))
        return error_answer(
            CfnError(
                500,
                "InternalFailure",
                "The request processing has failed due to an internal error",
                sender=False,
            ),
            as_json,
        )
    return answer(result, as_json)


# Its answers and errors are AWS's XML (JSON with ContentType=JSON), not Heat's faults:
# the operation is written whole.
_AWS_ERROR = {
    "description": "AWS's ErrorResponse (Error: Type, Code, Message), as Heat's heat-api-cfn answers it",
    "content": {"application/xml": {"schema": STRING}, "application/json": {"schema": obj({"ErrorResponse": obj({"Error": obj({"Type": STRING, "Code": STRING, "Message": STRING})})})}},
}
_SPEC = {
    "summary": "DescribeStackResource: a server's resource and its Metadata, for its agent (the cfn collector, cfn-init)",
    "description": "Heat's CFN API, signed with the server's EC2 keypair (AWS signature version 2 in the parameters, "
    "or version 4 in the Authorization header); POST may send the parameters as a form. A keypair reads its own server only.",
    "tags": ["signals"], "security": NO_TOKEN,
    "parameters": [
        query("Action", STRING, "DescribeStackResource (the one action served)"),
        query("StackName", STRING, "the stack's name, id or ARN"),
        query("LogicalResourceId", STRING, "the resource's name: the keypair's own server"),
        query("ContentType", STRING, "JSON for a JSON answer (XML otherwise)"),
        query("AWSAccessKeyId", STRING, "the keypair's access key (signature version 2)"),
        query("SignatureVersion", STRING, "2 (version 4 signs in the Authorization header)"),
        query("SignatureMethod", STRING, "HmacSHA256 or HmacSHA1"),
        query("Signature", STRING, "the request's signature (version 2)"),
    ],
    "responses": {
        "200": {"description": "DescribeStackResourceResponse", "content": {"application/xml": {"schema": STRING}, "application/json": {"schema": OBJECT}}},
        "400": _AWS_ERROR, "403": _AWS_ERROR,
    },
}

# No token: the request's signature is checked here.
OPERATIONS = [Operation(method, path, serve, PUBLIC, _SPEC, plain=True) for path in PATHS for method in ("GET", "POST")]
