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
  not exist. Other actions change no state before their job does (the job itself records
  IN_PROGRESS under the lock), so their enqueue is its own transaction.
- **A worker that dies mid-action** (SIGKILL, a lost host) stops renewing its stack locks.
  Every worker looks, every ``recovery_interval_s``, for stacks IN_PROGRESS whose lock
  has expired or is free (``engine.recovery.abandoned``), and resumes those it found so
  two looks in a row (persisted
  handler tokens polled on, as after an engine restart); the lock decides which worker
  does. Jobs a dead worker left ``doing`` in procrastinate are found by its heartbeat
  (``get_stalled_jobs``) and marked failed: their action is the recovery's now.
- **SIGTERM**: the worker stops taking jobs and lets running actions finish for
  ``shutdown_graceful_timeout_s``; actions still running then are cancelled, which
  releases their locks with the stacks IN_PROGRESS, and another worker resumes them.

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
from typing import Any

from stoker.engine.engine import Engine, Job
from stoker.engine.errors import ActionInProgressError, StackNotFoundError
from stoker.engine.states import STACK_TYPE, Action
from stoker.jobs import JOB_START_WAIT_S, BackgroundJobs
from stoker.sdk.exceptions import StokerError
from stoker.store import StackRecord, Store

LOG = logging.getLogger(__name__)

TASK = "stoker.stack_job"
QUEUE = "stacks"
# Seconds between a request's looks at whether its job has started.
START_POLL_S = 0.05


class WorkerConfigurationError(StokerError):
    """Workers need PostgreSQL (the store and the queue are the same database)."""


def conninfo(database_url: str) -> str:
    """The libpq URI psycopg takes, from the store's SQLAlchemy URL."""
    from sqlalchemy.engine import make_url

    url = make_url(database_url)
    if url.get_backend_name() != "postgresql":
        raise WorkerConfigurationError(
            f"Workers need PostgreSQL: the job queue lives in the store's database, and {url.get_backend_name()} is not PostgreSQL",
            hint="set STOKER_DATABASE_URL=postgresql://user@host/database (SQLite runs each action in the command's own process)",
        )
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def make_app(database_url: str) -> Any:
    import procrastinate

    return procrastinate.App(connector=procrastinate.PsycopgConnector(conninfo=conninfo(database_url)))


def ensure_schema(store: Store) -> None:
    """procrastinate's tables, functions and types, created once in the store's database
    (serialised by an advisory lock between processes starting together)."""
    import sqlalchemy as sa
    from procrastinate.schema import SchemaManager

    with store.engine.begin() as connection:
        connection.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext('stoker.procrastinate.' || current_schema()))"))
        found = connection.execute(sa.text("SELECT to_regclass('procrastinate_jobs')")).scalar()
        if found is None:
            # Run as it is: its text has '%' signs that are no placeholders.
            with connection.connection.dbapi_connection.cursor() as cursor:
                cursor.execute(SchemaManager.get_schema())


# -- a Job as a job's arguments ---------------------------------------------------------


def job_arguments(job: Job, store: Store) -> dict[str, Any]:
    fields = {
        "stack_id": job.stack_id,
        "action": str(job.action),
        "template_id": job.template_id,
        "parameters": dict(job.parameters),
        "resume": job.resume,
        "adopt_data": dict(job.adopt_data),
        "snapshot_id": job.snapshot_id,
        "queued": job.queued,
        "stack_fields": dict(job.stack_fields),
    }
    return {"stack_id": job.stack_id, "action": str(job.action), "job": store.sealer.seal_value(fields)}


def job_from_arguments(arguments: Mapping[str, Any], store: Store) -> Job:
    fields = dict(store.sealer.open_value(arguments["job"], "job arguments"))
    fields["action"] = Action(fields["action"])
    return Job(**fields)


# -- the API's side: enqueue, then wait for the job to start ----------------------------


