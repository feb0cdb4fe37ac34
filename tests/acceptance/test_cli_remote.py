"""The ``stoker`` command against a server, where only a server has something to say:
authentication with a static token (``--auth-mode token``, ``STOKER_TOKEN``), and a
server that cannot be reached or named. Everything else runs both ways in the other
``test_cli*`` modules (``cli_backend``, conftest.py)."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.acceptance.conftest import client_environment
from tests.support.server import Server, free_port

STOKER = str(Path(sys.executable).with_name("stoker"))
ROOT = Path(__file__).resolve().parents[2]
WEB_TOKEN = secrets.token_hex(24)  # hex: a token beginning with "-" reads as an option
OPS_TOKEN = secrets.token_hex(24)


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("token-server")
    tokens = directory / "tokens.yaml"
    tokens.write_text(
        "tokens:\n"
        f'  "{WEB_TOKEN}": {{project_id: web, user_id: ci, roles: [member]}}\n'
        f'  "{OPS_TOKEN}": {{project_id: ops, user_id: op, roles: [member]}}\n'
    )
    server = Server(
        f"sqlite:///{directory / 'server.sqlite'}", directory / "server.log", STOKER_AUTH_MODE="token", STOKER_AUTH_TOKENS_FILE=str(tokens)
    ).start()
    yield server
    server.stop()


def stoker(tmp_path: Path, *args: str, **environment: str) -> subprocess.CompletedProcess:
    env = client_environment({"STOKER_DATABASE_URL": f"sqlite:///{tmp_path}/no-such-dir/local.sqlite", **environment})
    result = subprocess.run([STOKER, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
    assert "Traceback" not in result.stderr, result.stderr
    return result


def test_cli_remote_static_token_acts_in_its_project(token_server, tmp_path):
    web = {"STOKER_URL": f"{token_server.url}/v1/web", "STOKER_TOKEN": WEB_TOKEN}
    created = stoker(tmp_path, "stack", "create", "site", "-t", str(ROOT / "examples" / "hello.yaml"), "--wait", "-f", "json", **web)
    assert created.returncode == 0, created.stderr
    assert json.loads(created.stdout)["stack_status"] == "CREATE_COMPLETE"
    last = json.loads(created.stderr.splitlines()[-1])  # -f json: the events as JSON lines
    assert (last["resource_name"], last["resource_status"]) == ("site", "CREATE_COMPLETE"), created.stderr

    # The project comes from the URL, or else OS_PROJECT_ID.
    by_variable = stoker(tmp_path, "--url", token_server.url, "stack", "list", "-f", "json", STOKER_TOKEN=WEB_TOKEN, OS_PROJECT_ID="web")
    assert [s["Stack Name"] for s in json.loads(by_variable.stdout)] == ["site"], by_variable.stderr

    # Another project's token sees nothing of it, and reaches nothing in it.
    ops = {"STOKER_URL": f"{token_server.url}/v1/ops", "STOKER_TOKEN": OPS_TOKEN}
    assert json.loads(stoker(tmp_path, "stack", "list", "-f", "json", **ops).stdout) == []
    hidden = stoker(tmp_path, "stack", "show", "site", **ops)
    assert hidden.returncode == 1
    assert hidden.stderr.strip() == "ERROR: The Stack (site) could not be found. (see 'stoker stack list')"
    crossed = stoker(tmp_path, "stack", "list", STOKER_URL=f"{token_server.url}/v1/web", STOKER_TOKEN=OPS_TOKEN)
    assert crossed.returncode == 1 and crossed.stderr.startswith("ERROR: "), crossed.stderr

    for token in (None, "not-a-token-of-this-server"):
        refused = stoker(tmp_path, "stack", "list", STOKER_URL=f"{token_server.url}/v1/web", **({"STOKER_TOKEN": token} if token else {}))
        assert refused.returncode == 1
        assert refused.stderr.strip() == "ERROR: The request you have made requires authentication."

    deleted = stoker(tmp_path, "--os-token", WEB_TOKEN, "--url", f"{token_server.url}/v1/web", "stack", "delete", "site", "-y", "--wait")
    assert deleted.returncode == 0 and "Stack site DELETE_COMPLETE" in deleted.stderr


def test_cli_remote_server_not_reached_is_one_clear_line(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"
    result = stoker(tmp_path, "--url", url, "stack", "list")
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"ERROR: Cannot reach the stoker server at {url}: ")
    assert "is 'stoker serve' running there?" in line
    not_url = stoker(tmp_path, "--url", "127.0.0.1:8004", "stack", "list")
    assert not_url.returncode == 1 and not_url.stderr.startswith("ERROR: --url 127.0.0.1:8004: not an http:// or https:// URL")
    # What only the embedded engine has is refused, not silently left unused.
    local = stoker(tmp_path, "--url", url, "--plugin-dir", str(tmp_path), "stack", "list")
    assert local.returncode == 2 and "--plugin-dir is the embedded engine's" in local.stderr


def test_cli_remote_catalog_needs_keystone_and_an_unknown_cloud_is_named(tmp_path):
    result = stoker(tmp_path, "--url", "catalog", "stack", "list")
    assert result.returncode == 1
    assert result.stderr.strip() == "ERROR: --url catalog takes the server from a Keystone catalog (give --os-cloud NAME or the OS_* variables)"
    (tmp_path / "clouds.yaml").write_text("clouds:\n  other:\n    auth: {auth_url: 'http://127.0.0.1:1/v3'}\n")
    unknown = stoker(tmp_path, "--url", "http://127.0.0.1:1", "--os-cloud", "nowhere", "stack", "list", OS_CLIENT_CONFIG_FILE=str(tmp_path / "clouds.yaml"))
    assert unknown.returncode == 1
    [line] = unknown.stderr.strip().splitlines()
    assert line.startswith("ERROR: Cannot authenticate with cloud nowhere: "), line
