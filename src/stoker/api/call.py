"""One API call: its context, body, query and the stack it names, and the wrapper that
turns a handler into a Starlette endpoint.

Handlers are plain functions ``handler(call) -> body | Reply``. The service they call
blocks (store reads, validation), so the wrapper runs them in a worker thread: the
event loop stays free for the jobs running on it (``Service.serve_on``, ``stoker.jobs``). Every
exception goes to ``api.errors.error_response``, the one place it becomes HTTP.

Every request is authenticated and authorised here, before its handler runs, so route
modules need not think of it: the app's authenticator (``api.auth``) makes the context
(401 without a valid token), the path's ``{tenant_id}`` must be the token's project
unless the caller is a cloud admin (403, as Heat's ``registered_policy_enforce``), and
the route's policy rule (declared with the route, ``api.operations``; bound to each
endpoint by ``app.py``) must pass (403). Capability URLs need no token; a resource
signal takes a wait condition handle's own token instead of one (``api.policy.SIGNAL_RULE``).

Nothing the client sends reaches a handler unchecked: the body is read up to its size
limit (413 past it, chunked or not), parsed as strict JSON (no NaN or Infinity), and
refused when it nests deeper than any document the engine accepts or holds a string
that is not valid Unicode (a lone surrogate, which would be stored and then break
every JSON response that shows it). Query integers are ASCII digits within bounds.

No NUL character (U+0000) gets in, in a path segment, a query parameter's name or
value, or any string of the body (key or value): PostgreSQL's text and JSONB cannot
hold one, and SQLite's can, so stoker refuses it everywhere, on every database, with a
400 naming the field, before any handler looks anything up.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import ClientDisconnect, Request
from starlette.responses import Response

from stoker.api import policy
from stoker.api.auth import Authenticator, NoAuthentication, RequestContext, UnauthorizedError
from stoker.api.errors import (
    BadRequestError,
    JSONBody,
    RequestTooLargeError,
    error_response,
    escaped,
    fault,
)
from stoker.clouds.trusts import User, acting_user
from stoker.engine.validation import type_check
from stoker.service import Service
from stoker.store import StackRecord
from stoker.store.stale import fresh
from stoker.template.loader import DEFAULT_MAX_DEPTH, NUL_HINT

# Heat's max_json_body_size (bytes); app.py may raise it so that a template of
# max_template_bytes, sent as JSON text inside the body, still fits.
MAX_JSON_BODY_BYTES = 1024 * 1024
# The largest integer a query parameter or a body field may carry: the range of the
# databases' INTEGER columns (PostgreSQL's is 32-bit), which such values end up in.
MAX_INTEGER = 2**31 - 1
# How deep a request body may nest: a template, environment or parameter value may
# nest as deep as a template sent as text (DEFAULT_MAX_DEPTH), and sits up to three
# levels down in the body (body -> adopt_stack_data -> template). Each part is checked
# against its own limit later; this bound keeps json and every recursive walk after it
# far from Python's recursion limit.
MAX_BODY_DEPTH = DEFAULT_MAX_DEPTH + 3
_INTEGER = re.compile(r"-?[0-9]+")


@dataclass
class Reply:
    """A response other than ``200`` with a JSON body."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    # No body at all (204, and Heat's 202 for update), rather than JSON ``null``.
    empty: bool = False


