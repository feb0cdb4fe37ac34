"""Stack actions as jobs on procrastinate, for several worker processes on PostgreSQL.

procrastinate is a maintained job queue that lives in PostgreSQL itself: the enqueue is
a row written in the caller's transaction, workers take jobs with ``SELECT ... FOR
UPDATE SKIP LOCKED``, wake on ``LISTEN/NOTIFY``, send heartbeats, and stop gracefully on
SIGTERM. stoker adds no queue of its own; what it keeps is what it already had:

- **The stack lock is the guard.** A job runs ``Engine.run``, which takes the stack's
  lock (a lease with a fencing token) before it acts. Two deliveries of one job, or a
  job and a recovery, cannot act at once: the second is refused (``ActionInProgressError``)
  and ends without acting.
- **The enqueue commits with the state change that asks for it.** A new stack's row (and
  its credential) and its CREATE job are one transaction (``Service.create_stack``), so
  there is never a stack whose create nobody will run, nor a job for a stack that does
  not exist. Every job the API enqueues is committed with its accepted action's row
  (``tables.accepted_actions``), which the job deletes in the transaction that records
  the stack IN_PROGRESS: while the row exists, the action has not started.
- **An accepted action runs once.** A job whose worker died (its heartbeat stopped) is
  settled by another worker, under the job's row lock (so two workers never settle one
  job): when its accepted action never started, the job goes back to the queue for any
  worker to run (once nothing holds the stack's lock); when it started, the job is
  marked failed and the action is the recovery's. A job of an accepted action starts it
  only while its row exists (``admission.admit``), so a second delivery of a job whose
  action has started does nothing.
- **A worker that dies mid-action** (SIGKILL, a lost host) stops renewing its stack locks
  and its queue heartbeat. Every worker looks, every ``recovery_interval_s`` (a sixth of
  the lease), first at stalled jobs (a heartbeat older than the lease), then at stacks
  IN_PROGRESS, or DELETE_COMPLETE and not yet marked deleted, whose lock has expired or
  is free (``engine.recovery.abandoned``), and queues a resume of each (persisted handler
  tokens polled on, as after an engine restart): at once when a dead holder's lock
  names it, at the second look in a row when no lock does (a nested stack its parent has
  just moved IN_PROGRESS is not abandoned: its job is about to take it). The lock, and
  the queue's queueing lock, decide which worker runs it.
- **SIGTERM**: the worker stops taking jobs and lets running actions finish for
  ``shutdown_graceful_timeout_s``; actions still running then are cancelled, which
  releases their locks with the stacks IN_PROGRESS, and another worker resumes them. A
  job of an accepted action cancelled before the action started ends ``aborted`` with
  the action's row kept, and another worker's look queues it again
  (``requeue_handed_back_jobs``).

- **Nested stacks' jobs** are jobs too (``ChildJobs``), so a tree of stacks spreads over
  the workers; a child whose job no worker takes soon is run by its parent's worker, so
  a tree never waits forever for a free slot. A parent that stops asks its children to
  stop through their lock rows (``Engine.stop_children``).
- **A scaling signal** is a job too (``SIGNAL_TASK``): the API answers once it is queued;
  it is an accepted action, run once like the others (``engine.scaling.signal``).

A job's arguments hold the ``Job`` sealed (store.sealing): an update's parameters and
adopt data carry the user's values, hidden ones included, and procrastinate's table is
in the same database as everything else that is sealed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stoker import faults
from stoker.engine.engine import Engine, Job
from stoker.engine.errors import ActionInProgressError, ActionStartedError, StackNotFoundError
from stoker.engine.states import STACK_TYPE, Action
from stoker.job_queue import (
    QUEUE,
    SIGNAL_TASK,
    TASK,
    bounded_lock_wait,
    cancel_waiting_job,
    connection_lost,
    enqueue_on,
    ensure_schema,
    job_from_arguments,
    lock_wait_ran_out,
    make_app,
    pending_job_stacks,
    tree_jobs_held,
    waiting_job,
)
from stoker.jobs import JOB_START_WAIT_S, BackgroundJobs
from stoker.sdk.exceptions import StokerError
from stoker.store import StackRecord, Store
from stoker.store.writer import Alone
from stoker.unfinished_jobs import requeue_handed_back_jobs, settle_stalled_job

LOG = logging.getLogger(__name__)

# Seconds between a request's looks at whether its job has started: the first look
# soon (an idle worker takes a job in milliseconds), then less often, up to the last.
START_POLL_S = (0.02, 0.05, 0.1, 0.2, 0.5)


# -- nested stacks' jobs: on the queue, so that they spread over the workers -------------

# Seconds a parent's poll lets its child's job wait in the queue for a worker before the
# parent's own engine runs it (Settings.child_queue_wait_s): when every worker is busy
# (each slot may hold a parent that waits on its children), the children still run, in
# their parents' processes.
CHILD_QUEUE_WAIT_S = 2.0
# Seconds after which a child's entry is dropped from a worker's memory.
FORGET_AFTER_S = 3600.0


@dataclass
class _QueuedChild:
    job_id: int
    job: Job
    since: float


class ChildJobs:
    """A worker's nested stacks' jobs (``Engine.child_jobs``): enqueued for any worker to
    take, one waiting job per child (procrastinate's queueing lock). The parent's poll
    (``Engine.adopt_orphan``) asks ``orphan`` about a child that no live engine holds:
    its job still waits, has been taken, or was lost; after ``wait_s`` of waiting, or
    when it was lost, the parent's engine runs the child itself."""

    def __init__(self, app: Any, store: Store, wait_s: float = CHILD_QUEUE_WAIT_S, tree_jobs: int = -1):
        self.app = app
        self.store = store
        self.wait_s = wait_s
        self.tree_jobs = tree_jobs
        self._queued: dict[str, _QueuedChild] = {}
        self._lock = threading.Lock()

    def enqueue_in_share(self, job: Job, owner_id: str) -> bool:
        """Enqueue a nested stack's job (from a handler thread) unless its tree has its
        share of jobs on the queue already (``tree_jobs`` waiting or running, over all
        workers): False then, and the parent's engine runs the child itself. The count
        and the enqueue are one transaction, serialised per tree by an advisory lock."""
        from stoker.engine.trees import root_of

        owner = self.store.get_stack(owner_id) if self.tree_jobs >= 0 else None
        root = root_of(self.store, owner).id if owner is not None else None
        return self._enqueue(job, root, self.tree_jobs) != "full"

    def enqueue(self, job: Job) -> bool:
        """Enqueue a child's job (from a handler thread); False when one already waits."""
        return self._enqueue(job, None, -1) == "queued"

    def _enqueue(self, job: Job, tree: str | None, share: int) -> str:
        """"queued"; "waiting" when a job of the child waits already (watched from now
        on); "full" when ``tree`` has ``share`` jobs on the queue already."""
        from procrastinate.exceptions import AlreadyEnqueued

        lock = f"stoker.stack.{job.stack_id}"

        def write(connection: Any) -> int | None:
            bounded_lock_wait(connection)
            if tree is not None and share >= 0 and tree_jobs_held(connection, tree) >= share:
                return None
            return enqueue_on(self.app, self.store, connection, job, lock, tree)

        try:
            job_id = self.store.writes.run(Alone(write), fence=None)
        except Exception as error:
            if not isinstance(error, AlreadyEnqueued) and not lock_wait_ran_out(error):
                raise
            # One waits already (another engine's, before it stopped), or the tree's
            # count or a job row was held too long: watch the waiting one, if any; with
            # none, the parent's engine runs the child (its lock decides who acts).
            waiting = waiting_job(self.store, lock)
            if waiting is None:
                return "full" if lock_wait_ran_out(error) else "waiting"
            with self._lock:
                self._queued.setdefault(job.stack_id, _QueuedChild(waiting, job, time.monotonic()))
            return "waiting"
        if job_id is None:
            return "full"
        now = time.monotonic()
        with self._lock:
            self._queued[job.stack_id] = _QueuedChild(int(job_id), job, now)
            # Entries of children whose parents stopped watching: dropping one is safe
            # (``orphan`` finds a waiting job again by its queueing lock).
            for child_id in [c for c, queued in self._queued.items() if now - queued.since > FORGET_AFTER_S]:
                del self._queued[child_id]
        return "queued"

    def orphan(self, child: StackRecord) -> Job | None:
        """A child IN_PROGRESS that no live engine holds: the job to run here now, or
        None while its queued job may still be taken by a worker."""
        with self._lock:
            queued = self._queued.get(child.id)
        if queued is None:
            # Its worker died (or this engine restarted): a resume, for any worker.
            self.enqueue(Job(child.id, Action(child.action), resume=True))
            return None
        status = self.store.serving.queued_job_status(queued.job_id)
        if status == "doing":
            return None  # taken: its lock comes next (a dead taker's job is failed as stalled)
        if status == "todo":
            if time.monotonic() - queued.since < self.wait_s or not cancel_waiting_job(self.store, queued.job_id):
                return None
            self.forget(child.id)
            return queued.job  # no worker was free: the parent's engine runs it
        self.forget(child.id)
        # Ended with the child still IN_PROGRESS and unheld (its worker stopped): resume.
        return Job(child.id, Action(child.action), resume=True)

    def cancel(self, child_id: str) -> None:
        """The parent stops: a child's job that no worker has taken is not run at all."""
        with self._lock:
            queued = self._queued.pop(child_id, None)
        if queued is not None:
            cancel_waiting_job(self.store, queued.job_id)

    def forget(self, child_id: str) -> None:
        with self._lock:
            self._queued.pop(child_id, None)


# -- the API's side: enqueue, then wait for the job to start ----------------------------


class QueuedJobs(BackgroundJobs):
    """Serve mode with workers: a request enqueues its job (procrastinate) instead of
    running it on the server's loop, and answers once a worker has recorded the stack
    IN_PROGRESS (or refused the job). Short changes under a stack's lock (``Serving.call``)
    still run on the server's loop."""

    def __init__(self, engine: Engine, store: Store, loop: asyncio.AbstractEventLoop, app: Any):
        super().__init__(engine, store, loop)
        self.app = app
        engine.listeners = []

    def enqueue_on(self, connection: Any, job: Job) -> int:
        """Enqueue ``job`` in the transaction of ``connection`` (a SQLAlchemy connection
        of the store), with the row of the action it runs (the action is accepted): they
        commit, or roll back, with the caller's writes."""
        from dataclasses import replace

        from stoker.identifiers import new_id

        job = replace(job, accepted=new_id())
        job_id = enqueue_on(self.app, self.store, connection, job)
        assert job.accepted is not None
        self.store.serving.accept_action_on(connection, job.accepted, job.stack_id, str(job.action), job_id)
        return job_id

    def enqueue(self, job: Job) -> int:
        return int(self.store.writes.run(lambda connection: self.enqueue_on(connection, job), fence=None))

    def start(self, job: Job, job_id: int | None = None, since: int | None = None) -> StackRecord:
        """Enqueue ``job`` (unless the caller did, as ``job_id``) and wait until a worker
        has recorded the stack in the job's action (or the job has ended)."""
        if job_id is None:
            since = self.store.events.latest_event_id(job.stack_id)
            job_id = self.enqueue(job)
        deadline = time.monotonic() + JOB_START_WAIT_S
        looks = 0
        while time.monotonic() < deadline:
            if self.store.events.stack_event_since(job.stack_id, since or 0, str(job.action), STACK_TYPE):
                break
            status = self.store.serving.queued_job_status(job_id)
            if status == "aborted" and self.store.serving.accepted_job_waits(job_id):
                pass  # handed back at a worker's SIGTERM before it started: queued again
            elif status in ("failed", "aborted", "cancelled"):
                stack = self.store.get_stack(job.stack_id)
                if stack is None:
                    raise StackNotFoundError(job.stack_id)
                if stack.action != str(job.action) or stack.status != "IN_PROGRESS":
                    raise ActionInProgressError(stack.name, stack.state)
                break
            if status == "succeeded":
                break
            time.sleep(START_POLL_S[min(looks, len(START_POLL_S) - 1)])
            looks += 1
        stack = self.store.get_stack(job.stack_id)
        if stack is None:
            raise StackNotFoundError(job.stack_id)
        return stack

    def recover(self, stacks: list[StackRecord]) -> list[StackRecord]:
        """The workers resume abandoned stacks; the server leaves them to it."""
        return []

    def enqueue_signal(self, stack_id: str, resource_name: str, details: Mapping[str, Any]) -> int:
        """A scaling signal, for a worker to run under the stack's lock (the request is
        answered once it is queued, as Heat's signal returns before the engine acts).
        It is an accepted action like the others: its row commits with its job, so a
        worker that dies before it acts leaves it to be queued again."""
        from stoker.identifiers import new_id

        sealed = self.store.sealer.seal_value(dict(details))
        accepted = new_id()

        def write(connection: Any) -> int:
            dbapi = connection.connection.dbapi_connection
            task = self.app.configure_task(SIGNAL_TASK, queue=QUEUE, connection=dbapi)
            job_id = int(task.defer(stack_id=stack_id, resource_name=resource_name, details=sealed, accepted=accepted))
            self.store.serving.accept_action_on(connection, accepted, stack_id, "SIGNAL", job_id)
            return job_id

        return int(self.store.writes.run(write, fence=None))


# -- the worker ---------------------------------------------------------------------------


class StackWorker:
    """``stoker worker``: takes stack jobs from procrastinate and runs them with this
    process's engine; resumes stacks that dead workers abandoned."""

    def __init__(self, service: Any, concurrency: int = 10, recovery_interval_s: float | None = None, shutdown_graceful_timeout_s: float = 30.0):
        self.service = service
        self.engine: Engine = service.engine
        self.store: Store = service.store
        self.app = make_app(service.settings.database_url)
        self.concurrency = concurrency
        lease = self.engine.settings.lock_lease_s
        # A dead worker's stack lock runs out at most a lease after its last renewal, and
        # its queue heartbeat (every lease / 6) is stale a lease after the last beat:
        # looking every lease / 6 resumes its actions within 7/6 of the lease.
        self.recovery_interval_s = recovery_interval_s if recovery_interval_s is not None else max(1.0, lease / 6)
        self.shutdown_graceful_timeout_s = shutdown_graceful_timeout_s
        self.app.task(name=TASK, queue=QUEUE, pass_context=True)(self._stack_job)
        self.app.task(name=SIGNAL_TASK, queue=QUEUE, pass_context=True)(self._signal_job)
        # Nested stacks' jobs and the recovery's resumes go on the queue too, to spread
        # over the workers. They are enqueued in the store's transactions (from handler
        # threads too), through an app of their own that is never opened (the worker's,
        # open, only runs async).
        self.defer_app = make_app(service.settings.database_url)
        self.engine.child_jobs = ChildJobs(self.defer_app, self.store, service.settings.child_queue_wait_s, service.settings.max_jobs_per_tree)
        # stack ids this worker runs a job of now (this process's own view)
        self.running: set[str] = set()
        # procrastinate's ids of the stack jobs this worker runs now: never stalled, even
        # when its heartbeat was late (a lost connection, a loaded host).
        self.running_jobs: set[int] = set()
        self._lock = threading.Lock()

    async def _stack_job(self, context: Any, stack_id: str, action: str, job: dict[str, Any], tree: str | None = None) -> None:
        faults.point("job-taken")
        job_ = job_from_arguments({"job": job}, self.store)
        with self._lock:
            self.running.add(stack_id)
            self.running_jobs.add(int(context.job.id))
        handed_back = False
        try:
            await self.engine.run(job_)
        except (ActionInProgressError, StackNotFoundError, ActionStartedError) as error:
            # Another worker (or a recovery) holds the stack, or this action has started
            # already: this delivery acts not at all.
            LOG.info("stack %s: %s job not run: %s", stack_id, action, error)
        except StokerError as error:
            LOG.info("stack %s: %s job refused: %s", stack_id, action, error)
        except asyncio.CancelledError:
            handed_back = True  # SIGTERM: a started action is the recovery's
            raise
        finally:
            with self._lock:
                self.running.discard(stack_id)
                self.running_jobs.discard(int(context.job.id))
            if job_.accepted is not None and not handed_back:
                # The job ended: its action started (the row went then) or was refused,
                # which is the accepted action's outcome; no other job runs it.
                await asyncio.to_thread(self.store.serving.forget_accepted, job_.accepted)

    async def _signal_job(self, context: Any, stack_id: str, resource_name: str, details: Any, accepted: str | None = None) -> None:
        """A scaling signal (engine/scaling.py) under the stack's lock. A stack that another
        action holds drops the signal, with an event that says so (Heat ignores a
        scaling signal its group cannot act on then). ``accepted``: the signal's
        accepted action (None in a job queued before signals were), which runs once:
        a delivery that finds it started does nothing."""
        faults.point("job-taken")
        handed_back = False
        try:
            await self._signal(stack_id, resource_name, details, accepted)
        except asyncio.CancelledError:
            handed_back = True  # SIGTERM: queued again unless it started
            raise
        finally:
            if accepted is not None and not handed_back:
                # Ended (ran, was dropped or failed): that is the signal's outcome.
                await asyncio.to_thread(self.store.serving.forget_accepted, accepted)

    async def _signal(self, stack_id: str, resource_name: str, details: Any, accepted: str | None) -> None:
        from stoker.engine import scaling
        from stoker.engine.events import resource_event

        opened = self.store.sealer.open_value(details, "signal details")
        try:
            await scaling.signal(self.engine, stack_id, resource_name, opened, accepted)
        except ActionStartedError as started:
            LOG.info("stack %s: signal to %s not run: %s", stack_id, resource_name, started)
        except ActionInProgressError as busy:
            record = next((r for r in self.store.list_resources(stack_id) if r.current and r.name == resource_name), None)
            if record is not None:
                self.store.events.add_event(resource_event(record, "SIGNAL", "COMPLETE", f"Signal ignored, no action required: {busy}"))
            LOG.info("stack %s: signal to %s ignored: %s", stack_id, resource_name, busy)
        except Exception as error:  # noqa: BLE001 - a plugin's failure is the signal's outcome
            # Recorded as the resource's SIGNAL_FAILED where it got that far.
            LOG.info("stack %s: signal to %s failed: %s: %s", stack_id, resource_name, type(error).__name__, error)

    async def _recover_forever(self) -> None:
        # Stacks found abandoned with no lock row in the previous round (id -> state).
        suspects: dict[str, str] = {}
        while True:
            await asyncio.sleep(self.recovery_interval_s)
            try:
                suspects = await self.recovery_round(suspects)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # noqa: BLE001 - the next round tries again
                if connection_lost(error):
                    # The database went away for longer than the repeats: one line, no
                    # traceback (the next round is the retry).
                    LOG.warning("recovery round failed: database connection lost; the next round tries again")
                else:
                    LOG.exception("recovery round failed")

    async def recovery_round(self, suspects: dict[str, str]) -> dict[str, str]:
        """One look: settle dead workers' jobs, then queue a resume of each abandoned
        stack. A stack whose lock row names a dead holder (its process gone, or its
        lease run out) is resumed at once. One with no lock row is resumed only when the
        previous look (``suspects``) found it so in the same state: a nested stack its
        parent has just moved IN_PROGRESS is not abandoned, its job is about to take it.
        Returns this look's suspects."""
        from stoker.engine.recovery import abandoned_with_holders

        # First the stalled jobs: a stack whose dead worker's job is still ``doing``
        # counts as busy below, so settling it first resumes the stack in this round.
        await self._settle_stalled_jobs()
        found = await asyncio.to_thread(abandoned_with_holders, self.engine.store)
        if found:
            # A stack whose job waits in the queue (or runs) is not abandoned.
            busy = await asyncio.to_thread(pending_job_stacks, self.store, [stack.id for stack, _ in found])
            found = [(stack, holder) for stack, holder in found if stack.id not in busy]
        stacks = [stack for stack, holder in found if holder is not None or suspects.get(stack.id) == stack.state]
        queued = [stack for stack in sorted(stacks, key=lambda s: s.nested_depth) if await asyncio.to_thread(self._enqueue_resume, stack)]
        if queued:
            LOG.warning("resuming actions abandoned by a stopped worker: %s", ", ".join(f"{s.name} ({s.state})" for s in queued))
        return {stack.id: stack.state for stack, holder in found if holder is None}

    def _enqueue_resume(self, stack: StackRecord) -> bool:
        """Queue the resume of an abandoned stack's action (parents first, so a parent's
        resumed action drives its children); False when one waits already."""
        from procrastinate.exceptions import AlreadyEnqueued

        job = Job(stack.id, Action(stack.action), resume=True)
        def write(connection: Any) -> int:
            bounded_lock_wait(connection)
            return enqueue_on(self.defer_app, self.store, connection, job, f"stoker.stack.{stack.id}")

        try:
            self.store.writes.run(Alone(write), fence=None)
        except Exception as error:
            if isinstance(error, AlreadyEnqueued) or lock_wait_ran_out(error):
                return False  # one waits already (or is being taken): the next look sees
            raise
        return True

    async def _settle_stalled_jobs(self) -> None:
        """procrastinate jobs left ``doing`` by a worker whose heartbeat stopped (older
        than the lease). Each is settled in a transaction of its own under its row's
        lock (``settle_stalled_job``): two workers looking at once settle it once, and
        the second moves on."""
        lease = self.engine.settings.lock_lease_s
        for outcome in await asyncio.to_thread(requeue_handed_back_jobs, self.store):
            LOG.info("%s", outcome)
        stalled = await self.app.job_manager.get_stalled_jobs(queue=QUEUE, seconds_since_heartbeat=lease)
        if not stalled:
            return
        faults.point("stalled-jobs-listed")
        with self._lock:
            own = set(self.running_jobs)
        for job in stalled:
            if int(job.id) in own:
                continue  # this worker runs it: alive, whatever its heartbeat says
            outcome = await asyncio.to_thread(settle_stalled_job, self.store, int(job.id), lease)
            LOG.info("job %s (%s) of a stopped worker: %s", job.id, job.call_string, outcome)

    async def run(self, install_signal_handlers: bool = True) -> None:
        """Work until SIGTERM or SIGINT (or, embedded in a server, until cancelled)."""
        from stoker.engine.services import ServiceReport

        ensure_schema(self.store)
        # A worker is an engine: GET /services lists it, up while it reports.
        report = ServiceReport(self.store, self.engine.engine_id, self.service.settings.service_report_interval_s)
        report.start(asyncio.get_running_loop())
        async with self.app.open_async():
            recovery = asyncio.create_task(self._recover_forever())
            try:
                await self.app.run_worker_async(
                    queues=[QUEUE],
                    concurrency=self.concurrency,
                    shutdown_graceful_timeout=self.shutdown_graceful_timeout_s,
                    update_heartbeat_interval=max(1.0, self.engine.settings.lock_lease_s / 6),
                    stalled_worker_timeout=self.engine.settings.lock_lease_s,
                    install_signal_handlers=install_signal_handlers,
                )
            finally:
                recovery.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await recovery
                await report.stop()
