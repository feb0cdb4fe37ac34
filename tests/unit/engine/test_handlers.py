"""stoker.engine.handlers: the threads plugin calls run on, seen from the event loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

from stoker.engine.clock import Clock
from stoker.engine.handlers import HandlerRunner


@pytest.fixture
def runner():
    runner = HandlerRunner(Clock(), threads=4)
    yield runner
    runner.close()


def test_call_runs_off_the_loop_and_returns_the_result(runner):
    async def main():
        loop_thread = threading.current_thread()
        return await runner.call(lambda: (threading.current_thread() is not loop_thread, 6 * 7))

    assert asyncio.run(main()) == (True, 42)


def test_call_raises_what_the_function_raised(runner):
    def fail():
        raise ValueError("plugin failed")

    with pytest.raises(ValueError, match="plugin failed"):
        asyncio.run(runner.call(fail))


def test_call_turns_stop_iteration_into_runtime_error(runner):
    def stop():
        raise StopIteration

    with pytest.raises(RuntimeError, match="StopIteration"):
        asyncio.run(runner.call(stop))


def test_many_calls_share_the_threads_and_all_finish(runner):
    running = 0
    most = 0
    lock = threading.Lock()
    gate = threading.Barrier(4, timeout=5)

    def work(index):
        nonlocal running, most
        with lock:
            running += 1
            most = max(most, running)
        if index < 4:
            gate.wait()  # the first four run at once: one thread each
        with lock:
            running -= 1
        return index

    async def main():
        return await asyncio.gather(*(runner.call(work, index) for index in range(200)))

    assert asyncio.run(main()) == list(range(200))
    assert most == 4
    assert len(runner.threads._threads) == 4


def test_a_call_cancelled_before_a_thread_takes_it_does_not_run(runner):
    ran = []
    release = threading.Event()

    async def main():
        blockers = [asyncio.ensure_future(runner.call(release.wait, 5)) for _ in range(4)]
        await asyncio.sleep(0.05)  # every thread is busy
        queued = asyncio.ensure_future(runner.call(ran.append, "ran"))
        await asyncio.sleep(0)
        queued.cancel()
        await asyncio.sleep(0.01)
        release.set()
        await asyncio.gather(*blockers)

    asyncio.run(main())
    runner.close()
    assert ran == []


def test_close_finishes_queued_calls_and_stops_the_threads():
    runner = HandlerRunner(Clock(), threads=2)
    done = []

    async def main():
        await asyncio.gather(*(runner.call(done.append, index) for index in range(10)))

    asyncio.run(main())
    threads = list(runner.threads._threads)
    runner.close()

    assert sorted(done) == list(range(10))
    assert not any(thread.is_alive() for thread in threads)
