"""The events part of the repository, ``Store.events``: writing a stack's events and
reading them back, as a list or as pages of the event feed.

What it owns: the events table's queries, its insert statement (an event written with a
stack's or a resource's change goes through ``add_event_on`` or ``event_insert``, in
that change's transaction), and the feed's snapshot reads (the feed's own queries and
why they are so live in ``event_feed.py``). What it must not do: format events for
anyone (``engine/events.py`` and ``api/`` do), or change any other table.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from stoker.store import event_feed, tables
from stoker.store.connection_loss import reads
from stoker.store.records import EventRecord, stack_record, utcnow
from stoker.store.writer import WriteQueue

# ``txid`` orders the event feed (event_feed.py) and is no part of an event.
_EVENT_FIELDS = [c.name for c in tables.events.columns if c.name != "txid"]
# An event's row without its id (the database gives it); read in one C call per event.
_EVENT_VALUE_FIELDS = [name for name in _EVENT_FIELDS if name != "id"]
_event_getter = operator.attrgetter(*_EVENT_VALUE_FIELDS)


class EventRepository:
    """A stack's events, read on ``engine``'s pooled connections and written through
    ``writes`` (the store's one writer)."""

    def __init__(self, engine: Engine, writes: WriteQueue):
        self._writes = writes
        self._read: Callable[[], Connection] = engine.connect
        self._is_sqlite = engine.dialect.name == "sqlite"
        self._insert_statement = tables.events.insert()
        if not self._is_sqlite:
            # The writing transaction's id orders the event feed (event_feed.py).
            self._insert_statement = self._insert_statement.values(txid=event_feed.txid_value())

    def _values(self, event: EventRecord) -> dict[str, Any]:
        values = dict(zip(_EVENT_VALUE_FIELDS, _event_getter(event), strict=True))
        values["created_at"] = event.created_at = values["created_at"] or utcnow()
        return values

    def add_event_on(self, connection: Connection, event: EventRecord) -> None:
        """Insert ``event`` in the caller's transaction (``connection``); its ``id`` is
        filled in."""
        result = connection.execute(self._insert_statement, self._values(event))
        event.id = tables.inserted_id(result)

    def event_insert(self, event: EventRecord) -> tuple[Any, dict[str, Any], None]:
        """The ``(statement, parameters, row)`` triple that inserts ``event`` as one of a
        ``writer.Statements`` write's statements (its ``id`` is not filled in)."""
        return (self._insert_statement, self._values(event), None)

    def add_event(self, event: EventRecord) -> None:
        self._writes.run(lambda connection: self.add_event_on(connection, event))

    async def add_event_async(self, event: EventRecord) -> None:
        await self._writes.submit_async(lambda connection: self.add_event_on(connection, event))

    @reads
    def event_page(
        self, root_id: str, after: event_feed.Cursor, max_depth: int, limit: int = event_feed.PAGE_SIZE, upto: event_feed.Cursor | None = None
    ) -> event_feed.EventPage:
        """One snapshot of a stack tree for the event feed (event_feed.py says why and
        how): the root's row, the tree ``max_depth`` levels down (deleted nested stacks
        too), and up to ``limit`` events after ``after`` that no later commit can
        precede (none after ``upto``, when given). The root is read before the events,
        in the same snapshot."""
        with self._read() as connection:
            xmin = xmax = None
            if not self._is_sqlite:
                connection.execution_options(isolation_level="REPEATABLE READ")
                xmin, xmax = event_feed.snapshot_bounds(connection)
            row = connection.execute(sa.select(tables.stacks).where(tables.stacks.c.id == root_id)).first()
            tree = event_feed.read_tree(connection, root_id, max_depth)
            # Every event up to ``upto`` is final (its reader knows): no snapshot bound.
            below = xmin if upto is None else None
            events = event_feed.read_events(connection, [stack.id for stack in tree], after, below, limit, _EVENT_FIELDS, upto)
        return event_feed.EventPage(stack_record(row) if row else None, tree, events, len(events) >= limit, xmin, xmax)

    @reads
    def event_feed_head(self, root_id: str, max_depth: int) -> tuple[event_feed.Cursor, frozenset[int]]:
        """Where a feed of only the events written from now on starts, and the events
        after it to pass over (event_feed.head)."""
        with self._read() as connection:
            if not self._is_sqlite:
                connection.execution_options(isolation_level="REPEATABLE READ")
            return event_feed.head(connection, not self._is_sqlite, root_id, max_depth)

    def prune_events(self, stack_id: str, keep: int) -> int:
        """Delete all but the newest ``keep`` events of a stack; returns how many went."""
        table = tables.events

        def write(connection: Connection) -> int:
            cutoff = connection.execute(
                sa.select(table.c.id).where(table.c.stack_id == stack_id).order_by(table.c.id.desc()).offset(keep).limit(1)
            ).scalar()
            if cutoff is None:
                return 0
            return connection.execute(table.delete().where(table.c.stack_id == stack_id, table.c.id <= cutoff)).rowcount

        return self._writes.run(write)

    @reads
    def list_events(
        self,
        stack_id: str,
        resource_name: str | None = None,
        after_id: int | None = None,
        limit: int | None = None,
    ) -> list[EventRecord]:
        table = tables.events
        query = sa.select(table).where(table.c.stack_id == stack_id).order_by(table.c.id)
        if resource_name is not None:
            query = query.where(table.c.resource_name == resource_name)
        if after_id is not None:
            query = query.where(table.c.id > after_id)
        if limit is not None:
            query = query.limit(limit)
        with self._read() as connection:
            return [EventRecord(**{name: getattr(row, name) for name in _EVENT_FIELDS}) for row in connection.execute(query)]

    @reads
    def latest_event_id(self, stack_id: str) -> int:
        table = tables.events
        with self._read() as connection:
            return int(connection.execute(sa.select(sa.func.coalesce(sa.func.max(table.c.id), 0)).where(table.c.stack_id == stack_id)).scalar_one())

    @reads
    def stack_event_since(self, stack_id: str, after_id: int, action: str, resource_type: str) -> bool:
        """Whether the stack has an event of its own for ``action`` after event ``after_id``."""
        table = tables.events
        query = sa.select(table.c.id).where(
            table.c.stack_id == stack_id, table.c.id > after_id, table.c.resource_action == action, table.c.resource_type == resource_type
        ).limit(1)
        with self._read() as connection:
            return connection.execute(query).first() is not None
