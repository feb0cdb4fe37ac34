"""The server's HTTP connections: how long a request may take to arrive, how many
connections may be open at once, and one log line for many dropped connections.

What it owns: ``ConnectionGuard`` (the limits and the count of what they dropped),
the uvicorn protocol that applies them (``guarded_protocol``) and a logging filter that
folds a repeated warning of uvicorn or asyncio into one line a minute
(``RepeatedWarnings``). What it must not do: anything about requests once they have
arrived (the app's), or answer a dropped connection (it is closed, as a slow or
surplus client deserves nothing more).

Why a protocol of our own. uvicorn (0.54) times out only an idle keep-alive connection
(``timeout_keep_alive``), and any byte received cancels even that: a client that sends
its request headers a byte at a time, or a body that never ends, holds its connection
and its file for ever, and a thousand of them exhaust the server's files. Then asyncio
fails every accept and logs each failure with its traceback (hundreds of megabytes in
seconds), and no request is served. Its ``limit_concurrency`` answers 503 only once a
request's headers are in, so it cannot help. A subclass of uvicorn's h11 protocol is
the smallest change that sees the connection before the app does: it follows h11's
state of the client's side (``their_state``) as data arrives:

* headers (IDLE): the request line and headers must be in within
  ``header_timeout_s`` of the connection (or of the previous response), however slowly
  they trickle;
* body (SEND_BODY): the body must be in within ``body_timeout_s`` of its headers;
* then (DONE): no limit; the app has the request (an event stream may last hours).

A connection that overruns is aborted (its file freed at once, no response). At most
``max_connections`` are open: one more evicts the connection that has been sending its
request the longest (a slow client; a keep-alive connection idle between requests
counts too), or, when every open connection is being answered, is closed at once. So a
flood of slow clients cannot keep a prompt one out, and the server never runs out of
files for its connections: the cap is kept below the process's open-file limit.

The h11 protocol always: httptools (uvicorn's faster parser) is optional and parses in
a way this class does not follow; h11 is a dependency of uvicorn itself.
"""

from __future__ import annotations

import asyncio
import logging
import resource
import time
from collections import Counter
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

LOG = logging.getLogger(__name__)

# Files the server needs beside its connections (the database pool, the listening
# socket, logs, yaql workers' pipes): the connection cap stays this far below the
# process's open-file limit.
FILE_HEADROOM = 100
# Seconds between two reports of dropped connections (and of a repeated warning).
REPORT_INTERVAL_S = 60.0

_REASONS = {
    "headers": "sent no complete request headers within {header_timeout_s:g} s (STOKER_HTTP_HEADER_TIMEOUT_S)",
    "body": "sent no complete request body within {body_timeout_s:g} s of its headers (STOKER_HTTP_BODY_TIMEOUT_S)",
    "evicted": "were still sending their request when the server, at its {max_connections} connections (STOKER_HTTP_MAX_CONNECTIONS), needed one for a new client",
    "refused": "came while all {max_connections} connections (STOKER_HTTP_MAX_CONNECTIONS) were being answered",
}


def connection_cap(wanted: int, backlog: int) -> int:
    """How many connections may be open: ``wanted``, or fewer where the process's
    open-file limit would not allow them. asyncio accepts up to ``backlog`` connections
    at a time before the protocol sees any, so those files count too. The soft limit is
    first raised as far as needed, up to the hard one (as Go's runtime does)."""
    needed = wanted + backlog + FILE_HEADROOM
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != resource.RLIM_INFINITY and soft < needed:
        raised = needed if hard == resource.RLIM_INFINITY else min(needed, hard)
        if raised > soft:
            try:
                resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))
                soft = raised
            except (ValueError, OSError):
                pass
    if soft == resource.RLIM_INFINITY:
        return wanted
    return max(1, min(wanted, soft - FILE_HEADROOM - backlog))


