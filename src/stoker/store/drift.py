"""The drift part of the repository, ``Store.drift``: the last drift detection of each
stack (``tables.stack_drift``).

What it owns: that table's queries. What it must not do: read live objects or compare
them (``engine/drift.py`` does).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from stoker.store import tables
from stoker.store.connection_loss import reads
from stoker.store.writer import WriteQueue


@dataclass(frozen=True)
class DriftRecord:
    """A stack's last drift detection: when, the counts by status, and each resource's
    result (plain data, hidden values masked)."""

    stack_id: str
    detected_at: datetime
    summary: dict[str, Any]
    resources: list[dict[str, Any]]


class DriftRepository:
    """The last drift detection of each stack, read on ``engine``'s pooled connections
    and written through ``writes`` (the store's one writer)."""

    def __init__(self, engine: Engine, writes: WriteQueue):
        self._writes = writes
        self._read: Callable[[], Connection] = engine.connect

    def save_drift(self, record: DriftRecord) -> None:
        """Keep ``record`` as its stack's last detection (replacing the one before)."""
        table = tables.stack_drift
        values = {
            "detected_at": record.detected_at,
            "summary": record.summary,
            "resources": record.resources,
        }

        def write(connection: Connection) -> None:
            done = connection.execute(
                table.update().where(table.c.stack_id == record.stack_id).values(**values)
            ).rowcount
            if not done:
                connection.execute(table.insert().values(stack_id=record.stack_id, **values))

        self._writes.run(write, fence=None)  # no job's: a detection changes no stack state

    @reads
    def last_drift(self, stack_id: str) -> DriftRecord | None:
        table = tables.stack_drift
        with self._read() as connection:
            row = connection.execute(sa.select(table).where(table.c.stack_id == stack_id)).first()
        if row is None:
            return None
        return DriftRecord(row.stack_id, row.detected_at, dict(row.summary), list(row.resources))
