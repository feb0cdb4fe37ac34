"""Time as the engine sees it: a real clock, and a fake one for tests.

Every wait in the engine goes through a Clock, so tests with ``FakeClock`` never sleep:
when every task is waiting on the clock and no handler runs in a thread, the fake clock
jumps straight to the earliest deadline.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable


class Clock:
    """Wall time in seconds and an awaitable sleep."""

    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    # Handler threads tell the clock they are busy, so a fake clock never jumps over
    # work in flight. The real clock ignores this.
    def work_started(self) -> None:
        pass

    def work_finished(self) -> None:
        pass

    def watch(self, busy: Callable[[], bool]) -> None:
        """Register a probe for work outside the loop (the store's writer thread)."""


class FakeClock(Clock):
    """A clock that only moves when every waiter is asleep, and then to the next deadline."""

    def __init__(self, start: float = 1_700_000_000.0, idle_rounds: int = 20):
        self._now = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._counter = itertools.count()
        self._busy = 0
        self._jumper: asyncio.Task[None] | None = None
        self._idle_rounds = idle_rounds
        self._probes: list[Callable[[], bool]] = []

    def now(self) -> float:
        return self._now

    def monotonic(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        self._now += seconds

    def work_started(self) -> None:
        self._busy += 1

    def work_finished(self) -> None:
        self._busy -= 1

    def watch(self, busy: Callable[[], bool]) -> None:
        self._probes.append(busy)

    def _working(self) -> bool:
        return self._busy > 0 or any(probe() for probe in self._probes)

    async def sleep(self, seconds: float) -> None:
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        heapq.heappush(self._sleepers, (self._now + max(seconds, 0.0), next(self._counter), future))
        if self._jumper is None or self._jumper.done():
            self._jumper = loop.create_task(self._jump())
        await future

    async def _jump(self) -> None:
        while self._sleepers:
            # Let every runnable task run; threads count as busy.
            idle = 0
            while idle < self._idle_rounds:
                await asyncio.sleep(0)
                idle = 0 if self._working() else idle + 1
            deadline, _, future = heapq.heappop(self._sleepers)
            if future.cancelled():
                continue
            self._now = max(self._now, deadline)
            future.set_result(None)
