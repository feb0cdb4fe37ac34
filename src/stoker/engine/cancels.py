"""The cancel requests of the jobs an engine runs, polled for all of them in one read.

A request to stop a job comes through the store (``stack cancel``, a delete of the stack,
a parent on another worker stopping its children): it is the ``cancel`` column of the
stack's lock row, which any process may set. A job learns of it by polling. One poll
per job made a tree of 1000 nested stacks read the store 2000 times a second on the event
loop; here one read each interval answers every job of the loop: the lock rows that carry
a request, matched to the (stack, token) of the jobs waiting.

Owns: the waiting jobs of each event loop and the one task polling for them (it ends when
none waits). A read that fails because the database connection was lost is tried again
at the next interval (the job goes on; its lease decides the rest); any other failure
ends every waiting job's watch with that error, as a job's own poll failing ended it.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Mapping

from stoker.store import connection_loss
from stoker.store.locks import Fence

# (stack id, lock token) -> the cancel mode asked for it.
Requests = Mapping[tuple[str, str], str]


class CancelWatch:
    """``await watch.requested(fence)``: the cancel mode asked for the job holding
    ``fence``, once one is asked."""

    def __init__(self, read: Callable[[], Requests], interval_s: float):
        self._read = read
        self.interval_s = interval_s
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopWatch] = weakref.WeakKeyDictionary()

    async def requested(self, fence: Fence) -> str:
        loop = asyncio.get_running_loop()
        watch = self._loops.get(loop)
        if watch is None:
            watch = self._loops[loop] = _LoopWatch(self)
        return await watch.requested(fence)


class _LoopWatch:
    def __init__(self, owner: CancelWatch):
        self.owner = owner
        self.waiting: dict[tuple[str, str], asyncio.Future[str]] = {}
        self.task: asyncio.Task[None] | None = None

    async def requested(self, fence: Fence) -> str:
        key = (fence.stack_id, fence.token)
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.waiting[key] = future
        if self.task is None or self.task.done():
            self.task = asyncio.create_task(self._poll())
        try:
            return await future
        finally:
            if self.waiting.get(key) is future:
                del self.waiting[key]

    async def _poll(self) -> None:
        while self.waiting:
            await asyncio.sleep(self.owner.interval_s)
            try:
                requests = self.owner._read()
            except Exception as error:  # noqa: BLE001 - lost: asked again; other: every watch ends with it
                if connection_loss.lost(error):
                    continue
                for future in self.waiting.values():
                    if not future.done():
                        future.set_exception(error)
                return
            for key, mode in requests.items():
                waiter = self.waiting.get(key)
                if waiter is not None and not waiter.done():
                    waiter.set_result(mode)
