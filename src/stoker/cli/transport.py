"""How the ``stoker`` command talks HTTP to a server: the two transports, a server's
error as one exception, and the lines of an event stream as messages.

    StokerError (stoker.sdk.exceptions)
      RemoteError              the server refused a request (Heat's fault body)
      ConnectionFailedError    the server could not be reached
    StreamBrokenError          an event stream failed or went silent (resume, or poll)
      StreamRefusedError       the server refused to open one (429: its limit; poll)

httpx carries requests without Keystone (no authentication, or a static token sent as
``X-Auth-Token``): it has separate connect and read timeouts and streams a response
line by line. With Keystone, keystoneauth1's ``Session`` (from openstacksdk's config)
carries them: it owns the token, gets a new one when it expires, and knows the catalog.
This module knows nothing of stacks (``cli.remote`` does).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from stoker.sdk.exceptions import StokerError

# Seconds: connecting, and waiting for one answer (a validation of a big template may
# take a while; actions themselves answer at once and are then polled).
CONNECT_TIMEOUT_S = 10.0
READ_TIMEOUT_S = 300.0


class RemoteError(StokerError):
    """The server refused a request: its message, and each problem when several."""

    def __init__(self, message: str, status: int, problems: list[str] | None = None, heat_type: str = ""):
        super().__init__(message)
        self.status = status
        self.problems = problems or []
        self.heat_type = heat_type


class ConnectionFailedError(StokerError):
    """The server could not be reached."""


class StreamBrokenError(Exception):
    """An event stream's connection failed or went quiet too long: reconnect (or poll)."""


class StreamRefusedError(StreamBrokenError):
    """The server would not open an event stream now (429: the project's open streams
    are at the server's limit): the message is the server's. Poll instead."""


# Seconds an event stream may stay silent before it is taken as broken and resumed
# (the server sends a ping at least every event_stream_heartbeat_s, 15 by default).
STREAM_SILENCE_S = 60.0
# How many times a broken stream is resumed (Last-Event-ID) before giving up on it.
STREAM_RETRIES = 5


_PROBLEMS = re.compile(r"(\d+) problems:\n")


def error_of(status: int, body: Any, fallback: str) -> RemoteError:
    """A fault body (``{"error": {"message", "details"?, "type"}}``) as one error."""
    error = body.get("error") if isinstance(body, Mapping) else None
    if not isinstance(error, Mapping):
        text = fallback.strip() or f"HTTP {status}"
        return RemoteError(text, status)
    details = error.get("details")
    if isinstance(details, list) and details:
        listed = [str(item) for item in details]
        text = listed[0] if len(listed) == 1 else f"{len(listed)} problems:\n" + "\n".join(f"  - {p}" for p in listed)
        return RemoteError(text, status, listed if len(listed) > 1 else None, str(error.get("type") or ""))
    text = str(details if isinstance(details, str) and details else error.get("message") or body.get("title") or f"HTTP {status}")
    problems = None
    if _PROBLEMS.match(text):
        # stoker's several problems: "N problems:\n  - one\n  - two" (a problem's own
        # lines are indented deeper, and stay with it).
        problems = text.split("\n  - ")[1:]
    return RemoteError(text, status, problems, str(error.get("type") or ""))


class Response:
    def __init__(self, status: int, headers: Mapping[str, str], content: bytes):
        self.status = status
        self.headers = {key.lower(): value for key, value in headers.items()}
        self.content = content

    def json(self) -> Any:
        if not self.content:
            return None
        try:
            return json.loads(self.content)
        except ValueError:
            return None


class HttpxTransport:
    """No authentication, or a static token (``X-Auth-Token``): plain httpx."""

    def __init__(self, token: str | None = None):
        import httpx

        self._httpx = httpx
        headers = {"Accept": "application/json", "User-Agent": "stoker"}
        if token:
            headers["X-Auth-Token"] = token
        self.client = httpx.Client(headers=headers, timeout=httpx.Timeout(READ_TIMEOUT_S, connect=CONNECT_TIMEOUT_S), follow_redirects=False)

    def request(self, method: str, url: str, body: Any = None, params: Mapping[str, Any] | None = None) -> Response:
        try:
            reply = self.client.request(method, url, json=body, params=params)
        except self._httpx.TransportError as error:
            raise ConnectionFailedError(f"Cannot reach the stoker server at {url.split('/v1/')[0]}: {error or type(error).__name__}", hint="is 'stoker serve' running there? see --url and STOKER_URL")
        return Response(reply.status_code, reply.headers, reply.content)

    @contextlib.contextmanager
    def stream(self, url: str, params: Mapping[str, Any], headers: Mapping[str, str]) -> Iterator[tuple[int, Iterator[str]]]:
        """A GET whose body is read line by line as it comes (server-sent events)."""
        httpx = self._httpx
        timeout = httpx.Timeout(STREAM_SILENCE_S, connect=CONNECT_TIMEOUT_S)
        try:
            with self.client.stream("GET", url, params=params, headers={"Accept": "text/event-stream", **headers}, timeout=timeout) as reply:
                yield reply.status_code, reply.iter_lines()
        except httpx.TransportError as error:
            raise StreamBrokenError(str(error) or type(error).__name__)

    def close(self) -> None:
        self.client.close()


class KeystoneTransport:
    """A keystoneauth1 session (password or token auth from clouds.yaml or OS_*): it
    sends the token, gets a new one when it expires, and knows the catalog."""

    def __init__(self, session: Any):
        self.session = session

    def request(self, method: str, url: str, body: Any = None, params: Mapping[str, Any] | None = None) -> Response:
        from keystoneauth1 import exceptions

        try:
            reply = self.session.request(
                url, method, json=body, params=params, raise_exc=False, redirect=False, headers={"Accept": "application/json"}
            )
        except exceptions.ConnectFailure as error:
            raise ConnectionFailedError(f"Cannot reach the stoker server at {url.split('/v1/')[0]}: {error}", hint="is 'stoker serve' running there?")
        except exceptions.ClientException as error:  # authentication against Keystone failed
            raise StokerError(f"Keystone authentication failed: {error}")
        return Response(reply.status_code, reply.headers, reply.content)

    @contextlib.contextmanager
    def stream(self, url: str, params: Mapping[str, Any], headers: Mapping[str, str]) -> Iterator[tuple[int, Iterator[str]]]:
        import requests
        from keystoneauth1 import exceptions

        try:
            reply = self.session.request(
                url, "GET", params=params, headers={"Accept": "text/event-stream", **headers}, stream=True, raise_exc=False, redirect=False,
                timeout=(CONNECT_TIMEOUT_S, STREAM_SILENCE_S),
            )
        except exceptions.ConnectFailure as error:
            raise StreamBrokenError(str(error))
        try:
            yield reply.status_code, reply.iter_lines(decode_unicode=True)
        except requests.exceptions.RequestException as error:
            raise StreamBrokenError(str(error))
        finally:
            reply.close()

    def close(self) -> None:
        return None


def server_sent(lines: Iterator[str]) -> Iterator[tuple[str, str | None, str]]:
    """(event type, id, data) of each message of a text/event-stream (comments, the
    server's pings, skipped)."""
    data: list[str]
    kind, ident, data = "message", None, []
    for line in lines:
        if not line:
            if data:
                yield kind, ident, "\n".join(data)
            kind, ident, data = "message", None, []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "event":
            kind = value
        elif name == "id":
            ident = value
        elif name == "data":
            data.append(value)
