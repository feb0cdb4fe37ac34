"""Errors of the API, and the one place an exception becomes an HTTP response.

    StokerError (stoker.sdk.exceptions)
      ApiError                  a request the API itself refuses (before the service)
        BadRequestError         400: malformed body, bad query parameter, template_url
        NotFoundError           404: no such route, or a stack name that does not match its id
        RequestTooLargeError    413: a body over the size limit (Heat's max_json_body_size)
        TooManyStreamsError     429: a project's open event streams at their limit

Every error answers with Heat's fault body (``heat/api/middleware/fault.py``), which
python-heatclient parses (``heatclient/exc.py`` reads ``error.message``)::

    {"code": 400, "title": "Bad Request", "explanation": "...",
     "error": {"type": "StackValidationFailed", "message": "...", "traceback": null}}

The message is stoker's own: template problems keep their place (file:line:col when the
template came as text, else the template path) and hint; where a message is Heat's own
text, word for word (``StokerError.verbatim``), it goes alone, as Heat sends it, and the
problems with their places go in ``error.details`` (stoker's key). There is never a
traceback:
an unexpected exception is logged here and answered 500 with its type and text.

A database error never shows its SQL, its parameters or the driver's details (which may
quote a hidden value), whatever reached the store: a value the database refuses
(SQLAlchemy's ``DataError``, e.g. a NUL character PostgreSQL cannot store) is the
request's fault, a 400 logged in one line; a lost or refused connection is a 503 (try
again), logged in one line; any other is a 500 naming its class only, its traceback
logged as for any unexpected error.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from sqlalchemy.exc import DataError, DBAPIError, OperationalError, PendingRollbackError
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse

from stoker.engine.errors import (
    ActionInProgressError,
    InvalidValueError,
    NotSupportedError,
    StackExistsError,
    StackNotFoundError,
)
from stoker.engine.signals import SignalCredentialError
from stoker.engine.software_deployments import DeploymentServerNotFoundError, StackUserProjectError
from stoker.environment.registry import UnknownResourceTypeError
from stoker.plans.errors import PlanError, StalePlanError
from stoker.sdk.exceptions import ResourceNotFoundError, StokerError, ValidationError
from stoker.sdk.software_config import (
    DeploymentConfigNotFoundError,
    SoftwareConfigNotFoundError,
    SoftwareDeploymentNotFoundError,
)
from stoker.store.connection_loss import as_database_error, database_text
from stoker.store.stale import StaleRead
from stoker.template.errors import InvalidTemplateVersionError, TemplateErrors

LOG = logging.getLogger(__name__)


class ApiError(StokerError):
    status = 400
    heat_type = "HTTPBadRequest"


class BadRequestError(ApiError):
    pass


class NotFoundError(ApiError):
    status = 404
    heat_type = "HTTPNotFound"


class RequestTooLargeError(ApiError):
    status = 413
    heat_type = "RequestLimitExceeded"


class TooManyStreamsError(ApiError):
    status = 429
    heat_type = "HTTPTooManyRequests"


def escaped(text: str) -> str:
    """``text`` with any lone surrogate written as ``\\udXXX``: safe to log and to encode."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class JSONBody(JSONResponse):
    """A JSON response that cannot fail to encode: a lone surrogate (in data stored
    before the API refused them) goes out as a ``\\udXXX`` escape, which is valid JSON,
    rather than turning a whole list into a 500."""

    def render(self, content: Any) -> bytes:
        text = json.dumps(content, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":"))
        return text.encode("utf-8", "backslashreplace")


# webob's titles and explanations, which Heat's fault body carries.
_TITLES = {
    400: ("Bad Request", "The server could not comply with the request since it is either malformed or otherwise incorrect."),
    401: ("Unauthorized", "This server could not verify that you are authorized to access the document you requested."),
    403: ("Forbidden", "Access was denied to this resource."),
    404: ("Not Found", "The resource could not be found."),
    405: ("Method Not Allowed", "The method specified is not allowed for this resource."),
    409: ("Conflict", "There was a conflict when trying to complete your request."),
    413: ("Request Entity Too Large", "The body of your request was too large for this server."),
    429: ("Too Many Requests", "The client has sent too many requests in a given amount of time."),
    500: ("Internal Server Error", "The server has either erred or is incapable of performing the requested operation."),
    503: ("Service Unavailable", "The server is currently unavailable. Please try again at a later time."),
}

