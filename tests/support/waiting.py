"""Waiting in tests for a condition, never for a length of time.

Owns: ``wait_until``, the one way a test waits for something another process does. The
bound it takes is a hang guard (a test that would otherwise wait forever fails, saying
what it waited for), set far above what a busy machine needs: a test must not pass or
fail by how fast the machine is.
Must not: sleep for a fixed time as a stand-in for a condition.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# Long enough for a loaded 2-core machine running the whole suite with a cloud beside it.
HANG_GUARD_S = 180.0


def wait_until(condition: Callable[[], T], what: str, timeout_s: float = HANG_GUARD_S, interval_s: float = 0.2) -> T:
    """Call ``condition`` until it returns something true, and return that.

    ``condition`` may assert on its own (a process that died while it was awaited): its
    AssertionError ends the wait at once. After ``timeout_s`` the wait fails, naming
    ``what`` it waited for.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        result = condition()
        if result:
            return result
        assert time.monotonic() < deadline, f"waited {timeout_s:.0f} s for {what}"
        time.sleep(interval_s)
