"""Nested stacks' jobs, the engine's side (a mixin of ``Engine``): started on the running
loop, or with workers on the queue (``workers.ChildJobs``, ``Engine.child_jobs``); an
interrupted child restarted by its parent's poll (``adopt_orphan``); the children of a
stack whose action stops, stopped and waited for, wherever they run.

What it owns: the tasks of the children on this loop (``_children``, ``_submitted``) and
the stop of children on other workers through their lock rows (the ``parent`` cancel).
What it must not do: decide anything about a child's stack (``engine.nested`` does,
from the parent's handler threads) or run a job itself (``Engine.run`` does).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from stoker.engine.errors import ActionInProgressError, NothingToResumeError
from stoker.engine.events import Recorder
from stoker.engine.states import Action, Status
from stoker.store import StackRecord, Store
from stoker.store.locks import Fence, LockHolder, current_fence

if TYPE_CHECKING:
    from stoker.engine.engine import EngineSettings, Job
    from stoker.engine.handlers import HandlerRunner

LOG = logging.getLogger(__name__)


class NestedJobs:
    """How an ``Engine`` runs and stops nested stacks' jobs; ``Engine`` gives the store,
    settings, its id, ``run`` and the stop requests of the jobs it runs."""

    store: Store
    settings: EngineSettings
    engine_id: str
    _loop: asyncio.AbstractEventLoop | None
    _children: dict[str, tuple[str, asyncio.Task[Any]]]
    _submitted: set[str]
    _submit_lock: threading.Lock
    _stop_requests: dict[str, asyncio.Future[tuple[str, bool | None]]]
    child_jobs: Any
    run: Callable[[Job], Awaitable[StackRecord]]

    if TYPE_CHECKING:

        @property
        def runner(self) -> HandlerRunner: ...

    def submit(self, job: Job, owner_id: str) -> None:
        """Start a nested stack's job (callable from any thread): on the queue for any
        worker with workers, else on the running loop. With workers, a tree that holds
        its share of the queue already (``Settings.max_jobs_per_tree``) runs its further
        children here, in the slot of the parent's job."""
        if self.child_jobs is not None and self.child_jobs.enqueue_in_share(job, owner_id):
            return
        self._submit_here(job, owner_id)

    def _submit_here(self, job: Job, owner_id: str) -> None:
        loop = self._loop
        if loop is None:
            raise RuntimeError("nested stack jobs need a running engine job")
        with self._submit_lock:
            self._submitted.add(job.stack_id)
        loop.call_soon_threadsafe(self._start_child, job, owner_id)

    def _start_child(self, job: Job, owner_id: str) -> None:
        task = asyncio.get_running_loop().create_task(self._run_child(job))
        self._children[job.stack_id] = (owner_id, task)

    async def _run_child(self, job: Job) -> None:
        try:
            await self.run(job)
        except ActionInProgressError:
            pass  # another engine runs it; the parent's poll follows its state
        except Exception:  # noqa: BLE001 - run() recorded the end under the lock; a child
            # whose job never started stays IN_PROGRESS and the parent's poll restarts it.
            LOG.exception("nested stack %s: %s failed", job.stack_id, job.action)
        finally:
            self._children.pop(job.stack_id, None)
            with self._submit_lock:
                self._submitted.discard(job.stack_id)
            # The owner's nested stack resource waits for this (HandlerRunner.wake).
            self.runner.wake(job.stack_id)

    def adopt_orphan(self, child: StackRecord) -> None:
        """Restart a nested stack's interrupted job when no live engine runs it (called by
        the parent's poll, so a child left by a dead engine is finished by its parent)."""
        from stoker.store.repository import utcnow

        with self._submit_lock:
            if child.id in self._submitted:
                return
        holder = self.store.lock_holder(child.id)
        if holder is not None and holder.alive(utcnow()):
            return
        if self.child_jobs is not None:
            # Queued and not taken yet, taken, or lost: the queue's side decides.
            job = self.child_jobs.orphan(child)
            if job is not None:
                self._submit_here(job, owner_id=child.owner_id or "")
            return
        from stoker.engine.engine import Job

        self.submit(Job(child.id, Action(child.action), resume=True), owner_id=child.owner_id or "")

    async def stop_children(self, stack_id: str, reason: str) -> None:
        """Stop the running nested stacks of a stack whose action is being stopped, and
        wait for them (each stops its own children the same way)."""
        tasks = []
        for child_id, (owner_id, task) in list(self._children.items()):
            if owner_id != stack_id:
                continue
            request = self._stop_requests.get(child_id)
            if request is not None and not request.done():
                request.set_result((reason, False))
            tasks.append(task)
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        if self.child_jobs is not None:
            await self._stop_queued_children(stack_id, reason)

    async def _wait_children(self, stack_id: str) -> None:
        while True:
            tasks = [
                task for owner_id, task in list(self._children.values()) if owner_id == stack_id
            ]
            if not tasks:
                break
            await asyncio.gather(*tasks, return_exceptions=True)
        if self.child_jobs is None:
            return
        # Children on the queue or on other workers: the parent's lock is held until they
        # end, as for children on this loop. One that no engine runs is adopted (its job
        # taken back from the queue after a while, or resumed when its worker died).
        while True:
            running = await asyncio.to_thread(self._running_children, stack_id)
            if not running:
                adopted = [task for owner_id, task in list(self._children.values()) if owner_id == stack_id]
                await asyncio.gather(*adopted, return_exceptions=True)
                return
            for child, holder in running:
                if holder is None:
                    await asyncio.to_thread(self.adopt_orphan, child)
            await asyncio.sleep(self.settings.cancel_poll_s)

    def _running_children(self, stack_id: str) -> list[tuple[StackRecord, LockHolder | None]]:
        """A stack's live children IN_PROGRESS, each with its lock's live holder (None:
        no engine runs it now: its job waits in the queue, or its engine died)."""
        from stoker.store.repository import utcnow

        now = utcnow()
        found = []
        for child in self.store.child_stacks(stack_id):
            if child.deleted_at is not None or child.status != Status.IN_PROGRESS:
                continue
            holder = self.store.lock_holder(child.id)
            found.append((child, holder if holder is not None and holder.alive(now) else None))
        return found

    async def _stop_queued_children(self, stack_id: str, reason: str) -> None:
        """Stop a stack's children whose jobs run on other workers (through the store:
        the ``parent`` cancel their jobs poll), and wait until none runs. A child that no
        engine runs (its job not taken yet, or its worker dead) is stopped here: its
        waiting job is cancelled and it is recorded FAILED under its own lock."""
        while True:
            running = await asyncio.to_thread(self._running_children, stack_id)
            if not running:
                return
            for child, holder in running:
                if holder is not None:
                    # Asked again each round: a job that took the lock since cleared it.
                    await asyncio.to_thread(self.store.request_cancel, child.id, "parent")
                    continue
                await asyncio.to_thread(self.child_jobs.cancel, child.id)
                await self._fail_unheld(child, reason)
            await asyncio.sleep(self.settings.cancel_poll_s)

    async def _fail_unheld(self, child: StackRecord, reason: str) -> None:
        """Record a child that no engine runs FAILED, holding its lock meanwhile (a worker
        that takes its job now is refused; one that took it first is asked to stop)."""
        fence = Fence(child.id, str(uuid.uuid4()))

        def admit(stack: StackRecord | None) -> None:
            if stack is None or stack.status != Status.IN_PROGRESS or stack.deleted_at is not None:
                raise NothingToResumeError(child.name, stack.state if stack is not None else "gone")

        try:
            if self.store.acquire_lock(child.id, fence.token, self.engine_id, self.settings.lock_lease_s, admit) is not None:
                return  # an engine has it now: the next round asks it to stop
        except NothingToResumeError:
            return
        previous = current_fence.set(fence)
        try:
            await self.stop_children(child.id, reason)
            current = self.store.get_stack(child.id)
            assert current is not None
            await Recorder(self.store, current).stack_state(Action(current.action), Status.FAILED, f"the parent stack's action stopped: {reason}")
        finally:
            self.store.release_lock(fence)
            current_fence.reset(previous)
