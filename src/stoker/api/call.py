"""One API call: its context, body, query and the stack it names, and the wrapper that
turns a handler into a Starlette endpoint.

Handlers are plain functions ``handler(call) -> body | Reply``. The service they call
blocks (store reads, validation), so the wrapper runs them in a worker thread: the
event loop stays free for the jobs running on it (``Service.serve_on``, ``stoker.jobs``). Every
exception goes to ``api.errors.error_response``, the one place it becomes HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import QueryParams
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from stoker.api.auth import RequestContext, context_of
from stoker.api.errors import BadRequestError, NotFoundError, error_response
from stoker.engine.errors import StackNotFoundError
from stoker.service import Service
from stoker.store import StackRecord


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

    # -- the stack a path names -------------------------------------------------------

    def stack(self, deleted: bool = False) -> StackRecord:
        """The stack of ``/stacks/{stack_name}/{stack_id}``: found by id, and its name
        must match (as Heat's identified stacks). ``deleted``: a deleted stack is shown
        too (Heat's show uses show_deleted)."""
        name, stack_id = self.path("stack_name"), self.path("stack_id")
        stack = self.service.store.get_stack(stack_id)
        if stack is None or (stack.deleted_at is not None and not deleted):
            raise StackNotFoundError(f"{name}/{stack_id}")
        if stack.name != name:
            raise NotFoundError(f"The Stack ({name}/{stack_id}) could not be found: stack {stack_id} is named {stack.name}")
        return stack

    # -- query parameters, read as Heat's param_utils reads them ---------------------

    def bool_param(self, name: str, default: bool = False) -> bool:
        value = self.params.get(name)
        if value is None or value == "":
            return default
        return parse_bool(name, value)

    def int_param(self, name: str, default: int | None = None) -> int | None:
        value = self.params.get(name)
        if value is None or value == "":
            return default
        return parse_int(name, value)


def parse_bool(name: str, value: Any) -> bool:
    """Heat's extract_bool (true/false, any case), and 1/0, yes/no, on/off too."""
    if isinstance(value, bool):
        return value
    text = str(value).lower()
    if text not in ("true", "false", "1", "0", "yes", "no", "on", "off"):
        raise BadRequestError(f'Unrecognized value "{value}" for "{name}", acceptable values are: true, false.')
    return text in ("true", "1", "yes", "on")


def parse_int(name: str, value: Any) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise BadRequestError(f'Only integer is acceptable by "{name}".')
    if number < 0:
        raise BadRequestError(f'Value "{value}" is invalid for "{name}", only non-negative integers are acceptable.')
    return number


async def _body(request: Request) -> Any:
    raw = await request.body()
    if not raw.strip():
        return None
    try:
        return json.loads(raw)
    except ValueError as error:
        raise BadRequestError(f"The request body is not valid JSON: {error}")


def endpoint(handler: Callable[[Call], Any]) -> Callable[[Request], Awaitable[Response]]:
    async def run(request: Request) -> Response:
        try:
            call = Call(request, request.app.state.service, context_of(request), await _body(request))
            result = await run_in_threadpool(handler, call)
        except Exception as error:  # noqa: BLE001 - every error gets Heat's fault body
            return error_response(error)
        if isinstance(result, Response):
            return result
        if isinstance(result, Reply):
            if result.empty:
                return Response(status_code=result.status, headers=result.headers)
            return JSONResponse(result.body, status_code=result.status, headers=result.headers)
        return JSONResponse(result)

    run.__name__ = handler.__name__
    run.__doc__ = handler.__doc__
    return run
