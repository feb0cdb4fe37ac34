"""Whether a job may start on a stack, decided on the stack's row as it is when the
job takes the stack's lock (in the same transaction: see ``Store.acquire_lock``).

The service checks the same rules earlier to answer a request at once, but only this
decision counts: between a request's checks and its job, another job may have deleted
the stack or started an action on it.

Owns only the rules; it must not write anything.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stoker.engine.errors import (
    ActionInProgressError,
    ActionStartedError,
    NothingToResumeError,
    StackNotFoundError,
)
from stoker.engine.states import Action, Status
from stoker.sdk.exceptions import ValidationError
from stoker.store import StackRecord

if TYPE_CHECKING:
    from stoker.engine.engine import Job

# Which states a user's suspend or resume may start from (Heat's rules).
ALLOWED_FROM = {
    Action.SUSPEND: "a stack that is not suspended, deleted or failed",
    Action.RESUME: "a suspended stack (SUSPEND_COMPLETE)",
    Action.SNAPSHOT: "a stack in a COMPLETE state",
}


def allowed(action: Action, stack: StackRecord) -> bool:
    """Whether a user's ``action`` may start from the stack's state (not in progress)."""
    if action == Action.SUSPEND:
        return stack.status == Status.COMPLETE and stack.action not in (Action.SUSPEND, Action.DELETE, Action.INIT)
    if action == Action.RESUME:
        return stack.action == Action.SUSPEND and stack.status == Status.COMPLETE
    if action == Action.SNAPSHOT:
        return stack.status == Status.COMPLETE and stack.action not in (Action.DELETE, Action.INIT)
    if action in (Action.CREATE, Action.ADOPT):
        return stack.action == Action.INIT
    return True


def half_deleted(stack: StackRecord) -> bool:
    """A stack whose delete recorded DELETE_COMPLETE and whose job stopped before it
    deleted the stack's resource rows and marked the stack deleted (its process died):
    recovery finishes it."""
    return stack.action == Action.DELETE and stack.status == Status.COMPLETE and stack.deleted_at is None


def admit_idle(stack: StackRecord | None, stack_id: str) -> None:
    """Raise unless the stack exists, is not deleted, is top level and no action runs."""
    if stack is None or stack.deleted_at is not None:
        raise StackNotFoundError(stack.name if stack is not None else stack_id)
    _check_top_level(stack)
    if stack.status == Status.IN_PROGRESS:
        raise ActionInProgressError(stack.name, stack.state)


def _check_top_level(stack: StackRecord) -> None:
    if stack.owner_id is not None:
        raise ValidationError(
            f"Stack {stack.name} is nested in stack {stack.owner_id} (resource {stack.owner_resource})",
            hint="act on the parent stack; its resource owns this stack",
        )


def admit(job: Job, stack: StackRecord | None, accepted_pending: bool = True) -> None:
    """Raise when ``job`` may not start on ``stack`` (its row; None: no such row).
    ``accepted_pending``: whether the accepted action the job runs (``job.accepted``,
    with workers) is still waiting to start; once it has started, or a job of it has
    ended, no other job of it starts it again (it runs once)."""
    if job.accepted is not None and not accepted_pending:
        raise ActionStartedError(stack.name if stack is not None else job.stack_id, str(job.action))
    if stack is None or stack.deleted_at is not None:
        raise StackNotFoundError(stack.name if stack is not None else job.stack_id)
    if job.resume:
        # The engine's own jobs: finishing an interrupted action, or a nested stack's
        # action its parent queued. Nothing to do once the stack has left IN_PROGRESS,
        # except a delete that recorded DELETE_COMPLETE and stopped before marking its
        # stack deleted: resuming it finishes that.
        if stack.status != Status.IN_PROGRESS and not half_deleted(stack):
            raise NothingToResumeError(stack.name, stack.state)
        return
    _check_top_level(stack)
    if job.action == Action.DELETE:
        return  # from any state: an action in progress is stopped first (Engine.run)
    if stack.status == Status.IN_PROGRESS:
        raise ActionInProgressError(stack.name, stack.state)
    if not allowed(job.action, stack):
        if job.action in ALLOWED_FROM:
            raise ValidationError(f"Stack {stack.name} is {stack.state}: {job.action} applies only to {ALLOWED_FROM[job.action]}")
        raise ActionInProgressError(stack.name, stack.state)
