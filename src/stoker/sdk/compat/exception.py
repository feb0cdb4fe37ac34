"""Stand-in for ``heat.common.exception``: Heat's exception names a plugin raises or
catches, each a subclass of the matching stoker error so the engine treats it the same.

    HeatException (StokerError)
      StackValidationFailed (ValidationError)
      InvalidTemplateAttribute, EntityNotFound (stoker.sdk.exceptions)
      ResourceNotFound, NotFound, PhysicalResourceNotFound
      ResourceFailure, UpdateReplace (stoker.sdk.exceptions)
      Error
"""

from __future__ import annotations

from typing import Any

from stoker.sdk.exceptions import (
    EntityNotFound,
    InvalidTemplateAttribute,
    ResourceFailure,
    ResourceNotFoundError,
    StokerError,
    UpdateInProgressError,
    UpdateReplace,
    ValidationError,
)

__all__ = [
    "EntityNotFound",
    "Error",
    "HeatException",
    "InvalidTemplateAttribute",
    "NotFound",
    "PhysicalResourceNotFound",
    "ResourceFailure",
    "ResourceNotFound",
    "StackValidationFailed",
    "UpdateInProgress",
    "UpdateReplace",
]


class HeatException(StokerError):
    msg_fmt = "An unknown exception occurred."

    def __init__(self, message: str | None = None, **kwargs: Any):
        if message is None:
            try:
                message = self.msg_fmt % kwargs
            except (KeyError, TypeError):
                message = self.msg_fmt
        super().__init__(message)
        self.kwargs = kwargs


class Error(HeatException):
    msg_fmt = "%(message)s"


class StackValidationFailed(ValidationError):
    def __init__(self, message: str | None = None, path: Any = None, error: str | None = None, **kwargs: Any):
        text = message or kwargs.get("error_message") or error or "Stack validation failed"
        where = ".".join(str(p) for p in path) if isinstance(path, (list, tuple)) else path
        super().__init__(text, path=where)


class NotFound(HeatException):
    msg_fmt = "%(message)s"


class ResourceNotFound(ResourceNotFoundError):
    def __init__(self, resource_name: str = "", stack_name: str = "", **kwargs: Any):
        super().__init__(f"The Resource ({resource_name}) could not be found in Stack {stack_name}.")


class PhysicalResourceNotFound(EntityNotFound):
    def __init__(self, resource_id: str = "", **kwargs: Any):
        super().__init__("Physical Resource", resource_id)


UpdateInProgress = UpdateInProgressError