class ConnectionGuard:
    """The limits of one server's connections, and what they dropped. Lives on the
    server's loop (every method is called there)."""

    def __init__(self, header_timeout_s: float, body_timeout_s: float, max_connections: int):
        self.header_timeout_s = header_timeout_s
        self.body_timeout_s = body_timeout_s
        self.max_connections = max_connections
        self.open: set[Any] = set()
        # The connections still sending a request, the longest sending first.
        self.sending: dict[Any, None] = {}
        self._dropped: Counter[str] = Counter()
        self._report: asyncio.TimerHandle | None = None

    def admit(self, connection: Any) -> bool:
        """Whether a new connection may stay open (making room for it if need be)."""
        if len(self.open) >= self.max_connections:
            if not self.sending:
                self.dropped("refused")
                return False
            oldest = next(iter(self.sending))
            self.dropped("evicted")
            oldest.abort()
        self.open.add(connection)
        return True

    def forget(self, connection: Any) -> None:
        self.open.discard(connection)
        self.sending.pop(connection, None)

    def dropped(self, reason: str) -> None:
        """Count a dropped connection. The first of a quiet spell is logged at once,
        the rest as one line a minute while they go on."""
        self._dropped[reason] += 1
        if self._report is None:
            self._log()
            self._report = asyncio.get_running_loop().call_later(REPORT_INTERVAL_S, self._report_again)

    def _report_again(self) -> None:
        if self._dropped:
            self._log()
            self._report = asyncio.get_running_loop().call_later(REPORT_INTERVAL_S, self._report_again)
        else:
            self._report = None

    def _log(self) -> None:
        values = {"header_timeout_s": self.header_timeout_s, "body_timeout_s": self.body_timeout_s, "max_connections": self.max_connections}
        parts = [f"{count} that {_REASONS[reason].format(**values)}" for reason, count in sorted(self._dropped.items())]
        self._dropped.clear()
        LOG.warning(
            "dropped connections: %s; counted and reported again in %g s while it goes on", "; ".join(parts), REPORT_INTERVAL_S
        )


def guarded_protocol(guard: ConnectionGuard) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol, with ``guard``'s limits (uvicorn's ``http`` setting)."""

    class GuardedH11Protocol(H11Protocol):
        _phase: str | None = None
        _timer: asyncio.TimerHandle | None = None
        _refused = False

        def connection_made(self, transport: Any) -> None:
            if not guard.admit(self):
                self._refused = True
                transport.abort()
                return
            super().connection_made(transport)
            self._follow()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._refused:
                return
            self._set_phase(None)
            guard.forget(self)
            super().connection_lost(exc)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._follow()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._follow()

        def abort(self) -> None:
            guard.forget(self)
            self._set_phase(None)
            self.transport.abort()

        def _follow(self) -> None:
            """The phase of the client's request, from h11's state of its side."""
            if self.transport is None or self.transport.is_closing():
                return
            state = self.conn.their_state
            self._set_phase("headers" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None)

        def _set_phase(self, phase: str | None) -> None:
            if phase == self._phase:
                return
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            if phase == "headers":
                # A new request: the newest of those being sent.
                guard.sending.pop(self, None)
                guard.sending[self] = None
                self._timer = self.loop.call_later(guard.header_timeout_s, self._timed_out, "headers")
            elif phase == "body":
                guard.sending.setdefault(self, None)
                self._timer = self.loop.call_later(guard.body_timeout_s, self._timed_out, "body")
            else:
                guard.sending.pop(self, None)
            self._phase = phase

        def _timed_out(self, phase: str) -> None:
            self._timer = None
            guard.dropped(phase)
            self.abort()

    return GuardedH11Protocol


class RepeatedWarnings(logging.Filter):
    """Lets a warning (or worse) through once a minute per logger and message; the next
    one let through says how many like it were held back. For uvicorn's and asyncio's
    loggers, which log one line (asyncio: with a traceback) per refused request or
    failed accept; an operating system error's traceback becomes its text on the line."""

    def __init__(self, interval_s: float = REPORT_INTERVAL_S):
        super().__init__()
        self.interval_s = interval_s
        self._last: dict[tuple[str, str], float] = {}
        self._held: Counter[tuple[str, str]] = Counter()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        key = (record.name, str(record.msg).split("\n", 1)[0][:200])
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self.interval_s:
            self._held[key] += 1
            return False
        if len(self._last) > 1000:  # many different messages: start over
            self._last.clear()
        self._last[key] = now
        held = self._held.pop(key, 0)
        if held:
            record.msg = f"{record.msg} [{held} more like this in the last {self.interval_s:g} s, not logged]"
        if record.exc_info and isinstance(record.exc_info[1], OSError):
            # asyncio's failed accept (out of files: it retries by itself a second later)
            # is said in one line, the error's text, not with a traceback.
            record.msg = f"{record.msg}: {record.exc_info[1]}"
            record.exc_info, record.exc_text = None, None
        return True
