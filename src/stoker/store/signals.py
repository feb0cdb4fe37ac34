"""The signals part of the repository, ``Store.signals``: the signals sent to resources
and the credentials they are sent with.

What it owns: the signals and signal_credentials tables' queries. What it must not do:
check a credential's secret or act on a signal (``engine/signals.py`` does), or change
any other table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from stoker.store import tables
from stoker.store.connection_loss import reads
from stoker.store.records import SignalCredentialRecord, SignalRecord, utcnow
from stoker.store.writer import WriteQueue

# The purpose of an ordinary signal credential; NULL (rows made before purposes) too.
SIGNAL_PURPOSE = "signal"
_SIGNAL_CREDENTIAL_FIELDS = [c.name for c in tables.signal_credentials.columns]


def _signal_credential(row: Any) -> SignalCredentialRecord:
    return SignalCredentialRecord(**{name: getattr(row, name) for name in _SIGNAL_CREDENTIAL_FIELDS})


class SignalRepository:
    """Signals and signal credentials, read on ``engine``'s pooled connections and
    written through ``writes`` (the store's one writer)."""

    def __init__(self, engine: Engine, writes: WriteQueue):
        self._writes = writes
        self._read: Callable[[], Connection] = engine.connect
        self._is_sqlite = engine.dialect.name == "sqlite"

    def add_signal(self, stack_id: str, resource_uuid: str, details: Any, signal_id: str | None = None) -> tuple[SignalRecord, bool]:
        """Record a signal to a resource; returns its row and whether it is new.

        Idempotent: a signal with an id the resource already has replaces that one's
        details (as Heat overwrites it) and is not counted again. Without ``signal_id``
        it is numbered as Heat numbers it: its ordinal among the resource's signals."""
        table = tables.signals
        of_resource = table.c.resource_uuid == resource_uuid

        def write(connection: Connection) -> tuple[SignalRecord, bool]:
            if not self._is_sqlite:
                # Two signals numbered at once must not get the same number (SQLite's
                # BEGIN IMMEDIATE already serialises them).
                connection.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": "stoker.signals." + resource_uuid})
            count = connection.execute(sa.select(sa.func.count()).select_from(table).where(of_resource)).scalar() or 0
            key = signal_id if signal_id is not None else str(count + 1)
            existing = connection.execute(sa.select(table).where(of_resource, table.c.signal_id == key)).first()
            if existing is None:
                now = utcnow()
                values = {"stack_id": stack_id, "resource_uuid": resource_uuid, "signal_id": key, "details": details, "created_at": now}
                row_id = tables.inserted_id(connection.execute(table.insert(), values))
                return SignalRecord(row_id, stack_id, resource_uuid, key, details, now, None, count + 1), True
            connection.execute(table.update().where(table.c.id == existing.id).values(details=details))
            ordinal = connection.execute(sa.select(sa.func.count()).select_from(table).where(of_resource, table.c.id <= existing.id)).scalar()
            return SignalRecord(existing.id, stack_id, resource_uuid, key, details, existing.created_at, existing.handled_at, int(ordinal or 0)), False

        return self._writes.run(write)

    @reads
    def list_signals(self, resource_uuid: str) -> list[SignalRecord]:
        """A resource's signals in the order they first arrived."""
        table = tables.signals
        query = sa.select(table).where(table.c.resource_uuid == resource_uuid).order_by(table.c.id)
        with self._read() as connection:
            rows = connection.execute(query).all()
        return [
            SignalRecord(row.id, row.stack_id, row.resource_uuid, row.signal_id, row.details, row.created_at, row.handled_at, ordinal)
            for ordinal, row in enumerate(rows, start=1)
        ]

    def mark_signals_handled(self, signal_ids: Iterable[int]) -> None:
        """Note that these signals were acted on (the first time only)."""
        ids = list(signal_ids)
        if not ids:
            return
        table = tables.signals
        statement = table.update().where(table.c.id.in_(ids), table.c.handled_at.is_(None)).values(handled_at=utcnow())
        self._writes.run(lambda connection: connection.execute(statement))

    def delete_signals(self, resource_uuid: str) -> int:
        """Forget a resource's signals; returns how many there were."""
        table = tables.signals
        return self._writes.run(lambda connection: connection.execute(table.delete().where(table.c.resource_uuid == resource_uuid)).rowcount)

    def add_signal_credential(self, record: SignalCredentialRecord) -> None:
        """Store a resource's new credential and revoke its others of the same purpose
        (a server's metadata credential leaves its signal credential be), in one
        transaction. A purpose of None and "signal" are the same: an ordinary one."""
        table = tables.signal_credentials
        record.created_at = record.created_at or utcnow()
        values = {name: getattr(record, name) for name in _SIGNAL_CREDENTIAL_FIELDS}
        if record.purpose in (None, SIGNAL_PURPOSE):
            same_purpose = sa.or_(table.c.purpose.is_(None), table.c.purpose == SIGNAL_PURPOSE)
        else:
            same_purpose = table.c.purpose == record.purpose

        def write(connection: Connection) -> None:
            live = sa.and_(table.c.resource_uuid == record.resource_uuid, table.c.revoked_at.is_(None), same_purpose)
            connection.execute(table.update().where(live).values(revoked_at=record.created_at))
            connection.execute(table.insert(), values)

        self._writes.run(write)

    @reads
    def get_signal_credential(self, credential_id: str) -> SignalCredentialRecord | None:
        table = tables.signal_credentials
        with self._read() as connection:
            row = connection.execute(sa.select(table).where(table.c.id == credential_id)).first()
        return _signal_credential(row) if row is not None else None

    @reads
    def signal_credentials(self, resource_uuid: str) -> list[SignalCredentialRecord]:
        """A resource's credentials that are not revoked, of every purpose (each record
        says its own: a caller checking a signal's secret must look)."""
        table = tables.signal_credentials
        query = sa.select(table).where(table.c.resource_uuid == resource_uuid, table.c.revoked_at.is_(None)).order_by(table.c.created_at)
        with self._read() as connection:
            return [_signal_credential(row) for row in connection.execute(query)]

    def revoke_signal_credentials(self, resource_uuid: str) -> int:
        """Revoke every live credential of a resource; returns how many there were."""
        table = tables.signal_credentials
        live = sa.and_(table.c.resource_uuid == resource_uuid, table.c.revoked_at.is_(None))
        return self._writes.run(lambda connection: connection.execute(table.update().where(live).values(revoked_at=utcnow())).rowcount)
