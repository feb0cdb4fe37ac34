"""Identifiers for rows (events, resources): random version-4 UUIDs from a fast PRNG.

``uuid.uuid4()`` reads the OS's entropy source on every call, which costs tens of
microseconds on some virtual machines and showed up in profiles at three calls per
resource. These ids need to be unique, not secret: a PRNG seeded once from the OS is
enough (2**122 random bits per id). Secrets (RandomString) still use ``os.urandom``.
"""

from __future__ import annotations

import os
import random
import secrets
import string
import uuid

_random = random.Random(os.urandom(32))


def new_id() -> str:
    """A random UUID (version 4) as text."""
    return str(uuid.UUID(int=_random.getrandbits(128), version=4))


_SECRET_ALPHABET = string.ascii_letters + string.digits


def new_secret(length: int = 43) -> str:
    """A secret of letters and digits from the OS's entropy source (43 characters: 256 bits).

    No ``-`` or ``_`` as ``secrets.token_urlsafe`` gives: an agent's command line takes it as
    ``--secret-key VALUE``, and a value beginning with ``-`` reads as an option there
    (heat-cfntools' cfn-get-metadata refused one).
    """
    return "".join(secrets.choice(_SECRET_ALPHABET) for _ in range(length))


def reseed_after_fork() -> None:
    _random.seed(os.urandom(32))


os.register_at_fork(after_in_child=reseed_after_fork)
