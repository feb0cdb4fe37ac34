"""Background jobs: how a server runs stack actions without making requests wait.

In serve mode (the API) every job runs as a task on the server's event loop. A request
(from a worker thread, never the loop's own) queues its job and returns once the job has
recorded the stack IN_PROGRESS (or ended), with the stack as stored then; the job goes
on, and the store shows its progress. The CLI does not use this: it runs each job to
its end (``Serving.run``, serving.py).

Whether a job may start is decided by the job itself, under the stack's lock (see
engine/admission): a request's own checks only answer early.

Owns: the job tasks (touched only on the loop), and under ``_lock``, per stack id, the
requests waiting for their job to start.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from typing import Any

from stoker.engine.engine import Engine, Job
from stoker.engine.errors import ActionInProgressError, StackNotFoundError
from stoker.engine.states import STACK_TYPE
from stoker.sdk.exceptions import ValidationError
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
        # stack id -> (action, event) of the requests waiting for that action to start
        self._starting: dict[str, list[tuple[str, threading.Event]]] = {}
        self._lock = threading.Lock()
        # Announced after the commit: the stack row is IN_PROGRESS when this runs.
        engine.listeners = [self._job_started]

    def _job_started(self, event: EventRecord) -> None:
        # Only the job's own action counts: a delete waits for DELETE IN_PROGRESS, not
        # for the end of the action it stopped.
        if event.resource_type != STACK_TYPE:
            return
        with self._lock:
            waiting = self._starting.get(event.stack_id, [])
            matched = [entry for entry in waiting if entry[0] == event.resource_action]
            for entry in matched:
                waiting.remove(entry)
            if not waiting:
                self._starting.pop(event.stack_id, None)
        for _, started in matched:
            started.set()

    def start(self, job: Job) -> StackRecord:
        """Queue the job on the loop and wait until it started (or ended)."""
        started = threading.Event()
        entry = (str(job.action), started)
        with self._lock:
            self._starting.setdefault(job.stack_id, []).append(entry)
        future = asyncio.run_coroutine_threadsafe(self._tracked(self._background(job)), self.loop)
        future.add_done_callback(lambda _: started.set())
        started.wait(JOB_START_WAIT_S)
        with self._lock:
            waiting = self._starting.get(job.stack_id, [])
            if entry in waiting:
                waiting.remove(entry)
            if not waiting:
                self._starting.pop(job.stack_id, None)
        failure = future.exception() if future.done() and not future.cancelled() else None
        if failure is not None:
            raise failure  # e.g. ActionInProgressError: another engine holds it
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
        except (ActionInProgressError, StackNotFoundError, ValidationError):
            raise  # refused before it started: the request answers it
        except Exception as error:  # noqa: BLE001 - the job recorded its end under its lock (Engine.run)
            from stoker.store import connection_loss

            if connection_loss.lost(error):  # the database stayed out of reach: one line
                LOG.error(
                    "stack %s: %s failed: the database could not answer (%s); it is resumed once the database answers",
                    job.stack_id, job.action, connection_loss.database_text(error) or error,
                )  # fmt: skip
                # Its end may not be recorded: the stack would stay IN_PROGRESS until a
                # restart's recovery. Resume it from here instead.
                self.loop.create_task(self._tracked(self._resume_when_reachable(job.stack_id)))
            else:
                LOG.exception("stack %s: %s failed", job.stack_id, job.action)
            raise

    async def _resume_when_reachable(self, stack_id: str) -> None:
        """Resume a stack whose job failed because the database stayed out of reach, as
        a restart's recovery would (``engine.recovery``): tried again after 1, 2, 4 ...
        seconds (at most a lock lease apart) until the stack has left IN_PROGRESS. A lock
        its failed job could not release is waited out (recovery leaves a live holder)."""
        from stoker.engine.recovery import recover
        from stoker.store import connection_loss

        delay = 1.0
        while True:
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.engine.settings.lock_lease_s)
            try:
                stack = self.store.get_stack(stack_id)
                if stack is None or stack.deleted_at is not None or stack.status != "IN_PROGRESS":
                    return
                await recover(self.engine, [stack])
            except Exception as error:  # noqa: BLE001 - logged; tried again while the database is away
                if not connection_loss.lost(error):
                    LOG.exception("stack %s: resuming it failed", stack_id)
                    return

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
