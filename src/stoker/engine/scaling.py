"""A signal that changes a nested stack (a ScalingPolicy resizing its group), run
under the owning stack's lock.

Owns the order of such a signal: take the stack's lock, renewed while the resize
runs; call the plugin's ``handle_signal(details)`` in a handler thread (it asks
``NestedStacks`` for the child's update, a job of its own); wait for that job; call
the plugin's ``check_signal_complete(token)`` and wait for the jobs it queued (a
group's load balancers told the new members); write what the plugins noted and the
attributes others read; record the signal's event. The lock is held throughout, so no
stack action starts while the group resizes, and no resize starts while an action
runs: such a signal is refused (409, ActionInProgress), not queued, as Heat drops a
scaling signal its group cannot act on then. Top-level stacks only (the lock taken
is the stack's own).

What this module must not do: decide anything about scaling (the plugins do).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from stoker import faults
from stoker.engine.events import resource_event
from stoker.sdk.exceptions import ResourceNotFoundError
from stoker.store import StackRecord
from stoker.store.locks import Fence, current_fence

if TYPE_CHECKING:
    from stoker.engine.engine import Engine

LOG = logging.getLogger(__name__)


def runs_under_lock(plugin_class: type) -> bool:
    """Whether signals to resources of ``plugin_class`` go through ``signal``."""
    return bool(getattr(plugin_class, "signal_under_lock", False))


async def _renew(engine: Engine, fence: Fence) -> None:
    """Keep the lock's lease while a resize runs (a third of the lease, as a job's
    heartbeat): a lease that ran out lets the store refuse our writes (fencing)."""
    lease_s = engine.settings.lock_lease_s
    while True:
        await asyncio.sleep(lease_s / 3)
        try:
            if not await engine.store.renew_lock_async(fence, lease_s):
                return
        except Exception:  # noqa: BLE001 - retried at the next beat
            LOG.warning("stack %s: could not renew the lock's lease; retrying", fence.stack_id, exc_info=True)


async def signal(engine: Engine, stack_id: str, resource_name: str, details: Mapping[str, Any], accepted: str | None = None) -> None:
    """Run the signal under the stack's lock. ``accepted`` (with workers): the accepted
    action the signal is; it runs only while its row exists, and the row goes, fenced by
    the lock, just before the plugin acts: a worker that dies before then leaves it to be
    queued again (unfinished_jobs), one that dies after leaves the resize it started to
    the recovery (the group's nested stack is IN_PROGRESS)."""
    async with engine.holding(stack_id, accepted=accepted) as stack:
        faults.point("lock-taken")
        if accepted is not None:
            await engine.store.serving.start_accepted_async(accepted)
        fence = current_fence.get()
        renewal = asyncio.create_task(_renew(engine, fence)) if fence is not None else None
        try:
            await _signal_held(engine, stack, resource_name, details)
        finally:
            if renewal is not None:
                renewal.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await renewal


async def _signal_held(engine: Engine, stack: StackRecord, resource_name: str, details: Mapping[str, Any]) -> None:
    runtime = engine.load_runtime(stack)
    record = runtime.current.get(resource_name)
    if record is None:
        raise ResourceNotFoundError(f"The Resource ({resource_name}) could not be found in Stack {stack.name}.")
    # Nested stack jobs are queued on this loop, as a running job's are (Engine.run
    # makes the same choice).
    if engine._loop is None or engine._loop.is_closed() or not engine._children:
        engine._loop = asyncio.get_running_loop()
    # handle_signal and check_signal_complete are the signalled plugin's, not every Resource's
    plugin: Any = runtime.instance(record)
    try:
        token = await engine.runner.call(plugin.handle_signal, dict(details))
    except Exception as error:
        engine.store.events.add_event(resource_event(record, "SIGNAL", "FAILED", f"Signal: {error}"))
        raise
    finally:
        # A child's job the handler queued ends before anything else happens.
        await engine._wait_children(runtime.id)
    failure: Exception | None = None
    result: Any = None
    try:
        result = await engine.runner.call(plugin.check_signal_complete, token)
    except Exception as error:  # noqa: BLE001 - recorded as the signal's outcome, then raised
        failure = error
    finally:
        # The jobs it queued (a group's load balancers told the new members) end too.
        await engine._wait_children(runtime.id)
    # What the plugins noted (membership, cooldown) and the attributes others read
    # (a group's size and members) are written now, before the lock goes.
    for touched in runtime.records:
        instance = runtime.instances.get(touched.id) if touched.id is not None else None
        if instance is None:
            continue
        take = getattr(instance._hooks, "take_pending", None)
        pending = take() if take is not None else None
        # The signalled resource's own only when its signals change them (a Mistral
        # workflow's ``executions``).
        refresh = instance is not plugin or getattr(plugin, "attributes_change_on_signal", False)
        attributes = await engine.runner.call(runtime.attributes_to_store, touched) if refresh else None
        fields = {key: value for key, value in (("data", pending), ("attributes", attributes)) if value is not None}
        if fields:
            engine.store.update_resource(touched, **fields)
    if failure is not None:
        engine.store.events.add_event(resource_event(record, "SIGNAL", "FAILED", f"Signal: {failure}"))
        raise failure
    text = result if result else json.dumps(dict(details), sort_keys=True)
    engine.store.events.add_event(resource_event(record, "SIGNAL", "COMPLETE", f"Signal: {text}"))