class QueuedJobs(BackgroundJobs):
    """Serve mode with workers: a request enqueues its job (procrastinate) instead of
    running it on the server's loop, and answers once a worker has recorded the stack
    IN_PROGRESS (or refused the job). Short changes under a stack's lock (``_call``)
    still run on the server's loop."""

    def __init__(self, engine: Engine, store: Store, loop: asyncio.AbstractEventLoop, app: Any):
        super().__init__(engine, store, loop)
        self.app = app
        engine.listeners = []

    def enqueue_on(self, connection: Any, job: Job) -> int:
        """Enqueue ``job`` in the transaction of ``connection`` (a SQLAlchemy connection
        of the store): it commits, or rolls back, with the caller's writes."""
        dbapi = connection.connection.dbapi_connection
        return int(self.app.configure_task(TASK, queue=QUEUE, connection=dbapi).defer(**job_arguments(job, self.store)))

    def enqueue(self, job: Job) -> int:
        return int(self.store.writes.run(lambda connection: self.enqueue_on(connection, job), fence=None))

    def start(self, job: Job, job_id: int | None = None, since: int | None = None) -> StackRecord:
        """Enqueue ``job`` (unless the caller did, as ``job_id``) and wait until a worker
        has recorded the stack in the job's action (or the job has ended)."""
        if job_id is None:
            since = self.store.latest_event_id(job.stack_id)
            job_id = self.enqueue(job)
        deadline = time.monotonic() + JOB_START_WAIT_S
        while time.monotonic() < deadline:
            if self.store.stack_event_since(job.stack_id, since or 0, str(job.action), STACK_TYPE):
                break
            status = self.store.queued_job_status(job_id)
            if status in ("failed", "aborted", "cancelled"):
                stack = self.store.get_stack(job.stack_id)
                if stack is None:
                    raise StackNotFoundError(job.stack_id)
                if stack.action != str(job.action) or stack.status != "IN_PROGRESS":
                    raise ActionInProgressError(stack.name, stack.state)
                break
            if status == "succeeded":
                break
            time.sleep(START_POLL_S)
        stack = self.store.get_stack(job.stack_id)
        if stack is None:
            raise StackNotFoundError(job.stack_id)
        return stack

    def recover(self, stacks: list[StackRecord]) -> list[StackRecord]:
        """The workers resume abandoned stacks; the server leaves them to it."""
        return []


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
        self.recovery_interval_s = recovery_interval_s if recovery_interval_s is not None else max(1.0, lease / 3)
        self.shutdown_graceful_timeout_s = shutdown_graceful_timeout_s
        self.app.task(name=TASK, queue=QUEUE, pass_context=True)(self._stack_job)
        # stack ids this worker runs a job of now (this process's own view)
        self.running: set[str] = set()
        self._lock = threading.Lock()

    async def _stack_job(self, context: Any, stack_id: str, action: str, job: dict[str, Any]) -> None:
        job_ = job_from_arguments({"job": job}, self.store)
        with self._lock:
            self.running.add(stack_id)
        try:
            await self.engine.run(job_)
        except (ActionInProgressError, StackNotFoundError) as error:
            # Another worker (or a recovery) holds the stack: this delivery acts not at all.
            LOG.info("stack %s: %s job not run: %s", stack_id, action, error)
        except StokerError as error:
            LOG.info("stack %s: %s job refused: %s", stack_id, action, error)
        finally:
            with self._lock:
                self.running.discard(stack_id)

    async def _recover_forever(self) -> None:
        from stoker.engine.recovery import abandoned, recover

        # Stacks found abandoned in the previous round (id -> state). Only one found
        # twice in the same state, a round apart, is resumed: a nested stack its parent
        # has just moved IN_PROGRESS is not abandoned, its job is about to take it.
        suspects: dict[str, str] = {}
        while True:
            await asyncio.sleep(self.recovery_interval_s)
            try:
                found = await asyncio.to_thread(abandoned, self.engine)
                stacks = [stack for stack in found if suspects.get(stack.id) == stack.state]
                suspects = {stack.id: stack.state for stack in found}
                if stacks:
                    LOG.warning("resuming actions abandoned by a stopped worker: %s", ", ".join(f"{s.name} ({s.state})" for s in stacks))
                    await recover(self.engine, stacks)
                await self._fail_stalled_jobs()
            except asyncio.CancelledError:
                raise
            except Exception:  # noqa: BLE001 - the next round tries again
                LOG.exception("recovery round failed")

    async def _fail_stalled_jobs(self) -> None:
        """procrastinate jobs left ``doing`` by a worker whose heartbeat stopped: their
        action is resumed by the recovery above, so the job itself is over."""
        from procrastinate.jobs import Status

        for job in await self.app.job_manager.get_stalled_jobs():
            await self.app.job_manager.finish_job(job, status=Status.FAILED, delete_job=False)

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
