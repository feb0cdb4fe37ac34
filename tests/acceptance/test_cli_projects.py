"""The embedded ``stoker`` command acts in a project, as every front door of the store
does: its stacks are the ``default`` project's unless ``--project`` (STOKER_PROJECT)
says otherwise, names are found in that project only, and a server on the same store
shows them at ``/v1/default``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.acceptance.conftest import client_environment
from tests.support.server import Server

STOKER = str(Path(sys.executable).with_name("stoker"))

TEMPLATE = """\
heat_template_version: 2021-04-16
resources:
  r: {type: OS::Heat::None}
outputs:
  project: {value: {get_param: "OS::project_id"}}
"""


def test_cli_embedded_stacks_belong_to_a_project_and_names_never_reach_another(tmp_path):
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    database = f"sqlite:///{tmp_path / 'shared.sqlite'}"
    env = client_environment({"STOKER_DATABASE_URL": database})

    def stoker(*args: str, check: bool = True, **extra: str) -> subprocess.CompletedProcess:
        result = subprocess.run([STOKER, *args], capture_output=True, text=True, env={**env, **extra}, cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL)
        assert "Traceback" not in result.stderr, result.stderr
        if check:
            assert result.returncode == 0, result.stderr
        return result

    def outputs(*project: str) -> str:
        return json.loads(stoker(*project, "stack", "output", "show", "web", "project", "-f", "json").stdout)["output_value"]

    stoker("stack", "create", "web", "-t", "t.yaml")
    stoker("--project", "shop", "stack", "create", "web", "-t", "t.yaml")
    stoker("stack", "create", "blog", "-t", "t.yaml", STOKER_PROJECT="shop")

    # Each project sees its own: OS::project_id is never empty, and a name finds its project's stack.
    assert outputs() == "default" and outputs("--project", "shop") == "shop"
    assert [row["Stack Name"] for row in json.loads(stoker("stack", "list", "-f", "json").stdout)] == ["web"]
    assert sorted(row["Stack Name"] for row in json.loads(stoker("--project", "shop", "stack", "list", "-f", "json").stdout)) == ["blog", "web"]
    every = json.loads(stoker("stack", "list", "--all-projects", "-f", "json").stdout)
    assert sorted((row["Project"], row["Stack Name"]) for row in every) == [("default", "web"), ("shop", "blog"), ("shop", "web")]

    # Nothing acts on another project's stack by name: delete in 'default' leaves shop's web.
    missing = stoker("stack", "delete", "blog", "--yes", check=False)
    assert missing.returncode == 1 and "The Stack (blog) could not be found." in missing.stderr
    stoker("stack", "delete", "web", "--yes", "--wait")
    assert outputs("--project", "shop") == "shop"
    ids = {row["Stack Name"]: row["ID"] for row in every if row["Project"] == "shop"}
    by_id = stoker("stack", "show", ids["blog"], check=False)
    assert by_id.returncode == 1, "another project's stack is not found by its id either"

    # A server on the same store shows each project's stacks under its own path.
    server = Server(database, tmp_path / "server.log").start()
    try:
        status, body = server.request("GET", "/stacks")  # the server helper's project: demo
        assert status == 200 and body["stacks"] == []
        for project, expected in (("shop", ["blog", "web"]), ("default", [])):
            server.endpoint = f"{server.url}/v1/{project}"
            status, body = server.request("GET", "/stacks")
            assert status == 200 and sorted(stack["stack_name"] for stack in body["stacks"]) == expected
    finally:
        server.stop()

    refused = stoker("--url", server.url, "--project", "shop", "stack", "list", check=False)
    assert refused.returncode == 2 and "--project is the embedded engine's" in refused.stderr
