"""Stack locks: at most one job acts on a stack at a time, and only while it holds it.

A lock is a row with a lease. The holder renews it (heartbeat) well before it expires;
a lock whose lease has expired, or whose holder is a process on this host that no
longer exists, may be taken over. Taking a lock is one conditional statement, so two
jobs racing for it cannot both win (PostgreSQL and SQLite both serialise it).

Every acquisition gets a new ``token``. A job's writes carry it as their ``Fence``, and
the store's writer refuses a write whose token the lock row no longer has (the stack
was deleted, another job took the lock over, the lock was released): a job that lost
its lock can change nothing. Two jobs of one engine are two holders: a second job never
"re-enters" a lock the first holds.
"""

from __future__ import annotations

import contextvars
import os
import socket
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from stoker.store import tables

if TYPE_CHECKING:
    from sqlalchemy.dialects import postgresql, sqlite

HOST = socket.gethostname()


@dataclass(frozen=True)
class LockHolder:
    engine_id: str
    host: str
    pid: int
    expires_at: datetime
    token: str = ""

    def alive(self, now: datetime) -> bool:
        """Whether this holder may still be working on the stack."""
        if self.expires_at <= now:
            return False
        if self.host == HOST:
            return _process_exists(self.pid)
        return True


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie (killed, not yet reaped) is dead for our purpose.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def _insert_for(connection: Connection) -> Callable[[sa.Table], postgresql.Insert | sqlite.Insert]:
    if connection.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as postgresql_insert

        return postgresql_insert
    from sqlalchemy.dialects.sqlite import insert as sqlite_insert

    return sqlite_insert


@dataclass(frozen=True)
class Fence:
    """What a job's writes carry: the stack whose lock it holds and the token it got.

    ``lost`` is called (from the store's writer thread) when a write is refused because
    the lock no longer carries the token, so the job stops at once. ``accepted``: the
    accepted action the job runs (tables.accepted_actions), whose row goes with the
    job's write that records its stack IN_PROGRESS (``Store.update_stack``)."""

    stack_id: str
    token: str
    lost: Callable[[], None] = field(default=lambda: None, compare=False, hash=False)
    accepted: str | None = None


class LockLostError(Exception):
    """A write of a job that no longer holds its stack's lock (refused, not written)."""

    def __init__(self, fence: Fence):
        super().__init__(f"the job no longer holds the lock of stack {fence.stack_id}: its write was refused")
        self.fence = fence


# The fence of the job running in this context: set by the engine while a job holds a
# lock; the store's writes pick it up (handler threads get the context of their call).
current_fence: contextvars.ContextVar[Fence | None] = contextvars.ContextVar("stoker_fence", default=None)


def holder(connection: Connection, stack_id: str) -> LockHolder | None:
    table = tables.stack_locks
    row = connection.execute(sa.select(table).where(table.c.stack_id == stack_id)).first()
    return LockHolder(row.engine_id, row.host, row.pid, row.expires_at, row.token) if row else None


def acquire(connection: Connection, stack_id: str, token: str, engine_id: str, now: datetime, lease: timedelta) -> LockHolder | None:
    """Take the lock with a new ``token``; returns None on success, else the live holder."""
    table = tables.stack_locks
    current = holder(connection, stack_id)
    values = {"engine_id": engine_id, "token": token, "host": HOST, "pid": os.getpid(), "expires_at": now + lease, "cancel": None}
    if current is None:
        insert = _insert_for(connection)(table).values(stack_id=stack_id, **values).on_conflict_do_nothing(index_elements=["stack_id"])
        connection.execute(insert)
        # Whose row it is tells who won (drivers disagree on rowcount after DO NOTHING).
        current = holder(connection, stack_id)
        if current is None:  # released between the two statements: try again
            return acquire(connection, stack_id, token, engine_id, now, lease)
        if current.token == token:
            return None
    if current.alive(now):
        return current
    # Take over: only if the row is still what we judged dead (no one else took it).
    result = connection.execute(table.update().where(table.c.stack_id == stack_id, table.c.token == current.token).values(**values))
    if result.rowcount == 1:
        return None
    return holder(connection, stack_id) or current


def renew(connection: Connection, fence: Fence, now: datetime, lease: timedelta) -> bool:
    table = tables.stack_locks
    result = connection.execute(
        table.update().where(table.c.stack_id == fence.stack_id, table.c.token == fence.token).values(expires_at=now + lease)
    )
    return result.rowcount == 1


def held_tokens(connection: Connection, stack_ids: Iterable[str]) -> dict[str, str]:
    """stack id -> the token its lock carries now. On PostgreSQL the rows stay share-locked
    until the transaction ends, so no takeover or release can slip in before the writes
    this check admits are committed (SQLite's write transaction already excludes them)."""
    return {row[0]: row[1] for row in connection.execute(_HELD_TOKENS, {"stack_ids": list(stack_ids)})}


# Built once: it runs at the start of every transaction that carries a job's writes.
_HELD_TOKENS = (
    sa.select(tables.stack_locks.c.stack_id, tables.stack_locks.c.token)
    .where(tables.stack_locks.c.stack_id.in_(sa.bindparam("stack_ids", expanding=True)))
    .with_for_update(read=True)
)


def request_cancel(connection: Connection, stack_id: str, mode: str) -> bool:
    """Ask the lock holder to cancel its action; False when nothing holds the stack. A
    delete's request to stop is never replaced by a user's cancel (which would roll back
    instead of stopping for the delete)."""
    table = tables.stack_locks
    query = table.update().where(table.c.stack_id == stack_id)
    if mode != "delete":
        query = query.where(sa.or_(table.c.cancel.is_(None), table.c.cancel != "delete"))
    if connection.execute(query.values(cancel=mode)).rowcount == 1:
        return True
    return holder(connection, stack_id) is not None


def cancel_requests(connection: Connection) -> dict[tuple[str, str], str]:
    """Every lock that carries a cancel request: (stack id, token) -> mode. Few rows at any
    time, whatever the number of locks held, so one read serves all of an engine's jobs."""
    table = tables.stack_locks
    rows = connection.execute(sa.select(table.c.stack_id, table.c.token, table.c.cancel).where(table.c.cancel.is_not(None)))
    return {(row.stack_id, row.token): row.cancel for row in rows}


def release(connection: Connection, fence: Fence) -> None:
    table = tables.stack_locks
    connection.execute(table.delete().where(table.c.stack_id == fence.stack_id, table.c.token == fence.token))
