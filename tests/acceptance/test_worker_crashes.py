"""Workers killed at exact points (issue 26): real ``stoker serve --job-queue procrastinate``
and ``stoker worker`` processes on PostgreSQL; a worker started with ``STOKER_FAULT_AT``
SIGKILLs (or SIGSTOPs) itself at the point it names (stoker/faults.py), so each crash
happens where the test says, not where timing puts it. The cluster's lease is 6 s."""

from __future__ import annotations

import concurrent.futures
import os
import signal
import socket
import subprocess
import time

import pytest

from tests.support.waiting import wait_until
from tests.support.workers import (
    Cluster,
    process_stopped,
    stack_tree,
    started_actions,
    wait_until_held_by,
    wait_until_polled,
)

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

PAIR = """
heat_template_version: 2021-04-16
parameters:
  label: {type: string, default: one}
resources:
  first:
    type: OS::Heat::TestResource
    properties: {value: {get_param: label}}
  second:
    type: OS::Heat::TestResource
    depends_on: first
    properties: {value: {get_param: label}}
"""

NESTED = """
heat_template_version: 2021-04-16
resources:
  child:
    type: OS::Heat::Stack
    properties:
      template: |
        heat_template_version: 2021-04-16
        resources:
          leaf:
            type: OS::Heat::TestResource
            properties: {value: leaf}
"""

SLOW = """
heat_template_version: 2021-04-16
resources:
  slow:
    type: OS::Heat::TestResource
    properties: {value: slow, action_wait_secs: {create: 8}}
"""


SCALED = """
heat_template_version: 2021-04-16
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
outputs:
  size: {value: {get_attr: [group, current_size]}}
"""


def created(cluster: Cluster, name: str, template: str = PAIR) -> str:
    """Create a stack with the workers running now; its id once CREATE_COMPLETE."""
    status, body = cluster.server.request("POST", "/stacks", {"stack_name": name, "template": template})
    assert status == 201, body
    stack = cluster.wait(name)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    return body["stack"]["id"]


def stopped(worker: subprocess.Popen) -> None:
    """Stop a worker gracefully (it runs nothing): the next job goes to another."""
    worker.send_signal(signal.SIGTERM)
    assert worker.wait(timeout=60) == 0


def killed_at(worker: subprocess.Popen) -> None:
    """Until ``worker`` has SIGKILLed itself at its fault point."""
    assert worker.wait(timeout=120) == -signal.SIGKILL


def stack_events(cluster: Cluster, stack_id: str, reason: str) -> int:
    """How many of the stack's own events have this reason (read from the store: a
    deleted stack's events are not served)."""
    return int(cluster.scalar("SELECT count(*) FROM events WHERE stack_id = :id AND physical_resource_id = :id AND resource_status_reason = :reason", id=stack_id, reason=reason))


def unfinished_jobs(cluster: Cluster) -> int:
    return int(cluster.scalar("SELECT count(*) FROM procrastinate_jobs WHERE status::text <> 'succeeded'"))


@pytest.mark.parametrize("point", ["job-taken", "lock-taken"])
@pytest.mark.parametrize("action", ["update", "delete"])
def test_an_accepted_action_whose_worker_dies_before_it_starts_runs_once(cluster, action, point):
    # The worker takes the job (and, at lock-taken, the stack's lock) and dies before
    # the action is recorded IN_PROGRESS: another worker runs it, once.
    stopped_first = cluster.start_worker()
    stack_id = created(cluster, "kept")
    stopped(stopped_first)
    doomed = cluster.start_worker(fault=point)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        if action == "update":
            answer = pool.submit(cluster.server.request, "PATCH", f"/stacks/kept/{stack_id}", {"parameters": {"label": "two"}})
        else:
            answer = pool.submit(cluster.server.request, "DELETE", f"/stacks/kept/{stack_id}")
        killed_at(doomed)
        assert stack_events(cluster, stack_id, f"Stack {action.upper()} started") == 0  # it never started
        cluster.start_worker()
        status, body = answer.result()
    assert status == (202 if action == "update" else 204), body

    if action == "update":
        wait_until(lambda: cluster.scalar("SELECT action || '_' || status FROM stacks WHERE id = :id", id=stack_id) == "UPDATE_COMPLETE", "the update ran")
        stack = cluster.wait("kept")
        assert stack["parameters"]["label"] == "two"
    else:
        wait_until(lambda: cluster.scalar("SELECT deleted_at FROM stacks WHERE id = :id", id=stack_id) is not None, "the delete ran")
    # Once: one start, no resume of an action that had never started.
    assert stack_events(cluster, stack_id, f"Stack {action.upper()} started") == 1
    assert stack_events(cluster, stack_id, f"Engine restarted during {action.upper()}: resuming") == 0
    assert "resuming actions abandoned" not in cluster.workers[2][1].read_text()
    # The dead worker's job went back to the queue (a second attempt of the same job)
    # and ended on the other worker.
    wait_until(lambda: unfinished_jobs(cluster) == 0, "every job ended")
    assert cluster.scalar("SELECT max(attempts) FROM procrastinate_jobs") == 2


