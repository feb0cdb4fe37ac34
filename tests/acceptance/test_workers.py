"""Several workers on PostgreSQL (issue 16): ``stoker serve --job-queue procrastinate``
only answers and enqueues; three ``stoker worker`` processes run the stack actions.
Real processes, a real PostgreSQL schema of the test's own, real HTTP."""

from __future__ import annotations

import concurrent.futures
import signal
import time
from collections import Counter

import pytest

from tests.support.workers import (
    Cluster,
    stack_tree,
    started_actions,
    wait_until_held_by,
    wait_until_polled,
)

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

GROUP = """
heat_template_version: 2021-04-16
parameters:
  count: {type: number, default: 2}
  label: {type: string, default: one}
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: count}
      resource_def:
        type: OS::Heat::TestResource
        properties: {value: {get_param: label}}
  single:
    type: OS::Heat::TestResource
    properties: {value: {get_param: label}}
"""

SLOW = """
heat_template_version: 2021-04-16
resources:
  slow:
    type: OS::Heat::TestResource
    properties: {value: slow, action_wait_secs: {create: 6}}
  after:
    type: OS::Heat::TestResource
    depends_on: slow
"""


def test_fifty_stacks_with_nested_groups_on_three_workers(cluster):
    for _ in range(3):
        cluster.start_worker()
    names = [f"w{number:02d}" for number in range(50)]

    ids: dict[str, str] = {}

    def create(name: str) -> dict:
        status, body = cluster.server.request("POST", "/stacks", {"stack_name": name, "template": GROUP, "parameters": {"count": 2}})
        assert status == 201, body
        ids[name] = body["stack"]["id"]
        return cluster.wait(name)

    def update(name: str) -> dict:
        status, body = cluster.server.request("PATCH", f"/stacks/{name}/{ids[name]}", {"parameters": {"count": 3, "label": "two"}})
        assert status == 202, body
        return cluster.wait(name)

    def delete(name: str) -> dict:
        status, body = cluster.server.request("DELETE", f"/stacks/{name}/{ids[name]}")
        assert status == 204, body
        return cluster.wait(name)

    with concurrent.futures.ThreadPoolExecutor(max_workers=16) as pool:
        created = list(pool.map(create, names))
        assert [s["stack_status"] for s in created] == ["CREATE_COMPLETE"] * 50, [s["stack_status_reason"] for s in created]
        updated = list(pool.map(update, names))
        assert [s["stack_status"] for s in updated] == ["UPDATE_COMPLETE"] * 50, [s["stack_status_reason"] for s in updated]
        # One run per action: each action of each stack started exactly once.
        for name in names:
            assert started_actions(cluster, name) == Counter({"Stack CREATE started": 1, "Stack UPDATE started": 1}), name
        resources = cluster.server.request("GET", f"/stacks/{names[0]}/resources?nested_depth=1")[1]["resources"]
        assert sum(1 for r in resources if r["resource_type"] == "OS::Heat::TestResource") == 4
        deleted = list(pool.map(delete, names))
        assert {s["stack_status"] for s in deleted} == {"DELETE_COMPLETE"}
    # Each worker is an engine of GET /services (with the server's own), up.
    status, body = cluster.server.request("GET", "/services")
    assert status == 200, body
    assert [service["status"] for service in body["services"]] == ["up"] * 4, body
    # The work was spread: more than one worker ran stack jobs.
    ran = [log.read_text().count("Starting job stoker.stack_job") for _, log in cluster.workers]
    assert sum(1 for count in ran if count) >= 2, ran
    # Every job succeeded, but for a nested stack's job no worker took in time: the
    # parent's engine cancelled it before any attempt and ran the child itself
    # (ChildJobs.orphan), which the started-actions count above shows ran once.
    unfinished = "status::text NOT IN ('succeeded') AND NOT (status::text = 'cancelled' AND attempts = 0 AND args ? 'tree')"
    assert cluster.scalar(f"SELECT count(*) FROM procrastinate_jobs WHERE {unfinished}") == 0, cluster.scalar(
        f"SELECT string_agg(id || ' ' || status || ' ' || attempts || ' ' || (args - 'job')::text, '; ') FROM procrastinate_jobs WHERE {unfinished}"
    )


