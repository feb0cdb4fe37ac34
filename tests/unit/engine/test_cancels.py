"""engine/cancels.py: the cancel requests of many jobs, read once per interval for all."""

from __future__ import annotations

import asyncio

import pytest

from stoker.engine.cancels import CancelWatch
from stoker.store.locks import Fence

INTERVAL_S = 0.01


class Locks:
    """The lock rows' cancel column as engine/cancels.py reads it, counting the reads."""

    def __init__(self) -> None:
        self.requests: dict[tuple[str, str], str] = {}
        self.reads = 0

    def read(self) -> dict[tuple[str, str], str]:
        self.reads += 1
        return dict(self.requests)


def test_many_jobs_are_answered_by_one_read_per_interval():
    locks = Locks()
    watch = CancelWatch(locks.read, INTERVAL_S)
    fences = [Fence(f"stack-{n}", f"token-{n}") for n in range(200)]

    async def scenario() -> tuple[str, list[bool]]:
        waits = [asyncio.create_task(watch.requested(fence)) for fence in fences]
        await asyncio.sleep(INTERVAL_S * 10)
        # Another job of the same stack (an older token) is not this one.
        locks.requests[("stack-7", "token-old")] = "rollback"
        locks.requests[("stack-7", "token-7")] = "delete"
        mode = await asyncio.wait_for(waits[7], timeout=5)
        others = [task.done() for n, task in enumerate(waits) if n != 7]
        for task in waits:
            task.cancel()
        await asyncio.gather(*waits, return_exceptions=True)
        return mode, others

    mode, others = asyncio.run(scenario())
    assert mode == "delete"
    assert not any(others)
    # About one read per interval for all 200 jobs (a poll per job made 200 per interval).
    assert locks.reads < 100, locks.reads


def test_the_poll_stops_when_no_job_waits_and_starts_again_for_the_next():
    locks = Locks()
    watch = CancelWatch(locks.read, INTERVAL_S)

    async def scenario() -> str:
        first = asyncio.create_task(watch.requested(Fence("a", "1")))
        await asyncio.sleep(INTERVAL_S * 3)
        first.cancel()
        await asyncio.gather(first, return_exceptions=True)
        await asyncio.sleep(INTERVAL_S * 3)
        idle_reads = locks.reads
        await asyncio.sleep(INTERVAL_S * 10)
        assert locks.reads <= idle_reads + 1, "the poll went on with no job waiting"
        locks.requests[("b", "2")] = "cancel"
        return await asyncio.wait_for(watch.requested(Fence("b", "2")), timeout=5)

    assert asyncio.run(scenario()) == "cancel"


def test_a_failed_read_ends_every_watch_with_its_error():
    def broken() -> dict[tuple[str, str], str]:
        raise RuntimeError("the lock table is gone")

    watch = CancelWatch(broken, INTERVAL_S)

    async def scenario() -> None:
        await asyncio.gather(*(watch.requested(Fence(f"s{n}", "t")) for n in range(3)))

    with pytest.raises(RuntimeError, match="the lock table is gone"):
        asyncio.run(scenario())
