"""Python's cyclic garbage collector while stack actions run.

A stack action allocates some hundred container objects per resource (records, plugin
objects, properties, events, futures), most of which live until the resource finishes.
With CPython's default thresholds the collector ran a young collection every 700
allocations and promoted every in-flight object to the oldest generation, whose full
collections then scanned the whole growing heap again and again: at 10,000 resources
they took a third of an update's CPU. An action makes almost no cyclic garbage of its
own (measured: 25 objects for a create of 10,000 resources), so the young generation's
threshold is raised while any action runs: collections become rare, and cyclic garbage
(a plugin's, or other threads') is still collected, only in larger steps.

The thresholds are process-wide. Overlapping actions (nested stacks, a server's jobs)
share one relaxation: the first to start sets it, the last to end restores what it found.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

# Container allocations between young collections while an action runs (CPython's
# default is 700): about five hundred resources' worth.
YOUNG_THRESHOLD = 50_000

# Guards _active and _saved: actions start and end on any thread's event loop.
_lock = threading.Lock()
_active = 0
_saved: tuple[int, int, int] | None = None


@contextlib.contextmanager
def relaxed() -> Iterator[None]:
    """Raise the young generation's threshold for the length of the block."""
    global _active, _saved
    with _lock:
        if _active == 0:
            _saved = gc.get_threshold()
            if _saved[0] < YOUNG_THRESHOLD:
                gc.set_threshold(YOUNG_THRESHOLD, _saved[1], _saved[2])
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                _saved = None