def test_a_worker_killed_mid_action_is_replaced_by_another(cluster):
    first = cluster.start_worker()
    status, body = cluster.server.request("POST", "/stacks", {"stack_name": "lazy", "template": SLOW})
    assert status == 201, body
    # The first worker holds the stack's lock and polls slow; a second one waits for work.
    wait_until_held_by(cluster, first)
    wait_until_polled(cluster, "slow")
    second = cluster.start_worker()
    first.send_signal(signal.SIGKILL)
    first.wait()

    stack = cluster.wait("lazy")
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    started = started_actions(cluster, "lazy")
    assert started["Stack CREATE started"] == 1
    assert started["Engine restarted during CREATE: resuming"] == 1
    assert second.poll() is None
    assert "resuming actions abandoned by a stopped worker: lazy (CREATE_IN_PROGRESS)" in cluster.workers[1][1].read_text()


def test_sigterm_hands_back_an_action_that_another_worker_finishes(cluster):
    first = cluster.start_worker("--shutdown-timeout", "1")
    status, body = cluster.server.request("POST", "/stacks", {"stack_name": "lazy", "template": SLOW})
    assert status == 201, body
    wait_until_held_by(cluster, first)
    cluster.start_worker()
    # A short graceful timeout: the action outlives it and is handed back, its lock
    # released (not left to expire), and the other worker resumes it.
    first.send_signal(signal.SIGTERM)
    assert first.wait(timeout=90) == 0, cluster.workers[0][1].read_text()
    stack = cluster.wait("lazy")
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert started_actions(cluster, "lazy")["Engine restarted during CREATE: resuming"] == 1
    assert "resuming actions abandoned by a stopped worker" in cluster.workers[1][1].read_text()


NESTED = """
heat_template_version: 2021-04-16
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 4
      resource_def:
        type: OS::Heat::Stack
        properties:
          template: |
            heat_template_version: 2021-04-16
            resources:
              leaf:
                type: OS::Heat::TestResource
                properties: {value: leaf, action_wait_secs: {create: 3, delete: 1}}
"""


def _events(cluster: Cluster, name: str, stack_id: str) -> list[dict]:
    status, body = cluster.server.request("GET", f"/stacks/{name}/{stack_id}/events?nested_depth=3&limit=1000")
    assert status == 200, body
    return body["events"]


def test_nested_stacks_spread_over_workers_that_each_run_one_job(cluster):
    # One job at a time per worker: the parent's job holds its worker while it waits for
    # the group, the group's its own while it waits for the members; the members' jobs
    # go to the third worker, one after another.
    cluster.environment["STOKER_CHILD_QUEUE_WAIT_S"] = "120"  # no worker takes a child back
    # Every nested stack a job on the queue: no share bounds this tree's (its five
    # nested stacks are more than the default share: docs/workers.md).
    cluster.environment["STOKER_MAX_JOBS_PER_TREE"] = "-1"
    for _ in range(3):
        cluster.start_worker("--concurrency", "1")
    status, body = cluster.server.request("POST", "/stacks", {"stack_name": "tree", "template": NESTED})
    assert status == 201, body
    stack_id = body["stack"]["id"]
    stack = cluster.wait("tree")
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    tree = stack_tree(cluster, stack_id)
    assert len(tree) == 6  # the stack, the group's, four members'
    # Which worker's procrastinate ran a job of which stack. A job's stack is complete
    # before the job function returns and procrastinate logs its end: wait for the lines.
    def ran_by_worker() -> dict:
        return {stack: {index for index, (_, log) in enumerate(cluster.workers) if f"stack_id='{stack}') ended with status: Success" in log.read_text()} for stack in tree}

    deadline = time.monotonic() + 30
    while not all((ran_by := ran_by_worker()).values()) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert all(len(workers) == 1 for workers in ran_by.values()), ran_by  # each stack's job ran once, on one worker
    assert len(set().union(*ran_by.values())) == 3, ran_by  # and every worker ran some of the tree
    # Each stack of the tree was created once: no resume, no second run.
    events = _events(cluster, "tree", stack_id)
    assert not [e for e in events if "Engine restarted" in e["resource_status_reason"]], events
    assert len([e for e in events if e["resource_name"] == "leaf" and e["resource_status"] == "CREATE_COMPLETE"]) == 4

    status, body = cluster.server.request("DELETE", f"/stacks/tree/{stack_id}")
    assert status == 204, body
    assert cluster.wait("tree")["stack_status"] == "DELETE_COMPLETE"
    assert cluster.scalar("SELECT count(*) FROM stacks WHERE deleted_at IS NULL") == 0