# stoker's exception -> (HTTP status, Heat's exception name); the first match in order
# wins, so subclasses come before their bases (Heat's FaultWrapper.error_map).
_MAP: list[tuple[type[BaseException], int, str]] = [
    (ActionInProgressError, 409, "ActionInProgress"),
    (StackExistsError, 409, "StackExists"),
    (StackNotFoundError, 404, "EntityNotFound"),
    (ResourceNotFoundError, 404, "EntityNotFound"),
    (SoftwareConfigNotFoundError, 404, "NotFound"),
    (SoftwareDeploymentNotFoundError, 404, "NotFound"),
    (DeploymentConfigNotFoundError, 400, "Invalid"),
    (DeploymentServerNotFoundError, 404, "EntityNotFound"),
    (StackUserProjectError, 403, "Forbidden"),
    (UnknownResourceTypeError, 404, "EntityNotFound"),
    (NotSupportedError, 400, "NotSupported"),
    (InvalidValueError, 400, "Invalid"),
    (ValidationError, 400, "StackValidationFailed"),
    (SignalCredentialError, 403, "Forbidden"),
    # A read that raced a stack's update more often than it is repeated (store/stale.py).
    (StaleRead, 409, "Conflict"),
    # stoker's saved plans (docs/plans.md): one made before the stack changed; one that
    # is not a plan this version applies.
    (StalePlanError, 409, "Conflict"),
    (PlanError, 400, "Invalid"),
]


def fault(status: int, heat_type: str, message: str, details: str | None = None) -> JSONBody:
    """Heat's fault body; ``details`` (stoker's): the problems with their places, where
    the message is Heat's verbatim text without them."""
    title, explanation = _TITLES.get(status, _TITLES[500] if status >= 500 else _TITLES[400])
    body: dict[str, Any] = {
        "code": status,
        "title": title,
        "explanation": explanation,
        "error": {"type": heat_type, "message": escaped(message), "traceback": None},
    }
    if details is not None and details != message:
        body["error"]["details"] = escaped(details)
    return JSONBody(body, status_code=status)


def message(error: BaseException) -> str:
    """The fault's message: every problem with its place and hint (``str``), except
    where each is Heat's verbatim text (``StokerError.verbatim``), which Heat's clients
    and tests match word for word: then the texts alone."""
    problems = error.errors if isinstance(error, TemplateErrors) else [error]
    if problems and all(getattr(problem, "verbatim", False) for problem in problems):
        return "; ".join(str(getattr(problem, "message", problem)) for problem in problems)
    return str(error)


def _heat_type(error: BaseException, default: str) -> str:
    """Heat's exception name for one problem that has a closer one than ``default``."""
    problems = error.errors if isinstance(error, TemplateErrors) else [error]
    if len(problems) == 1 and isinstance(problems[0], InvalidTemplateVersionError):
        return "InvalidTemplateVersion"
    return default


def error_response(error: BaseException) -> JSONBody:
    """The response for an exception raised while serving a request."""
    if isinstance(error, ApiError):
        return fault(error.status, error.heat_type, str(error))
    for kind, status, heat_type in _MAP:
        if isinstance(error, kind):
            return fault(status, _heat_type(error, heat_type), message(error), str(error))
    if isinstance(error, StokerError):
        # A deliberate refusal without a closer mapping: the request cannot be done.
        return fault(400, type(error).__name__.removesuffix("Error"), str(error))
    if isinstance(error, HTTPException):  # starlette's own refusals (e.g. a body too large)
        return fault(error.status_code, _HTTP_NAMES.get(error.status_code, "HTTPException"), str(error.detail))
    if isinstance(error, DBAPIError):
        return _database_error(error)
    if isinstance(error, PendingRollbackError):  # a lost connection met again (connection_loss.lost)
        return _database_error(as_database_error(error))
    LOG.error("internal error", exc_info=error)
    return fault(500, type(error).__name__, f"internal error: {type(error).__name__}: {error}")


# What a 503 for an unreachable database asks the client to wait (seconds, Retry-After):
# a PostgreSQL restart or failover is over in a few.
DATABASE_RETRY_AFTER_S = 5


def _database_error(error: DBAPIError) -> JSONBody:
    """A database error without its SQL: only the driver's first line is logged (the
    lines after it may quote the data), and nothing of it is answered but its kind."""
    told = database_text(error)
    if isinstance(error, DataError):
        LOG.warning("a request's value was refused by the database: %s", told)
        nul = "NUL" in (told or "") or "\\u0000" in str(error.orig)
        detail = ": it holds a NUL character (\\u0000); remove it, no text stoker keeps may hold one" if nul else ""
        return fault(400, "Invalid", f"The database cannot store a value of this request{detail}")
    if error.connection_invalidated or isinstance(error, OperationalError):
        LOG.warning("the database could not answer a request: %s", told)
        response = fault(503, "ServiceUnavailable", f"The database could not answer; try again in {DATABASE_RETRY_AFTER_S} seconds")
        response.headers["Retry-After"] = str(DATABASE_RETRY_AFTER_S)
        return response
    LOG.error("internal error: database error %s", told, exc_info=error)
    return fault(500, type(error).__name__, f"internal error: a database error ({type(error).__name__})")


_HTTP_NAMES = {404: "HTTPNotFound", 405: "HTTPMethodNotAllowed", 413: "HTTPRequestEntityTooLarge"}


async def http_exception(request: Request, error: Exception) -> JSONResponse:
    """Routing's own refusals (no such path, method not allowed) in Heat's shape."""
    assert isinstance(error, HTTPException)
    response = fault(error.status_code, _HTTP_NAMES.get(error.status_code, "HTTPException"), str(error.detail))
    if error.headers:
        response.headers.update(error.headers)
    return response
