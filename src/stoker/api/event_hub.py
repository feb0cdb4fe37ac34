"""The server's open event streams: one poll of the store per stack tree, shared by
every stream reading that tree, and how many streams each project holds open.

What it owns: the watches (``Watch``: one poll loop per stack tree and depth), each
stream's place in its watch (``Reader``) and the per-project count of open streams
(``EventStreams.admit``). What it must not do: format messages
(``api/event_stream.py``) or decide the order events come in (``store/event_feed.py``,
whose pages and cursors it passes on).

Cost. A watch reads the store every ``POLL_INTERVAL_S`` seconds (the stack's lock
holder, then one ``Store.events.event_page``) in a worker thread, however many streams
read it: N streams of one stack cost one poll. A stream waits on an event of its own and is
woken only by news: a page with events, or a change of the root stack's state or of
its lock, which is all a stream's end depends on. A stream that has seen its end coming
(on PostgreSQL it then waits for the transactions before that state to settle) is
woken by every poll until it ends. An idle stream costs no query and no wake-up; the
watch goes when its last stream does.

Places. A watch starts at the head of the feed (``Store.events.event_feed_head``: every
event up to that cursor is final, and every later one will be in a page of the watch) and
keeps its last ``KEPT_NEWS`` pages with news. A reader has every event up to its
cursor (``Feed.after``). At or after where the watch's kept pages start (``base``), it
takes those pages in order, each event after its cursor once (``Feed.take``). Before it
(a stream from the stack's start, resumed with Last-Event-ID, or one whose client reads
more slowly than pages come), it reads the events up to ``base`` from the store itself,
all final by then, and takes no end from those reads (``Feed.take_events``); then it
goes on with the watch's pages. Its end is judged on the watch's pages only: each holds
every event committed before the root state it shows, as a poll of its own would.

Limit. ``EventStreams.admit`` counts a project's open streams, from the request to the
end of its response, and refuses one past ``Settings.max_event_streams_per_project``
(429, ``TooManyStreamsError``), so that one caller cannot hold every connection.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass

import anyio

from stoker.api.errors import TooManyStreamsError
from stoker.store.event_feed import Cursor, EventPage, Feed, FeedPoll

LOG = logging.getLogger(__name__)

# Seconds between two reads of the store by a watch while nothing new is ready.
POLL_INTERVAL_S = 0.25
# Pages with news a watch keeps for its readers that are behind; a reader further
# behind reads the store itself.
KEPT_NEWS = 32


class StreamFailedError(Exception):
    """The store could not be read for a stream (the server's log says why)."""


@dataclass(slots=True)
class Delivery:
    """One poll of a watch: its page (the events after the watch's previous cursor),
    numbered from 1, and the watch's cursor after it."""

    number: int
    page: EventPage
    after: Cursor


def _state(page: EventPage) -> tuple[object, ...]:
    """What of a page a stream's end depends on, besides its events."""
    root = page.root
    if root is None:
        return (None, page.busy)
    return (root.action, root.status, root.updated_at, root.deleted_at, page.busy)


class Watch:
    """One stack tree's shared poll, ``depth`` levels down. Lives on the server's loop.

    ``read_head() -> Cursor`` and ``read_page(cursor) -> EventPage`` block (they read
    the store): they run in worker threads."""

    def __init__(
        self,
        key: tuple[str, int],
        read_head: Callable[[], Cursor],
        read_page: Callable[[Cursor], EventPage],
        poll_interval_s: float = POLL_INTERVAL_S,
        kept_news: int = KEPT_NEWS,
    ):
        self.key = key
        self.poll_interval_s = poll_interval_s
        self.kept_news = kept_news
        self._read_head = read_head
        self._read_page = read_page
        self.readers: set[Reader] = set()
        # The kept pages with news, oldest first, and the latest page, news or not.
        self.news: deque[Delivery] = deque()
        self.latest: Delivery | None = None
        # Where the kept pages start: every event up to it was in a page no longer kept
        # (or before the head). None until the head is read.
        self.base: Cursor | None = None
        # The number of the last page with news no longer kept (0: none).
        self.dropped = 0
        self.failed = False
        self.closed = False
        self.task: asyncio.Task[None] | None = None
        # The number of the latest page whose read has started (on the loop, before the
        # read): a reader that joins now may take the end of its stream only from a later
        # page, read after the action it watches was recorded (Reader.joined).
        self.started = 0

    async def run(self, forget: Callable[[Watch], None]) -> None:
        try:
            cursor = await anyio.to_thread.run_sync(self._read_head)
            self.base = cursor
            number, last_state = 0, None
            while self.readers:
                number += 1
                self.started = number
                page = await anyio.to_thread.run_sync(self._read_page, cursor)
                if page.events:
                    cursor = page.events[-1][0]
                delivery = Delivery(number, page, cursor)
                state = _state(page)
                news = bool(page.events) or state != last_state
                last_state = state
                self.latest = delivery
                if news:
                    self.news.append(delivery)
                    if len(self.news) > self.kept_news:
                        gone = self.news.popleft()
                        self.dropped, self.base = gone.number, gone.after
                for reader in self.readers:
                    if news or reader.eager or reader.shutdown.is_set():
                        reader.wake.set()
                if not page.full:
                    await anyio.sleep(self.poll_interval_s)
        except Exception:  # noqa: BLE001 - each stream ends with an error message; the log says why
            LOG.exception("event streams of stack %s: reading the store failed", self.key[0])
            self.failed = True
        finally:
            # No await from the loop's last look at its readers to here: a stream that
            # joins from now on makes a new watch.
            self.closed = True
            forget(self)
            for reader in self.readers:
                reader.wake.set()


class Reader:
    """One stream's place in its watch: ``feed`` is its position (and its skip set and
    end rule); ``read_upto(after, upto) -> EventPage`` reads the events up to ``upto``
    for it when it is behind (blocking: run in a worker thread)."""

    def __init__(self, watch: Watch, feed: Feed, shutdown: anyio.Event, read_upto: Callable[[Cursor, Cursor], EventPage]):
        self.watch = watch
        self.feed = feed
        self.shutdown = shutdown
        self._read_upto = read_upto
        self.wake = asyncio.Event()
        # The number of the last page of the watch taken.
        self.seen = 0
        # Pages up to this one were read (or began to be) before this reader joined: their
        # events count, but not their stack's state, which may be from before the action
        # this stream was opened for (a stream opened right after a suspend was accepted
        # would end at once on a page that still showed the last action's COMPLETE).
        self.joined = watch.started
        # Woken by every poll: until it has taken one read since it joined, and while its
        # end is coming.
        self.eager = True

    def _behind(self) -> bool:
        watch = self.watch
        return watch.base is not None and (self.feed.after < watch.base or self.seen < watch.dropped)

    async def polls(self) -> AsyncIterator[FeedPoll]:
        """What the stream has to send, as it comes; the last one ``ended``. Ends
        without one when the server shuts down. Raises StreamFailedError."""
        watch = self.watch
        while not self.shutdown.is_set():
            if watch.failed:
                raise StreamFailedError(f"the event stream of stack {watch.key[0]} could not read the store")
            if self._behind():
                upto, dropped = watch.base, watch.dropped
                assert upto is not None
                if self.feed.after >= upto:
                    # Its missed pages were before its own start (a stream from now).
                    self.seen = dropped
                    continue
                try:
                    page = await anyio.to_thread.run_sync(self._read_upto, self.feed.after, upto)
                except Exception as error:  # noqa: BLE001 - the stream ends with an error message
                    LOG.exception("event stream of stack %s: reading the store failed", watch.key[0])
                    raise StreamFailedError(str(error)) from error
                events = self.feed.take_events(page, upto)
                if not page.full:
                    self.seen = max(self.seen, dropped)
                yield FeedPoll(events, more=True)
                continue
            pending = [delivery for delivery in watch.news if delivery.number > self.seen]
            latest = watch.latest
            if latest is not None and latest.number > self.seen and (not pending or pending[-1] is not latest):
                pending.append(latest)
            if pending:
                events = []
                for delivery in pending:
                    polled = self.feed.take(delivery.page, may_end=delivery.number > self.joined)
                    self.seen = delivery.number
                    events.extend(polled.events)
                    if polled.ended:
                        yield FeedPoll(events, more=False, ended=True, final=polled.final)
                        return
                self.eager = self.feed.ending or self.seen <= self.joined
                yield FeedPoll(events, more=False)
                continue
            if watch.closed:
                raise StreamFailedError(f"the event stream of stack {watch.key[0]} stopped")
            self.wake.clear()
            await self.wake.wait()


class Slot:
    """One open stream counted against its project; ``release`` once it has ended."""

    def __init__(self, streams: EventStreams, project: str):
        self._streams = streams
        self.project = project
        self._released = False

    def release(self) -> None:
        if not self._released:
            self._released = True
            self._streams._release(self.project)


class EventStreams:
    """The server's open event streams: the watches, and each project's count."""

    def __init__(self, max_per_project: int, poll_interval_s: float = POLL_INTERVAL_S, kept_news: int = KEPT_NEWS):
        # Open streams a project may have (-1: no limit).
        self.max_per_project = max_per_project
        self.poll_interval_s = poll_interval_s
        self.kept_news = kept_news
        # Guards ``_open``: streams are admitted in request threads, released on the loop.
        self._lock = threading.Lock()
        self._open: Counter[str] = Counter()
        # Only touched on the server's loop.
        self._watches: dict[tuple[str, int], Watch] = {}

    def admit(self, project: str) -> Slot:
        """Count a new stream of ``project``; raises TooManyStreamsError past the limit."""
        with self._lock:
            if 0 <= self.max_per_project <= self._open[project]:
                raise TooManyStreamsError(
                    f"Too many open event streams: project {project} has {self._open[project]} open, the most a project may have"
                    f" (STOKER_MAX_EVENT_STREAMS_PER_PROJECT={self.max_per_project} on the server)",
                    hint="close the event streams this project no longer reads, or poll the events API"
                    " (GET /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/events) instead",
                )
            self._open[project] += 1
        return Slot(self, project)

    def _release(self, project: str) -> None:
        with self._lock:
            self._open[project] -= 1
            if self._open[project] <= 0:
                del self._open[project]

    def open_streams(self) -> int:
        with self._lock:
            return sum(self._open.values())

    def watches(self) -> int:
        return len(self._watches)

    def join(
        self,
        key: tuple[str, int],
        read_head: Callable[[], Cursor],
        read_page: Callable[[Cursor], EventPage],
        read_upto: Callable[[Cursor, Cursor], EventPage],
        feed: Feed,
        shutdown: anyio.Event,
    ) -> Reader:
        """A reader of the watch of ``key`` (root stack id, depth), made if there is
        none. On the server's loop; ``leave`` it when the stream ends."""
        watch = self._watches.get(key)
        if watch is None or watch.closed:
            watch = self._watches[key] = Watch(key, read_head, read_page, self.poll_interval_s, self.kept_news)
            watch.task = asyncio.get_running_loop().create_task(watch.run(self._forget))
        reader = Reader(watch, feed, shutdown, read_upto)
        watch.readers.add(reader)
        return reader

    def leave(self, reader: Reader) -> None:
        reader.watch.readers.discard(reader)

    def _forget(self, watch: Watch) -> None:
        if self._watches.get(watch.key) is watch:
            del self._watches[watch.key]