def test_a_tree_deeper_than_the_free_workers_still_finishes(cluster):
    # Two workers of one slot: the parent holds one, the group the other, and no worker is
    # ever free for the members. The group's worker takes their jobs back from the queue
    # after a second and runs them itself.
    cluster.environment["STOKER_CHILD_QUEUE_WAIT_S"] = "1"
    for _ in range(2):
        cluster.start_worker("--concurrency", "1")
    status, body = cluster.server.request("POST", "/stacks", {"stack_name": "deep", "template": NESTED})
    assert status == 201, body
    stack_id = body["stack"]["id"]
    stack = cluster.wait("deep")
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    members = stack_tree(cluster, stack_id)[2:]
    taken_back = cluster.scalar(
        "SELECT count(*) FROM procrastinate_jobs WHERE status = 'cancelled' AND args->>'stack_id' IN :ids".replace(":ids", "(" + ", ".join(f"'{m}'" for m in members) + ")")
    )
    assert taken_back >= 1, "no member's job was taken back from the queue"
    events = _events(cluster, "deep", stack_id)
    assert not [e for e in events if "Engine restarted" in e["resource_status_reason"]], events
    assert len([e for e in events if e["resource_name"] == "leaf" and e["resource_status"] == "CREATE_COMPLETE"]) == 4


CANCELLED = """
heat_template_version: 2021-04-16
parameters:
  wait: {type: number, default: 0}
resources:
  child:
    type: OS::Heat::Stack
    properties:
      parameters: {wait: {get_param: wait}}
      template: |
        heat_template_version: 2021-04-16
        parameters:
          wait: {type: number}
        resources:
          slow:
            type: OS::Heat::TestResource
            properties: {value: {get_param: wait}, action_wait_secs: {update: {get_param: wait}}}
"""


def test_a_cancel_stops_the_nested_stack_running_on_another_worker(cluster):
    cluster.environment["STOKER_CHILD_QUEUE_WAIT_S"] = "120"  # the child runs on the other worker
    workers = {cluster.start_worker("--concurrency", "1").pid for _ in range(2)}
    status, body = cluster.server.request("POST", "/stacks", {"stack_name": "parent", "template": CANCELLED})
    assert status == 201, body
    stack_id = body["stack"]["id"]
    assert cluster.wait("parent")["stack_status"] == "CREATE_COMPLETE"
    # The parent's update holds one worker; its child's update can only run on the other.
    status, body = cluster.server.request("PATCH", f"/stacks/parent/{stack_id}", {"parameters": {"wait": 120}})
    assert status == 202, body
    child_id = stack_tree(cluster, stack_id)[1]
    deadline = time.monotonic() + 60
    while cluster.scalar("SELECT status FROM stacks WHERE id = :id", id=child_id) != "IN_PROGRESS" or cluster.scalar(
        "SELECT count(*) FROM stack_locks WHERE stack_id = :id", id=child_id
    ) != 1:
        assert time.monotonic() < deadline, "the child's update never started"
        time.sleep(0.2)
    parent_pid = cluster.scalar("SELECT pid FROM stack_locks WHERE stack_id = :id", id=stack_id)
    child_pid = cluster.scalar("SELECT pid FROM stack_locks WHERE stack_id = :id", id=child_id)
    assert {parent_pid, child_pid} == workers

    status, body = cluster.server.request("POST", f"/stacks/parent/{stack_id}/actions", {"cancel_without_rollback": None})
    assert status == 200, body
    stack = cluster.wait("parent", timeout=60)
    assert stack["stack_status"] == "UPDATE_FAILED", stack["stack_status_reason"]
    assert "Cancelled" in stack["stack_status_reason"]
    child = cluster.scalar("SELECT status_reason FROM stacks WHERE id = :id", id=child_id)
    assert cluster.scalar("SELECT action || '_' || status FROM stacks WHERE id = :id", id=child_id) == "UPDATE_FAILED", child
    assert "the parent stack's action stopped" in child
    assert cluster.scalar("SELECT count(*) FROM stack_locks") == 0  # nothing still runs