@dataclass
class Call:
    request: Request
    service: Service
    context: RequestContext
    body: Any

    @property
    def params(self) -> QueryParams:
        return self.request.query_params

    def path(self, name: str) -> str:
        return self.request.path_params[name]

    # -- URLs (Heat's links are absolute: heatclient reissues a redirect as given) -------

    def url(self, *parts: str) -> str:
        base = str(self.request.base_url).rstrip("/")
        return "/".join([base, "v1", quote(self.context.tenant_id, safe=""), *(quote(p, safe="") for p in parts)])

    def stack_url(self, stack: StackRecord, *parts: str) -> str:
        return self.url("stacks", stack.name, stack.id, *parts)

    def link(self, href: str, rel: str = "self") -> dict[str, str]:
        return {"href": href, "rel": rel}

    # -- query parameters, read as Heat's param_utils reads them ---------------------

    def bool_param(self, name: str, default: bool = False) -> bool:
        value = self.params.get(name)
        if value is None or value == "":
            return default
        return parse_bool(name, value)

    def int_param(self, name: str, default: int | None = None, maximum: int = MAX_INTEGER) -> int | None:
        value = self.params.get(name)
        if value is None or value == "":
            return default
        return parse_int(name, value, maximum)

    def depth_param(self) -> int:
        """``nested_depth``: validated, then capped at the deepest a stack can nest, as
        Heat caps it at max_nested_stack_depth (deeper levels hold nothing to find)."""
        depth = self.int_param("nested_depth", 0) or 0
        return min(depth, self.service.settings.max_nested_depth)


def parse_bool(name: str, value: Any) -> bool:
    """Heat's extract_bool (true/false, any case), and 1/0, yes/no, on/off too."""
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text not in ("true", "false", "1", "0", "yes", "no", "on", "off"):
        raise BadRequestError(f'Unrecognized value "{escaped(str(value))[:80]}" for "{name}", acceptable values are: true, false.')
    return text in ("true", "1", "yes", "on")


def parse_int(name: str, value: Any, maximum: int = MAX_INTEGER) -> int:
    """Heat's extract_int: an integer, or text that is one (``1.5``, ``true``, ``1e3``
    and `` 7`` are not), not negative; and, unlike Heat, at most ``maximum``."""
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str) and _INTEGER.fullmatch(value):
        # Past 20 digits it is out of bounds either way: no need to convert it.
        number = int(value) if len(value) <= 20 else (-maximum - 1 if value.startswith("-") else maximum + 1)
    else:
        raise BadRequestError(f'Only integer is acceptable by "{name}".')
    shown = escaped(str(value))[:40]
    if number < 0:
        raise BadRequestError(f'Value "{shown}" is invalid for "{name}", only non-negative integers are acceptable.')
    if number > maximum:
        raise BadRequestError(f'Value "{shown}" is invalid for "{name}": the largest acceptable value is {maximum}.')
    return number


def _refuse_constant(name: str) -> Any:
    # NaN and Infinity are not JSON (RFC 8259); PostgreSQL's JSON refuses to store them.
    raise BadRequestError(f"The request body is not valid JSON: {name} is not a JSON number")


# A place in a document as a chain of (parent, key) links: cheap to extend per value,
# spelled out (``parameters.blob.a[0]``) only for an error.
_Place = tuple[Any, Any] | None


def _spelled(place: _Place) -> str:
    parts: list[Any] = []
    while place is not None:
        place, key = place
        parts.append(key)
    text = "".join(f"[{part}]" if isinstance(part, int) else f".{escaped(part)}" for part in reversed(parts)).lstrip(".").replace("\x00", "\\0")
    return (text if len(text) <= 200 else text[:100] + "..." + text[-100:]) or "the top"


def check_document(value: Any, max_depth: int, what: str = "The request body") -> None:
    """Refuse a parsed JSON value nested deeper than ``max_depth`` collections (the
    top one counts, as the template loader counts) or holding a string, key or value,
    that is not valid Unicode. Iterative: a deep value cannot exhaust the stack."""
    pending: list[tuple[Any, int, _Place]] = [(value, 1, None)]
    while pending:
        current, depth, place = pending.pop()
        if isinstance(current, str):
            if "\x00" in current:
                raise _nul_error(f"{what} has a NUL character (\\u0000) at {_spelled(place)}")
            if not current.isascii():
                _check_text(current, what, place)
        elif isinstance(current, dict | list):
            if depth > max_depth:
                raise BadRequestError(
                    f"{what} is nested more than {max_depth} levels deep at {_spelled(place)}",
                    hint="flatten the value; templates, environments and parameter values are limited to the same depth",
                )
            if isinstance(current, dict):
                for key, item in current.items():
                    if "\x00" in key:
                        raise _nul_error(f"{what} has a NUL character (\\u0000) in a key at {_spelled((place, key))}")
                    if not key.isascii():
                        _check_text(key, what, place)
                    pending.append((item, depth + 1, (place, key)))
            else:
                pending.extend((item, depth + 1, (place, index)) for index, item in enumerate(current))


