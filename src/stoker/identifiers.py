"""Identifiers for rows (events, resources): random version-4 UUIDs from a fast PRNG.

``uuid.uuid4()`` reads the OS's entropy source on every call, which costs tens of
microseconds on some virtual machines and showed up in profiles at three calls per
resource. These ids need to be unique, not secret: a PRNG seeded once from the OS is
enough (2**122 random bits per id). Secrets (RandomString) still use ``os.urandom``.
"""

from __future__ import annotations

import os
import random
import uuid

_random = random.Random(os.urandom(32))


def new_id() -> str:
    """A random UUID (version 4) as text."""
    return str(uuid.UUID(int=_random.getrandbits(128), version=4))


def reseed_after_fork() -> None:
    _random.seed(os.urandom(32))


os.register_at_fork(after_in_child=reseed_after_fork)
