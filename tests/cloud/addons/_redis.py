"""Speaking to the machine's Redis from the test cloud's add-ons (``zaqar.py``), as much as
they need to clean up after a session (SELECT, KEYS, DEL): Redis's protocol over a socket,
since stoker's venv has no Redis client for three commands. It must not start anything.
"""

from __future__ import annotations

import socket
from typing import Any

__all__ = ["RedisCommands"]


class RedisCommands:
    """Redis's protocol, as much as stopping needs (SELECT, KEYS, DEL): no client library
    in stoker's venv for three commands."""

    def __init__(self, connection: socket.socket):
        self.stream = connection.makefile("rwb")

    def call(self, *words: str) -> Any:
        command = [f"*{len(words)}\r\n".encode()]
        for word in words:
            data = word.encode()
            command.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self.stream.write(b"".join(command))
        self.stream.flush()
        return self._answer()

    def _answer(self) -> Any:
        line = self.stream.readline().rstrip(b"\r\n")
        kind, rest = line[:1], line[1:]
        if kind == b"-":
            raise OSError(f"Redis: {rest.decode(errors='replace')}")
        if kind in (b"+", b":"):
            return rest.decode()
        if kind == b"$":
            size = int(rest)
            return None if size < 0 else self.stream.read(size + 2)[:-2].decode()
        if kind == b"*":
            return [self._answer() for _ in range(max(int(rest), 0))]
        raise OSError(f"Redis answered {line!r}")
