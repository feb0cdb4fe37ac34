"""Recovery: finish the actions of stacks whose engine stopped mid-way.

A stack still IN_PROGRESS whose lock is free, expired, or held by a process on this host
that no longer exists was abandoned by a crash. Its action is run again in resume mode:
resources already COMPLETE are left alone, interrupted handlers are polled on from their
persisted token, and an interruption with no token is recorded as FAILED with the reason
"Engine restarted during ...". Either way the stack leaves IN_PROGRESS.

So is a stack whose delete recorded DELETE_COMPLETE and whose process died before it
marked the stack deleted (``admission.half_deleted``): resuming its delete finishes it
(its rows go, its name is free, its lock is released).

A stack tree the store already holds over the resource limit (engine/trees.py: made
before the limit counted whole trees, or the limit lowered since) is not resumed: going
on would make more of what already overwhelms the engine. Its abandoned stacks are
finished FAILED instead, with the reason and the fix, so a restart cannot bring the
same overload back.
"""

from __future__ import annotations

import uuid

from stoker.engine import trees
from stoker.engine.admission import half_deleted
from stoker.engine.engine import Engine, Job
from stoker.engine.errors import ActionInProgressError, NothingToResumeError
from stoker.engine.events import Recorder
from stoker.engine.states import Action, Status
from stoker.store import StackRecord, Store
from stoker.store.locks import Fence, LockHolder, current_fence
from stoker.store.repository import utcnow


def abandoned_with_holders(store: Store) -> list[tuple[StackRecord, LockHolder | None]]:
    """The abandoned stacks, each with its lock's dead holder (None: no lock row), read
    from the store alone: what a command that only reads needs to say which stacks wait
    for recovery."""
    now = utcnow()
    found = []
    for stack in store.stacks_unfinished():
        holder = store.lock_holder(stack.id)
        if holder is None or not holder.alive(now):
            found.append((stack, holder))
    return found


def abandoned(store: Store) -> list[StackRecord]:
    return [stack for stack, _ in abandoned_with_holders(store)]


async def recover(engine: Engine, stacks: list[StackRecord] | None = None) -> list[StackRecord]:
    """Resume every abandoned stack (finish those of trees over the resource limit as
    FAILED); returns the stacks as they ended."""
    found = abandoned(engine.store) if stacks is None else stacks
    finished = await _finish_trees_over_limit(engine, found)
    done = {stack.id for stack in finished}
    # Parents first: a parent's resumed action drives its nested stacks (its resources
    # poll them), so by the time a child's turn comes it is usually finished; one that
    # is still abandoned (its parent resource failed before it waited) is resumed here.
    for stack in sorted(found, key=lambda s: s.nested_depth):
        if stack.id in done:
            continue
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


async def _finish_trees_over_limit(engine: Engine, found: list[StackRecord]) -> list[StackRecord]:
    """Fail, without resuming them, the abandoned stacks of every tree whose stored
    resources are over ``max_resources_per_stack``: deepest first, each under its lock."""
    limit = engine.settings.max_resources_per_stack
    if limit < 0 or not found:
        return []
    by_root: dict[str, list[StackRecord]] = {}
    for stack in found:
        by_root.setdefault(trees.root_of(engine.store, stack).id, []).append(stack)
    finished = []
    for root_id, members in by_root.items():
        size = engine.store.count_tree_resources(root_id)
        if size <= limit:
            continue
        for stack in sorted(members, key=lambda s: s.nested_depth, reverse=True):
            ended = await _fail_unresumed(engine, stack, trees.over_limit_reason(size, limit, stack.action))
            if ended is not None:
                finished.append(ended)
    return finished


async def _fail_unresumed(engine: Engine, stack: StackRecord, reason: str) -> StackRecord | None:
    """Record an abandoned stack and its resources in progress FAILED with ``reason``,
    holding its lock (None: another engine holds it, or it has left IN_PROGRESS)."""
    fence = Fence(stack.id, str(uuid.uuid4()))
    admitted: list[StackRecord] = []

    def admit(current: StackRecord | None) -> None:
        if current is None or current.status != Status.IN_PROGRESS or current.deleted_at is not None:
            raise NothingToResumeError(stack.name, current.state if current is not None else "gone")
        admitted[:] = [current]

    try:
        if engine.store.acquire_lock(stack.id, fence.token, engine.engine_id, engine.settings.lock_lease_s, admit) is not None:
            return None  # a live engine took it meanwhile
    except NothingToResumeError:
        return None
    previous = current_fence.set(fence)
    try:
        current = admitted[0]
        recorder = Recorder(engine.store, current, list(engine.listeners))
        for record in engine.store.list_resources(current.id, status=str(Status.IN_PROGRESS)):
            await recorder.resource_state(record, Action(record.action), Status.FAILED, reason)
        await recorder.stack_state(Action(current.action), Status.FAILED, reason)
        return current
    finally:
        engine.store.release_lock(fence)
        current_fence.reset(previous)
