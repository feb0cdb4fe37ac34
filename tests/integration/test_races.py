"""Actions racing on one stack, through a real ``stoker serve`` over real SQLite and
PostgreSQL: a stack is never resurrected, a job never outlives its stack, and names are
unique among live stacks. After each race every stack and resource row is checked in the
database itself."""

from __future__ import annotations

import concurrent.futures
import json
import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from stoker.store import tables
from tests.support.server import STOKER, Server


def many_resources(count: int, length: int) -> dict:
    return {
        "heat_template_version": "2021-04-16",
        "resources": {f"r{index}": {"type": "OS::Heat::RandomString", "properties": {"length": length}} for index in range(count)},
    }


@pytest.fixture
def server(database_url: str, tmp_path: Path) -> Iterator[Server]:
    running = Server(database_url, tmp_path / "server.log").start()
    yield running
    log = running.stop()
    assert "Traceback" not in log, log


def rows(database_url: str, stack_ids: list[str]) -> tuple[dict[str, object], dict[str, list]]:
    """The stack rows and the resource rows of these stacks, as stored."""
    engine = sa.create_engine(database_url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        with engine.connect() as connection:
            stacks = {row.id: row for row in connection.execute(sa.select(tables.stacks).where(tables.stacks.c.id.in_(stack_ids)))}
            resources: dict[str, list] = {stack_id: [] for stack_id in stack_ids}
            for row in connection.execute(sa.select(tables.resources).where(tables.resources.c.stack_id.in_(stack_ids))):
                resources[row.stack_id].append(row)
    finally:
        engine.dispose()
    return stacks, resources


def create(server: Server, name: str, template: dict, environment: dict | None = None) -> str:
    status, body = server.request("POST", "/stacks", {"stack_name": name, "template": template, "environment": environment or {}})
    assert status == 201, body
    return body["stack"]["id"]


def assert_deleted_for_good(server: Server, database_url: str, stack_ids: list[str]) -> None:
    """Each stack is DELETE_COMPLETE with no resource rows, and stays so."""
    for stack_id in stack_ids:
        server.wait_for(stack_id, lambda status: status == "DELETE_COMPLETE")
    time.sleep(1.5)  # a job that outlived its stack would write by now
    stacks, resources = rows(database_url, stack_ids)
    for stack_id in stack_ids:
        stack = stacks[stack_id]
        assert (stack.action, stack.status, stack.deleted_at is not None) == ("DELETE", "COMPLETE", True), (stack.action, stack.status, stack.status_reason)
        assert resources[stack_id] == [], f"{stack_id} kept {len(resources[stack_id])} resource rows"


def test_races_update_racing_delete_never_resurrects_a_stack(server: Server, database_url: str) -> None:
    small, big = many_resources(5, 8), many_resources(900, 9)
    stack_ids = [create(server, f"race{index}", small) for index in range(10)]
    for stack_id in stack_ids:
        server.wait_for(stack_id, lambda status: status == "CREATE_COMPLETE")

    def update_then_delete(index: int) -> tuple[int, int]:
        path = f"/stacks/race{index}/{stack_ids[index]}"
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            update = pool.submit(server.request, "PUT", path, {"template": big})
            # The window (after the update's checks, before its job) moves with the
            # machine's speed: each stack gets another delay.
            time.sleep(0.01 * index)
            delete = pool.submit(server.request, "DELETE", path)
            return update.result()[0], delete.result()[0]

    with concurrent.futures.ThreadPoolExecutor(len(stack_ids)) as pool:
        answers = list(pool.map(update_then_delete, range(len(stack_ids))))
    for update_status, delete_status in answers:
        assert update_status in (202, 409, 404), answers
        assert delete_status == 204, answers
    assert_deleted_for_good(server, database_url, stack_ids)
    # Deleted means gone: a further delete is a 404, and the name is free again.
    assert server.request("DELETE", f"/stacks/race0/{stack_ids[0]}")[0] == 404
    again = create(server, "race0", small)
    assert server.wait_for(again)["stack_status"] == "CREATE_COMPLETE"


def test_races_delete_of_a_stack_paused_at_a_hook_is_prompt_and_final(server: Server, database_url: str) -> None:
    template = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "free": {"type": "OS::Heat::RandomString"},
            "held": {"type": "OS::Heat::RandomString", "depends_on": ["free"]},
            "after": {"type": "OS::Heat::RandomString", "depends_on": ["held"]},
        },
    }
    environment = {"resource_registry": {"resources": {"held": {"hooks": "pre-create"}}}}
    stack_ids = [create(server, f"paused{index}", template, environment) for index in range(3)]
    for stack_id in stack_ids:
        deadline = time.monotonic() + 30
        while True:
            # Heat: the pause is an event; the resource stays INIT_COMPLETE meanwhile.
            status, body = server.request("GET", f"/stacks/paused{stack_ids.index(stack_id)}/{stack_id}/resources/held/events")
            if status == 200 and any("paused until Hook pre-create" in event["resource_status_reason"] for event in body["events"]):
                break
            assert time.monotonic() < deadline, body
            time.sleep(0.1)
    started = time.monotonic()
    for index, stack_id in enumerate(stack_ids):
        assert server.request("DELETE", f"/stacks/paused{index}/{stack_id}")[0] == 204
    for stack_id in stack_ids:
        server.wait_for(stack_id, lambda status: status == "DELETE_COMPLETE", timeout=20)
    assert time.monotonic() - started < 10, "deleting stacks paused at a hook waited for the hook"
    # Stacks made afterwards are untouched by anything the deleted stacks' jobs did.
    later = [create(server, f"later{index}", many_resources(3, 7)) for index in range(3)]
    for stack_id in later:
        assert server.wait_for(stack_id)["stack_status"] == "CREATE_COMPLETE"
    assert_deleted_for_good(server, database_url, stack_ids)
    stacks, resources = rows(database_url, later)
    for stack_id in later:
        assert (stacks[stack_id].action, stacks[stack_id].status) == ("CREATE", "COMPLETE")
        assert sorted(row.name for row in resources[stack_id]) == ["r0", "r1", "r2"]
        # A RandomString's physical id is its stack's own (stack name in it), never another's.
        assert all(row.physical_resource_id and row.physical_resource_id.startswith("later") for row in resources[stack_id]), [row.physical_resource_id for row in resources[stack_id]]


