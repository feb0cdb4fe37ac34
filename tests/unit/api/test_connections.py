"""The log filter of ``stoker serve``'s connections (api/connections.py): a warning
uvicorn or asyncio repeats once per connection is logged once a minute, not each time.
(The limits themselves are tested against a real server: tests/integration/
test_serve_connections.py.)"""

from __future__ import annotations

import logging

from stoker.api.connections import RepeatedWarnings


def record(message: str, level: int = logging.WARNING, name: str = "asyncio") -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, message, None, None)


def test_repeated_warnings_pass_once_per_message_and_logger():
    repeated = RepeatedWarnings()
    accept = "socket.accept() out of system resource\nsocket: <asyncio.TransportSocket fd=12>"
    assert repeated.filter(record(accept))
    assert not any(repeated.filter(record(accept)) for _ in range(1000))
    # Another message, or the same one from another logger, is its own.
    assert repeated.filter(record("Invalid HTTP request received.", name="uvicorn.error"))
    assert repeated.filter(record(accept, name="uvicorn.error"))
    # Below WARNING everything passes (the access log's lines, start-up).
    assert all(repeated.filter(record("Started server process", logging.INFO)) for _ in range(3))
