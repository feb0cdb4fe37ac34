"""Cross-origin calls to the API (CORS), asked over plain HTTP as a browser asks them: none
by default, the operator's origins only when named (STOKER_CORS_ALLOWED_ORIGINS), and a
server that will not start on an origin that is none."""

from __future__ import annotations

import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.server import Server, free_port

ALLOWED = "https://ops.example.com"
STOKER = str(Path(sys.executable).with_name("stoker"))


def ask(server: Server, method: str, path: str, **headers: str) -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(server.url + path, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, {key.lower(): value for key, value in response.headers.items()}
    except urllib.error.HTTPError as error:
        return error.code, {key.lower(): value for key, value in error.headers.items()}


def preflight(server: Server, origin: str) -> tuple[int, dict[str, str]]:
    return ask(
        server,
        "OPTIONS",
        "/v1/demo/stacks",
        Origin=origin,
        **{
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "X-Auth-Token",
        },
    )


@pytest.fixture(scope="module")
def cors_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("cors")
    running = Server(
        f"sqlite:///{directory / 'stoker.sqlite'}",
        directory / "serve.log",
        STOKER_CORS_ALLOWED_ORIGINS=f"{ALLOWED}, http://127.0.0.1:9000",
    ).start()
    yield running
    running.stop()


def test_cors_is_off_by_default(server):
    status, headers = preflight(server, ALLOWED)
    assert "access-control-allow-origin" not in headers, (status, headers)
    status, headers = ask(server, "GET", "/v1/demo/stacks", Origin=ALLOWED)
    assert status == 200 and "access-control-allow-origin" not in headers


def test_cors_lets_the_named_origins_only(cors_server):
    status, headers = preflight(cors_server, ALLOWED)
    assert status == 200
    assert headers["access-control-allow-origin"] == ALLOWED
    assert "x-auth-token" in headers["access-control-allow-headers"].lower()
    assert "PATCH" in headers["access-control-allow-methods"]
    assert "access-control-allow-credentials" not in headers
    status, headers = ask(cors_server, "GET", "/v1/demo/stacks", Origin=ALLOWED)
    assert status == 200 and headers["access-control-allow-origin"] == ALLOWED
    # Another origin: refused at the preflight, and its reads carry no permission.
    status, headers = preflight(cors_server, "https://elsewhere.example.com")
    assert status == 400 and "access-control-allow-origin" not in headers
    status, headers = ask(
        cors_server, "GET", "/v1/demo/stacks", Origin="https://elsewhere.example.com"
    )
    assert "access-control-allow-origin" not in headers


def test_cors_origin_that_is_none_stops_the_server(tmp_path):
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "STOKER_DATABASE_URL": f"sqlite:///{tmp_path / 's.sqlite'}",
        "STOKER_CORS_ALLOWED_ORIGINS": "https://ops.example.com/dashboard",
    }
    done = subprocess.run(
        [STOKER, "serve", "--port", str(free_port())],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert (
        "STOKER_CORS_ALLOWED_ORIGINS: 'https://ops.example.com/dashboard' is not an origin"
        in done.stderr
    ), done.stderr
    assert "scheme://host[:port]" in done.stderr and "Traceback" not in done.stderr