def _nul_error(message: str) -> BadRequestError:
    return BadRequestError(message, hint=NUL_HINT)


def check_request_text(request: Request) -> None:
    """Refuse a NUL character in a path segment or a query parameter (its name or
    value), naming it. The body's strings are ``check_document``'s."""
    for name, value in request.path_params.items():
        if isinstance(value, str) and "\x00" in value:
            raise _nul_error(f"The path segment {{{name}}} has a NUL character (\\u0000): {escaped(value)[:80]!r}")
    for name, value in request.query_params.multi_items():
        if "\x00" in name:
            raise _nul_error(f"The query parameter {escaped(name)[:80]!r} has a NUL character (\\u0000) in its name")
        if "\x00" in value:
            raise _nul_error(f"The query parameter {escaped(name)[:80]} has a NUL character (\\u0000) in its value")


def _check_text(text: str, what: str, place: _Place) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise BadRequestError(
            f"{what} has text that is not valid Unicode at {_spelled(place)}: {escaped(text)[:80]!r} holds a lone surrogate",
            hint="send text as UTF-8; a \\ud800-\\udfff escape must be half of a surrogate pair",
        )


async def _read(request: Request, limit: int) -> bytes:
    """The body, read no further than ``limit`` bytes: a Content-Length over it is
    refused before reading, a chunked body as soon as it passes it."""
    hint = "send a smaller template or files; the limit grows with the server's STOKER_MAX_TEMPLATE_BYTES"
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise RequestTooLargeError(f"Request limit exceeded: JSON body size ({int(declared)} bytes) exceeds maximum allowed size ({limit} bytes).", hint=hint)
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RequestTooLargeError(f"Request limit exceeded: JSON body size (more than {limit} bytes) exceeds maximum allowed size ({limit} bytes).", hint=hint)
        chunks.append(chunk)
    return b"".join(chunks)


def _body(raw: bytes) -> Any:
    if not raw.strip():
        return None
    try:
        body = json.loads(raw, parse_constant=_refuse_constant)
    except RecursionError:
        raise BadRequestError(f"The request body is nested more than {MAX_BODY_DEPTH} levels deep")
    except ValueError as error:  # bad JSON, bad UTF-8, an integer of more than 4300 digits
        raise BadRequestError(f"The request body is not valid JSON: {escaped(str(error))}")
    check_document(body, MAX_BODY_DEPTH)
    return body


# The rule of a route and method, as app.py binds it to an endpoint (``access``).
ACCESS_ATTRIBUTE = "access"
_NO_AUTHENTICATION = NoAuthentication()


async def _context(request: Request, rule: str | None) -> RequestContext:
    """Who the caller is, and that the path's tenant is theirs. ``rule`` None: a
    capability URL, which needs no token."""
    state = request.app.state
    authenticator: Authenticator = getattr(state, "authenticator", _NO_AUTHENTICATION)
    token = request.headers.get("x-auth-token")
    # A route without a project in its path (the dashboard's pages) is the caller's own
    # project's: the token's (in none mode, nobody's).
    tenant_in_path = "tenant_id" in request.path_params
    path_tenant = request.path_params.get("tenant_id", "")
    if rule is None:
        return RequestContext(tenant_id="", token=token, auth_mode=authenticator.mode, authenticated=False)
    if authenticator.mode == "none":
        context = authenticator.authenticate(token, path_tenant)
    else:
        # keystonemiddleware blocks on Keystone (its cache aside): off the event loop.
        context = await run_in_threadpool(authenticator.authenticate, token, path_tenant)
    if context is None:
        if rule == policy.SIGNAL_RULE:
            # Maybe a wait condition handle's own token: the service checks it, and
            # this caller reaches no project (tenant "" is nobody's).
            return RequestContext(tenant_id="", token=token, auth_mode=authenticator.mode, authenticated=False)
        raise UnauthorizedError("The request you have made requires authentication.")
    if tenant_in_path and context.tenant_id != path_tenant and not context.is_admin:
        raise policy.ForbiddenError(f"The path's project {escaped(path_tenant)[:64]} is not the project of the token")
    return context


