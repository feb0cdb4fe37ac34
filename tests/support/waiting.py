"""Waiting in tests for a condition, never for a length of time.

Owns: ``wait_until``, the one way a test waits for something another thread or process
does; ``wait_for_stack``, the same for a stack's status asked through heatclient (an API
test's usual wait); and ``in_background``, the one way a test runs a blocking call (a
create a hook pauses) beside its own steps. The bound a wait takes is a hang guard (a
test that would otherwise wait forever fails, saying what it waited for), set far above
what a busy machine needs: a test must not pass or fail by how fast the machine is.
Must not: sleep for a fixed time as a stand-in for a condition; start a thread that can
keep a failed run's process alive after its tests ended.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

# Long enough for a loaded 2-core machine running the whole suite with a cloud beside it.
HANG_GUARD_S = 180.0


def wait_until(
    condition: Callable[[], T],
    what: str | Callable[[], str],
    timeout_s: float = HANG_GUARD_S,
    interval_s: float = 0.2,
    ignoring: tuple[type[BaseException], ...] = (),
) -> T:
    """Call ``condition`` until it returns something true, and return that.

    ``condition`` may assert on its own (a process that died while it was awaited): its
    AssertionError ends the wait at once. An exception of a type in ``ignoring`` (a row
    not written yet) counts as not yet. After ``timeout_s`` the wait fails, naming
    ``what`` it waited for (a callable is asked then, to name what it last saw).
    """
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            result = condition()
        except ignoring:
            result = None  # type: ignore[assignment]
        if result:
            return result
        if time.monotonic() >= deadline:
            raise AssertionError(f"waited {timeout_s:.0f} s for {what() if callable(what) else what}")
        time.sleep(interval_s)


def settled(status: str) -> bool:
    """Whether a stack's status is the end of its action (not ``..._IN_PROGRESS``)."""
    return not status.endswith("IN_PROGRESS")


def wait_for_stack(heat: Any, stack: str, done: Callable[[str], bool] = settled, timeout_s: float = HANG_GUARD_S) -> Any:
    """Ask heatclient's ``heat.stacks.get(stack)`` until ``done(stack_status)``; return
    that stack."""
    seen: list[str] = []

    def check() -> Any:
        found = heat.stacks.get(stack)
        seen[:] = [found.stack_status]
        return found if done(found.stack_status) else None

    return wait_until(check, lambda: f"stack {stack} (still {seen[0] if seen else 'not found'})", timeout_s, interval_s=0.1)


def in_background(run: Callable[[], Any], key: str = "stack") -> tuple[threading.Thread, dict[str, Any]]:
    """Start ``run()`` on a thread; its result lands in the dict under ``key``, or what
    it raised under ``"error"``. The thread is a daemon: a test that fails while the call
    still waits (on a hook never cleared, a wait condition never signalled) must not keep
    the run's process alive until that wait times out."""
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result[key] = run()
        except BaseException as error:  # handed to the test, which asserts on it
            result["error"] = error

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread, result


def finished(thread: threading.Thread, result: dict[str, Any], key: str = "stack", timeout_s: float = HANG_GUARD_S) -> Any:
    """What ``in_background``'s call returned, once its thread ended; what it raised
    fails the test here."""
    thread.join(timeout_s)
    assert not thread.is_alive(), f"the background call still runs after {timeout_s:.0f} s"
    assert "error" not in result, result.get("error")
    return result[key]