def test_a_delete_whose_worker_dies_after_delete_complete_is_finished(cluster):
    first = cluster.start_worker()
    stack_id = created(cluster, "gone")
    stopped(first)
    doomed = cluster.start_worker(fault="delete-complete")
    status, body = cluster.server.request("DELETE", f"/stacks/gone/{stack_id}")
    assert status == 204, body
    killed_at(doomed)
    # DELETE_COMPLETE, and not marked deleted: the name is still taken.
    assert cluster.scalar("SELECT action || '_' || status FROM stacks WHERE id = :id AND deleted_at IS NULL", id=stack_id) == "DELETE_COMPLETE"

    cluster.start_worker()
    wait_until(lambda: cluster.scalar("SELECT deleted_at FROM stacks WHERE id = :id", id=stack_id) is not None, "the delete was finished")
    assert cluster.scalar("SELECT count(*) FROM stack_locks") == 0
    assert cluster.scalar("SELECT count(*) FROM resources WHERE stack_id = :id", id=stack_id) == 0
    status, body = cluster.server.request("GET", "/stacks")
    assert status == 200 and body["stacks"] == [], body
    # The name is free again.
    assert created(cluster, "gone") != stack_id


def test_a_nested_delete_whose_worker_dies_after_delete_complete_is_finished(cluster):
    cluster.environment["STOKER_CHILD_QUEUE_WAIT_S"] = "120"  # the child's job waits for another worker
    parent_worker = cluster.start_worker("--concurrency", "1")
    helper = cluster.start_worker("--concurrency", "1")
    stack_id = created(cluster, "nest", NESTED)
    child_id = stack_tree(cluster, stack_id)[1]
    stopped(helper)
    # The parent's delete holds the one worker's one slot: the child's delete job waits
    # in the queue for the worker that dies after the child's DELETE_COMPLETE.
    status, body = cluster.server.request("DELETE", f"/stacks/nest/{stack_id}")
    assert status == 204, body
    wait_until_held_by(cluster, parent_worker)
    doomed = cluster.start_worker("--concurrency", "1", fault="delete-complete")
    killed_at(doomed)
    assert cluster.wait("nest")["stack_status"] == "DELETE_COMPLETE"  # the parent saw its child go
    assert cluster.scalar("SELECT pid FROM stack_locks WHERE stack_id = :id", id=child_id) == doomed.pid

    # The surviving worker's recovery finishes the child: marked deleted, rows and lock gone.
    wait_until(lambda: cluster.scalar("SELECT deleted_at FROM stacks WHERE id = :id", id=child_id) is not None, "the child's delete was finished")
    assert cluster.scalar("SELECT count(*) FROM stacks WHERE deleted_at IS NULL") == 0
    assert cluster.scalar("SELECT count(*) FROM stack_locks") == 0
    assert cluster.scalar("SELECT count(*) FROM resources WHERE stack_id = :id", id=child_id) == 0
    assert parent_worker.poll() is None


def test_a_dead_workers_action_resumes_within_the_lease_and_one_look(cluster):
    # The promise (docs/workers.md): resumed at most a lease and one look (lease / 6)
    # after the worker died. The deadline is that bound with a second lease of slack
    # for a loaded machine; before the stalled-job look was aligned with the lease, the
    # dead worker's job kept the stack busy for 30 s (five of these leases).
    first = cluster.start_worker()
    status, body = cluster.server.request("POST", "/stacks", {"stack_name": "lazy", "template": SLOW})
    assert status == 201, body
    stack_id = body["stack"]["id"]
    wait_until_held_by(cluster, first)
    wait_until_polled(cluster, "slow")
    cluster.start_worker()
    first.send_signal(signal.SIGKILL)
    first.wait()
    lease = float(cluster.environment["STOKER_LOCK_LEASE_S"])
    deadline = time.monotonic() + 2 * lease
    resumed = "Engine restarted during CREATE: resuming"
    while stack_events(cluster, stack_id, resumed) == 0:
        assert time.monotonic() < deadline, "not resumed within two leases of the kill"
        time.sleep(0.2)
    stack = cluster.wait("lazy")
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert started_actions(cluster, "lazy")[resumed] == 1


