"""The log filter of ``stoker serve``'s connections (api/connections.py): a warning
uvicorn or asyncio repeats once per connection is logged once a minute, not each time.
(The limits themselves are tested against a real server: tests/integration/
test_serve_connections.py.)"""

from __future__ import annotations

import io
import logging

import pytest

from stoker.api.connections import RepeatedWarnings
from stoker.settings import Settings


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


def test_connection_settings_read_from_the_environment(monkeypatch):
    for variable, value in (("STOKER_HTTP_HEADER_TIMEOUT_S", "2.5"), ("STOKER_HTTP_BODY_TIMEOUT_S", "30"), ("STOKER_HTTP_MAX_CONNECTIONS", "50"),
                            ("STOKER_HTTP_BACKLOG", "16"), ("STOKER_HTTP_KEEP_ALIVE_S", "3"), ("STOKER_MAX_EVENT_STREAMS_PER_PROJECT", "7")):
        monkeypatch.setenv(variable, value)
    settings = Settings.from_env()
    assert (settings.http_header_timeout_s, settings.http_body_timeout_s, settings.http_max_connections) == (2.5, 30.0, 50)
    assert (settings.http_backlog, settings.http_keep_alive_s, settings.max_event_streams_per_project) == (16, 3, 7)
    # No timeout of 0: it would drop every connection at once.
    monkeypatch.setenv("STOKER_HTTP_HEADER_TIMEOUT_S", "0")
    with pytest.raises(ValueError, match="STOKER_HTTP_HEADER_TIMEOUT_S must be a number of seconds above 0"):
        Settings.from_env()


def test_a_failed_accept_is_one_line_with_the_error_not_a_traceback():
    # As asyncio logs it (its default exception handler: logger.error(..., exc_info=...)).
    logger = logging.Logger("asyncio-under-test")
    logger.addFilter(RepeatedWarnings())
    written = io.StringIO()
    logger.addHandler(logging.StreamHandler(written))
    try:
        raise OSError(24, "Too many open files")
    except OSError as error:
        logger.error("socket.accept() out of system resource\nsocket: <asyncio.TransportSocket fd=11>", exc_info=error)
    text = written.getvalue()
    assert "Traceback" not in text and "[Errno 24] Too many open files" in text, text
