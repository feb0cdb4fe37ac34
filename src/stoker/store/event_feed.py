"""The event feed: a stack's events and its nested stacks', in an order a reader can
resume from without skipping or repeating one, whichever process wrote them.

What it owns: the feed's cursor (``Cursor``), its queries (run by
``Store.events.event_page``) and a reader's position (``Feed``). What it must not do:
format events for anyone (``api/event_stream.py`` does) or wait (its caller polls).

Why not the event id alone. Ids come from a sequence (PostgreSQL) or AUTOINCREMENT
(SQLite) when the row is inserted, not when it commits. On PostgreSQL two writers (two
worker processes, or a server and a worker) may commit in the other order: a reader
that has seen id 11 and moves its cursor there never sees id 10 when it commits a
moment later. A settle window (only rows older than N seconds) makes that unlikely,
not impossible (a slow commit, clocks of two hosts), and delays every reader. A per-stack
counter written under the stack lock gives no order across a tree of stacks, whose
nested stacks are written by other jobs under other locks.

The cursor: ``(txid, id)``. Each event row carries the id of the transaction that wrote
it (``events.txid``, PostgreSQL's ``pg_current_xact_id()``; 0 on SQLite). A poll reads
in one snapshot (REPEATABLE READ) and returns only rows whose ``txid`` is below the
snapshot's ``xmin``: every transaction below ``xmin`` has finished, so every row it
wrote is visible now, and every transaction that has not finished, or has not begun,
has (or will get) an id at or above ``xmin``. So once a row of ``(txid, id)`` has been
returned, no row ordered before it can appear later, and resuming after a cursor skips
nothing. A transaction left open elsewhere on the server holds ``xmin`` back: it delays
the feed (never reorders it). SQLite needs none of this: one writer commits at a time
(its write lock is taken at BEGIN), so id order is commit order, and a reader's
snapshot holds every row below the largest id it sees; ``txid`` stays 0 there.

Nested stacks: the tree (the root and its nested stacks, deleted ones too, down to a
depth) is found by a recursive query in the same snapshot as the events, so an event
of a nested stack made a moment ago is never passed over for a later event of its
parent.

The end of a feed (``Feed.poll``'s ``final``): the root stack as read at some poll,
once every event committed before that read has been returned. The root row is read
first, then the events, in one snapshot; on PostgreSQL the poll also notes the
snapshot's ``xmax`` (every transaction committed before the read has a lower id), and
the feed ends at the first later poll whose ``xmin`` has passed it.

Pages shared by many readers (``api/event_hub.py``): one poll's page serves every reader
whose position it continues (``Feed.take``); a reader behind it reads the events up to
a cursor every event up to which is final (``upto``: no snapshot bounds needed there)
and takes no ending from such a page (``Feed.take_events``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from stoker.store import tables
from stoker.store.records import EventRecord, StackRecord

# The largest value either part of a cursor may have (PostgreSQL's BIGINT).
MAX_PART = 2**63 - 1
_CURSOR = re.compile(r"([0-9]{1,19})-([0-9]{1,19})")
# Events returned by one poll at most; a full page is followed by another at once.
PAGE_SIZE = 500


@dataclass(frozen=True, order=True, slots=True)
class Cursor:
    """A place in the feed: after the event written by transaction ``txid`` with ``id``.
    As text (an SSE message's id): ``<txid>-<id>``."""

    txid: int
    id: int

    def __str__(self) -> str:
        return f"{self.txid}-{self.id}"

    @classmethod
    def parse(cls, text: str) -> Cursor:
        """Raises ValueError for text that is not a cursor."""
        match = _CURSOR.fullmatch(text)
        if match is None:
            raise ValueError(f"{text[:80]!r} is not an event stream cursor (<number>-<number>)")
        txid, event_id = int(match.group(1)), int(match.group(2))
        if txid > MAX_PART or event_id > MAX_PART:
            raise ValueError(f"{text[:80]!r} is out of range for an event stream cursor")
        return cls(txid, event_id)


START = Cursor(0, 0)


@dataclass(slots=True)
class TreeStack:
    """A stack of the tree: its row's identity and where it hangs."""

    id: str
    owner_id: str | None
    owner_resource: str | None


@dataclass(slots=True)
class EventPage:
    """What one snapshot holds (``Store.events.event_page``). ``xmin``/``xmax``: the
    snapshot's bounds on PostgreSQL (None on SQLite, where every visible row is final).
    ``busy``: whether a job held the root's lock, read just before the snapshot (by the
    page's reader: a feed does not end on a state such a job may still change)."""

    root: StackRecord | None
    tree: list[TreeStack]
    events: list[tuple[Cursor, EventRecord]]
    full: bool
    xmin: int | None = None
    xmax: int | None = None
    busy: bool = False


def snapshot_bounds(connection: Connection) -> tuple[int, int]:
    """PostgreSQL: the current snapshot's xmin and xmax (its first statement fixes the
    snapshot of a REPEATABLE READ transaction)."""
    row = connection.execute(
        sa.text(
            "SELECT pg_snapshot_xmin(pg_current_snapshot())::text::bigint, pg_snapshot_xmax(pg_current_snapshot())::text::bigint"
        )
    ).one()
    return int(row[0]), int(row[1])


def txid_value() -> Any:
    """The value an event's ``txid`` gets on PostgreSQL: its transaction's id."""
    return sa.text("pg_current_xact_id()::text::bigint")


def _tree(root_id: str, max_depth: int) -> Any:
    stacks = tables.stacks
    # literal_column: a bound 0 may reach PostgreSQL as a smallint, and a recursive
    # query's columns must have one type in both its terms.
    top = sa.select(stacks.c.id, stacks.c.owner_id, stacks.c.owner_resource, sa.literal_column("0").label("depth"))
    tree = top.where(stacks.c.id == root_id).cte("tree", recursive=True)
    child = stacks.alias("child")
    return tree.union_all(
        sa.select(child.c.id, child.c.owner_id, child.c.owner_resource, tree.c.depth + 1).where(
            child.c.owner_id == tree.c.id, tree.c.depth < max_depth
        )
    )


def read_tree(connection: Connection, root_id: str, max_depth: int) -> list[TreeStack]:
    tree = _tree(root_id, max_depth)
    # Root first, then level by level: an owner comes before the stacks it owns.
    query = sa.select(tree.c.id, tree.c.owner_id, tree.c.owner_resource).order_by(tree.c.depth)
    return [TreeStack(row.id, row.owner_id, row.owner_resource) for row in connection.execute(query)]


def read_events(
    connection: Connection,
    stack_ids: Sequence[str],
    after: Cursor,
    below_txid: int | None,
    limit: int,
    fields: Sequence[str],
    upto: Cursor | None = None,
) -> list[tuple[Cursor, EventRecord]]:
    """The tree's events after ``after`` in cursor order, those of transactions below
    ``below_txid`` only (when given), and none after ``upto`` (when given)."""
    if not stack_ids:
        return []
    events = tables.events
    position = sa.tuple_(events.c.txid, events.c.id)
    query = sa.select(events).where(
        events.c.stack_id.in_(list(stack_ids)),
        position > sa.tuple_(sa.literal(after.txid, sa.BigInteger), sa.literal(after.id, sa.BigInteger)),
    )
    if below_txid is not None:
        query = query.where(events.c.txid < below_txid)
    if upto is not None:
        query = query.where(position <= sa.tuple_(sa.literal(upto.txid, sa.BigInteger), sa.literal(upto.id, sa.BigInteger)))
    query = query.order_by(events.c.txid, events.c.id).limit(limit)
    return [
        (Cursor(row.txid, row.id), EventRecord(**{name: getattr(row, name) for name in fields}))
        for row in connection.execute(query)
    ]


def head(connection: Connection, postgres: bool, root_id: str, max_depth: int) -> tuple[Cursor, frozenset[int]]:
    """Where a reader who wants only the events written from now on starts: a cursor,
    and the ids of the events after it that are already written (to pass over). On
    SQLite, the last event's id. On PostgreSQL, before every transaction at or above
    the snapshot's xmin, some of which may have committed already: their events in the
    tree are the ones to pass over (read in the same snapshot)."""
    if not postgres:
        last = connection.execute(sa.select(sa.func.max(tables.events.c.id))).scalar()
        return Cursor(0, int(last or 0)), frozenset()
    xmin, _ = snapshot_bounds(connection)
    events = tables.events
    tree = _tree(root_id, max_depth)
    written = connection.execute(sa.select(events.c.id).where(events.c.stack_id.in_(sa.select(tree.c.id)), events.c.txid >= xmin)).scalars()
    return Cursor(xmin - 1, MAX_PART), frozenset(written)


@dataclass(slots=True)
class FeedEvent:
    """One event of the feed; ``path``: the resource names from the root stack down to
    the nested stack the event is of (empty for the root's own events)."""

    cursor: Cursor
    event: EventRecord
    path: tuple[str, ...]


@dataclass(slots=True)
class FeedPoll:
    """One poll: the events new since the last one, whether more are ready at once
    (``more``), and, when the feed has ended, the root stack it ended at (``final``,
    None with ``ended`` when its row is gone)."""

    events: list[FeedEvent]
    more: bool
    ended: bool = False
    final: StackRecord | None = None


@dataclass(eq=False)
class Feed:
    """A reader's position in one stack tree's feed. ``stop_when(root)``: the root's
    state the feed ends at (a deleted root always ends it), once ``after_action_of``'s
    own event has come when it is set. ``poll`` blocks (it reads
    the store): call it from a worker thread."""

    read_page: Callable[[Cursor], EventPage]
    after: Cursor = START
    stop_when: Callable[[StackRecord], bool] = lambda stack: False
    # Ids of events after ``after`` not to return (already written when a reader asked
    # for the events from now on: ``head``).
    skip: frozenset[int] = frozenset()
    # The id of a root whose own event (an action of the stack starting or ending) must
    # come before the feed may end: a reader that opens the feed and then starts the
    # action waits for that action, not the state the stack was in before it.
    after_action_of: str | None = None
    # The root as first seen in a state the feed ends at, and on PostgreSQL the xmax of
    # that snapshot, which every transaction committed before it is below.
    _ending: tuple[StackRecord | None, int | None] | None = field(default=None, init=False)

    def poll(self) -> FeedPoll:
        return self.take(self.read_page(self.after))

    @property
    def ending(self) -> bool:
        """Whether the feed has seen the state it ends at (and waits for the events
        committed before it)."""
        return self._ending is not None

    def take_events(self, page: EventPage, upto: Cursor | None = None) -> list[FeedEvent]:
        """The events of ``page`` after this reader's position, which moves past them
        (and to ``upto`` when the page holds every event up to it: read with ``upto``
        and not full). Nothing about the feed's end: for pages that end early."""
        paths = _paths(page.tree)
        fresh = [(cursor, event) for cursor, event in page.events if cursor > self.after]
        if fresh:
            self.after = fresh[-1][0]
        if upto is not None and not page.full and upto > self.after:
            self.after = upto
        return [FeedEvent(cursor, event, paths.get(event.stack_id, ())) for cursor, event in fresh if cursor.id not in self.skip]

    def take(self, page: EventPage, may_end: bool = True) -> FeedPoll:
        """One poll's page: read after this reader's position (``read_page``'s), or
        after an earlier one by a reader sharing its pages, whose events this reader
        has up to where the page starts. ``may_end``: False for a shared page read
        before this reader came, whose root state may predate what the reader waits for."""
        found = self.take_events(page)
        if self.after_action_of is not None and any(
            item.event.stack_id == item.event.physical_resource_id == self.after_action_of for item in found
        ):
            self.after_action_of = None
        if self.after_action_of is not None and page.root is not None and page.root.deleted_at is None:
            return FeedPoll(found, more=page.full)
        if not may_end and self._ending is None:
            return FeedPoll(found, more=page.full)
        if self._ending is None and (
            page.root is None or page.root.deleted_at is not None or (not page.busy and self.stop_when(page.root))
        ):
            self._ending = (page.root, page.xmax)
        if self._ending is not None and not page.full:
            root, xmax = self._ending
            # SQLite (xmin None): this very snapshot returned every row it holds.
            if page.xmin is None or xmax is None or page.xmin >= xmax:
                return FeedPoll(found, more=False, ended=True, final=root)
        return FeedPoll(found, more=page.full)


def _paths(tree: list[TreeStack]) -> dict[str, tuple[str, ...]]:
    """Stack id -> resource names from the root (``read_tree`` gives the root first,
    then level by level, so an owner's path is known before its children's)."""
    paths: dict[str, tuple[str, ...]] = {}
    for index, stack in enumerate(tree):
        if index == 0:
            paths[stack.id] = ()
        elif stack.owner_id in paths:
            paths[stack.id] = (*paths[stack.owner_id], stack.owner_resource or "")
    return paths