def test_two_workers_settling_one_stalled_job_settle_it_once(cluster):
    # A worker dies mid-create. One worker lists its stalled job and stops there
    # (SIGSTOP); another settles the job meanwhile and resumes the create. Let go, the
    # first finds the job settled and moves on: no error, its round goes on.
    first = cluster.start_worker()
    status, body = cluster.server.request("POST", "/stacks", {"stack_name": "lazy", "template": SLOW})
    assert status == 201, body
    stack_id = body["stack"]["id"]
    wait_until_held_by(cluster, first)
    wait_until(lambda: stack_events(cluster, stack_id, "Stack CREATE started") == 1, "the create started")
    wait_until_polled(cluster, "slow")
    job_id = cluster.scalar("SELECT id FROM procrastinate_jobs WHERE status = 'doing'")
    first.send_signal(signal.SIGKILL)
    first.wait()
    late = cluster.start_worker(fault="stalled-jobs-listed:STOP")
    wait_until(lambda: process_stopped(late), "the late worker listed the stalled job")
    cluster.start_worker()
    stack = cluster.wait("lazy")
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert cluster.scalar("SELECT status::text FROM procrastinate_jobs WHERE id = :id", id=job_id) == "failed"

    late.send_signal(signal.SIGCONT)
    log = cluster.workers[1][1]
    wait_until(lambda: f"job {job_id} " in log.read_text() or "recovery round failed" in log.read_text(), "the late worker settled its list")
    text = log.read_text()
    assert "recovery round failed" not in text and "Traceback" not in text, text
    assert "settled by another worker" in text, text
    assert started_actions(cluster, "lazy") == {"Stack CREATE started": 1, "Engine restarted during CREATE: resuming": 1}
    assert late.poll() is None


def test_an_accepted_action_handed_back_at_sigterm_before_it_starts_runs(cluster):
    # The update's job waits for the stack's lock (held by this test, as a live process
    # of this host) when its worker is stopped: the job is handed back before the
    # update started, and another worker runs it once the lock is free.
    first = cluster.start_worker()
    stack_id = created(cluster, "kept")
    stopped(first)
    cluster.execute(
        "INSERT INTO stack_locks (stack_id, engine_id, token, host, pid, expires_at) VALUES (:id, 'test', 'test', :host, :pid, now() AT TIME ZONE 'utc' + interval '1 hour')",
        id=stack_id, host=socket.gethostname(), pid=os.getpid(),
    )
    stopping = cluster.start_worker("--shutdown-timeout", "1")
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        answer = pool.submit(cluster.server.request, "PATCH", f"/stacks/kept/{stack_id}", {"parameters": {"label": "two"}})
        wait_until(lambda: cluster.scalar("SELECT count(*) FROM procrastinate_jobs WHERE status = 'doing'") == 1, "the worker took the job")
        stopping.send_signal(signal.SIGTERM)
        assert stopping.wait(timeout=60) == 0
        assert cluster.scalar("SELECT status::text FROM procrastinate_jobs WHERE args->>'action' = 'UPDATE'") == "aborted"
        cluster.execute("DELETE FROM stack_locks WHERE stack_id = :id", id=stack_id)
        cluster.start_worker()
        status, body = answer.result()
    assert status == 202, body
    wait_until(lambda: cluster.scalar("SELECT action || '_' || status FROM stacks WHERE id = :id", id=stack_id) == "UPDATE_COMPLETE", "the update ran")
    assert cluster.wait("kept")["parameters"]["label"] == "two"
    assert stack_events(cluster, stack_id, "Stack UPDATE started") == 1


def group_size(cluster: Cluster, stack_id: str) -> int:
    status, body = cluster.server.request("GET", f"/stacks/scaled/{stack_id}/outputs/size")
    assert status == 200, body
    return int(body["output"]["output_value"])


def signal_events(cluster: Cluster, stack_id: str) -> list[str]:
    status, body = cluster.server.request("GET", f"/stacks/scaled/{stack_id}/resources/up/events")
    assert status == 200, body
    return [e["resource_status"] for e in body["events"] if e["resource_status"].startswith("SIGNAL_")]


@pytest.mark.parametrize("point", ["job-taken", "lock-taken"])
def test_an_accepted_scaling_signal_whose_worker_dies_before_it_acts_runs_once(cluster, point):
    # The signal is answered once queued; its worker takes the job (and, at lock-taken,
    # the stack's lock) and dies before the policy acts: another worker resizes the
    # group, once.
    first = cluster.start_worker()
    stack_id = created(cluster, "scaled", SCALED)
    stopped(first)
    doomed = cluster.start_worker(fault=point)
    status, body = cluster.server.request("POST", f"/stacks/scaled/{stack_id}/resources/up/signal", {})
    assert status == 200, body
    killed_at(doomed)
    assert group_size(cluster, stack_id) == 1 and signal_events(cluster, stack_id) == []  # it never acted

    cluster.start_worker()
    wait_until(lambda: signal_events(cluster, stack_id), "the signal ran")
    wait_until(lambda: unfinished_jobs(cluster) == 0, "every job ended")
    assert group_size(cluster, stack_id) == 2
    assert signal_events(cluster, stack_id) == ["SIGNAL_COMPLETE"]
    # The dead worker's job went back to the queue and ran on the other worker; no
    # accepted action is left waiting.
    assert cluster.scalar("SELECT attempts FROM procrastinate_jobs WHERE task_name = 'stoker.scaling_signal'") == 2
    assert cluster.scalar("SELECT count(*) FROM accepted_actions") == 0
