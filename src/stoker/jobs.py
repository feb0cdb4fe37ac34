"""Background jobs: how a server runs stack actions without making requests wait.

In serve mode (the API) every job runs as a task on the server's event loop. A request
(from a worker thread, never the loop's own) queues its job and returns once the job has
recorded the stack IN_PROGRESS (or ended), with the stack as stored then; the job goes
on, and the store shows its progress. The CLI does not use this: it runs each job to
its end (``Service._run``).

Owns: the job tasks (touched only on the loop), and under ``_lock``, per stack id, the
requests waiting for their job to start and the latest job requested.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import threading
from typing import Any

from stoker.engine.engine import Engine, Job
from stoker.engine.errors import ActionInProgressError, StackNotFoundError
from stoker.engine.events import Recorder
from stoker.engine.states import STACK_TYPE, Action, Status
from stoker.store import EventRecord, StackRecord, Store

LOG = logging.getLogger(__name__)

# How long a request waits for its job to record the stack IN_PROGRESS before it
# answers anyway (seconds); the job goes on either way.
JOB_START_WAIT_S = 30.0


class BackgroundJobs:
    def __init__(self, engine: Engine, store: Store, loop: asyncio.AbstractEventLoop):
        self.engine = engine
        self.store = store
        self.loop = loop
        self._tasks: set[asyncio.Task[Any]] = set()
        self._starting: dict[str, list[threading.Event]] = {}
        self._latest: dict[str, concurrent.futures.Future[Any]] = {}
        self._lock = threading.Lock()
        # Announced after the commit: the stack row is IN_PROGRESS when this runs.
        engine.listeners = [self._job_started]

    def _job_started(self, event: EventRecord) -> None:
        if event.resource_type != STACK_TYPE:
            return
        with self._lock:
            waiting = self._starting.pop(event.stack_id, [])
        for started in waiting:
            started.set()

    def start(self, job: Job) -> StackRecord:
        """Queue the job on the loop and wait until it started (or ended)."""
        with self._lock:
            previous = self._latest.get(job.stack_id)
        if previous is not None and not previous.done():
            # The stack row has left IN_PROGRESS (the request's checks passed), so that
            # job is only releasing the lock: wait for it rather than answer "busy".
            with contextlib.suppress(Exception):
                previous.result(JOB_START_WAIT_S)
        started = threading.Event()
        with self._lock:
            self._starting.setdefault(job.stack_id, []).append(started)
        future = asyncio.run_coroutine_threadsafe(self._tracked(self._background(job)), self.loop)
        with self._lock:
            self._latest[job.stack_id] = future

        def finished(done: concurrent.futures.Future[Any]) -> None:
            with self._lock:
                if self._latest.get(job.stack_id) is done:
                    del self._latest[job.stack_id]
            started.set()

        future.add_done_callback(finished)
        started.wait(JOB_START_WAIT_S)
        with self._lock:
            waiting = self._starting.get(job.stack_id, [])
            if started in waiting:
                waiting.remove(started)
        if future.done() and not future.cancelled() and future.exception() is not None:
            raise future.exception()  # e.g. ActionInProgressError: another engine holds it
        stack = self.store.get_stack(job.stack_id)
        assert stack is not None
        return stack

    async def _tracked(self, coroutine: Any) -> Any:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            return await coroutine
        finally:
            self._tasks.discard(task)

    async def _background(self, job: Job) -> StackRecord:
        try:
            return await self.engine.run(job)
        except (ActionInProgressError, StackNotFoundError):
            raise
        except Exception as error:  # noqa: BLE001 - no request waits on it: the store must show the end
            LOG.exception("stack %s: %s failed", job.stack_id, job.action)
            stack = self.store.get_stack(job.stack_id)
            if stack is not None and stack.status == Status.IN_PROGRESS:
                reason = f"Engine error during {stack.action}: {type(error).__name__}: {error}"
                await Recorder(self.store, stack).stack_state(Action(stack.action), Status.FAILED, reason)
            raise

    def recover(self, stacks: list[StackRecord]) -> list[StackRecord]:
        """Start finishing, on the loop, the actions a dead engine left IN_PROGRESS;
        returns those stacks (their jobs go on in the background)."""
        from stoker.engine.recovery import recover

        if stacks:
            asyncio.run_coroutine_threadsafe(self._tracked(recover(self.engine, stacks)), self.loop)
        return stacks

    async def stop(self) -> None:
        """At shutdown: stop the running jobs. Their stacks stay IN_PROGRESS with the lock
        released, so the next start's recovery finishes them."""
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        # Each job's own cleanup (releasing its lock) runs before the store closes.
        await asyncio.gather(*tasks, return_exceptions=True)
