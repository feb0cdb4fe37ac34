"""Where a Service's jobs run and whom they act for in the cloud: a part of ``Service``.

Jobs run to their end in the caller (the CLI), or, in serve mode (``serve_on``), in the
background on the server's loop: as tasks of its own (the local job queue) or through
procrastinate's queue for workers (``workers.py``), with the engine reported as a Heat
service while it serves. Stack actions act in the cloud with the settings' cloud, or,
in Keystone mode (``act_for_users``), for the user who made each stack, through a
delegation (Keystone trusts), whose credential is stored with the stack.

What it owns: that wiring, and its fields (``jobs``, ``delegation``); running one job or
one engine coroutine, here or on the serving loop (``run``, ``call``, ``holding``), and
storing a new stack's row with its credential (``insert_stack``), for the other parts.
What it must not do: check requests (``request_checks.py`` does) or run jobs itself
(``jobs.py``, ``workers.py`` and the engine do).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Sequence
from typing import Any

from stoker.engine.engine import Engine, Job
from stoker.engine.errors import StackExistsError
from stoker.engine.events import Listener
from stoker.sdk.exceptions import ValidationError
from stoker.settings import Settings
from stoker.store import StackRecord, Store
from stoker.store.repository import StackNameTakenError


class Serving:
    """How a ``Service`` runs jobs and for whom: here, with the settings' cloud, until
    ``serve_on`` or ``act_for_users`` says otherwise."""

    def __init__(self, settings: Settings, store: Store, engine: Engine):
        self.settings = settings
        self.store = store
        self.engine = engine
        # Serve mode (serve_on): jobs run in the background on the server's loop.
        self.jobs: Any = None
        self._service_report: Any = None
        self._cloud_source = None
        # Whom stack actions act for in the cloud (act_for_users): None, the settings' cloud.
        self.delegation: Any = None
        if self.settings.os_cloud:
            from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source

            self._cloud_source = EnvironmentCloudSource({**os.environ, "OS_CLOUD": self.settings.os_cloud})
            set_cloud_source(self._cloud_source)

    def act_for_users(self, delegation: Any) -> None:
        """Keystone mode: each stack acts in the cloud for the user who made it, through
        ``delegation`` (clouds.trusts.Trusts), not with the settings' cloud."""
        from stoker.clouds.source import set_cloud_source

        self.delegation = delegation
        self._cloud_source = delegation.cloud_source()
        set_cloud_source(self._cloud_source)
        self.engine.stack_deleted.append(delegation.stack_deleted)

    def close(self) -> None:
        """Let go of the cloud source this part set (the process's, while it served)."""
        if self._cloud_source is not None:
            from stoker.clouds.source import cloud_source, set_cloud_source

            if cloud_source() is self._cloud_source:
                set_cloud_source(None)

    # -- serve mode (the API) -------------------------------------------------

    def serve_on(self, loop: asyncio.AbstractEventLoop) -> None:
        """Run every job in the background on ``loop`` (the API server's): an action
        then returns once its job has recorded the stack IN_PROGRESS (see jobs.py)."""
        from stoker.engine.services import ServiceReport
        from stoker.jobs import BackgroundJobs

        if self.settings.job_queue == "procrastinate":
            from stoker.job_queue import ensure_schema, make_app
            from stoker.workers import QueuedJobs

            app = make_app(self.settings.database_url)
            ensure_schema(self.store)
            self.jobs = QueuedJobs(self.engine, self.store, loop, app)
        elif self.settings.job_queue == "local":
            self.jobs = BackgroundJobs(self.engine, self.store, loop)
        else:
            raise ValidationError(f"Unknown job queue {self.settings.job_queue!r}", hint="choose local or procrastinate (STOKER_JOB_QUEUE, --job-queue)")
        # The engine serving the API is a Heat service (GET /services) while it serves.
        self._service_report = ServiceReport(self.store, self.engine.engine_id, self.settings.service_report_interval_s)
        self._service_report.start(loop)

    def recover_nowait(self) -> list[StackRecord]:
        """Serve mode: start finishing the actions a dead engine left IN_PROGRESS."""
        assert self.jobs is not None
        return self.jobs.recover(self.abandoned_stacks())

    async def stop_jobs(self) -> None:
        if self.jobs is not None:
            await self.jobs.stop()
        if self._service_report is not None:
            await self._service_report.stop()

    def list_services(self) -> list[dict[str, Any]]:
        """Heat's list_services: the engines serving the API, each ``up`` or ``down``."""
        from stoker.engine.services import formatted

        return [formatted(row) for row in self.store.serving.list_services()]

    def call(self, coroutine: Any) -> Any:
        """Run one engine coroutine to its end: on the serving loop when there is one."""
        if self.jobs is None:
            return asyncio.run(coroutine)
        return asyncio.run_coroutine_threadsafe(coroutine, self.jobs.loop).result()

    def abandoned_stacks(self) -> list[StackRecord]:
        """Stacks left IN_PROGRESS by an engine that stopped (see engine/recovery)."""
        from stoker.engine.recovery import abandoned

        return abandoned(self.store)

    def recover(self, listeners: Sequence[Listener] = ()) -> list[StackRecord]:
        """Finish the actions an engine restart interrupted."""
        from stoker.engine.recovery import recover

        stacks = self.abandoned_stacks()
        if not stacks:
            return []
        self.engine.listeners = list(listeners)
        try:
            return asyncio.run(recover(self.engine, stacks))
        finally:
            self.engine.listeners = []

    # -- running jobs -------------------------------------------------------------

    def holding(self, stack: StackRecord, change: Callable[[StackRecord], Any]) -> Any:
        """Make a short change to an idle stack under its lock (decided and fenced as a
        job's writes are); ``change`` gets the stack as it is under the lock."""

        async def held() -> Any:
            async with self.engine.holding(stack.id) as current:
                return change(current)

        return self.call(held())

    def run(self, job: Job, listeners: Sequence[Listener], queued_as: int | None = None) -> StackRecord:
        """Run ``job``: to its end here (the CLI), or in the background of the server
        (returning once it started); ``queued_as``: the job's id in the workers' queue,
        when its enqueue committed with the stack it creates."""
        if queued_as is not None:
            return self.jobs.start(job, job_id=queued_as, since=0)
        if self.jobs is not None:
            return self.jobs.start(job)
        self.engine.listeners = list(listeners)
        try:
            return asyncio.run(self.engine.run(job))
        finally:
            self.engine.listeners = []

    def insert_stack(self, stack: StackRecord, delegated: bool = False, job: Job | None = None) -> int | None:
        """Store a new stack row; the database refuses a name a live stack of the project
        has (two creates racing past the early check: one wins, the other gets 409).
        A ``delegated`` stack, made by a user the service acts for (keystone mode), is
        stored with the credential it acts with (a trust made now). With workers, the
        stack's first ``job`` is enqueued in the same transaction: returns its id."""
        enqueue = getattr(self.jobs, "enqueue_on", None)
        also = (lambda connection: enqueue(connection, job)) if enqueue is not None and job is not None else None
        credential, user = None, None
        if delegated and self.delegation is not None:
            from stoker.clouds.trusts import acting_user

            user = acting_user.get()
            if user is not None:
                credential = self.delegation.delegate(user)
        try:
            return self.store.create_stack(stack, credential=credential, also=also)
        except StackNameTakenError:
            self.store.prune_template(stack.raw_template_id)
            if credential is not None:
                self.delegation.discard(credential, user)
            raise StackExistsError(stack.name)
        except BaseException:
            if credential is not None:
                self.delegation.discard(credential, user)
            raise
