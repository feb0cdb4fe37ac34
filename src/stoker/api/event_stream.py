"""``GET /v1/{tenant_id}/stacks/{stack_name}/{stack_id}/events/stream``: a stack's events
as they are recorded, nested stacks' included, as server-sent events (text/event-stream).

What it owns: the stream's query parameters, its messages and its polling loop. What it
must not do: query the store itself (``Store.event_page``) or decide the order events
come in (``store/event_feed.py``, whose cursor each message's ``id`` is).

Messages:

* ``event: event``, ``id: <cursor>``, ``data``: the event as an item of Heat's event
  list (``views.event_body``; a nested stack's event has its ``root_stack`` link) plus
  ``stack_path``, the resource names from this stack down to the nested stack the event
  is of, joined by ``.`` as the CLI prints them (``""`` for this stack's own events).
* ``event: stack``, no id, ``data``: ``{"stack": <the stack as in a stack list>}``,
  the last message when the stream ends: when the stack is deleted (always), or with
  ``until=terminal`` when it is no longer IN_PROGRESS (COMPLETE or FAILED of any action
  but INIT) and no job holds its lock (a failed create's rollback runs in the same job);
  the stream has then sent every event recorded before that state.
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

Wake-up: the loop polls the store every ``POLL_INTERVAL_S`` seconds with one indexed
query in a worker thread, which holds a pooled connection only while it runs; events
written by any process show alike. PostgreSQL's LISTEN/NOTIFY, which would wake the
stream at once, is not used: it would hold a connection per listening server.
The client going away cancels the loop (sse-starlette watches for the disconnect). The
server shutting down ends the stream without a ``stack`` message: a client reconnects
(an EventSource does by itself) with ``Last-Event-ID`` and carries on.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from typing import Any

import anyio
from sse_starlette import EventSourceResponse, ServerSentEvent

from stoker.api import projects, views
from stoker.api.call import Call
from stoker.api.errors import BadRequestError, escaped
from stoker.engine.states import Action, Status
from stoker.store import StackRecord
from stoker.store.event_feed import START, Cursor, Feed, FeedEvent
from stoker.store.repository import utcnow

LOG = logging.getLogger(__name__)

# Seconds between two reads of the store while nothing new is ready.
POLL_INTERVAL_S = 0.25
# Seconds a stream has, once the server is shutting down, to end on its own (it ends at
# its next wait) before it is cancelled.
SHUTDOWN_GRACE_S = 5.0
_PARAMETERS = {"nested_depth", "until", "from", "last_event_id"}
# The feeds of the streams being served: empty again once every client has gone.
ACTIVE: set[Feed] = set()


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
    if until not in (None, "", "terminal"):
        raise BadRequestError(f"Unknown value {escaped(until)[:40]!r} for 'until': 'terminal', or none to stream until the client goes")
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
        after, skip = store.event_feed_head(stack.id, depth) if origin == "now" else (START, skip)
    # An action has ended when the stack is out of IN_PROGRESS *and* no job holds its
    # lock: a create that failed is CREATE_FAILED for a moment before its rollback,
    # which the same job runs under the same lock. The lock is read before the page, so
    # a free lock means the state the page then shows is the job's last.
    busy = [False]

    def read_page(cursor: Any) -> Any:
        holder = store.lock_holder(stack.id)
        busy[0] = holder is not None and holder.alive(utcnow())
        return store.event_page(stack.id, cursor, depth)

    def ended(record: StackRecord) -> bool:
        return _terminal(record) and not busy[0]

    feed = Feed(read_page, after, ended if until else _never, skip)
    heartbeat = max(0.0, call.service.settings.event_stream_heartbeat_s)
    # Set by sse-starlette when the server shuts down: the loop ends the stream itself
    # (a complete response) rather than being cancelled in the middle of it.
    shutdown = anyio.Event()
    return EventSourceResponse(_messages(call, stack, feed, shutdown), ping=heartbeat, shutdown_event=shutdown, shutdown_grace_period=SHUTDOWN_GRACE_S)


async def _messages(call: Call, root: StackRecord, feed: Feed, shutdown: anyio.Event) -> AsyncIterator[ServerSentEvent]:
    owners: dict[str, StackRecord] = {root.id: root}
    ACTIVE.add(feed)
    try:
        while not shutdown.is_set():
            try:
                messages, ended, more = await anyio.to_thread.run_sync(_next, call, root, feed, owners)
            except Exception:  # noqa: BLE001 - the client reconnects and resumes; say why here
                LOG.exception("event stream of stack %s failed", root.id)
                yield ServerSentEvent(event="error", data=json.dumps({"error": "the event stream failed; reconnect to resume"}))
                return
            for message in messages:
                yield message
            if ended:
                return
            if not more:
                with anyio.move_on_after(POLL_INTERVAL_S):
                    await shutdown.wait()
    finally:
        ACTIVE.discard(feed)


def _next(call: Call, root: StackRecord, feed: Feed, owners: dict[str, StackRecord]) -> tuple[list[ServerSentEvent], bool, bool]:
    """One poll, made into messages (in a worker thread: it reads the store)."""
    polled = feed.poll()
    messages = [ServerSentEvent(data=json.dumps(_event(call, root, item, owners)), event="event", id=str(item.cursor)) for item in polled.events]
    if polled.ended:
        final = views.stack_summary(call, polled.final) if polled.final is not None else None
        messages.append(ServerSentEvent(data=json.dumps({"stack": final}), event="stack"))
    return messages, polled.ended, polled.more


def _event(call: Call, root: StackRecord, item: FeedEvent, owners: dict[str, StackRecord]) -> dict[str, Any]:
    owner = owners.get(item.event.stack_id)
    if owner is None:
        # A nested stack met for the first time: its name and id make the links.
        owner = owners[item.event.stack_id] = call.service.store.get_stack(item.event.stack_id) or root
    body = views.event_body(call, owner, item.event, root=root)
    body["stack_path"] = ".".join(item.path)
    return body
