"""The worker processes that evaluate yaql expressions, and the pool that lends them out.

A yaql expression comes from a user, and one C call can hold a Python process for as
long as it likes (a power of ten with ten million digits, a regular expression that
backtracks): nothing inside the process, no tracer and no signal handler, runs until it
returns. So expressions are evaluated in a few worker processes, each with a memory
ceiling (``RLIMIT_AS``) and a CPU ceiling (``RLIMIT_CPU``, raised before each
expression), and the caller waits for the answer with a deadline; a worker that misses
it is killed (SIGKILL) and a new one is started when next needed. Inside a worker the
regular expression functions match with RE2 (``stoker.sdk.patterns``), in linear time.

Workers are started lazily, by running this module with the same interpreter (a fresh
process, never a fork of a threaded one), and reused: an ordinary expression costs a
round trip over two pipes. A worker exits when its pipe closes, so none outlives
stoker: at exit the pool closes them; if stoker is killed, an idle worker reads the end
of its pipe and a busy one meets its CPU ceiling.

Requests and answers are one line of JSON each; the answer is JSON data (tuples and sets
become lists), and an answer larger than the caller's budget is refused in the worker.
Must not: run anything but yaql in a worker, or import the engine.
"""

from __future__ import annotations

import atexit
import json
import math
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Seconds a new worker may take to import yaql and say it is ready.
WORKER_START_TIMEOUT_S = 30.0
_READY = b"ready\n"
# (limit_iterators, memory_quota) a worker builds its engine for at start: Heat's defaults,
# which YaqlLimits has too.
WARM_LIMITS = (200, 10_000)


class SandboxError(ValueError):
    """The expression failed, broke a limit or was stopped; the message says which."""


@dataclass(frozen=True)
class Request:
    expression: str
    data: Any
    limit_iterators: int
    memory_quota: int  # bytes, yaql's own accounting of the values it builds
    time_limit_s: float
    max_result_bytes: int


