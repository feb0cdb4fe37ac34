"""A read that raced a write: a record read a moment ago names a row the write has
since removed, and the read is done again from its start.

A stack's update stores its new template and, when it ends, deletes the templates no
stack refers to any more (``Store._prune_templates``). A read that took the stack's
record just before that commit and asks for its template just after finds no row: the
record it holds is stale, not the store broken. ``Store.get_template`` raises
``StaleRead`` then, and a whole read (an API GET, an embedded command's read) is run
again by ``fresh``: the second run reads the stack as it is now.

Must not: repeat anything that writes; a GET handler and the embedded backend's reads
only read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# A read is done again at most this many times more: each repeat reads the stack's
# newest record, so a second race needs a second update ending within the same read.
REPEATS = 3


class StaleRead(LookupError):
    """A row a record read a moment ago names is gone (a write removed it since)."""


def fresh(read: Callable[[], T]) -> T:
    """``read()``, done again from its start when it raced a write (``StaleRead``)."""
    for _ in range(REPEATS):
        try:
            return read()
        except StaleRead:
            continue
    return read()
