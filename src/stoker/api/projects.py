"""Whose request a call is: the project it acts for, and the stack its path names
within that project.

Every route that reads or changes a stack finds it here, through the service's scoped
lookups (``StackReads.get_stack``, ``identified_stack``): another project's stack is
404 EntityNotFound, word for word as a missing one, never a 403 that would confirm it
exists. Software configs and deployments are scoped the same way by their own stores
(``engine.software_configs``, ``engine.software_deployments``). What must not happen
here: authenticating the caller (``api.auth`` makes the context this reads).
"""

from __future__ import annotations

from stoker.api.call import Call
from stoker.api.errors import ApiError
from stoker.reads import Project
from stoker.store import StackRecord


class ForbiddenError(ApiError):
    """403: a request only an admin may make (Heat's policy refusal)."""

    status = 403
    heat_type = "Forbidden"


def project(call: Call) -> Project:
    """The caller's project (``RequestContext.tenant_id``); an admin (``is_admin``, which
    a context without roles does not have) reaches any stack by its id."""
    return Project(call.context.tenant_id, admin=bool(getattr(call.context, "is_admin", False)))


def stack(call: Call, deleted: bool = False) -> StackRecord:
    """The stack of ``/stacks/{stack_name}/{stack_id}`` the caller's project reaches
    (``deleted``: a deleted one too, as Heat's show)."""
    return call.service.identified_stack(call.path("stack_name"), call.path("stack_id"), project(call), deleted)