class _Worker:
    """One worker process and its two pipes."""

    def __init__(self, memory_bytes: int):
        package_root = str(Path(__file__).resolve().parents[3])  # the directory holding ``stoker``
        environment = dict(os.environ)
        environment["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, environment.get("PYTHONPATH")) if p)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "stoker.template.functions.yaql_sandbox", str(memory_bytes)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                bufsize=0,
                env=environment,
                # Its own session: a Ctrl-C meant for stoker does not interrupt an expression.
                start_new_session=True,
            )
        except OSError as error:
            raise SandboxError(f"the yaql worker process could not be started: {error}")
        self.memory_bytes = memory_bytes
        try:
            line = self._read_line(time.monotonic() + WORKER_START_TIMEOUT_S, len(_READY))
        except BrokenPipeError:
            line = None
        if line != _READY:
            self.kill()
            raise SandboxError("the yaql worker process could not be started")

    def alive(self) -> bool:
        return self.process.poll() is None

    def call(self, request: Request) -> dict[str, Any] | None:
        """The worker's answer, or None when it missed the deadline (it is then killed)."""
        line = json.dumps(
            {
                "expression": request.expression,
                "data": request.data,
                "limit_iterators": request.limit_iterators,
                "memory_quota": request.memory_quota,
                "time_limit_s": request.time_limit_s,
                "max_result_bytes": request.max_result_bytes,
            },
            ensure_ascii=False,
            default=str,
        ).encode("utf-8", "surrogatepass") + b"\n"
        deadline = time.monotonic() + request.time_limit_s
        self._write(line)
        # The answer is JSON text of at most max_result_bytes, in an envelope.
        answer = self._read_line(deadline, request.max_result_bytes + 4096)
        if answer is None:
            self.kill()
            return None
        return json.loads(answer)

    def _write(self, data: bytes) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        view = memoryview(data)
        while view:
            written = os.write(stdin.fileno(), view)
            view = view[written:]

    def _read_line(self, deadline: float, max_bytes: int) -> bytes | None:
        stdout = self.process.stdout
        assert stdout is not None
        descriptor = stdout.fileno()
        buffer = bytearray()
        while not buffer.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            ready, _, _ = select.select([descriptor], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(descriptor, 1 << 16)
            if not chunk:
                raise BrokenPipeError("the yaql worker process ended")
            buffer += chunk
            if len(buffer) > max_bytes:
                self.kill()
                raise SandboxError("the yaql worker's answer is larger than allowed")
        return bytes(buffer)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                pipe.close()

    def close(self) -> None:
        """Ask the worker to leave (end of its input), and make sure it has."""
        if self.process.stdin is not None:
            try:
                self.process.stdin.close()
            except OSError:
                pass
        try:
            self.process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            pass
        self.kill()


class WorkerPool:
    """At most ``size`` workers, lent to one caller at a time; callers beyond that wait.

    Invariant (under ``_condition``): ``_started`` counts the workers that exist, idle
    (in ``_idle``) or lent out; a worker that is killed is subtracted when it is given back.
    """

    def __init__(self, size: int, memory_bytes: int):
        self.size = max(1, size)
        self.memory_bytes = memory_bytes
        self._idle: list[_Worker] = []
        self._started = 0
        self._closed = False
        self._waiting = 0  # callers in _borrow, for the bound on their wait
        # Workers being started now, and the seconds starts have taken in all: a caller's
        # wait for a worker does not count the time others spent starting workers (a busy
        # machine may take seconds to start one), only the turns of expressions.
        self._starting = 0
        self._start_seconds = 0.0
        self._condition = threading.Condition()

    def evaluate(self, request: Request) -> Any:
        """The value of the expression; raises SandboxError with a plain message."""
        # Waiting for a worker is bounded too (the caller may be the engine's event loop),
        # by the turns of the callers already waiting: each takes a worker for at most its
        # time limit, so an expression is never failed because others were slow.
        with self._condition:
            ahead = self._waiting
        turns = 2 + (ahead + self.size) // self.size  # one to spare for a worker's restart
        wait_until = time.monotonic() + request.time_limit_s * turns
        for attempt in range(2):
            worker = self._borrow(wait_until)
            healthy = False
            try:
                answer = worker.call(request)
                healthy = answer is not None
            except (BrokenPipeError, ConnectionResetError):
                # The worker had ended (killed from outside, or it met its CPU ceiling
                # after its caller left): try once more with a new one.
                if attempt == 0:
                    continue
                raise SandboxError("the yaql worker process ended unexpectedly")
            finally:
                self._give_back(worker, healthy)
            if answer is None:
                raise SandboxError(f"the expression ran longer than {request.time_limit_s:g} s and was stopped")
            if "error" in answer:
                raise SandboxError(answer["error"])
            return answer["value"]
        raise AssertionError("unreachable")  # pragma: no cover

    def _borrow(self, wait_until: float) -> _Worker:
        with self._condition:
            starts_before = self._start_seconds
            while True:
                if self._closed:
                    raise SandboxError("yaql evaluation has been shut down")
                while self._idle:
                    worker = self._idle.pop()
                    if worker.alive():
                        return worker
                    self._started -= 1
                    worker.kill()
                if self._started < self.size:
                    self._started += 1
                    self._starting += 1
                    break
                remaining = wait_until + (self._start_seconds - starts_before) - time.monotonic()
                if remaining <= 0 and self._starting:
                    remaining = 0.05  # a worker is starting: its start is not an expression's turn
                if remaining <= 0:
                    raise SandboxError(
                        f"all {self.size} yaql worker processes stayed busy with other expressions; "
                        "try again, or raise STOKER_YAQL_WORKERS"
                    )
                self._waiting += 1
                try:
                    self._condition.wait(remaining)
                finally:
                    self._waiting -= 1
        started = time.monotonic()
        try:
            worker = _Worker(self.memory_bytes)
        except BaseException:
            with self._condition:
                self._started -= 1
                self._starting -= 1
                self._start_seconds += time.monotonic() - started
                self._condition.notify()
            raise
        with self._condition:
            self._starting -= 1
            self._start_seconds += time.monotonic() - started
        return worker

    def _give_back(self, worker: _Worker, healthy: bool) -> None:
        with self._condition:
            if healthy and not self._closed and worker.alive():
                self._idle.append(worker)
            else:
                self._started -= 1
                worker.kill()
            self._condition.notify()

    def close(self) -> None:
        with self._condition:
            self._closed = True
            idle, self._idle = self._idle, []
            self._started -= len(idle)
            self._condition.notify_all()
        for worker in idle:
            worker.close()

    def worker_ids(self) -> list[int]:
        """Process ids of the idle workers (for tests and diagnostics)."""
        with self._condition:
            return [worker.process.pid for worker in self._idle]


_pool: WorkerPool | None = None
_pool_lock = threading.Lock()


def pool(size: int, memory_bytes: int) -> WorkerPool:
    """The process's pool, made on first use (a new one if the sizes changed)."""
    global _pool
    with _pool_lock:
        if _pool is None or (_pool.size, _pool.memory_bytes) != (max(1, size), memory_bytes):
            if _pool is not None:
                _pool.close()
            _pool = WorkerPool(size, memory_bytes)
        return _pool


def shutdown() -> None:
    """Close the workers (at exit; a later evaluation starts a new pool)."""
    global _pool
    with _pool_lock:
        if _pool is not None:
            _pool.close()
            _pool = None


atexit.register(shutdown)


# -- the worker ------------------------------------------------------------------------


def _linear_regex_context(yaql: Any) -> Any:
    """yaql's root context with its regular expression functions matching by RE2.

    yaql's own module is run again with ``stoker.sdk.patterns`` in place of ``re``, so
    the functions keep yaql's names, signatures and documentation.
    """
    import builtins
    import importlib.abc
    import importlib.util

    from stoker.sdk import patterns

    context = yaql.create_context(regex=False)
    spec = importlib.util.find_spec("yaql.standard_library.regex")
    # yaql is installed (the caller has it), and its modules are source files
    assert spec is not None and spec.origin is not None and isinstance(spec.loader, importlib.abc.InspectLoader)
    source = spec.loader.get_source(spec.name)
    assert source is not None

    def importer(name: str, *args: Any, **kwargs: Any) -> Any:
        return patterns if name == "re" else builtins.__import__(name, *args, **kwargs)

    namespace: dict[str, Any] = {
        "__name__": "stoker_yaql_regex",
        "__builtins__": {**vars(builtins), "__import__": importer},
    }
    exec(compile(source, spec.origin, "exec"), namespace)  # noqa: S102 - yaql's own module source
    namespace["register"](context)
    return context


def _jsonable(value: Any) -> Any:
    """What ``json.dumps`` cannot write itself: tuples and sets as lists, other
    mappings (yaql's FrozenDict) as maps; anything else is refused."""
    if isinstance(value, (tuple, set, frozenset)):
        return list(value)
    if isinstance(value, Mapping):
        return dict(value)
    raise TypeError(f"the result holds a {type(value).__name__}, which is not JSON data")


def _raise_cpu_ceiling(time_limit_s: float) -> None:
    """Let this expression use its time, and not much more, of CPU from now on: a worker
    whose caller has gone (killed while the expression ran) ends by itself."""
    import resource

    used = resource.getrusage(resource.RUSAGE_SELF)
    spent = used.ru_utime + used.ru_stime
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    soft = math.ceil(spent + time_limit_s) + 2
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, hard))