SCALED = """
heat_template_version: 2021-04-16
parameters:
  label: {type: string, default: one}
resources:
  group:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 3
      resource: {type: OS::Heat::TestResource, properties: {value: member}}
  up:
    type: OS::Heat::ScalingPolicy
    properties: {auto_scaling_group_id: {get_resource: group}, adjustment_type: change_in_capacity, scaling_adjustment: 1, cooldown: 0}
  slow:
    type: OS::Heat::TestResource
    properties: {value: {get_param: label}, action_wait_secs: {update: 8}}
outputs:
  size: {value: {get_attr: [group, current_size]}}
"""


def test_a_scaling_signal_is_a_job_a_worker_runs(cluster):
    cluster.start_worker()
    status, body = cluster.server.request("POST", "/stacks", {"stack_name": "scaled", "template": SCALED})
    assert status == 201, body
    stack_id = body["stack"]["id"]
    assert cluster.wait("scaled")["stack_status"] == "CREATE_COMPLETE"
    status, body = cluster.server.request("POST", f"/stacks/scaled/{stack_id}/resources/up/signal", {})
    assert status == 200, body
    deadline = time.monotonic() + 60
    while True:
        status, body = cluster.server.request("GET", f"/stacks/scaled/{stack_id}/outputs/size")
        assert status == 200, body
        if body["output"]["output_value"] == 2:
            break
        assert time.monotonic() < deadline, body
        time.sleep(0.3)
    assert "Starting job stoker.scaling_signal" in cluster.workers[0][1].read_text()
    # The server itself ran no stack job: it answered and enqueued.
    assert "scaling_signal" not in cluster.server.log_path.read_text()
    status, body = cluster.server.request("GET", f"/stacks/scaled/{stack_id}/resources/up/events")
    assert status == 200, body
    assert [e["resource_status"] for e in body["events"] if e["resource_status"].startswith("SIGNAL_")] == ["SIGNAL_COMPLETE"]

    # While an update holds the stack, a signal is dropped with an event that says so.
    status, body = cluster.server.request("PATCH", f"/stacks/scaled/{stack_id}", {"parameters": {"label": "two"}})
    assert status == 202, body
    status, body = cluster.server.request("POST", f"/stacks/scaled/{stack_id}/resources/up/signal", {})
    assert status == 200, body
    deadline = time.monotonic() + 60
    while True:
        status, body = cluster.server.request("GET", f"/stacks/scaled/{stack_id}/resources/up/events")
        ignored = [e for e in body["events"] if "Signal ignored, no action required" in e["resource_status_reason"]]
        if ignored:
            break
        assert time.monotonic() < deadline, body
        time.sleep(0.3)
    assert "UPDATE_IN_PROGRESS" in ignored[0]["resource_status_reason"]
    assert cluster.wait("scaled")["stack_status"] == "UPDATE_COMPLETE"
    status, body = cluster.server.request("GET", f"/stacks/scaled/{stack_id}/outputs/size")
    assert body["output"]["output_value"] == 2  # the dropped signal changed nothing