def test_races_concurrent_creates_of_one_name_make_one_stack(server: Server, database_url: str) -> None:
    template = many_resources(1, 8)

    def attempt(_: int) -> int:
        return server.request("POST", "/stacks", {"stack_name": "twin", "template": template})[0]

    with concurrent.futures.ThreadPoolExecutor(20) as pool:
        statuses = sorted(pool.map(attempt, range(20)))
    assert statuses == [201] + [409] * 19, statuses
    status, body = server.request("GET", "/stacks?name=twin")
    assert status == 200 and len(body["stacks"]) == 1, body


def stoker_processes(database_url: str, tmp_path: Path, *commands: list[str]) -> list[subprocess.CompletedProcess]:
    """Run ``stoker`` commands at the same moment, each in its own process."""
    env = {**os.environ, "STOKER_DATABASE_URL": database_url, "COLUMNS": "200"}
    processes = [
        subprocess.Popen([STOKER, *command], env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for command in commands
    ]
    results = []
    for process, command in zip(processes, commands, strict=True):
        out, err = process.communicate(timeout=120)
        results.append(subprocess.CompletedProcess(command, process.returncode, out, err))
    return results


def test_races_parallel_cli_creates_of_one_name_make_one_stack(database_url: str, tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text("heat_template_version: 2021-04-16\nresources:\n  r: {type: OS::Heat::RandomString}\n")
    # The store exists first, so the five race to create, not to migrate.
    stoker_processes(database_url, tmp_path, ["stack", "list"])
    results = stoker_processes(database_url, tmp_path, *[["stack", "create", "same", "-t", "t.yaml"]] * 5)
    assert sorted(result.returncode for result in results) == [0, 1, 1, 1, 1], [(r.returncode, r.stderr) for r in results]
    for result in results:
        if result.returncode:
            assert "already exists" in result.stderr and "Traceback" not in result.stderr, result.stderr
    listed = stoker_processes(database_url, tmp_path, ["stack", "list", "-f", "json"])[0]
    assert [stack["Stack Name"] for stack in json.loads(listed.stdout)] == ["same"]


def test_races_cli_delete_stops_a_create_in_another_process(database_url: str, tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(
        # Only the create is slow: the stopped create keeps its properties, and its
        # resource's delete waits its own action_wait_secs (none), as in Heat.
        "heat_template_version: 2021-04-16\nresources:\n  slow: {type: OS::Heat::TestResource, properties: {action_wait_secs: {create: 60}}}\n"
    )
    env = {**os.environ, "STOKER_DATABASE_URL": database_url}
    creating = subprocess.Popen([STOKER, "stack", "create", "long", "-t", "t.yaml"], env=env, cwd=tmp_path, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while True:
        shown = stoker_processes(database_url, tmp_path, ["stack", "show", "long", "-f", "json"])[0]
        if shown.returncode == 0 and json.loads(shown.stdout)["stack_status"] == "CREATE_IN_PROGRESS":
            break
        assert time.monotonic() < deadline and creating.poll() is None, shown.stderr
        time.sleep(0.2)
    started = time.monotonic()
    deleted = stoker_processes(database_url, tmp_path, ["stack", "delete", "long", "--yes", "--wait"])[0]
    assert deleted.returncode == 0, deleted.stderr
    assert time.monotonic() - started < 20, "the delete waited for the create instead of stopping it"
    _, err = creating.communicate(timeout=60)
    assert creating.returncode != 0 and "Traceback" not in err, err
    listed = stoker_processes(database_url, tmp_path, ["stack", "list", "-f", "json"])[0]
    assert json.loads(listed.stdout) == []
