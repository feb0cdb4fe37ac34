"""Stack locks: at most one engine acts on a stack at a time.

A lock is a row with a lease. The holder renews it (heartbeat) well before it expires;
a lock whose lease has expired, or whose holder is a process on this host that no
longer exists, may be taken over. Taking a lock is one conditional statement, so two
engines racing for it cannot both win (PostgreSQL and SQLite both serialise it).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from stoker.store import tables

HOST = socket.gethostname()


@dataclass(frozen=True)
class LockHolder:
    engine_id: str
    host: str
    pid: int
    expires_at: datetime

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


def _insert_for(connection: Connection):
    if connection.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert
    else:
        from sqlalchemy.dialects.sqlite import insert
    return insert


def holder(connection: Connection, stack_id: str) -> LockHolder | None:
    table = tables.stack_locks
    row = connection.execute(sa.select(table).where(table.c.stack_id == stack_id)).first()
    return LockHolder(row.engine_id, row.host, row.pid, row.expires_at) if row else None


def acquire(connection: Connection, stack_id: str, engine_id: str, now: datetime, lease: timedelta) -> LockHolder | None:
    """Take the lock; returns None on success, else the live holder."""
    table = tables.stack_locks
    current = holder(connection, stack_id)
    values = {"engine_id": engine_id, "host": HOST, "pid": os.getpid(), "expires_at": now + lease, "cancel": None}
    if current is None:
        insert = _insert_for(connection)(table).values(stack_id=stack_id, **values).on_conflict_do_nothing(index_elements=["stack_id"])
        if connection.execute(insert).rowcount == 1:
            return None
        current = holder(connection, stack_id)
        if current is None:  # released between the two statements: try again
            return acquire(connection, stack_id, engine_id, now, lease)
    if current.engine_id != engine_id and current.alive(now):
        return current
    # Take over: only if the row is still what we judged dead (no one else took it).
    result = connection.execute(
        table.update()
        .where(table.c.stack_id == stack_id, table.c.engine_id == current.engine_id, table.c.expires_at == current.expires_at)
        .values(**values)
    )
    if result.rowcount == 1:
        return None
    return holder(connection, stack_id) or current


def renew(connection: Connection, stack_id: str, engine_id: str, now: datetime, lease: timedelta) -> bool:
    table = tables.stack_locks
    result = connection.execute(
        table.update().where(table.c.stack_id == stack_id, table.c.engine_id == engine_id).values(expires_at=now + lease)
    )
    return result.rowcount == 1


def request_cancel(connection: Connection, stack_id: str, mode: str) -> bool:
    """Ask the lock holder to cancel its action; False when nothing holds the stack."""
    table = tables.stack_locks
    return connection.execute(table.update().where(table.c.stack_id == stack_id).values(cancel=mode)).rowcount == 1


def cancel_requested(connection: Connection, stack_id: str, engine_id: str) -> str | None:
    table = tables.stack_locks
    return connection.execute(
        sa.select(table.c.cancel).where(table.c.stack_id == stack_id, table.c.engine_id == engine_id)
    ).scalar()


def release(connection: Connection, stack_id: str, engine_id: str) -> None:
    table = tables.stack_locks
    connection.execute(table.delete().where(table.c.stack_id == stack_id, table.c.engine_id == engine_id))
