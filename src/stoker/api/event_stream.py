"""``GET /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/events/stream``: a stack's events
as they are recorded, nested stacks' included, as server-sent events (text/event-stream).

What it owns: the stream's query parameters, what it reads
(``Store.events.event_page``, in the reads it hands its watch) and its messages. What it must not do: poll or wait
itself (``api/event_hub.py`` does, once for every stream of a stack) or decide the
order events come in (``store/event_feed.py``, whose cursor each message's ``id`` is).

Messages:

* ``event: event``, ``id: <cursor>``, ``data``: the event as an item of Heat's event
  list (``views.event_body``; a nested stack's event has its ``root_stack`` link) plus
  ``stack_path``, the resource names from this stack down to the nested stack the event
  is of, joined by ``.`` as the CLI prints them (``""`` for this stack's own events).
* ``event: stack``, no id, ``data``: ``{"stack": <the stack as in a stack list>}``,
  the last message when the stream ends: when the stack is deleted (always), or with
  ``until=terminal`` when it is no longer IN_PROGRESS (COMPLETE or FAILED of any action
  but INIT) and no job holds its lock (a failed create's rollback runs in the same job);
  the stream has then sent every event recorded before that state. ``until=next_action``
  is the same once the stream has sent an event of the stack's own (an action of it
  starting): a client opens the stream with ``from=now``, then starts the action, and
  gets every event of it (a nested stack's deleted a moment later included) and its end,
  not the state the stack was in before.
* ``event: error``, no id: the server could not read the store; the stream ends, and a
  client reconnects with ``Last-Event-ID`` (the server logs why).
* ``: ping`` comments every ``Settings.event_stream_heartbeat_s`` seconds, for proxies.

Without ``until``, a stream lasts until the client goes (a dashboard's). It starts with
the stack's recorded events (``from=start``, the default) or with those recorded from
now on (``from=now``). ``Last-Event-ID`` (the header a browser's EventSource sends when
it reconnects; ``last_event_id`` in the query for a client that cannot set headers,
the header winning) resumes after that message: nothing skipped, nothing repeated.
``nested_depth`` limits how far down nested stacks are followed (default: all of them,
deleted ones included, so a nested stack's delete shows too).

Wake-up: the streams of one stack (and depth) share one poll of the store, every
``event_hub.POLL_INTERVAL_S`` seconds, in a worker thread that holds a pooled connection
only while it reads; events written by any process show alike, and a stream is woken
only when there is something for it (``api/event_hub.py``). PostgreSQL's LISTEN/NOTIFY,
which would wake the streams at once, is not used: it would hold a connection per
listening server and does nothing on SQLite. A project may have
``Settings.max_event_streams_per_project`` streams open at once: one more is 429 in
Heat's fault shape, saying the limit, its setting and what to do instead.
The client going away cancels the stream (sse-starlette watches for the disconnect),
and its watch stops with its last stream. The server shutting down ends the stream
without a ``stack`` message: a client reconnects (an EventSource does by itself) with
``Last-Event-ID`` and carries on.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent

from stoker.api import projects, views
from stoker.api.call import Call
from stoker.api.errors import BadRequestError, escaped
from stoker.api.event_hub import EventStreams, Reader, Slot, StreamFailedError
from stoker.engine.states import Action, Status
from stoker.store import StackRecord
from stoker.store.event_feed import START, Cursor, EventPage, Feed, FeedEvent, FeedPoll
from stoker.store.repository import utcnow

LOG = logging.getLogger(__name__)

# Seconds a stream has, once the server is shutting down, to end on its own (it ends at
# its watch's next poll) before it is cancelled.
SHUTDOWN_GRACE_S = 5.0
_PARAMETERS = {"nested_depth", "until", "from", "last_event_id"}


def _terminal(stack: StackRecord) -> bool:
    return stack.status != Status.IN_PROGRESS and stack.action != Action.INIT


def _never(stack: StackRecord) -> bool:
    return False


def _start(call: Call) -> Cursor | None:
    """The cursor of ``Last-Event-ID`` (or ``last_event_id``), if any."""
    text = call.request.headers.get("last-event-id") or call.params.get("last_event_id")
    if not text:
        return None
    try:
        return Cursor.parse(text.strip())
    except ValueError:
        raise BadRequestError(
            f"Invalid Last-Event-ID {escaped(text)[:80]!r}: it must be the id of a message of this stream (<number>-<number>)",
            hint="resume with the id of the last message received, or leave Last-Event-ID out to start again",
        )


def event_stream(call: Call) -> EventSourceResponse:
    invalid = set(call.params.keys()) - _PARAMETERS
    if invalid:
        raise BadRequestError(f"Invalid parameters {sorted(invalid)} for the event stream; known: {sorted(_PARAMETERS)}")
    until = call.params.get("until")
    if until not in (None, "", "terminal", "next_action"):
        raise BadRequestError(
            f"Unknown value {escaped(until)[:40]!r} for 'until': 'terminal', 'next_action', or none to stream until the client goes"
        )
    origin = call.params.get("from") or "start"
    if origin not in ("start", "now"):
        raise BadRequestError(f"Unknown value {escaped(origin)[:40]!r} for 'from': 'start' or 'now'")
    depth = call.int_param("nested_depth")
    depth = call.service.settings.max_nested_depth if depth is None else min(depth, call.service.settings.max_nested_depth)
    # A deleted stack is found too: a client resuming after the delete gets the rest of
    # its events and the final message (and stops reconnecting), not a 404.
    stack = projects.stack(call, deleted=True)
    store = call.service.store
    after, skip = _start(call), frozenset[int]()
    if after is None:
        after, skip = store.events.event_feed_head(stack.id, depth) if origin == "now" else (START, skip)
    # An action has ended when the stack is out of IN_PROGRESS *and* no job holds its
    # lock: a create that failed is CREATE_FAILED for a moment before its rollback,
    # which the same job runs under the same lock. The lock is read before the page, so
    # a free lock means the state the page then shows is the job's last (Feed.take).

    def read_head() -> Cursor:
        return store.events.event_feed_head(stack.id, depth)[0]

    def read_page(cursor: Cursor) -> EventPage:
        holder = store.lock_holder(stack.id)
        busy = holder is not None and holder.alive(utcnow())
        page = store.events.event_page(stack.id, cursor, depth)
        page.busy = busy
        return page

    def read_upto(cursor: Cursor, upto: Cursor) -> EventPage:
        return store.events.event_page(stack.id, cursor, depth, upto=upto)

    feed = Feed(read_page, after, _terminal if until else _never, skip, stack.id if until == "next_action" else None)
    heartbeat = max(0.0, call.service.settings.event_stream_heartbeat_s)
    streams: EventStreams = call.request.app.state.event_streams
    # Counted from here to the end of the response (``_Stream``): past the project's
    # limit, 429 (after the checks above, so a bad request is told so first).
    slot = streams.admit(call.context.tenant_id)
    # Set by sse-starlette when the server shuts down: the stream ends itself (a
    # complete response) rather than being cancelled in the middle of it.
    shutdown = anyio.Event()

    def join() -> Reader:
        return streams.join((stack.id, depth), read_head, read_page, read_upto, feed, shutdown)

    return _Stream(
        slot, _messages(call, stack, streams, join), ping=heartbeat, shutdown_event=shutdown, shutdown_grace_period=SHUTDOWN_GRACE_S
    )


class _Stream(EventSourceResponse):
    """The stream's response; its project's count is released when it has ended."""

    def __init__(self, slot: Slot, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.slot = slot

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            self.slot.release()


async def _messages(call: Call, root: StackRecord, streams: EventStreams, join: Callable[[], Reader]) -> AsyncIterator[ServerSentEvent]:
    owners: dict[str, StackRecord] = {root.id: root}
    # Joined here, on the server's loop, where the watch runs.
    reader = join()
    try:
        async for polled in reader.polls():
            if polled.events or polled.ended:
                messages = await anyio.to_thread.run_sync(_messages_of, call, root, polled, owners)
                for message in messages:
                    yield message
            if polled.ended:
                return
    except StreamFailedError:
        # Logged once where the read failed, not once per stream of the stack.
        yield ServerSentEvent(event="error", data=json.dumps({"error": "the event stream failed; reconnect to resume"}))
    except Exception:  # noqa: BLE001 - the client reconnects and resumes; the log says why
        LOG.exception("event stream of stack %s failed", root.id)
        yield ServerSentEvent(event="error", data=json.dumps({"error": "the event stream failed; reconnect to resume"}))
    finally:
        streams.leave(reader)


def _messages_of(call: Call, root: StackRecord, polled: FeedPoll, owners: dict[str, StackRecord]) -> list[ServerSentEvent]:
    """One poll made into messages (in a worker thread: it may read a nested stack)."""
    messages = [ServerSentEvent(data=json.dumps(_event(call, root, item, owners)), event="event", id=str(item.cursor)) for item in polled.events]
    if polled.ended:
        final = views.stack_summary(call, polled.final) if polled.final is not None else None
        messages.append(ServerSentEvent(data=json.dumps({"stack": final}), event="stack"))
    return messages


def _event(call: Call, root: StackRecord, item: FeedEvent, owners: dict[str, StackRecord]) -> dict[str, Any]:
    owner = owners.get(item.event.stack_id)
    if owner is None:
        # A nested stack met for the first time: its name and id make the links.
        owner = owners[item.event.stack_id] = call.service.store.get_stack(item.event.stack_id) or root
    body = views.event_body(call, owner, item.event, root=root)
    body["stack_path"] = ".".join(item.path)
    return body
