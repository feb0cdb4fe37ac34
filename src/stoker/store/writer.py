"""The store's single writer: every write runs on one thread, batched into shared
transactions (group commit).

A caller hands in a function of a Connection and gets a Future that resolves only after
the transaction holding its write has committed, so "persisted before the engine moves
on" holds while many resources in flight share one commit. If a batch fails, each write
in it is retried alone so only the faulty one fails.

Invariant: only the writer thread writes through this engine; callers never hold a
database lock while they wait, so handler threads and the event loop never wait on each
other.
"""

from __future__ import annotations

import asyncio
import os
import queue
import signal
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from sqlalchemy.engine import Connection, Engine

Write = Callable[[Connection], Any]
_STOP = object()


class Statements:
    """A write given as statements rather than code: ``(statement, parameters, row)``
    triples, where ``row`` names the row an UPDATE touches (None for an INSERT of a new
    row). The writer runs the statements of a whole batch grouped by statement, each
    group in one executemany, which costs a fraction of one execute per statement."""

    __slots__ = ("ops",)

    def __init__(self, ops: list[tuple[Any, dict[str, Any], Any]]):
        self.ops = ops


class _Grouped:
    """Statements of one batch, grouped. Grouping reorders statements across rows, never
    within one: a second write to a row already in the groups flushes them first."""

    def __init__(self) -> None:
        self.groups: dict[int, tuple[Any, list[dict[str, Any]]]] = {}
        self.rows: set[Any] = set()

    def add(self, connection: Connection, write: Statements) -> None:
        if any(row is not None and row in self.rows for _, _, row in write.ops):
            self.flush(connection)
        for statement, parameters, row in write.ops:
            group = self.groups.get(id(statement))
            if group is None:
                group = self.groups[id(statement)] = (statement, [])
            group[1].append(parameters)
            if row is not None:
                self.rows.add(row)

    def flush(self, connection: Connection) -> None:
        for statement, parameters in self.groups.values():
            connection.execute(statement, parameters if len(parameters) > 1 else parameters[0])
        self.groups.clear()
        self.rows.clear()


def _run(connection: Connection, writes: list[Any]) -> list[Any]:
    grouped = _Grouped()
    results = []
    for write in writes:
        if isinstance(write, Statements):
            grouped.add(connection, write)
            results.append(None)
        else:
            grouped.flush(connection)  # code may read what the statements wrote
            results.append(write(connection))
    grouped.flush(connection)
    return results

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
        # Writes submitted and not yet answered (a fake clock must not jump over them).
        self.pending = 0
        self._pending_lock = threading.Lock()

    def submit(self, write: Write | Statements) -> Future[Any]:
        future: Future[Any] = Future()
        if self._thread is None:
            self._start()
        self._add_pending(1)
        self._queue.put((write, future))
        return future

    def submit_async(self, write: Write | Statements) -> asyncio.Future[Any]:
        """Submit from the event loop; the returned future resolves on that loop. All
        futures of one batch are resolved by a single callback per loop (one wake-up,
        not one per write)."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Any] = loop.create_future()
        if self._thread is None:
            self._start()
        self._add_pending(1)
        self._queue.put((write, _LoopFuture(loop, future)))
        return future

    def _add_pending(self, count: int) -> None:
        with self._pending_lock:
            self.pending += count

    def run(self, write: Write | Statements) -> Any:
        """Submit and wait for the commit (for threads and synchronous callers)."""
        if threading.current_thread() is self._thread:
            raise RuntimeError("a write cannot wait for the writer thread from inside it")
        return self.submit(write).result()

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
        while True:
            item = self._queue.get()
            if item is _STOP:
                return
            batch = [item]
            stop = False
            while len(batch) < self.max_batch:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is _STOP:
                    stop = True
                    break
                batch.append(item)
            try:
                self._commit(batch)
            finally:
                self._add_pending(-len(batch))
            if stop:
                return

    def _commit(self, batch: list[tuple[Write, Future[Any]]]) -> None:
        # A caller may cancel a queued write: drop it, and mark the rest running so they
        # can no longer be cancelled (set_result on a cancelled Future raises, which
        # would end this thread and leave every later write waiting).
        batch = [(write, future) for write, future in batch if isinstance(future, _LoopFuture) or future.set_running_or_notify_cancel()]
        if not batch:
            return
        try:
            with self.engine.begin() as connection:
                results = _run(connection, [write for write, _ in batch])
        except Exception:  # noqa: BLE001 - retried one by one below
            for write, future in batch:
                self._commit_one(write, future)
            return
        self.batches += 1
        _maybe_crash(self.batches)
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[asyncio.Future[Any], Any, BaseException | None]]] = {}
        for (_, future), result in zip(batch, results, strict=True):
            if isinstance(future, _LoopFuture):
                by_loop.setdefault(future.loop, []).append((future.future, result, None))
            else:
                future.set_result(result)
        _resolve_on_loops(by_loop)

    def _commit_one(self, write: Write, future: Any) -> None:
        try:
            with self.engine.begin() as connection:
                result = _run(connection, [write])[0]
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
