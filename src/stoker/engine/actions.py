"""What every stack action shares: the action context, stack state transitions, and
turning a walk's outcome into the stack's final state and reason."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any, TypeVar

from stoker.engine import implementations
from stoker.engine.lifecycle import ActionContext
from stoker.engine.states import Action, Status
from stoker.graph import WalkOutcome

# a walk's node: a resource name for the forward actions, a stored resource id for delete
N = TypeVar("N", bound=Hashable)


async def stack_started(context: ActionContext, action: Action, **fields: Any) -> None:
    await context.recorder.stack_state(action, Status.IN_PROGRESS, f"Stack {action} started", **fields)
    if action in (Action.CREATE, Action.UPDATE):
        await announce_warnings(context, action)
        await implementations.announce(context, action)  # candidate templates chosen (seed 003)


async def announce_warnings(context: ActionContext, action: Action) -> None:
    """Deprecated types, properties and attributes in use, as stack events."""
    from stoker.engine.validation import support_warnings
    from stoker.environment.registry import UnknownResourceTypeError

    runtime = context.runtime
    classes = {}
    for name, definition in runtime.template.resources.items():
        try:
            classes[name] = runtime.plugin_class(definition.resource_type, name)
        except UnknownResourceTypeError:
            continue
    for warning in support_warnings(runtime.template, classes):
        await context.recorder.stack_event(action, Status.IN_PROGRESS, f"Warning: {warning}")


def outcome_reason(action: Action, outcome: WalkOutcome[N]) -> str:
    """Heat's stack reason: ``Resource CREATE failed: <first failure>``."""
    if outcome.failed:
        error = next(iter(outcome.failed.values()))
        message = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
        return f"Resource {action} failed: {message}"
    if outcome.skipped:
        return f"Resource {action} did not run for {len(outcome.skipped)} resources"
    return f"Stack {action} completed successfully"


async def stack_finished(context: ActionContext, action: Action, outcome: WalkOutcome[N]) -> bool:
    status = Status.COMPLETE if outcome.ok else Status.FAILED
    await context.recorder.stack_state(action, status, outcome_reason(action, outcome))
    return outcome.ok
