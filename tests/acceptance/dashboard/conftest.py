"""What the dashboard's browser tests share: one Chromium and one ``stoker serve`` (auth
mode none, SQLite) per module, a project of its own for each test, the API called as a
client would (to make the stacks the pages show), and signing in through the page."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from tests.support.browser import Browser, chromium_path
from tests.support.server import Server
from tests.support.waiting import HANG_GUARD_S, settled, wait_until

# How long a page may take to show what a test waits for (ms): a hang guard, far above
# what a busy machine needs.
PAGE_WAIT_MS = 60_000


@dataclass
class Project:
    """The API of one project on the server, with a token when the server wants one."""

    server: Server
    name: str
    token: str | None = None

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        headers = {
            "Content-Type": "application/json",
            **({"X-Auth-Token": self.token} if self.token else {}),
        }
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.server.url}/v1/{self.name}{path}", data=data, method=method, headers=headers
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def create(
        self,
        name: str,
        template: str,
        files: dict[str, str] | None = None,
        environment: dict | None = None,
        **extra: Any,
    ) -> str:
        body = {
            "stack_name": name,
            "template": template,
            "files": files or {},
            "environment": environment or {},
            **extra,
        }
        status, answer = self.request("POST", "/stacks", body)
        assert status == 201, answer
        return answer["stack"]["id"]

    def stack(self, name: str) -> dict:
        status, body = self.request("GET", f"/stacks?name={name}")
        assert status == 200 and body["stacks"], body
        return body["stacks"][0]

    def wait(self, name: str, done=settled) -> dict:
        def check() -> dict | None:
            found = self.stack(name)
            return found if done(found["stack_status"]) else None

        return wait_until(check, f"stack {name} to settle", HANG_GUARD_S, interval_s=0.2)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    opened = Browser(chromium_path())
    yield opened
    opened.close()


@pytest.fixture(autouse=True)
def pages_without_errors(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every page a test opened must have run without a script error."""
    yield
    if "browser" in request.fixturenames:
        request.getfixturevalue("browser").check_pages()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("dashboard")
    running = Server(
        f"sqlite:///{directory / 'stoker.sqlite'}", directory / "serve.log", STOKER_AUTH_MODE="none"
    ).start()
    yield running
    log = running.stop()
    assert "Traceback" not in log, log


@pytest.fixture
def project(server: Server) -> Project:
    return Project(server, f"dash-{uuid.uuid4().hex[:10]}")


def sign_in(
    page: Any, server: Server, project: str, token: str | None = None, then: str = "/dashboard/"
) -> None:
    """Sign in through the sign-in page the dashboard sends a newcomer to."""
    page.goto(server.url + then)
    page.wait_for_url("**/dashboard/login?next=**")
    if token is not None:
        page.fill("#token", token)
    page.fill("#project", project)
    page.click("#login button[type=submit]")
    page.wait_for_url(server.url + then + "*")