def _authorise(request: Request, context: RequestContext, rule: str | None, body: Any) -> None:
    if not rule or not context.authenticated:
        return
    enforcer: policy.Policy | None = getattr(request.app.state, "policy", None)
    if enforcer is None:
        return
    # Heat's target: the path's tenant, or the admin's own project for an admin
    # reaching another project by id (registered_policy_enforce).
    enforcer.check(context, policy.rules_of(body, request.query_params, rule), context.tenant_id)


def _unauthorized(request: Request, error: UnauthorizedError) -> Response:
    response = fault(401, error.heat_type, str(error))
    challenge = getattr(getattr(request.app.state, "authenticator", None), "challenge", None)
    if challenge:
        response.headers["WWW-Authenticate"] = challenge
    return response


def endpoint(handler: Callable[[Call], Any]) -> Callable[[Request], Awaitable[Response]]:
    def serve(request: Request, raw: bytes, context: RequestContext, rule: str | None) -> Any:
        # In a worker thread: parsing and checking a body of a megabyte or more would
        # hold the event loop, and the jobs on it, for as long.
        body = _body(raw)
        _authorise(request, context, rule, body)
        enforcer = getattr(request.app.state, "policy", None)
        if enforcer is not None and context.authenticated:
            # The resource types a template of this request may name (resource_types:<type>).
            type_check.set(lambda type_name: enforcer.check_resource_type(context, type_name, context.tenant_id))
        if context.auth_mode == "keystone" and context.token and context.user_id:
            # Who the service acts for (a new stack's trust; validation's cloud calls),
            # in this thread's copy of the request's context only.
            acting_user.set(User(context.token, context.tenant_id, context.user_id, context.roles))
        call = Call(request, request.app.state.service, context, body)
        if request.method in ("GET", "HEAD"):
            # A read only reads: done again whole when it raced a stack's update (stale.py).
            return fresh(lambda: handler(call))
        return handler(call)

    async def run(request: Request) -> Response:
        access: dict[str, str | None] = getattr(run, ACCESS_ATTRIBUTE, {})
        method = "GET" if request.method == "HEAD" else request.method
        # Without a bound table (an app made without create_app): none mode's behaviour.
        rule = access.get(method, policy.UNBOUND) if access else policy.UNBOUND
        try:
            context = await _context(request, rule)
            check_request_text(request)
            raw = await _read(request, getattr(request.app.state, "max_body_bytes", MAX_JSON_BODY_BYTES))
            result = await run_in_threadpool(serve, request, raw, context, rule)
        except UnauthorizedError as error:
            return _unauthorized(request, error)
        except ClientDisconnect:
            # The client went (or was dropped: api/connections.py) before its body was
            # in: nobody to answer, nothing to log.
            return Response(status_code=400)
        except Exception as error:  # noqa: BLE001 - every error gets Heat's fault body
            return error_response(error)
        if isinstance(result, Response):
            return result
        if isinstance(result, Reply):
            if result.empty:
                return Response(status_code=result.status, headers=result.headers)
            return JSONBody(result.body, status_code=result.status, headers=result.headers)
        return JSONBody(result)

    setattr(run, ACCESS_ATTRIBUTE, {})
    run.__name__ = handler.__name__
    run.__doc__ = handler.__doc__
    return run
