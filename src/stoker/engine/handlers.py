"""The one table through which the engine calls plugin handlers, and the runner that
calls them off the event loop and polls ``check_<action>_complete``.

Heat found handlers with ``getattr(self, 'check_%s_complete' % action)``; a misspelt or
missing method then failed only at run time. Here every handler pair is named once, in
``HANDLERS``, and the conformance tests call each pair of each built-in plugin.
"""

from __future__ import annotations

import asyncio
import functools
import queue
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from stoker.engine.clock import Clock
from stoker.engine.states import Action
from stoker.engine.trees import TreeShares, current_tree
from stoker.sdk.resource import Resource
from stoker.sdk.stack_resource import StackResource
from stoker.store.locks import current_fence


@dataclass(frozen=True)
class HandlerPair:
    handle: str
    check: str | None


# Deletion with deletion_policy Snapshot: back up, then delete (seed 001).
SNAPSHOT_DELETE = "SNAPSHOT_DELETE"
# Deleting one stored snapshot of a resource.
DELETE_SNAPSHOT = "DELETE_SNAPSHOT"

HANDLERS: Mapping[str, HandlerPair] = MappingProxyType(
    {
        SNAPSHOT_DELETE: HandlerPair("handle_snapshot_delete", "check_delete_complete"),
        DELETE_SNAPSHOT: HandlerPair("handle_delete_snapshot", "check_delete_snapshot_complete"),
        Action.CREATE: HandlerPair("handle_create", "check_create_complete"),
        Action.UPDATE: HandlerPair("handle_update", "check_update_complete"),
        Action.DELETE: HandlerPair("handle_delete", "check_delete_complete"),
        Action.SUSPEND: HandlerPair("handle_suspend", "check_suspend_complete"),
        Action.RESUME: HandlerPair("handle_resume", "check_resume_complete"),
        Action.SNAPSHOT: HandlerPair("handle_snapshot", "check_snapshot_complete"),
        Action.CHECK: HandlerPair("handle_check", "check_check_complete"),
        Action.ADOPT: HandlerPair("handle_adopt", None),
    }
)


def handler_pair(resource: Resource | type[Resource], action: str) -> tuple[Callable[..., Any] | None, Callable[[Any], bool] | None]:
    """The bound handler and check methods for ``action`` (None when not implemented)."""
    pair = HANDLERS[action]
    handle = getattr(resource, pair.handle, None)
    check = getattr(resource, pair.check, None) if pair.check else None
    return handle, check


@dataclass
class Outcome:
    token: Any
    done: bool
    extra: Any = None


class _Threads:
    """A bounded set of threads running calls for event loops.

    ``loop.run_in_executor`` costs, per call, a concurrent Future with its own condition
    and lock, a chained asyncio future, and one wake-up of the loop (a write to its
    self-pipe) when the call ends. Here a call is its asyncio future and function; calls
    that end while the loop has not yet collected earlier ones are handed back with
    them, in one wake-up per loop.

    A call runs with the fence (store.locks) of the job that submitted it, so what a
    plugin persists from its handler is refused once that job has lost its lock.

    Threads start as needed, up to ``limit``, and stop at ``close`` after the calls
    already queued. A call whose future was cancelled before a thread took it is
    skipped (as the executor skips a cancelled concurrent Future); one already running
    finishes, and its result is dropped.
    """

    def __init__(self, limit: int, name: str):
        self.limit = limit
        self.name = name
        self._calls: queue.SimpleQueue[tuple[asyncio.AbstractEventLoop, asyncio.Future[Any], Callable[[], Any], Any] | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []
        # Guards _idle, _queued, _threads and _finished. A thread starts when the calls
        # queued outnumber the idle threads. _finished holds, per loop, the calls ended
        # since that loop last collected; a loop has an entry exactly while a
        # collection of it is scheduled.
        self._lock = threading.Lock()
        self._idle = 0
        self._queued = 0
        self._finished: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], Any, BaseException | None]]] = {}

    def submit(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], function: Callable[[], Any]) -> None:
        with self._lock:
            self._queued += 1
            if self._queued > self._idle and len(self._threads) < self.limit:
                thread = threading.Thread(target=self._work, name=f"{self.name}_{len(self._threads)}", daemon=True)
                self._threads.append(thread)
                self._idle += 1  # idle from now: the calls queued meanwhile count it
                thread.start()
        self._calls.put((loop, future, function, current_fence.get()))

    def close(self) -> None:
        with self._lock:
            threads, self._threads = self._threads, []
        for _ in threads:
            self._calls.put(None)
        for thread in threads:
            thread.join()

    def _work(self) -> None:
        while True:
            call = self._calls.get()
            with self._lock:
                self._idle -= 1
                if call is not None:
                    self._queued -= 1
            if call is None:
                return
            loop, future, function, fence = call
            if not future.cancelled():
                current_fence.set(fence)
                try:
                    outcome: tuple[Any, BaseException | None] = (function(), None)
                except StopIteration as error:  # a future cannot carry it (as in coroutines)
                    outcome = (None, RuntimeError(f"StopIteration raised by plugin code: {error!r}"))
                except BaseException as error:  # noqa: BLE001 - handed to the caller
                    outcome = (None, error)
                self._finish(loop, future, outcome)
            with self._lock:
                self._idle += 1

    def _finish(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any], outcome: tuple[Any, BaseException | None]) -> None:
        with self._lock:
            finished = self._finished.get(loop)
            wake = finished is None
            if finished is None:
                finished = self._finished[loop] = []
            finished.append((future, *outcome))
        if wake:
            try:
                loop.call_soon_threadsafe(self._collect, loop)
            except RuntimeError:  # the loop has closed; nobody is waiting any more
                with self._lock:
                    self._finished.pop(loop, None)

    def _collect(self, loop: asyncio.AbstractEventLoop) -> None:
        with self._lock:
            finished = self._finished.pop(loop, [])
        for future, result, error in finished:
            if future.cancelled():
                continue
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(result)