def serve(memory_bytes: int) -> None:
    """Answer requests from stdin until it closes."""
    import collections.abc  # noqa: F401 - yaql 3 uses collections.abc without importing it
    import resource
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if memory_bytes > 0:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    import yaql
    from yaql.language import exceptions as yaql_errors

    root = _linear_regex_context(yaql)
    engines: dict[tuple[int, int], Any] = {}
    # The engine for Heat's default limits is built before the worker says it is ready:
    # building one (yaql generates its parser tables) takes a good part of a second on a
    # busy machine, which must not count against the first expression's time limit.
    engines[WARM_LIMITS] = yaql.YaqlFactory().create(
        {"yaql.limitIterators": WARM_LIMITS[0], "yaql.memoryQuota": WARM_LIMITS[1]}
    )
    parsed: dict[tuple[tuple[int, int], str], Any] = {}
    output = sys.stdout.buffer
    output.write(_READY)
    output.flush()
    for line in sys.stdin.buffer:
        answer: dict[str, Any]
        try:
            request = json.loads(line)
            limits = (request["limit_iterators"], request["memory_quota"])
            engine = engines.get(limits)
            if engine is None:
                options = {"yaql.limitIterators": limits[0], "yaql.memoryQuota": limits[1]}
                engine = engines[limits] = yaql.YaqlFactory().create(options)
            key = (limits, request["expression"])
            statement = parsed.get(key)
            if statement is None:
                if len(parsed) > 256:
                    parsed.clear()
                statement = parsed[key] = engine(request["expression"])
            _raise_cpu_ceiling(request["time_limit_s"])
            value = statement.evaluate({"data": request["data"]}, root.create_child_context())
            text = json.dumps({"value": value}, ensure_ascii=False, default=_jsonable)
            encoded = text.encode("utf-8", "surrogatepass")
            if len(encoded) > request["max_result_bytes"] + 16:
                answer = {"error": f"the expression made a value of more than {request['max_result_bytes']} bytes"}
            else:
                output.write(encoded + b"\n")
                output.flush()
                continue
        except yaql_errors.CollectionTooLargeException:
            answer = {"error": f"the expression built a collection of more than {request['limit_iterators']} elements"}
        except yaql_errors.MemoryQuotaExceededException:
            answer = {"error": f"the expression used more than {request['memory_quota']} bytes of memory"}
        except MemoryError:
            answer = {"error": f"the expression needed more than the {memory_bytes} bytes of memory its evaluation may take"}
        except RecursionError:
            answer = {"error": "the expression is nested too deeply"}
        except Exception as error:  # noqa: BLE001 - any failure of the expression is its message
            answer = {"error": f"{type(error).__name__}: {error}"}
        output.write(json.dumps(answer, ensure_ascii=False, default=str).encode("utf-8", "surrogatepass") + b"\n")
        output.flush()


if __name__ == "__main__":
    try:
        serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    except (BrokenPipeError, KeyboardInterrupt):
        pass
