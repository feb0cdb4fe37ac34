"""A real ``stoker serve`` on 127.0.0.1 under a flood of slow connections (slowloris):
request headers sent a byte at a time, a body that never ends, a connection that sends
nothing at all. The server drops every one, answers a prompt client all the while, and
logs a few lines, not one per connection. The server here may open 256 files, as a
server of a small machine hits its own limit sooner or later: without the limits of
``api/connections.py`` the flood takes every file, no request is answered, and asyncio
logs every failed accept with its traceback. Loopback only; the loops are bounded and
the test closes every socket it opened."""

from __future__ import annotations

import socket
import time

from tests.support.server import Server

SLOW = 300
FILE_LIMIT = 256
HEADERS = b"GET /v1/demo/stacks HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slow\r\nAccept: */*\r\n"
BODY_HEADERS = b"POST /v1/demo/stacks HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"


class SlowClient:
    """One slow connection: ``kind`` 0 drips its headers, 1 its body, 2 sends nothing."""

    def __init__(self, port: int, kind: int):
        self.kind = kind
        self.sent = 0
        self.socket = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.socket.setblocking(False)
        if kind == 1:
            self.socket.sendall(BODY_HEADERS)

    def drip(self) -> bool:
        """Send one more byte (nothing for kind 2); False once the server has dropped it."""
        try:
            if self.socket.recv(1024) == b"":
                return False
        except BlockingIOError:
            pass
        except OSError:
            return False
        if self.kind == 2:
            return True
        byte = HEADERS[self.sent % len(HEADERS):][:1] if self.kind == 0 else b" "
        try:
            self.socket.send(byte)
        except BlockingIOError:
            pass
        except OSError:
            return False
        self.sent += 1
        return True

    def close(self) -> None:
        self.socket.close()


def test_serve_drops_slow_connections_and_answers_a_prompt_client_meanwhile(tmp_path):
    running = Server(
        f"sqlite:///{tmp_path / 'stoker.sqlite'}", tmp_path / "serve.log", file_limit=FILE_LIMIT,
        STOKER_HTTP_HEADER_TIMEOUT_S="1", STOKER_HTTP_BODY_TIMEOUT_S="2", STOKER_HTTP_MAX_CONNECTIONS="100", STOKER_HTTP_BACKLOG="64",
    ).start()
    slow: list[SlowClient] = []
    answered = 0
    try:
        slow = [SlowClient(running.port, number % 3) for number in range(SLOW)]
        open_ones = list(slow)
        deadline = time.monotonic() + 120
        while open_ones:
            assert time.monotonic() < deadline, f"{len(open_ones)} of {SLOW} slow connections still open"
            open_ones = [client for client in open_ones if client.drip()]
            # A prompt client is answered while slow ones hold (or fight for) connections.
            status, body = running.request("GET", "/stacks", timeout=30)
            assert status == 200 and body == {"stacks": []}, body
            answered += 1
            time.sleep(0.1)
        status, _ = running.request("GET", "/stacks", timeout=30)
        assert status == 200
    finally:
        for client in slow:
            client.close()
        log = running.stop()
    lines = log.splitlines()
    print(f"{SLOW} slow connections dropped, {answered} prompt requests answered meanwhile; the server logged {len(lines)} lines")
    assert "Traceback" not in log, log[:4000]
    # A handful: start-up, the access log of the prompt requests, and one line for the
    # dropped connections (one a minute more while it goes on).
    dropped = [line for line in lines if "dropped connections" in line]
    assert 1 <= len(dropped) <= 2, dropped
    assert len(lines) < answered + 30, "\n".join(lines[:60])