# Seconds a nested stack resource waits for its child's job to end on this loop before it
# checks anyway.
WOKEN_POLL_MAX_S = 30.0


def _wake_key(resource: Resource) -> str | None:
    """The stack whose job's end a resource's poll waits for: a nested stack resource's
    child (its physical id)."""
    return resource.resource_id if isinstance(resource, StackResource) else None


class HandlerRunner:
    """Runs blocking plugin code in a bounded thread pool and polls for completion.

    ``threads`` bounds how many handler calls run at once, and ``tree_calls`` how many
    of them one stack tree may run (``trees.TreeShares``); waiting between polls takes
    no thread. Polls back off from
    ``poll_initial_s`` growing by half each time up to ``poll_max_s`` (both in
    seconds): quick resources finish quickly, slow ones cost few polls.
    """

    def __init__(self, clock: Clock, threads: int = 8, poll_initial_s: float = 0.01, poll_max_s: float = 2.0, tree_calls: int = -1):
        self.clock = clock
        self.threads = _Threads(threads, "stoker-handler")
        # At most ``tree_calls`` calls of one stack tree at once (the job's tree, from
        # ``trees.current_tree``); the rest of the threads serve other trees.
        self.shares = TreeShares(tree_calls)
        self.poll_initial_s = poll_initial_s
        self.poll_max_s = poll_max_s
        # Whether the job of the stack with this id runs on this loop now (set by the
        # engine): a poll whose resource's physical id is such a stack (a nested stack
        # resource waiting for its child) waits for ``wake`` instead of polling.
        self.running_here: Callable[[str], bool] = lambda stack_id: False
        # physical id -> the event its poll waits on (``wake``)
        self._wakers: dict[str, asyncio.Event] = {}

    def close(self) -> None:
        self.threads.close()

    def wake(self, stack_id: str) -> None:
        """The job of ``stack_id`` ended on this loop: the resource that waits for it (its
        owner's nested stack resource) checks at once. Called on the loop."""
        event = self._wakers.get(stack_id)
        if event is not None:
            event.set()

    async def call(self, function: Callable[..., Any], *args: Any) -> Any:
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self.clock.work_started()
        try:
            async with self.shares.held(current_tree.get()):
                self.threads.submit(loop, future, functools.partial(function, *args) if args else function)
                return await future
        finally:
            self.clock.work_finished()

    async def run(
        self,
        resource: Resource,
        action: str,
        args: tuple = (),
        *,
        before: Callable[[], None] | None = None,
        after: Callable[[], Any] | None = None,
        on_token: Callable[[Any], Awaitable[None]] | None = None,
    ) -> Any:
        """Run ``before``, the handler, the first check and ``after`` in one thread hop;
        then, if not done, record the token and poll. Returns what ``after`` returned."""
        handle, check = handler_pair(resource, action)

        def start() -> Outcome:
            if before is not None:
                before()
            token = handle(*args) if handle is not None else None
            done = check is None or bool(check(token))
            return Outcome(token, done, after() if done and after is not None else None)

        outcome: Outcome = await self.call(start)
        if outcome.done:
            return outcome.extra
        if on_token is not None:
            await on_token(outcome.token)
        assert check is not None
        return await self._poll(check, outcome.token, after, wake_key=_wake_key(resource))

    async def resume(self, resource: Resource, action: str, token: Any, *, after: Callable[[], Any] | None = None) -> Any:
        """Carry on polling a handler whose token was persisted before an engine restart."""
        _, check = handler_pair(resource, action)
        if check is None:
            return await self.call(after) if after is not None else None
        return await self._poll(check, token, after, first_delay=0.0, wake_key=_wake_key(resource))

    async def _until_woken(self, key: str) -> None:
        """Wait until ``wake(key)``, or WOKEN_POLL_MAX_S (a safety net: the child's job
        may have ended in a way that wakes no one)."""
        event = self._wakers.setdefault(key, asyncio.Event())
        sleeper = asyncio.ensure_future(self.clock.sleep(WOKEN_POLL_MAX_S))
        waker = asyncio.ensure_future(event.wait())
        try:
            await asyncio.wait({sleeper, waker}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()
            waker.cancel()
            if self._wakers.get(key) is event:
                del self._wakers[key]

    async def _poll(self, check: Callable[[Any], bool], token: Any, after: Callable[[], Any] | None, first_delay: float | None = None, wake_key: str | None = None) -> Any:
        def poll() -> Outcome:
            done = bool(check(token))
            return Outcome(token, done, after() if done and after is not None else None)

        delay = self.poll_initial_s if first_delay is None else first_delay
        while True:
            if wake_key is not None and self.running_here(wake_key):
                # The child's job runs on this loop: its end wakes this poll (a tree of
                # 1000 nested stacks polled each child's row every 2 s for the whole create).
                await self._until_woken(wake_key)
            elif delay:
                await self.clock.sleep(delay)
            outcome = await self.call(poll)
            if outcome.done:
                return outcome.extra
            delay = min(max(delay, self.poll_initial_s) * 1.5, self.poll_max_s)
