"""The engines the ``stoker`` command's acceptance tests run against: every CLI test runs
twice, on the embedded engine (a SQLite file of its own) and against a real
``stoker serve`` on 127.0.0.1 (``STOKER_URL``), and must pass alike.

One server serves the whole session, to keep the suite fast; each test gets a project
of its own on it (auth mode none: the URL's project is the caller's), so it sees only
its own stacks, as on a fresh embedded store."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.support.server import Server
from tests.support.workers import Cluster

# What would make the command authenticate elsewhere than the test says.
CLIENT_ENVIRONMENT = ("STOKER_DEBUG", "STOKER_URL", "STOKER_TOKEN", "OS_CLOUD", "OS_AUTH_URL", "OS_PROJECT_ID", "OS_TOKEN")


@pytest.fixture(scope="session")
def cli_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``stoker serve`` (auth mode none) on a free port, over a SQLite file."""
    directory = tmp_path_factory.mktemp("cli-server")
    server = Server(f"sqlite:///{directory / 'server.sqlite'}", directory / "server.log", STOKER_AUTH_MODE="none").start()
    yield server
    server.stop()


def client_environment(extra: dict[str, str]) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in CLIENT_ENVIRONMENT}
    env.update(extra)
    return env


@pytest.fixture(params=["embedded", "remote"])
def cli_backend(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    """The environment that points the ``stoker`` command at its engine: the embedded
    one on a SQLite file in ``tmp_path``, or the session's server in a project of this
    test's own. ``mode`` is in it for tests that must know (as few as possible)."""
    if request.param == "embedded":
        return {"STOKER_DATABASE_URL": f"sqlite:///{tmp_path / 'cli.sqlite'}", "mode": "embedded"}
    server = request.getfixturevalue("cli_server")
    project = f"cli-{uuid.uuid4().hex[:12]}"
    # The local store is never read remotely: a path that cannot be made shows it if it were.
    return {"STOKER_URL": f"{server.url}/v1/{project}", "STOKER_DATABASE_URL": f"sqlite:///{tmp_path}/no-such-dir/local.sqlite", "mode": "remote"}


def cli_invoker(env: dict[str, str], cwd: Path) -> Callable[..., subprocess.CompletedProcess]:
    """``invoke(*args, check=True)``: the ``stoker`` command run in ``cwd`` with ``env`` (no
    stdin, 120 s at most), never a traceback, and with ``check`` exit status 0."""
    stoker = str(Path(sys.executable).with_name("stoker"))

    def invoke(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run([stoker, *args], capture_output=True, text=True, env=env, cwd=cwd, timeout=120, stdin=subprocess.DEVNULL)
        assert "Traceback" not in result.stderr, result.stderr
        if check:
            assert result.returncode == 0, result.stderr
        return result

    return invoke


def environment_of(backend: dict[str, str], **extra: str) -> dict[str, str]:
    """The process environment of a ``stoker`` command run against ``backend``."""
    return client_environment({**{k: v for k, v in backend.items() if k != "mode"}, **extra})


@pytest.fixture
def cluster(postgres_url: str, tmp_path: Path) -> Iterator[Cluster]:
    made = Cluster(postgres_url.replace("postgresql+psycopg://", "postgresql://", 1), tmp_path)
    made.server.start()
    try:
        yield made
    finally:
        made.stop()
        for _, log in made.workers:
            # procrastinate logs an aborted job (handed back at SIGTERM) with its traceback.
            text = log.read_text()
            assert text.count("Traceback") == text.count("ended with status: Aborted"), text
