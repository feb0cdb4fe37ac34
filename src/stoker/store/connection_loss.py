"""A lost database connection, and the units of work repeated after one.

Owns: what counts as a lost connection (``lost``), the waits between repeats
(``RETRY_DELAYS_S``, ``WRITE_RETRY_DELAYS_S``), and ``reads``, which repeats a read of the repository. The writer
(``writer.py``) repeats its transactions with the same two.

A connection is lost when PostgreSQL ends it (a restart, a failover, an operator's
``pg_terminate_backend``) or the network drops it. The pool already tests a connection
before handing it out (``pool_pre_ping``, ``repository.make_engine``), and on a lost
one SQLAlchemy discards every pooled connection older than it, so a unit run again gets
a fresh one. What is repeated, and where the boundary is:

* A read (a repository method that only SELECTs on a connection of its own) is repeated
  whole: it changes nothing, so running it again is running it later.
* A write transaction is repeated whole when its connection was lost before its COMMIT
  was sent: PostgreSQL then rolled it back, so nothing of it happened. It is never
  repeated when the connection was lost during its COMMIT: it may have committed, and a
  write run again could insert an event or a row twice. Its callers get the error, as
  before.
* Nothing else: a failure that is not a lost connection (a constraint, a value the
  database refuses) would fail again, and goes to the caller at once.

A database error is told (``database_text``) by the driver's class and first line only:
never the statement, its parameters or the driver's DETAIL and CONTEXT lines, which may
quote data (a hidden parameter's value). Every reason, answer and log line that shows
one uses it.

Must not: decide anything about what a write means; it only knows connections.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy.exc import DBAPIError, OperationalError, PendingRollbackError

LOG = logging.getLogger(__name__)

# The waits before each repeat (seconds), so four repeats in all over 0.8 s: long enough
# for a terminated backend's pool to be replaced, short enough that a read on the event
# loop (which blocks it while it waits) holds it no longer than a slow query would. A
# database down for longer fails the unit, as it did before.
RETRY_DELAYS_S = (0.0, 0.05, 0.25, 0.5)
# The same for a write transaction (seconds; eight repeats over 5.55 s): it runs on the
# writer's thread, not on the event loop, so it can wait out a failover's first seconds,
# and every write queued behind it waits anyway.
WRITE_RETRY_DELAYS_S = (0.0, 0.05, 0.1, 0.25, 0.5, 1.0, 1.5, 2.0)

T = TypeVar("T")


def lost(error: BaseException) -> bool:
    """Whether ``error`` is a lost connection: SQLAlchemy found the connection gone
    (``connection_invalidated``), or psycopg says so: an OperationalError the client
    raised itself (no SQLSTATE: "the connection is lost", "server closed the connection
    unexpectedly"), or one whose SQLSTATE is of class 08 (connection exception) or 57P
    (the server is shutting down, or ended this backend: admin_shutdown, crash_shutdown,
    cannot_connect_now). SQLite's errors (no SQLSTATE at all: a locked database) are
    never a lost connection. SQLAlchemy's PendingRollbackError is one too: it is raised
    only by a connection used again, inside its transaction, after the loss of its
    database connection was met (and taken as an answer) in that transaction."""
    if isinstance(error, PendingRollbackError):
        return True
    if not isinstance(error, DBAPIError):
        return False
    if error.connection_invalidated:
        return True
    return isinstance(error, OperationalError) and driver_lost(error.orig)


def lost_anywhere(error: BaseException) -> bool:
    """``lost``, or a lost connection psycopg raised on a raw connection SQLAlchemy did
    not see (the queue's writes go straight to the driver), itself or as the cause of
    the error raised."""
    seen: BaseException | None = error
    while seen is not None:
        if lost(seen) or driver_lost(seen):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def as_database_error(error: BaseException) -> DBAPIError:
    """``error`` as SQLAlchemy's DBAPIError (for the callers and the API's answers, which
    know only those): itself when it is one, else an OperationalError around it, marked
    as the loss of its connection."""
    if isinstance(error, DBAPIError):
        return error
    return OperationalError(None, None, error, connection_invalidated=True)


def driver_lost(error: BaseException | None) -> bool:
    """Whether psycopg's own ``error`` is a lost connection (the rule of ``lost``, for
    code that talks to psycopg without SQLAlchemy: procrastinate's connector)."""
    import psycopg

    if not isinstance(error, psycopg.OperationalError):
        return False
    state = error.sqlstate or ""
    return not state or state.startswith("08") or state.startswith("57P")


def database_text(error: BaseException) -> str | None:
    """``<driver's class>: <its first line>`` for a database error (SQLAlchemy's
    ``DBAPIError``), None for any other error."""
    if not isinstance(error, DBAPIError):
        return None
    orig = error.orig if error.orig is not None else error
    first_line = (str(orig).splitlines() or [""])[0] if error.orig is not None else type(error).__name__
    return f"{type(orig).__name__}: {first_line}"


class LostCheckins(logging.Filter):
    """For a pool's logger: SQLAlchemy logs an error with its traceback when a connection
    going back to the pool cannot be rolled back ("Exception during reset or similar").
    When the connection was lost (PostgreSQL ended it), that is expected and harmless:
    the pool discards the connection, and the unit that used it was repeated or failed
    with its own error. It is logged as one warning line, without the traceback. Any
    other failure there is left as SQLAlchemy logs it."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if error is None or not lost_anywhere(error):
            return True
        record.msg = "database connection lost while it went back to the pool (%s); it is discarded"
        record.args = (database_text(error) or f"{type(error).__name__}: {error}",)
        record.exc_info = None
        record.exc_text = None
        record.levelno = logging.WARNING
        record.levelname = logging.getLevelName(logging.WARNING)
        return True


def quiet_lost_checkins(pool_logger: logging.Logger | Any) -> None:
    """Puts ``LostCheckins`` on a pool's logger (``engine.pool.logger``) once."""
    if isinstance(pool_logger, logging.Logger) and not any(isinstance(found, LostCheckins) for found in pool_logger.filters):
        pool_logger.addFilter(LostCheckins())


def note(error: BaseException, attempt: int, attempts: int = len(RETRY_DELAYS_S)) -> None:
    """One line in the log for a repeat (never the statement: it may quote data)."""
    LOG.warning("database connection lost (%s); trying again (%d of %d)", database_text(error) or error, attempt, attempts)


def repeated(unit: Callable[[], T]) -> T:
    """``unit()``, run again after each lost connection, up to len(RETRY_DELAYS_S) more
    times. Only for a unit that is safe to repeat from its start (see above)."""
    for attempt, delay in enumerate(RETRY_DELAYS_S, 1):
        try:
            return unit()
        except (DBAPIError, PendingRollbackError) as error:
            if not lost(error):
                raise
            note(error, attempt)
        time.sleep(delay)
    return unit()


def reads(method: Callable[..., T]) -> Callable[..., T]:
    """A repository read (it opens its own connection and only SELECTs), repeated on a
    lost connection."""

    @functools.wraps(method)
    def read(*args: Any, **kwargs: Any) -> T:
        return repeated(lambda: method(*args, **kwargs))

    return read
