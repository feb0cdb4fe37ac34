"""The part of the repository a served engine needs beside its stacks,
``Store.serving``: Heat's service table (the engines serving the API), the credential a
top-level stack acts for its user with, the status of a queued job, and the actions the
API accepted for workers that no job has started yet.

What it owns: the services, stack_credentials and accepted_actions tables' queries, and
the one read of procrastinate's job table. What it must not do: write a stack's
credential apart from its stack (``Store.create_stack`` commits the two together),
write an accepted action apart from its job's enqueue (``accept_action_on``, in the
enqueue's transaction), or run jobs (``workers.py`` does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from stoker.store import tables
from stoker.store.connection_loss import reads
from stoker.store.records import utcnow
from stoker.store.writer import WriteQueue


class ServingRepository:
    """Services, stack credentials, accepted actions and queued jobs, read on
    ``engine``'s pooled connections and written through ``writes`` (the store's one
    writer)."""

    def __init__(self, engine: Engine, writes: WriteQueue):
        self._writes = writes
        self._read: Callable[[], Connection] = engine.connect

    # -- services ----------------------------------------------------------------
    # Heat's service table: the engines serving the API (engine/services.py reports).

    def add_service(self, values: Mapping[str, Any]) -> None:
        self._writes.run(lambda connection: connection.execute(tables.services.insert(), dict(values)), fence=None)

    def report_service(self, service_id: str, now: datetime) -> None:
        """The engine is alive: ``updated_at`` is now (and a row pruned meanwhile lives again)."""
        table = tables.services
        self._writes.run(lambda connection: connection.execute(table.update().where(table.c.id == service_id).values(updated_at=now, deleted_at=None)), fence=None)

    def delete_services(self, service_ids: Iterable[str], now: datetime) -> None:
        """Soft delete, as Heat's service_delete."""
        ids = list(service_ids)
        if not ids:
            return
        table = tables.services
        self._writes.run(lambda connection: connection.execute(table.update().where(table.c.id.in_(ids)).values(deleted_at=now)), fence=None)

    @reads
    def list_services(self) -> list[dict[str, Any]]:
        """The services not deleted, oldest first, as rows of Heat's service table."""
        table = tables.services
        with self._read() as connection:
            rows = connection.execute(sa.select(table).where(table.c.deleted_at.is_(None)).order_by(table.c.created_at, table.c.id))
            return [dict(row._mapping) for row in rows]

    # -- stack credentials ---------------------------------------------------------

    @reads
    def stack_credential(self, stack_id: str) -> tuple[str, dict[str, Any]] | None:
        """The (kind, credential) a top-level stack acts for its user with, if any."""
        table = tables.stack_credentials
        with self._read() as connection:
            row = connection.execute(sa.select(table.c.kind, table.c.credential).where(table.c.stack_id == stack_id)).first()
        return (row.kind, dict(row.credential)) if row is not None else None

    def delete_stack_credential(self, stack_id: str) -> None:
        table = tables.stack_credentials
        self._writes.run(lambda connection: connection.execute(table.delete().where(table.c.stack_id == stack_id)), fence=None)

    # -- queued jobs -------------------------------------------------------------

    # -- accepted actions (workers.py; see tables.accepted_actions) ------------------

    @staticmethod
    def accept_action_on(connection: Any, accepted: str, stack_id: str, action: str, job_id: int) -> None:
        """Record an accepted action in the transaction (``connection``) that enqueues
        its job ``job_id``: the two commit, or roll back, together."""
        values = {"id": accepted, "stack_id": stack_id, "action": action, "job_id": job_id, "created_at": utcnow()}
        connection.execute(tables.accepted_actions.insert(), values)

    @staticmethod
    def accepted_pending(connection: Any, accepted: str, lock: bool = False) -> bool:
        """Whether the accepted action still waits to start (read in the caller's
        transaction; with ``lock``, its row stays locked until that ends)."""
        table = tables.accepted_actions
        query = sa.select(table.c.id).where(table.c.id == accepted)
        return connection.execute(query.with_for_update() if lock else query).first() is not None

    @staticmethod
    def accepted_stack_of_job(connection: Any, job_id: int) -> str | None:
        """The stack of the accepted action that job ``job_id`` runs and has not started."""
        table = tables.accepted_actions
        return connection.execute(sa.select(table.c.stack_id).where(table.c.job_id == job_id).with_for_update()).scalar()

    @reads
    def accepted_job_waits(self, job_id: int) -> bool:
        """Whether job ``job_id`` runs an accepted action that has not started."""
        table = tables.accepted_actions
        with self._read() as connection:
            return connection.execute(sa.select(table.c.id).where(table.c.job_id == job_id)).first() is not None

    async def start_accepted_async(self, accepted: str) -> None:
        """The accepted action starts now (a scaling signal, under its stack's lock):
        its row goes in a write fenced by that lock (the caller's context), so that from
        here on no job of it starts it again."""
        table = tables.accepted_actions
        await self._writes.submit_async(lambda connection: connection.execute(table.delete().where(table.c.id == accepted)))

    def forget_accepted(self, accepted: str) -> None:
        """A job of the accepted action ended without starting it (refused under the
        stack's lock, or failed before): that is its outcome, no other job runs it."""
        table = tables.accepted_actions
        self._writes.run(lambda connection: connection.execute(table.delete().where(table.c.id == accepted)), fence=None)

    @reads
    def queued_job_status(self, job_id: int) -> str | None:
        """The status of a job in procrastinate's table (workers.py), None if gone."""
        with self._read() as connection:
            return connection.execute(sa.text("SELECT status::text FROM procrastinate_jobs WHERE id = :id"), {"id": job_id}).scalar()
