"""The store's single writer: every write runs on one thread, batched into shared
transactions (group commit).

A caller hands in a function of a Connection and gets a Future that resolves only after
the transaction holding its write has committed, so "persisted before the engine moves
on" holds while many resources in flight share one commit. If a batch fails, each write
in it is retried alone so only the faulty one fails.

Invariant: only the writer thread writes through this engine; callers never hold a
database lock while they wait, so handler threads and the event loop never wait on each
other.

Fencing: a write submitted by a job carries the job's ``Fence`` (its stack and lock
token; by default the one of the submitting context). Each transaction first reads the
tokens the lock rows hold now, in the same transaction as the writes; a write whose job
no longer holds its lock is not run: its caller gets ``LockLostError`` and the fence's
``lost`` callback stops the job. So no write of a job lands after its lock is gone.
Writes that change whose lock is whose (taking, releasing: ``Alone``) are committed in a
transaction of their own, so the tokens read at the start of a transaction hold for all
of it.

A lost connection (``connection_loss``): a transaction whose connection was lost before
its COMMIT was sent is run again whole, on a fresh connection, a few times. One lost
during its COMMIT may have committed: on PostgreSQL the writer asks the server by the
transaction's id (``txid_status``), and it is done if committed, run again if aborted;
when that cannot be known (SQLite, which never loses its connection; or an id the server
no longer knows) it is not run again, and its writes fail.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any, TypeVar

from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError, PendingRollbackError

from stoker.store import connection_loss, locks
from stoker.store.locks import Fence, LockLostError

Write = Callable[[Connection], Any]
T = TypeVar("T")
_STOP = object()
# A write's fence when the caller gives none: the submitting context's (see locks).
_CONTEXT = object()


class Statements:
    """A write given as statements rather than code: ``(statement, parameters, row)``
    triples, where ``row`` names the row an UPDATE touches (None for an INSERT of a new
    row), or ``(statement, parameters, row, returned)`` for a statement with RETURNING,
    whose first returned column ``returned`` is called with (in the writer thread,
    before the commit). The writer runs the statements of a whole batch grouped by
    statement, each group in one executemany (one execute per row for RETURNING), which
    costs a fraction of one execute per statement.

    Grouping runs the groups in the order they were first used in the batch. With
    ``ordered``, this write's statements must run in its own order (a later one reads
    what an earlier one wrote): when the groups would run them otherwise, the groups
    are flushed first."""

    __slots__ = ("ops", "ordered")

    def __init__(self, ops: list[tuple[Any, ...]], ordered: bool = False):
        self.ops = ops
        self.ordered = ordered


class Alone:
    """A write committed in a transaction of its own (in submission order): one that
    changes lock rows, which the fence check at the start of a batch must not miss."""

    __slots__ = ("write",)

    def __init__(self, write: Write):
        self.write = write

    def __call__(self, connection: Connection) -> Any:
        return self.write(connection)


class _Direct:
    """A statement compiled once for the database's driver and run with the DBAPI
    cursor's ``executemany``. SQLAlchemy's per-execution work (building the execution
    context, processing every parameter of every row through its generic machinery)
    cost several times what SQLite itself does for these small writes; here a row is
    its values in bind order with the columns' own bind processors applied (the very
    conversions SQLAlchemy applies: JSON, datetime), so the stored values are the same.
    """

    __slots__ = ("sql", "keys", "processors", "positional")

    def __init__(self, sql: str, keys: list[str], processors: list[tuple[int, Callable[[Any], Any]]], positional: bool):
        self.sql = sql
        self.keys = keys
        self.processors = processors
        self.positional = positional

    @classmethod
    def compile(cls, statement: Any, connection: Connection, keys: frozenset[str]) -> _Direct | None:
        """None when the statement needs more than plain binds (defaults to fill in,
        expanding or escaped parameters): SQLAlchemy then runs it as usual."""
        compiled = statement.compile(dialect=connection.dialect, column_keys=sorted(keys))
        if set(compiled.binds) != keys or compiled.escaped_bind_names or compiled.post_compile_params or compiled.literal_execute_params:
            return None
        # The columns' conversions as SQLAlchemy keeps them for its own executions (not a
        # public attribute: without it, statements simply go through SQLAlchemy).
        bind_processors = getattr(compiled, "_bind_processors", None)
        if bind_processors is None:
            return None
        order = list(compiled.positiontup) if compiled.positional else sorted(keys)
        processors = [(index, _none_folded(bind_processors[key])) for index, key in enumerate(order) if key in bind_processors]
        return cls(compiled.string, order, processors, compiled.positional)

    def rows(self, parameters: list[dict[str, Any]]) -> list[Any]:
        keys, processors = self.keys, self.processors
        rows: list[Any] = []
        for row in parameters:
            values = [row[key] for key in keys]
            for index, processor in processors:
                values[index] = processor(values[index])
            rows.append(values if self.positional else dict(zip(keys, values, strict=True)))
        return rows


def _none_folded(processor: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """The processor with its answer for None worked out once: most JSON columns of a
    write are None, and serialising None each time cost a tenth of the writer."""
    none = processor(None)
    return lambda value: none if value is None else processor(value)


class _Grouped:
    """Statements of one batch, grouped. Grouping reorders statements across rows, never
    within one: a second write to a row already in the groups flushes them first."""

    def __init__(self, direct: dict[int, tuple[Any, frozenset[str], _Direct | None]]) -> None:
        # id(statement) -> (statement, parameters, returned callbacks, position)
        self.groups: dict[int, tuple[Any, list[dict[str, Any]], list[Any], int]] = {}
        self.rows: set[Any] = set()
        # id(statement) -> (statement, its parameter keys, its direct form), kept by the
        # writer across batches; the statement is held so its id is not reused.
        self.direct = direct

    def add(self, connection: Connection, write: Statements) -> None:
        if any(op[2] is not None and op[2] in self.rows for op in write.ops) or (write.ordered and self._out_of_order(write)):
            self.flush(connection)
        for op in write.ops:
            statement, parameters, row = op[0], op[1], op[2]
            group = self.groups.get(id(statement))
            if group is None:
                group = self.groups[id(statement)] = (statement, [], [], len(self.groups))
            group[1].append(parameters)
            if len(op) > 3:
                group[2].append(op[3])
            if row is not None:
                self.rows.add(row)

    def _out_of_order(self, write: Statements) -> bool:
        """Whether the groups would run this write's statements in another order (a new
        group runs after every existing one)."""
        last = -1
        for op in write.ops:
            group = self.groups.get(id(op[0]))
            position = group[3] if group is not None else len(self.groups)
            if position < last:
                return True
            last = position
        return False

    def flush(self, connection: Connection) -> None:
        for statement, parameters, returned, _ in self.groups.values():
            direct = self._direct(statement, parameters, connection)
            if returned:
                self._returning(connection, statement, direct, parameters, returned)
            elif direct is None:
                connection.execute(statement, parameters if len(parameters) > 1 else parameters[0])
            else:
                rows = direct.rows(parameters)
                with _cursor(connection, direct.sql, rows) as cursor:
                    cursor.executemany(direct.sql, rows)
        self.groups.clear()
        self.rows.clear()

    def _returning(self, connection: Connection, statement: Any, direct: _Direct | None, parameters: list[dict[str, Any]], returned: list[Any]) -> None:
        # DBAPI drivers return nothing from executemany: one execute per row.
        if direct is None:
            for row, callback in zip(parameters, returned, strict=True):
                callback(connection.execute(statement, row).scalar_one())
            return
        rows = direct.rows(parameters)
        with _cursor(connection, direct.sql, rows) as cursor:
            for row, callback in zip(rows, returned, strict=True):
                cursor.execute(direct.sql, row)
                callback(cursor.fetchone()[0])

    def _direct(self, statement: Any, parameters: list[dict[str, Any]], connection: Connection) -> _Direct | None:
        keys = frozenset(parameters[0])
        known = self.direct.get(id(statement))
        if known is None or known[0] is not statement:
            known = self.direct[id(statement)] = (statement, keys, _Direct.compile(statement, connection, keys))
        # Every row of a group must bind the same keys (an UPDATE statement is made per
        # set of fields; an INSERT always gets every column); otherwise SQLAlchemy's way.
        if known[2] is None or known[1] != keys or any(row.keys() != keys for row in parameters):
            return None
        return known[2]


@contextlib.contextmanager
def _cursor(connection: Connection, sql: str, rows: list[Any]) -> Iterator[Any]:
    """A DBAPI cursor of the connection; driver errors come out as SQLAlchemy's, as
    from any other write."""
    cursor = connection.connection.cursor()
    dbapi_error = connection.dialect.loaded_dbapi.Error
    try:
        yield cursor
    except dbapi_error as error:
        raise DBAPIError.instance(sql, rows, error, dbapi_error, dialect=connection.dialect, ismulti=True) from error
    finally:
        cursor.close()


def _run(connection: Connection, writes: list[Any], direct: dict[int, Any]) -> list[Any]:
    grouped = _Grouped(direct)
    results: list[Any] = []
    for write in writes:
        if isinstance(write, Statements):
            grouped.add(connection, write)
            results.append(None)
        else:
            grouped.flush(connection)  # code may read what the statements wrote
            results.append(write(connection))
    grouped.flush(connection)
    return results


def run_statements(connection: Connection, statements: Statements) -> None:
    """Run a ``Statements`` write inside a write given as code."""
    _run(connection, [statements], {})


# Fault injection for the crash-safety tests: SIGKILL this process right after the
# N-th commit. Unset in normal use.
_KILL_AFTER_COMMITS = int(os.environ.get("STOKER_FAULT_KILL_AFTER_COMMITS") or 0)


def _maybe_crash(commits: int) -> None:
    if _KILL_AFTER_COMMITS and commits >= _KILL_AFTER_COMMITS:
        os.kill(os.getpid(), signal.SIGKILL)


class WriteQueue:
    def __init__(self, engine: Engine, max_batch: int = 1000):
        self.engine = engine
        self.max_batch = max_batch
        self._queue: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self.batches = 0  # commits made, for benchmarks
        # Statements compiled for the driver (see _Direct), and the connection batches
        # run on (kept between batches: checking one out of the pool and returning it
        # cost as much as a small batch). Both are used by the writer thread only.
        self._direct: dict[int, Any] = {}
        self._connection: Connection | None = None
        # On PostgreSQL, a transaction whose COMMIT got no answer is asked about by its id.
        self._asks_outcomes = engine.dialect.name == "postgresql"
        # Writes submitted and not yet answered (a fake clock must not jump over them).
        self.pending = 0
        self._pending_lock = threading.Lock()
        # Held while a batch commits; ``halt`` takes it for good.
        self._committing = threading.Lock()

    def submit(self, write: Write | Statements, fence: Any = _CONTEXT) -> Future[Any]:
        """Queue a write; ``fence``: the lock its job must still hold (default: the
        submitting context's; None: a write of no job)."""
        future: Future[Any] = Future()
        if self._thread is None:
            self._start()
        self._add_pending(1)
        self._queue.put((write, future, locks.current_fence.get() if fence is _CONTEXT else fence))
        return future

    def submit_async(self, write: Write | Statements, fence: Any = _CONTEXT) -> asyncio.Future[Any]:
        """Submit from the event loop; the returned future resolves on that loop. All
        futures of one batch are resolved by a single callback per loop (one wake-up,
        not one per write)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if self._thread is None:
            self._start()
        self._add_pending(1)
        self._queue.put((write, _LoopFuture(loop, future), locks.current_fence.get() if fence is _CONTEXT else fence))
        return future

    def halt(self, timeout: float) -> bool:
        """Commit nothing more, for good (the process is about to leave at once): waits
        up to ``timeout`` seconds for the batch committing now. True when halted; from
        then on what the database holds is what this process leaves."""
        return self._committing.acquire(timeout=timeout)

    def _add_pending(self, count: int) -> None:
        with self._pending_lock:
            self.pending += count

    def run(self, write: Write | Statements, fence: Any = _CONTEXT) -> Any:
        """Submit and wait for the commit (for threads and synchronous callers)."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("a write cannot wait for the writer thread from inside it")
        return self.submit(write, fence).result()

    def close(self) -> None:
        if self._thread is not None:
            self._queue.put(_STOP)
            self._thread.join()
            self._thread = None

    def _start(self) -> None:
        with self._start_lock:
            if self._thread is None:
                thread = threading.Thread(target=self._loop, name="stoker-store-writer", daemon=True)
                thread.start()
                self._thread = thread

    def _loop(self) -> None:
        try:
            self._serve()
        finally:
            self._disconnect()

    def _disconnect(self) -> None:
        connection, self._connection = self._connection, None
        if connection is not None:
            # A broken connection may fail to close; the writer must go on regardless.
            with contextlib.suppress(Exception):
                connection.close()

    def _serve(self) -> None:
        held_back = None  # an Alone write met while filling a batch: the next batch
        while True:
            item, held_back = (held_back, None) if held_back is not None else (self._queue.get(), None)
            if item is _STOP:
                return
            batch = [item]
            stop = False
            while len(batch) < self.max_batch and not isinstance(item[0], Alone):
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    stop = True
                    break
                if isinstance(item[0], Alone):
                    held_back = item
                    break
                batch.append(item)
            try:
                with self._committing:
                    self._commit(batch)
            finally:
                self._add_pending(-len(batch))
            if stop:
                return

    def _commit(self, batch: list[tuple[Write, Future[Any], Fence | None]]) -> None:
        # A caller may cancel a queued write: drop it, and mark the rest running so they
        # can no longer be cancelled (set_result on a cancelled Future raises, which
        # would end this thread and leave every later write waiting).
        batch = [item for item in batch if isinstance(item[1], _LoopFuture) or item[1].set_running_or_notify_cancel()]
        if not batch:
            return

        def run(connection: Connection) -> tuple[list[Any], list[Any], list[Any]]:
            admitted, refused = _fenced(connection, batch)
            return admitted, refused, _run(connection, [write for write, _, _ in admitted], self._direct)

        def attempt() -> tuple[list[Any], list[Any], list[Any]]:
            try:
                if self._connection is None:
                    self._connection = self.engine.connect()
                return self._transaction(self._connection, run)
            except BaseException:
                # The connection may be the problem (a server restart): the repeats, the
                # retries and the next batch take fresh ones.
                self._disconnect()
                raise

        try:
            admitted, refused, results = self._repeated(attempt)
        except Exception as error:  # noqa: BLE001 - failed, or retried one by one below
            if connection_loss.lost(error):
                # The database stays out of reach, or a COMMIT's outcome is unknown (a
                # write run again could land twice): every write of the batch fails.
                _fail(batch, error)
                return
            for item in batch:
                self._commit_one(*item)
            return
        self.batches += 1
        _maybe_crash(self.batches)
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], Any, BaseException | None]]] = {}
        outcomes: list[tuple[Any, Any, BaseException | None]] = [(future, result, None) for (_, future, _), result in zip(admitted, results, strict=True)]
        outcomes += [(future, None, _lost(fence)) for _, future, fence in refused]
        for future, result, failure in outcomes:
            if isinstance(future, _LoopFuture):
                by_loop.setdefault(future.loop, []).append((future.future, result, failure))
            elif failure is not None:
                future.set_exception(failure)
            else:
                future.set_result(result)
        _resolve_on_loops(by_loop)

    def _commit_one(self, write: Write, future: Any, fence: Fence | None) -> None:
        def run(connection: Connection) -> Any:
            if _fenced(connection, [(write, future, fence)])[1]:
                raise _lost(fence)
            return _run(connection, [write], self._direct)[0]

        def attempt() -> Any:
            with self.engine.connect() as connection:
                return self._transaction(connection, run)

        try:
            result = self._repeated(attempt)
        except BaseException as error:  # noqa: BLE001 - handed to the caller
            outcome: tuple[Any, BaseException | None] = (None, error)
        else:
            self.batches += 1
            _maybe_crash(self.batches)
            outcome = (result, None)
        if isinstance(future, _LoopFuture):
            _resolve_on_loops({future.loop: [(future.future, *outcome)]})
        elif outcome[1] is not None:
            future.set_exception(outcome[1])
        else:
            future.set_result(outcome[0])

    # -- a lost connection (connection_loss.py) ------------------------------------------

    def _transaction(self, connection: Connection, run: Callable[[Connection], T]) -> T:
        """``run(connection)`` in a transaction, committed. Raises ``_Repeatable`` when
        the connection was lost and the transaction certainly did not commit: lost
        before its COMMIT was sent, or, on PostgreSQL, during it and the server says by
        its transaction id that it was aborted. A COMMIT lost after the server committed
        is a success; one whose outcome cannot be known raises the error itself."""
        transaction_id = None
        committing = False
        try:
            with connection.begin():
                if self._asks_outcomes:
                    # Straight to the driver: one round trip more per transaction, no more.
                    with _cursor(connection, _TRANSACTION_ID, []) as cursor:
                        cursor.execute(_TRANSACTION_ID)
                        transaction_id = cursor.fetchone()[0]
                result = run(connection)
                committing = True  # the COMMIT is sent as the block ends
        except PendingRollbackError as error:
            # The connection was lost inside ``run``, which went on (a write that takes a
            # failure as its answer): the COMMIT was never sent, so nothing of it happened.
            raise _Repeatable(connection_loss.as_database_error(error)) from error
        except Exception as error:
            if not connection_loss.lost_anywhere(error):
                raise
            # A driver error met on the raw connection (the queue's writes): SQLAlchemy
            # did not see it, so the connection must not go back to the pool.
            with contextlib.suppress(Exception):
                connection.invalidate()
            error = connection_loss.as_database_error(error)
            if not committing:
                raise _Repeatable(error) from error
            outcome = self._outcome(transaction_id)
            if outcome == "committed":
                return result
            if outcome == "aborted":
                raise _Repeatable(error) from error
            raise error from None
        return result

    def _outcome(self, transaction_id: int | None) -> str | None:
        """What became of a transaction whose COMMIT got no answer: "committed",
        "aborted", or None when the server cannot say (or cannot be asked)."""
        if transaction_id is None:
            return None

        def ask() -> str | None:
            with self.engine.connect() as connection:
                return connection.execute(text("SELECT txid_status(:id)"), {"id": transaction_id}).scalar()

        try:
            return connection_loss.repeated(ask)
        except DBAPIError:
            return None

    @staticmethod
    def _repeated(attempt: Callable[[], T]) -> T:
        """``attempt()``, run again after each ``_Repeatable`` failure, up to
        len(WRITE_RETRY_DELAYS_S) more times; then its lost connection is the error."""
        for number, delay in enumerate(connection_loss.WRITE_RETRY_DELAYS_S, 1):
            try:
                return attempt()
            except _Repeatable as repeatable:
                connection_loss.note(repeatable.error, number, len(connection_loss.WRITE_RETRY_DELAYS_S))
            time.sleep(delay)
        try:
            return attempt()
        except _Repeatable as repeatable:
            raise repeatable.error from None


