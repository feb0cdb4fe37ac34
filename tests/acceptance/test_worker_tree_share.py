"""One stack tree's share of the workers (issue 26): real ``stoker serve --job-queue
procrastinate`` and ``stoker worker`` processes on PostgreSQL. A tree's nested stacks'
jobs go on the queue only while the tree has fewer than ``STOKER_MAX_JOBS_PER_TREE``
there (waiting or running); its further nested stacks run in their parent's worker. So
while a big tree is deleted, another project's small stack finds a free worker slot and
is created before the tree is gone, instead of waiting behind the tree's backlog.

The tree here is a group of twelve groups, each member slow to delete, on one worker of
four slots. ``STOKER_CHILD_QUEUE_WAIT_S`` is raised so that a parent does not take its
children's waiting jobs back after 2 seconds (that fallback exists for a full queue, and
would otherwise drain a small backlog before it shows): the share is what must bound it.
"""

from __future__ import annotations

import json
import threading
import urllib.request

import pytest

from tests.support.waiting import wait_until
from tests.support.workers import Cluster, stack_tree

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SHARE = 2

BIG = """
heat_template_version: 2021-04-16
resources:
  groups:
    type: OS::Heat::ResourceGroup
    properties:
      count: 12
      resource_def:
        type: OS::Heat::ResourceGroup
        properties:
          count: 2
          resource_def:
            type: OS::Heat::TestResource
            properties: {value: member, action_wait_secs: {delete: 5}}
"""

SMALL = """
heat_template_version: 2021-04-16
resources:
  one:
    type: OS::Heat::TestResource
    properties: {value: small}
"""


def other_project(cluster: Cluster, method: str, path: str, body: object = None) -> tuple[int, object]:
    """A request in project ``other`` (auth mode none: the URL names the project)."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(f"{cluster.server.url}/v1/other{path}", data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.status, json.loads(response.read() or b"null")


class TreeJobs:
    """Samples, from a thread of its own, how many jobs of the tree's nested stacks are
    on the queue (waiting or running) at once; keeps the most seen."""

    def __init__(self, cluster: Cluster, nested_ids: list[str]):
        self.cluster = cluster
        self.nested_ids = nested_ids
        self.most = 0
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        ids = ",".join(f"'{stack_id}'" for stack_id in self.nested_ids)
        query = f"SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing') AND args->>'stack_id' IN ({ids})"
        while not self.stopping.wait(0.1):
            self.most = max(self.most, int(self.cluster.scalar(query)))

    def __enter__(self) -> TreeJobs:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        self.thread.join()


def test_tree_share_another_projects_stack_is_created_while_a_big_tree_is_deleted(cluster):
    cluster.environment["STOKER_MAX_JOBS_PER_TREE"] = str(SHARE)
    cluster.environment["STOKER_CHILD_QUEUE_WAIT_S"] = "600"
    cluster.start_worker("--concurrency", "4")
    status, body = cluster.server.request("POST", "/stacks", {"stack_name": "big", "template": BIG})
    assert status == 201, body
    big_id = body["stack"]["id"]
    assert cluster.wait("big")["stack_status"] == "CREATE_COMPLETE"
    nested = stack_tree(cluster, big_id)[1:]
    assert len(nested) == 13  # the outer group and its twelve groups

    with TreeJobs(cluster, nested) as tree_jobs:
        status, body = cluster.server.request("DELETE", f"/stacks/big/{big_id}")
        assert status == 204, body
        # The members' deletes have begun (the backlog, if any, is queued now).
        wait_until(lambda: cluster.scalar("SELECT count(*) FROM events WHERE resource_action = 'DELETE' AND resource_status = 'IN_PROGRESS' AND resource_type = 'OS::Heat::TestResource'"), "the members' deletes began")
        status, body = other_project(cluster, "POST", "/stacks", {"stack_name": "small", "template": SMALL})
        assert status == 201, body
        small_id = body["stack"]["id"]
        wait_until(lambda: cluster.scalar("SELECT action || '_' || status FROM stacks WHERE id = :id", id=small_id) in ("CREATE_COMPLETE", "CREATE_FAILED"), "the small stack was created", timeout_s=240)
        # Progress, not time: the small stack was made while the big tree was still
        # being deleted, most of it not yet gone.
        assert cluster.scalar("SELECT action || '_' || status FROM stacks WHERE id = :id", id=small_id) == "CREATE_COMPLETE"
        assert cluster.scalar("SELECT action || '_' || status FROM stacks WHERE id = :id", id=big_id) == "DELETE_IN_PROGRESS"
        remaining = cluster.scalar("SELECT count(*) FROM stacks WHERE id IN :ids AND deleted_at IS NULL AND NOT (action = 'DELETE' AND status = 'COMPLETE')".replace(":ids", "(" + ",".join(f"'{i}'" for i in nested) + ")"))
        assert remaining > len(nested) // 2, f"only {remaining} of {len(nested)} nested stacks left"
        wait_until(lambda: cluster.scalar("SELECT deleted_at FROM stacks WHERE id = :id", id=big_id) is not None, "the big tree was deleted", timeout_s=300)
    # The tree never held more than its share of the queue.
    assert 0 < tree_jobs.most <= SHARE, tree_jobs.most
    # Every nested stack of the tree went, each deleted once.
    assert cluster.scalar("SELECT count(*) FROM stacks WHERE deleted_at IS NULL AND project_id <> 'other'") == 0
    deletes = "SELECT count(*) FROM events WHERE stack_id = :id AND physical_resource_id = :id AND resource_status_reason = 'Stack DELETE started'"
    assert all(cluster.scalar(deletes, id=stack_id) == 1 for stack_id in nested)
