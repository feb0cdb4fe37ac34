"""A real ``stoker serve`` process on 127.0.0.1 for tests, over any database URL, and
plain HTTP requests against it (no client library: status and body as sent)."""

from __future__ import annotations

import json
import os
import resource
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from tests.support.waiting import HANG_GUARD_S, settled, wait_until

STOKER = str(Path(sys.executable).with_name("stoker"))
TENANT = "demo"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Server:
    """``stoker serve`` on a free port; its output goes to ``log_path``."""

    def __init__(
        self,
        database_url: str,
        log_path: Path,
        *,
        file_limit: int | None = None,
        start_timeout_s: float = 30,
        host: str = "127.0.0.1",
        token: str | None = None,
        **environment: str,
    ):
        """``file_limit``: the process's open-file limit (soft and hard), when a test
        needs a server that can open only so many; ``start_timeout_s``: how long it may
        take to answer (keystone mode loads keystonemiddleware first); ``host``: the
        address it listens on (another than loopback needs an auth mode); ``token``: the
        X-Auth-Token ``request`` sends."""
        self.database_url = database_url
        self.log_path = log_path
        self.file_limit = file_limit
        self.start_timeout_s = start_timeout_s
        self.environment = environment
        self.port = free_port()
        self.host = host
        self.token = token
        self.url = f"http://{host}:{self.port}"
        self.endpoint = f"{self.url}/v1/{TENANT}"
        self.process: subprocess.Popen | None = None

    def start(self) -> Server:
        env = {**os.environ, "STOKER_DATABASE_URL": self.database_url, **self.environment}
        self.log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [STOKER, "serve", "--host", self.host, "--port", str(self.port)], env=env, stdout=self.log, stderr=subprocess.STDOUT,
            preexec_fn=self._limit_files if self.file_limit is not None else None,
        )
        deadline = time.monotonic() + self.start_timeout_s
        while True:
            try:
                urllib.request.urlopen(self.url + "/", timeout=1)
            except urllib.error.HTTPError:
                return self  # 300 Multiple Choices: it answers
            except OSError:
                if time.monotonic() > deadline or self.process.poll() is not None:
                    raise AssertionError("stoker serve did not start: " + self.log_path.read_text())
                time.sleep(0.1)

    def _limit_files(self) -> None:
        """In the child, before it runs stoker (only when a test asks for a limit)."""
        assert self.file_limit is not None
        resource.setrlimit(resource.RLIMIT_NOFILE, (self.file_limit, self.file_limit))

    def stop(self, kill: bool = False) -> str:
        """Stop the server (``kill``: as a crash would, SIGKILL); returns its log."""
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL if kill else signal.SIGINT)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        return self.log_path.read_text()

    def request(self, method: str, path: str, body: Any = None, timeout: float = 60) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Content-Type": "application/json", **({"X-Auth-Token": self.token} if self.token else {})}
        request = urllib.request.Request(self.endpoint + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            text = error.read()
            try:
                return error.code, json.loads(text or b"null")
            except ValueError:
                return error.code, text.decode(errors="replace")

    def wait_for(self, stack: str, done=settled, timeout: float = HANG_GUARD_S) -> dict:
        """Poll a stack (deleted ones too) until ``done(stack_status)``; returns it."""
        seen: list[dict | None] = [None]

        def check() -> dict | None:
            status, body = self.request("GET", f"/stacks?id={stack}&show_deleted=true")
            assert status == 200, body
            seen[0] = found = body["stacks"][0] if body["stacks"] else None
            return found if found is not None and done(found["stack_status"]) else None

        return wait_until(check, lambda: f"{stack}: {seen[0] and seen[0]['stack_status']}", timeout, interval_s=0.1)