_TRANSACTION_ID = "SELECT txid_current()"


class _Repeatable(Exception):
    """A transaction lost with its connection that certainly did not commit: safe to
    run again from its start."""

    def __init__(self, error: DBAPIError):
        super().__init__(str(error))
        self.error = error


def _fail(batch: list[tuple[Write, Any, Fence | None]], error: BaseException) -> None:
    """Every write of ``batch`` gets ``error``."""
    by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], Any, BaseException | None]]] = {}
    for _, future, _ in batch:
        if isinstance(future, _LoopFuture):
            by_loop.setdefault(future.loop, []).append((future.future, None, error))
        else:
            future.set_exception(error)
    _resolve_on_loops(by_loop)


def _fenced(connection: Connection, batch: list[tuple[Write, Any, Fence | None]]) -> tuple[list[Any], list[Any]]:
    """The writes whose job still holds its lock, and those refused (checked inside the
    transaction the admitted writes commit in)."""
    stack_ids = {fence.stack_id for _, _, fence in batch if fence is not None}
    if not stack_ids:
        return batch, []
    held = locks.held_tokens(connection, stack_ids)
    admitted: list[tuple[Write, Any, Fence | None]] = []
    refused: list[tuple[Write, Any, Fence | None]] = []
    for item in batch:
        fence = item[2]
        (refused if fence is not None and held.get(fence.stack_id) != fence.token else admitted).append(item)
    return admitted, refused


def _lost(fence: Fence | None) -> LockLostError:
    assert fence is not None
    try:
        fence.lost()
    except Exception:  # noqa: BLE001, S110 - telling the job is best effort; the refusal stands
        pass
    return LockLostError(fence)


class _LoopFuture:
    __slots__ = ("loop", "future")

    def __init__(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[Any]):
        self.loop = loop
        self.future = future


def _resolve(items: list[tuple[asyncio.Future[Any], Any, BaseException | None]]) -> None:
    for future, result, error in items:
        if future.cancelled():
            continue
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)


def _resolve_on_loops(by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], Any, BaseException | None]]]) -> None:
    for loop, items in by_loop.items():
        try:
            loop.call_soon_threadsafe(_resolve, items)
        except RuntimeError:  # the loop has closed; nobody is waiting any more
            pass
