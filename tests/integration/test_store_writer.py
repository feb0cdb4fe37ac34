"""The store's single writer under concurrency, against real databases (SQLite file and
PostgreSQL): writes from many threads all land, a failing write fails alone among those
queued with it, and a cancelled write does not stop the ones after it. Where writes must
queue up, a second database client holds the write lock (``writes_held_back``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest
import sqlalchemy as sa

from stoker.store import ResourceRecord, Store
from tests.support.records import make_event, make_resource, make_stack

THREADS = 8
UPDATES_PER_THREAD = 50


def test_store_concurrent_update_resource_from_threads_all_land(store: Store) -> None:
    # This is what plugin handler threads do: each persists its own resource's progress,
    # with events, at the same time as the others and as readers.
    stack = make_stack(store)
    records = [make_resource(stack.id, f"server_{index}", data={"count": -1}) for index in range(THREADS)]
    store.insert_resources(records)
    start = threading.Barrier(THREADS + 1)

    def write(record: ResourceRecord) -> None:
        assert record.id is not None
        start.wait()
        for count in range(UPDATES_PER_THREAD):
            event = make_event(stack.id, record.name, "CREATE", "IN_PROGRESS", f"step {count}")
            store.update_resource(
                record,
                event,
                data={"count": count},
                physical_resource_id=f"{record.name}-{count}",
                handler_token={"step": count},
            )

    def read() -> int:
        start.wait()
        reads = 0
        for _ in range(UPDATES_PER_THREAD):
            assert len(store.list_resources(stack.id)) == THREADS
            store.events.list_events(stack.id, limit=10)
            reads += 1
        return reads

    with ThreadPoolExecutor(max_workers=THREADS + 1) as pool:
        writers = [pool.submit(write, record) for record in records]
        reader = pool.submit(read)
        for future in writers:
            future.result(timeout=120)
        assert reader.result(timeout=120) == UPDATES_PER_THREAD

    final = {r.name: r for r in store.list_resources(stack.id)}
    for record in records:
        found = final[record.name]
        assert found.data == {"count": UPDATES_PER_THREAD - 1}
        assert found.handler_token == {"step": UPDATES_PER_THREAD - 1}
        assert found.physical_resource_id == f"{record.name}-{UPDATES_PER_THREAD - 1}"

    events = store.events.list_events(stack.id)
    assert len(events) == THREADS * UPDATES_PER_THREAD
    assert len({e.id for e in events}) == len(events)
    for record in records:
        reasons = [e.resource_status_reason for e in store.events.list_events(stack.id, resource_name=record.name)]
        # One thread writes a resource's events in sequence, so their ids keep that order.
        assert reasons == [f"step {count}" for count in range(UPDATES_PER_THREAD)]


def test_store_concurrent_add_event_and_insert_resources_all_land(store: Store) -> None:
    stack = make_stack(store)
    start = threading.Barrier(THREADS)

    def work(worker: int) -> list[ResourceRecord]:
        start.wait()
        inserted = []
        for index in range(10):
            record = make_resource(stack.id, f"r_{worker}_{index}")
            store.insert_resources([record])
            store.events.add_event(make_event(stack.id, record.name))
            inserted.append(record)
        return inserted

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        results = [future.result(timeout=120) for future in [pool.submit(work, w) for w in range(THREADS)]]

    inserted = [record for batch in results for record in batch]
    listed = store.list_resources(stack.id)
    assert {(r.id, r.name) for r in listed} == {(r.id, r.name) for r in inserted}
    assert len(store.events.list_events(stack.id)) == THREADS * 10


@contextmanager
def writes_held_back(store: Store) -> Iterator[None]:
    """Another database client holds the write lock, so the store's writes queue up
    behind it and go through together once it lets go."""
    other = sa.create_engine(store.url)
    try:
        with other.connect() as connection:
            if store.is_sqlite:
                connection.exec_driver_sql("BEGIN IMMEDIATE")
            else:
                connection.execute(sa.text("LOCK TABLE stacks, resources, events IN EXCLUSIVE MODE"))
            yield
            connection.rollback()
    finally:
        other.dispose()


def test_store_failing_write_fails_alone_among_queued_writes(store: Store) -> None:
    stack = make_stack(store)
    records = [make_resource(stack.id, f"server_{index}") for index in range(6)]
    store.insert_resources(records)
    taken = make_event(stack.id, "server_0")
    store.events.add_event(taken)
    clash = make_event(stack.id, "server_3", reason="clash")
    clash.uuid = taken.uuid

    # Held back, the six calls queue up and reach the writer together (one batch), so
    # the clash happens in a transaction shared with the other five.
    with writes_held_back(store):
        futures = {
            record.name: store.update_resource_nowait(
                record,
                clash if record.name == "server_3" else make_event(stack.id, record.name, reason="ok"),
                status="FAILED",
            )
            for record in records
        }

    for name, future in futures.items():
        if name == "server_3":
            with pytest.raises(sa.exc.IntegrityError):
                future.result(timeout=60)
        else:
            assert future.result(timeout=60) is None
    statuses = {r.name: r.status for r in store.list_resources(stack.id)}
    # The failing call is one transaction: its resource update is rolled back with its event.
    assert statuses == {record.name: "COMPLETE" if record.name == "server_3" else "FAILED" for record in records}
    reasons = sorted(e.resource_status_reason for e in store.events.list_events(stack.id))
    assert reasons == [""] + ["ok"] * 5


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_store_write_cancelled_while_queued_does_not_stop_later_writes(store: Store) -> None:
    stack = make_stack(store)
    record = make_resource(stack.id, "server")
    store.insert_resources([record])
    assert record.id is not None

    with writes_held_back(store):
        first = store.update_resource_nowait(record, status_reason="first")
        abandoned = store.update_resource_nowait(record, status_reason="abandoned")
        # A caller that stops waiting (a timeout, asyncio.wrap_future cancelled) cancels it.
        assert abandoned.cancel()

    first.result(timeout=60)
    store.update_resource_nowait(record, status_reason="later").result(timeout=5)
    [found] = store.list_resources(stack.id)
    assert found.status_reason == "later"
