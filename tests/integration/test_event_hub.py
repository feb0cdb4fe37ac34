"""The shared poll of event streams (api/event_hub.py) on real SQLite and PostgreSQL:
readers of one stack share one watch; a reader that starts behind it, or falls behind
while the watch drops the pages it kept, reads the store itself and still gets every
event once, in order; the watch stops with its last reader. Waits are for conditions;
a deadline only fails a hung test."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import anyio
import pytest
import sqlalchemy as sa

from stoker.api.event_hub import EventStreams, Reader, StreamFailedError
from stoker.store import Store
from stoker.store.event_feed import START, Feed, FeedEvent, FeedPoll
from tests.support.records import make_event, make_stack

DEPTH = 5


def join(streams: EventStreams, store: Store, root_id: str, shutdown: anyio.Event) -> Reader:
    def read_page(cursor):
        return store.events.event_page(root_id, cursor, DEPTH)

    return streams.join(
        (root_id, DEPTH),
        lambda: store.events.event_feed_head(root_id, DEPTH)[0],
        read_page,
        lambda cursor, upto: store.events.event_page(root_id, cursor, DEPTH, upto=upto),
        Feed(read_page, START),
        shutdown,
    )


async def take(polls: AsyncIterator[FeedPoll], count: int) -> list[FeedEvent]:
    found: list[FeedEvent] = []
    with anyio.fail_after(60):
        while len(found) < count:
            found.extend((await polls.__anext__()).events)
    return found


def names(found: list[FeedEvent]) -> list[str]:
    return [item.event.resource_name for item in found]


def test_event_hub_readers_behind_the_watch_get_every_event_once(store: Store) -> None:
    stack = make_stack(store)
    for number in range(3):
        store.events.add_event(make_event(stack.id, f"before{number}"))
    expected = [f"before{number}" for number in range(3)] + [f"after{number}" for number in range(8)]

    async def scenario() -> None:
        streams = EventStreams(-1, poll_interval_s=0.01, kept_news=2)
        shutdown = anyio.Event()
        prompt, slow = join(streams, store, stack.id, shutdown), join(streams, store, stack.id, shutdown)
        assert prompt.watch is slow.watch and streams.watches() == 1
        prompt_polls, slow_polls = prompt.polls(), slow.polls()
        # Both start behind the watch (which starts at the head): the history is read
        # from the store, then the watch's pages follow.
        found = await take(prompt_polls, 3)
        for number in range(8):
            await asyncio.to_thread(store.events.add_event, make_event(stack.id, f"after{number}"))
            found += await take(prompt_polls, 1)  # one page each: the watch keeps two
        assert names(found) == expected
        # The slow reader's pages were dropped meanwhile: it reads what it missed.
        assert slow.watch.dropped > slow.seen
        assert names(await take(slow_polls, len(expected))) == expected
        for polls in (prompt_polls, slow_polls):
            await polls.aclose()
        streams.leave(prompt)
        streams.leave(slow)
        with anyio.fail_after(60):
            while streams.watches():
                await asyncio.sleep(0.01)

    asyncio.run(scenario())


def test_event_hub_ends_a_reader_at_its_stack_deleted(store: Store) -> None:
    stack = make_stack(store)
    store.events.add_event(make_event(stack.id, "first"))

    async def scenario() -> None:
        streams = EventStreams(-1, poll_interval_s=0.01)
        reader = join(streams, store, stack.id, anyio.Event())
        polls = reader.polls()
        assert names(await take(polls, 1)) == ["first"]
        deleted_at = datetime.now(UTC).replace(tzinfo=None)
        await asyncio.to_thread(
            store.update_stack, stack.id, make_event(stack.id, stack.name, action="DELETE"), action="DELETE", status="COMPLETE", deleted_at=deleted_at
        )
        found = []
        with anyio.fail_after(60):
            async for polled in polls:
                found.extend(polled.events)
                if polled.ended:
                    assert polled.final is not None and polled.final.deleted_at is not None
                    break
        assert [(item.event.resource_name, item.event.resource_action) for item in found] == [(stack.name, "DELETE")]
        streams.leave(reader)

    asyncio.run(scenario())


def test_event_hub_a_stream_joining_a_watch_ends_on_its_own_action_not_a_page_from_before(store: Store) -> None:
    """A dashboard's stream keeps the stack's watch open; a stream opened right after a
    suspend was accepted (the stack already SUSPEND_IN_PROGRESS) joins that watch, whose
    latest page was read before the suspend: it must not end on that page's
    CREATE_COMPLETE (the CLI printed SUSPEND_IN_PROGRESS and returned), only on a page
    read after it came, once the suspend is COMPLETE."""
    stack = make_stack(store)
    store.update_stack(stack.id, make_event(stack.id, stack.name, action="CREATE", status="COMPLETE"), action="CREATE", status="COMPLETE")

    def terminal(root) -> bool:
        return root.status != "IN_PROGRESS"

    async def scenario() -> None:
        # Pages two seconds apart: the suspend is recorded and the CLI's stream joins
        # between two of them.
        streams = EventStreams(-1, poll_interval_s=2.0)
        dashboard = join(streams, store, stack.id, anyio.Event())
        dashboard_polls = dashboard.polls()
        with anyio.fail_after(60):
            while dashboard.watch.latest is None:
                await asyncio.sleep(0.01)
        assert dashboard.watch.latest.page.root.status == "COMPLETE"
        await asyncio.to_thread(
            store.update_stack, stack.id, make_event(stack.id, stack.name, action="SUSPEND"), action="SUSPEND", status="IN_PROGRESS"
        )
        head = store.events.event_feed_head(stack.id, DEPTH)[0]

        def read_page(cursor):
            return store.events.event_page(stack.id, cursor, DEPTH)

        cli = streams.join(
            (stack.id, DEPTH),
            lambda: head,
            read_page,
            lambda cursor, upto: store.events.event_page(stack.id, cursor, DEPTH, upto=upto),
            Feed(read_page, head, terminal),
            anyio.Event(),
        )
        assert cli.watch is dashboard.watch
        polls = cli.polls()
        with anyio.fail_after(60):
            first = await polls.__anext__()
        assert not first.ended, f"ended on a page read before it joined: {first.final}"
        await asyncio.to_thread(
            store.update_stack, stack.id, make_event(stack.id, stack.name, action="SUSPEND", status="COMPLETE"), action="SUSPEND", status="COMPLETE"
        )
        with anyio.fail_after(60):
            async for polled in polls:
                if polled.ended:
                    assert (polled.final.action, polled.final.status) == ("SUSPEND", "COMPLETE")
                    break
        for reader, reader_polls in ((cli, polls), (dashboard, dashboard_polls)):
            await reader_polls.aclose()
            streams.leave(reader)

    asyncio.run(scenario())


def drop_the_events_table(store: Store) -> None:
    """PostgreSQL may pick the DROP as a deadlock's victim while the streams' poller
    reads the table: the drop is repeated until it is done."""
    for attempt in range(20):
        try:
            with store.engine.begin() as connection:
                connection.execute(sa.text("DROP TABLE events"))
            return
        except sa.exc.OperationalError:
            if attempt == 19:
                raise
            time.sleep(0.1)


def test_event_hub_a_failed_read_ends_every_stream_of_the_stack_logged_once(store: Store, caplog) -> None:
    stack = make_stack(store)
    store.events.add_event(make_event(stack.id, "first"))

    async def scenario() -> None:
        streams = EventStreams(-1, poll_interval_s=0.01)
        readers = [join(streams, store, stack.id, anyio.Event()) for _ in range(5)]
        polls = [reader.polls() for reader in readers]
        for each in polls:
            assert names(await take(each, 1)) == ["first"]
        drop_the_events_table(store)  # the store's events are gone
        for each in polls:
            with anyio.fail_after(60), pytest.raises(StreamFailedError):
                await take(each, 1)
        for reader in readers:
            streams.leave(reader)
        assert streams.watches() == 0

    with caplog.at_level(logging.ERROR, logger="stoker.api.event_hub"):
        asyncio.run(scenario())
    assert [record.getMessage() for record in caplog.records if record.name == "stoker.api.event_hub"] == [
        f"event streams of stack {stack.id}: reading the store failed"
    ]
