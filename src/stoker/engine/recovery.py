"""Recovery: finish the actions of stacks whose engine stopped mid-way.

A stack still IN_PROGRESS whose lock is free, expired, or held by a process on this host
that no longer exists was abandoned by a crash. Its action is run again in resume mode:
resources already COMPLETE are left alone, interrupted handlers are polled on from their
persisted token, and an interruption with no token is recorded as FAILED with the reason
"Engine restarted during ...". Either way the stack leaves IN_PROGRESS.

So is a stack whose delete recorded DELETE_COMPLETE and whose process died before it
marked the stack deleted (``admission.half_deleted``): resuming its delete finishes it
(its rows go, its name is free, its lock is released).
"""

from __future__ import annotations

from stoker.engine.admission import half_deleted
from stoker.engine.engine import Engine, Job
from stoker.engine.errors import ActionInProgressError
from stoker.engine.states import Action
from stoker.store import StackRecord
from stoker.store.locks import LockHolder
from stoker.store.repository import utcnow


def abandoned_with_holders(engine: Engine) -> list[tuple[StackRecord, LockHolder | None]]:
    """The abandoned stacks, each with its lock's dead holder (None: no lock row)."""
    now = utcnow()
    found = []
    for stack in engine.store.stacks_unfinished():
        holder = engine.store.lock_holder(stack.id)
        if holder is None or not holder.alive(now):
            found.append((stack, holder))
    return found


def abandoned(engine: Engine) -> list[StackRecord]:
    return [stack for stack, _ in abandoned_with_holders(engine)]


async def recover(engine: Engine, stacks: list[StackRecord] | None = None) -> list[StackRecord]:
    """Resume every abandoned stack; returns the stacks as they ended."""
    finished = []
    # Parents first: a parent's resumed action drives its nested stacks (its resources
    # poll them), so by the time a child's turn comes it is usually finished; one that
    # is still abandoned (its parent resource failed before it waited) is resumed here.
    for stack in sorted(
        abandoned(engine) if stacks is None else stacks, key=lambda s: s.nested_depth
    ):
        current = engine.store.get_stack(stack.id)
        if current is None or current.deleted_at is not None or (current.status != "IN_PROGRESS" and not half_deleted(current)):
            continue
        holder = engine.store.lock_holder(stack.id)
        if holder is not None and holder.alive(utcnow()):
            continue
        try:
            finished.append(await engine.run(Job(stack.id, Action(current.action), resume=True)))
        except ActionInProgressError:
            continue  # another engine took it over first
    return finished
