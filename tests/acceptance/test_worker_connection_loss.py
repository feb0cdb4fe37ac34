"""Database connections dropped under a real ``stoker worker`` (issue 26): while stacks
are created, updated and deleted through a real ``stoker serve --job-queue
procrastinate`` on PostgreSQL, the test has PostgreSQL terminate every connection of
the worker again and again (``pg_terminate_backend``): the store's, and procrastinate's
own (the pool that fetches and finishes jobs and sends heartbeats, and its LISTEN
connection). Every action runs exactly once, every job ends, and the worker goes on by
itself with no traceback in its log.

Only the worker's connections are terminated (by their application_name): the server
and the database are shared with other tests.
"""

from __future__ import annotations

import uuid

import pytest

from tests.support.terminator import Terminator
from tests.support.waiting import wait_until
from tests.support.workers import Cluster, started_actions

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

STACKS = 8

TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  label: {type: string, default: one}
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def:
        type: OS::Heat::TestResource
        properties: {value: {get_param: label}, wait_secs: 1}
  single:
    type: OS::Heat::TestResource
    properties: {value: {get_param: label}, wait_secs: 1}
"""


def stack_state(cluster: Cluster, stack_id: str) -> str:
    assert all(process.poll() is None for process, _ in cluster.workers), "the worker stopped: " + cluster.workers[0][1].read_text()[-3000:]
    return str(cluster.scalar("SELECT action || '_' || status FROM stacks WHERE id = :id", id=stack_id))


@pytest.mark.timeout(900)
def test_worker_connection_loss_every_action_runs_once_and_the_worker_recovers(cluster, postgres_server):
    application_name = f"stoker-worker-{uuid.uuid4().hex[:8]}"
    worker = cluster.start_worker(application_name=application_name)
    ids: dict[str, str] = {}
    with Terminator(postgres_server, application_name, every_s=1.0) as terminator:
        for number in range(STACKS):
            status, body = cluster.server.request("POST", "/stacks", {"stack_name": f"lossy-{number}", "template": TEMPLATE})
            assert status == 201, (number, body)
            ids[f"lossy-{number}"] = body["stack"]["id"]
        for name, stack_id in ids.items():
            wait_until(lambda stack_id=stack_id: stack_state(cluster, stack_id) != "CREATE_IN_PROGRESS", f"{name} created", timeout_s=240)
        for name, stack_id in ids.items():
            status, body = cluster.server.request("PATCH", f"/stacks/{name}/{stack_id}", {"parameters": {"label": "two"}})
            assert status == 202, (name, body)
        for name, stack_id in ids.items():
            wait_until(lambda stack_id=stack_id: stack_state(cluster, stack_id) != "UPDATE_IN_PROGRESS", f"{name} updated", timeout_s=240)
        states = {name: stack_state(cluster, stack_id) for name, stack_id in ids.items()}
        counts = {name: started_actions(cluster, name) for name in ids}
        for name, stack_id in list(ids.items())[: STACKS // 2]:
            status, body = cluster.server.request("DELETE", f"/stacks/{name}/{stack_id}")
            assert status == 204, (name, body)
        for name, stack_id in list(ids.items())[: STACKS // 2]:
            wait_until(lambda stack_id=stack_id: stack_state(cluster, stack_id) and cluster.scalar("SELECT deleted_at FROM stacks WHERE id = :id", id=stack_id) is not None, f"{name} deleted", timeout_s=240)
    assert terminator.ended >= 10, f"only {terminator.ended} connections were terminated in {terminator.rounds} rounds"

    assert states == {name: "UPDATE_COMPLETE" for name in ids}, states
    # Once each: one start of each action, no resume (nothing was abandoned).
    assert all(count == {"Stack CREATE started": 1, "Stack UPDATE started": 1} for count in counts.values()), counts
    for name, stack_id in list(ids.items())[: STACKS // 2]:
        assert cluster.scalar("SELECT count(*) FROM events WHERE stack_id = :id AND physical_resource_id = :id AND resource_status_reason = 'Stack DELETE started'", id=stack_id) == 1, name
    # Every job ended, none twice; no accepted action is left waiting.
    wait_until(lambda: cluster.scalar("SELECT count(*) FROM procrastinate_jobs WHERE status::text IN ('todo', 'doing')") == 0, "every job ended")
    # (A nested stack's job that waited too long is taken back by its parent's worker
    # and ends ``cancelled``: that child ran in its parent's worker instead.)
    ended_otherwise = "SELECT string_agg(id || ' ' || status || ' ' || attempts || ' ' || (args - 'job')::text, '; ') FROM procrastinate_jobs WHERE status::text NOT IN ('succeeded', 'cancelled')"
    assert cluster.scalar(ended_otherwise) is None, cluster.scalar(ended_otherwise)
    assert cluster.scalar("SELECT count(*) FROM accepted_actions") == 0
    # The worker went on by itself, and still takes jobs.
    assert worker.poll() is None
    status, body = cluster.server.request("POST", "/stacks", {"stack_name": "after", "template": TEMPLATE})
    assert status == 201, body
    assert cluster.wait("after")["stack_status"] == "CREATE_COMPLETE"
    log = cluster.workers[0][1].read_text()
    assert "Traceback" not in log, log[-6000:]
