"""The checks a request on an existing stack passes before its job is made: the stack is
top level (a nested stack changes only through its parent's resource), idle, and every
resource type its template names is one the caller may use. Shared by the parts of
``Service`` that act on stacks (``stack_actions``, ``resource_actions``, ``stack_copies``).

They answer at once; the job decides again under the stack's lock (engine/admission.py).
Must not change anything.
"""

from __future__ import annotations

from stoker.engine.engine import Engine
from stoker.engine.errors import ActionInProgressError
from stoker.engine.states import Status
from stoker.sdk.exceptions import ValidationError
from stoker.store import StackRecord, Store


def check_top_level(store: Store, stack: StackRecord) -> None:
    """A nested stack changes only through its parent's resource (which would
    otherwise no longer describe it)."""
    if stack.owner_id is not None:
        parent = store.get_stack(stack.owner_id)
        raise ValidationError(
            f"Stack {stack.name} is nested in stack {parent.name if parent else stack.owner_id} (resource {stack.owner_resource})",
            hint="act on the parent stack; its resource owns this stack",
        )


def check_idle(store: Store, stack: StackRecord) -> None:
    """Top level, and no action in progress."""
    check_top_level(store, stack)
    if stack.status == Status.IN_PROGRESS:
        raise ActionInProgressError(stack.name, stack.state)


def check_resource_types(engine: Engine, stack: StackRecord) -> None:
    """Heat's enforce_stack before a delete, suspend or resume: the caller may use
    every resource type the stack's template names (``validation.type_check``)."""
    from stoker.engine.validation import type_check

    check = type_check.get()
    if check is None or not stack.raw_template_id:
        return
    for definition in engine.load_runtime(stack).template.resources.values():
        if isinstance(definition.resource_type, str):
            check(definition.resource_type)
