"""One stack tree (a root stack and every nested stack under it) through a real
``stoker serve`` (issue 26): the resource limit counts the whole tree, as Heat's
max_resources_per_stack does; one project's big tree leaves the engine to other
projects too; a restarted server finishes a tree already over the limit instead of
resuming it.

Trees that must stay busy are made of ``Test::Gated`` resources (tests/support/plugins):
each create holds a handler thread until the test opens the gate, as a call to a cloud
that does not answer would, so "still in progress" is a fact the test controls, not a
matter of timing.
"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.support import server as server_process
from tests.support.stacks import GROUP_OF_GROUPS
from tests.support.waiting import wait_until

PLUGINS = str(Path(__file__).resolve().parents[1] / "support" / "plugins")
# Failure guards only: how long a test waits for what must happen before it fails.
WAIT_S = 60


def gated_tree(groups: int, members: int) -> str:
    return f"""heat_template_version: 2021-04-16
resources:
  outer:
    type: OS::Heat::ResourceGroup
    properties:
      count: {groups}
      resource_def:
        type: OS::Heat::ResourceGroup
        properties:
          count: {members}
          resource_def: {{type: Test::Gated}}
"""


ONE = "heat_template_version: 2021-04-16\nresources:\n  one: {type: OS::Heat::None}\n"


class Project:
    """Plain HTTP requests to the server as one project (auth mode none: the URL's
    project is the caller's)."""

    def __init__(self, server: server_process.Server, project: str):
        self.client = httpx.Client(base_url=f"{server.url}/v1/{project}", timeout=WAIT_S, follow_redirects=True)

    def create(self, name: str, template: str) -> httpx.Response:
        return self.client.post("/stacks", json={"stack_name": name, "template": template})

    def stack(self, name: str) -> dict:
        response = self.client.get(f"/stacks/{name}")
        assert response.status_code == 200, response.text
        return response.json()["stack"]

    def wait(self, name: str) -> dict:
        """The stack once its action has ended."""

        def ended() -> dict | None:
            stack = self.stack(name)
            return None if stack["stack_status"].endswith("IN_PROGRESS") else stack

        return wait_until(ended, f"stack {name}")

    def resources(self, name: str, depth: int = 5) -> list[dict]:
        response = self.client.get(f"/stacks/{name}/resources", params={"nested_depth": depth})
        assert response.status_code == 200, response.text
        return response.json()["resources"]

    def nested_stacks(self) -> list[dict]:
        response = self.client.get("/stacks", params={"show_nested": "true"})
        assert response.status_code == 200, response.text
        return response.json()["stacks"]


@pytest.fixture
def gate(tmp_path) -> Path:
    return tmp_path / "gate-open"


def start(tmp_path: Path, gate: Path, **environment: str) -> server_process.Server:
    return server_process.Server(
        f"sqlite:///{tmp_path / 'trees.sqlite'}",
        tmp_path / f"server-{len(list(tmp_path.glob('server-*.log')))}.log",
        STOKER_AUTH_MODE="none",
        STOKER_PLUGIN_DIRS=PLUGINS,
        STOKER_TEST_GATE=str(gate),
        **environment,
    ).start()


def test_tree_limit_refuses_the_group_of_groups_through_the_api(tmp_path, gate):
    """The 265-byte template: 400 at create and at validate, naming the count that
    multiplies the tree and the setting, before anything is stored."""
    server = start(tmp_path, gate)
    try:
        project = Project(server, "bomb")
        response = project.create("groups", GROUP_OF_GROUPS)
        assert response.status_code == 400, response.text
        error = response.json()["error"]
        assert error["type"] == "StackValidationFailed"
        assert "resources.outer.properties.count: The stack would have 1001001 resources with its nested stacks" in error["message"]
        assert "at most 1000 together" in error["message"] and "STOKER_MAX_RESOURCES_PER_STACK" in error["message"]
        response = project.client.post("/validate", json={"template": GROUP_OF_GROUPS})
        assert response.status_code == 400, response.text
        assert "resources.outer.properties.count" in response.json()["error"]["message"]
        assert project.nested_stacks() == []
    finally:
        server.stop()


def test_tree_share_leaves_the_engine_to_other_projects(tmp_path, gate):
    """While one project's tree (legal: 1 + 5 + 25 resources) has every create it can
    start stuck in a handler, another project's stack is created, and its requests are
    answered: the tree holds at most its share of the handler threads (2 of 4 here)."""
    server = start(tmp_path, gate, STOKER_HANDLER_THREADS="4")
    try:
        big, other = Project(server, "big"), Project(server, "other")
        assert big.create("tree", gated_tree(5, 5)).status_code == 201
        # More gated creates started (each in a thread or waiting for one) than there are
        # threads: without a share, every thread is now held by the big tree.
        wait_until(
            lambda: sum(1 for r in big.resources("tree") if r["resource_type"] == "Test::Gated" and r["resource_status"] == "CREATE_IN_PROGRESS") > 4,
            "the big tree's members to be in progress",
        )
        assert other.create("small", ONE).status_code == 201
        assert other.wait("small")["stack_status"] == "CREATE_COMPLETE"
        assert [stack["stack_name"] for stack in other.client.get("/stacks").json()["stacks"]] == ["small"]
        # The big tree cannot have finished: its gate is still closed.
        assert big.stack("tree")["stack_status"] == "CREATE_IN_PROGRESS"
        gate.write_text("open")
        assert big.wait("tree")["stack_status"] == "CREATE_COMPLETE"
    finally:
        gate.write_text("open")
        server.stop()


def test_recovery_fails_a_tree_over_the_limit_instead_of_resuming_it(tmp_path, gate):
    """A tree made under no limit (1 + 4 + 16 resources) is left in progress by a crash;
    the server restarts with a limit the tree is over. It finishes every stack of the
    tree FAILED with the reason and the fix, and resumes nothing (the gate is open now,
    so a resumed create would complete)."""
    server = start(tmp_path, gate, STOKER_MAX_RESOURCES_PER_STACK="-1")
    project = Project(server, "crashed")
    try:
        assert project.create("tree", gated_tree(4, 4)).status_code == 201
        wait_until(lambda: sum(1 for r in project.resources("tree") if r["resource_type"] == "Test::Gated") == 16, "every member's row")
    finally:
        server.stop(kill=True)
    gate.write_text("open")
    server = start(tmp_path, gate, STOKER_MAX_RESOURCES_PER_STACK="10")
    try:
        project = Project(server, "crashed")
        stack = project.wait("tree")
        assert stack["stack_status"] == "CREATE_FAILED"
        assert stack["stack_status_reason"] == (
            "Engine restarted during CREATE: not resumed, the stack tree has 21 resources; a stack and all its nested "
            "stacks may have at most 10 together (max_resources_per_stack (STOKER_MAX_RESOURCES_PER_STACK)); delete the stack"
        )
        nested = project.nested_stacks()
        assert len(nested) == 1 + 1 + 4
        assert {stack["stack_status"] for stack in nested} == {"CREATE_FAILED"}
        members = [r for r in project.resources("tree") if r["resource_type"] == "Test::Gated"]
        assert len(members) == 16
        assert not [r for r in members if r["resource_status"] in ("COMPLETE", "IN_PROGRESS")]
    finally:
        server.stop()
