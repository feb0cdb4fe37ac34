"""The event feed (store/event_feed.py) on real SQLite and PostgreSQL: its order is one
a reader resumes from without skipping or repeating an event, also when writers commit
out of id order (PostgreSQL), across nested stacks, and it ends only after every event
written before the state it ends at."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest
import sqlalchemy as sa

from stoker.store import Store, tables
from stoker.store.event_feed import START, Cursor, Feed
from tests.support.records import make_event, make_stack


def feed(store: Store, root_id: str, after: Cursor = START, depth: int = 5, stop_when=lambda stack: False) -> Feed:
    return Feed(lambda cursor: store.events.event_page(root_id, cursor, depth), after, stop_when)


def drain(reader: Feed) -> list:
    """Every event ready now (the feed pages through more than one page)."""
    found = []
    while True:
        polled = reader.poll()
        found.extend(polled.events)
        if not polled.more:
            return found


def collect(reader: Feed, count: int, ended: bool = False) -> tuple[list, object]:
    """Poll until ``count`` events have come (and the feed has ended, with ``ended``).
    On PostgreSQL any transaction of the server (other tests' too) holds the feed back
    while it runs: the wait is for those to finish, bounded only to fail a hung test."""
    found, deadline = [], time.monotonic() + 60
    while True:
        polled = reader.poll()
        found.extend(polled.events)
        if len(found) >= count and (polled.ended or not ended):
            return found, polled
        assert time.monotonic() < deadline, f"the feed gave {len(found)} events of {count}"
        time.sleep(0 if polled.more else 0.05)


def insert_uncommitted(connection: sa.Connection, stack_id: str, name: str) -> None:
    """An event written as the store writes one on PostgreSQL, in a transaction the
    caller commits later."""
    event = make_event(stack_id, name)
    values = {column: getattr(event, column) for column in ("uuid", "stack_id", "resource_name", "physical_resource_id", "resource_type", "resource_action", "resource_status", "resource_status_reason")}
    connection.execute(tables.events.insert().values(txid=sa.text("pg_current_xact_id()::text::bigint"), created_at=sa.func.now(), **values))


def test_event_feed_resumes_after_any_cursor_with_nothing_skipped_or_repeated(store: Store) -> None:
    stack = make_stack(store)
    for number in range(12):
        store.events.add_event(make_event(stack.id, f"r{number}"))
    everything, _ = collect(feed(store, stack.id), 12)
    assert [item.event.resource_name for item in everything] == [f"r{number}" for number in range(12)]
    cursors = [item.cursor for item in everything]
    assert cursors == sorted(set(cursors))
    for index, item in enumerate(everything):
        resumed, _ = collect(feed(store, stack.id, after=Cursor.parse(str(item.cursor))), len(everything) - index - 1)
        assert [later.event.uuid for later in resumed] == [later.event.uuid for later in everything[index + 1:]]


def test_event_feed_pages_through_more_events_than_a_page(store: Store) -> None:
    stack = make_stack(store)
    for number in range(7):
        store.events.add_event(make_event(stack.id, f"r{number}"))
    collect(feed(store, stack.id), 7)  # all of them final
    reader = Feed(lambda cursor: store.events.event_page(stack.id, cursor, 0, limit=3))
    pages = []
    while True:
        polled = reader.poll()
        pages.append([item.event.resource_name for item in polled.events])
        if not polled.more:
            break
    assert pages == [["r0", "r1", "r2"], ["r3", "r4", "r5"], ["r6"]]


def test_event_feed_follows_nested_stacks_with_their_paths(store: Store) -> None:
    root = make_stack(store, "root")
    child = make_stack(store, "root-outer-x", owner_id=root.id, owner_resource="outer", nested_depth=1)
    grandchild = make_stack(store, "root-outer-inner-y", owner_id=child.id, owner_resource="inner", nested_depth=2)
    other = make_stack(store, "unrelated")
    for stack, name in ((root, "a"), (child, "b"), (grandchild, "c"), (other, "x"), (root, "d")):
        store.events.add_event(make_event(stack.id, name))
    everything, _ = collect(feed(store, root.id), 4)
    assert [(item.event.resource_name, item.path) for item in everything] == [
        ("a", ()),
        ("b", ("outer",)),
        ("c", ("outer", "inner")),
        ("d", ()),
    ]
    assert [item.event.resource_name for item in collect(feed(store, root.id, depth=1), 3)[0]] == ["a", "b", "d"]
    assert [item.event.resource_name for item in collect(feed(store, root.id, depth=0), 2)[0]] == ["a", "d"]


def test_event_feed_ends_after_the_event_of_the_state_it_stops_at(store: Store) -> None:
    stack = make_stack(store)
    store.events.add_event(make_event(stack.id, "first"))
    reader = feed(store, stack.id, stop_when=lambda root: root.status != "IN_PROGRESS")
    found, polled = collect(reader, 1)
    assert [item.event.resource_name for item in found] == ["first"] and not polled.ended
    store.update_stack(stack.id, make_event(stack.id, stack.name, status="COMPLETE"), status="COMPLETE")
    found, polled = collect(reader, 1, ended=True)
    assert [item.event.resource_name for item in found] == [stack.name]
    assert polled.final is not None and polled.final.status == "COMPLETE"


def test_event_feed_of_a_deleted_stack_ends_whatever_it_waits_for(store: Store) -> None:
    stack = make_stack(store)
    deleted_at = datetime.now(UTC).replace(tzinfo=None)
    store.update_stack(stack.id, make_event(stack.id, stack.name, action="DELETE"), action="DELETE", status="COMPLETE", deleted_at=deleted_at)
    found, polled = collect(feed(store, stack.id), 1, ended=True)
    assert [item.event.resource_action for item in found] == ["DELETE"]
    assert polled.final is not None and polled.final.deleted_at is not None


def test_event_feed_head_starts_after_the_events_already_written(store: Store) -> None:
    stack = make_stack(store)
    store.events.add_event(make_event(stack.id, "before"))
    after, skip = store.events.event_feed_head(stack.id, 5)
    reader = Feed(lambda cursor: store.events.event_page(stack.id, cursor, 5), after, skip=skip)
    store.events.add_event(make_event(stack.id, "after"))
    assert [item.event.resource_name for item in collect(reader, 1)[0]] == ["after"]
    assert drain(reader) == []


@pytest.mark.postgres
@pytest.mark.parametrize("late", ["lower id", "higher id"])
def test_event_feed_never_passes_a_transaction_that_commits_late(postgres_url: str, late: str) -> None:
    """A transaction that began writing before another commits after it. Its event may
    have the lower id (it inserted first) or the higher one (it inserted last): either
    way the feed holds the other event back until it commits, then gives both in
    transaction order, where a reader going by id alone would skip one for good."""
    store = Store(postgres_url)
    store.migrate()
    try:
        stack = make_stack(store)
        reader = feed(store, stack.id)
        with store.engine.connect() as slow:
            if late == "lower id":
                insert_uncommitted(slow, stack.id, "slow")  # id and transaction id first
            else:
                slow.execute(sa.text("SELECT pg_current_xact_id()"))  # transaction id first
            store.events.add_event(make_event(stack.id, "quick"))  # commits at once
            if late == "higher id":
                insert_uncommitted(slow, stack.id, "slow")
            # The committed event is there for a plain read; the feed waits for the slow one.
            assert [event.resource_name for event in store.events.list_events(stack.id)] == ["quick"]
            assert reader.poll().events == []
            slow.commit()
        assert [item.event.resource_name for item in collect(reader, 2)[0]] == ["slow", "quick"]
        assert drain(reader) == []
        ids = {event.resource_name: event.id for event in store.events.list_events(stack.id)}
        assert (ids["slow"] < ids["quick"]) == (late == "lower id")
    finally:
        store.close()


@pytest.mark.postgres
def test_event_feed_ends_only_once_transactions_before_the_end_have_finished(postgres_url: str) -> None:
    """The stack's final state is committed while an event of a nested stack written
    earlier is not: the feed does not end before that event is out."""
    store = Store(postgres_url)
    store.migrate()
    try:
        stack = make_stack(store)
        child = make_stack(store, "child", owner_id=stack.id, owner_resource="inner", nested_depth=1)
        reader = feed(store, stack.id, stop_when=lambda root: root.status != "IN_PROGRESS")
        with store.engine.connect() as slow:
            insert_uncommitted(slow, child.id, "nested")
            store.update_stack(stack.id, make_event(stack.id, stack.name, status="COMPLETE"), status="COMPLETE")
            polled = reader.poll()
            assert polled.events == [] and not polled.ended
            slow.commit()
        found, polled = collect(reader, 2, ended=True)
        assert [(item.event.resource_name, item.path) for item in found] == [("nested", ("inner",)), (stack.name, ())]
        assert polled.final.status == "COMPLETE"
    finally:
        store.close()


def test_event_feed_txid_is_the_writing_transaction_on_postgresql_and_0_on_sqlite(store: Store) -> None:
    """Every way the store writes an event records its transaction: alone, and with the
    state change it records (the writer's batched statements)."""
    stack = make_stack(store)
    store.events.add_event(make_event(stack.id, "alone"))
    store.update_stack(stack.id, make_event(stack.id, stack.name, status="COMPLETE"), status="COMPLETE")
    with store.engine.connect() as connection:
        txids = connection.execute(sa.select(tables.events.c.txid).where(tables.events.c.stack_id == stack.id).order_by(tables.events.c.id)).scalars().all()
    if store.is_sqlite:
        assert txids == [0, 0]
    else:
        assert len(txids) == 2 and 0 < txids[0] < txids[1]


@pytest.mark.postgres
def test_event_feed_head_passes_over_what_is_written_and_waits_for_what_is_not(postgres_url: str) -> None:
    """Reading from now on while a transaction that began earlier is still open: the
    events committed after it began are already written (passed over), its own is not
    (delivered once it commits)."""
    store = Store(postgres_url)
    store.migrate()
    try:
        stack = make_stack(store)
        with store.engine.connect() as slow:
            insert_uncommitted(slow, stack.id, "unfinished")
            store.events.add_event(make_event(stack.id, "written"))
            after, skip = store.events.event_feed_head(stack.id, 5)
            reader = Feed(lambda cursor: store.events.event_page(stack.id, cursor, 5), after, skip=skip)
            store.events.add_event(make_event(stack.id, "later"))
            assert reader.poll().events == []
            slow.commit()
        assert [item.event.resource_name for item in collect(reader, 2)[0]] == ["unfinished", "later"]
        assert drain(reader) == []
    finally:
        store.close()
