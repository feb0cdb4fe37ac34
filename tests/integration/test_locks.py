"""Stack locks: two jobs never act on one stack; a dead holder's lock is taken over; a
job that lost its lock can write nothing (fencing)."""

from __future__ import annotations

import asyncio
import dataclasses
import threading
import time
import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa

from stoker.engine.engine import Job
from stoker.engine.errors import ActionInProgressError
from stoker.engine.states import Action
from stoker.identifiers import new_id
from stoker.store import ResourceRecord, tables
from stoker.store.locks import Fence, LockLostError, current_fence
from stoker.store.repository import utcnow
from tests.support.stacks import template

BODY = "heat_template_version: 2021-04-16\nresources:\n  r: {type: OS::Heat::None}\n"


def test_a_live_holder_keeps_others_out(make_service, database_url):
    first = make_service(database_url)
    second = make_service(database_url)
    for service in (first, second):
        service.engine.settings.lock_finish_wait_s = 0.3  # not IN_PROGRESS: waited for briefly
    stack = first.create_stack("locked", template(BODY))
    held = Fence(stack.id, "job-1")
    assert first.store.acquire_lock(stack.id, held.token, first.engine.engine_id, 30) is None
    with pytest.raises(ActionInProgressError, match=r"holds its lock"):
        second.update_stack("locked", template(BODY))
    # A second job of the same engine is another holder: no re-entry.
    with pytest.raises(ActionInProgressError, match=r"holds its lock"):
        first.update_stack("locked", template(BODY))
    first.store.release_lock(held)
    assert second.update_stack("locked", template(BODY)).state == "UPDATE_COMPLETE"


def _forge_holder(service, stack_id, **values):
    with service.store.engine.begin() as connection:
        connection.execute(tables.stack_locks.update().where(tables.stack_locks.c.stack_id == stack_id).values(**values))


def test_an_expired_lease_is_taken_over(make_service, database_url):
    service = make_service(database_url)
    stack = service.create_stack("lease", template(BODY))
    assert service.store.acquire_lock(stack.id, "token", "another-engine", 30) is None
    _forge_holder(service, stack.id, host="some-other-host", expires_at=utcnow() - timedelta(seconds=1))
    assert service.update_stack("lease", template(BODY)).state == "UPDATE_COMPLETE"


def test_a_dead_process_on_this_host_is_taken_over_at_once(make_service, database_url):
    service = make_service(database_url)
    stack = service.create_stack("dead", template(BODY))
    assert service.store.acquire_lock(stack.id, "token", "crashed-engine", 3600) is None
    _forge_holder(service, stack.id, pid=2**22 + 12345)  # no such process
    assert service.update_stack("dead", template(BODY)).state == "UPDATE_COMPLETE"
    with service.store.engine.connect() as connection:
        assert connection.execute(sa.select(sa.func.count()).select_from(tables.stack_locks)).scalar() == 0


def _resource(service, stack_id):
    return next(r for r in service.store.list_resources(stack_id))


def test_locks_a_write_of_a_job_that_lost_its_lock_is_refused(make_service, database_url):
    service = make_service(database_url)
    stack = service.create_stack("fenced", template(BODY))
    record = _resource(service, stack.id)
    told = []
    old = Fence(stack.id, "old-job", lambda: told.append("lost"))
    assert service.store.acquire_lock(stack.id, old.token, "engine", 30) is None
    service.store.writes.run(lambda connection: None, fence=old)  # still held: admitted
    service.store.release_lock(old)
    assert service.store.acquire_lock(stack.id, "new-job", "engine", 30) is None
    # The old job's writes, from its context or given explicitly, change nothing.
    token = current_fence.set(old)
    try:
        with pytest.raises(LockLostError):
            service.store.update_resource(record, status_reason="written by a job that lost its lock")
        with pytest.raises(LockLostError):
            service.store.update_stack(stack.id, status="FAILED")
    finally:
        current_fence.reset(token)
    assert told == ["lost", "lost"]
    assert _resource(service, stack.id).status_reason != "written by a job that lost its lock"
    assert service.store.get_stack(stack.id).status == "COMPLETE"
    # The holder's writes, and writes of no job, go through in the same batch.
    new = Fence(stack.id, "new-job")
    service.store.update_resource_nowait(record, status_reason="by the holder")
    refused = service.store.writes.submit(lambda connection: None, fence=old)
    admitted = service.store.writes.submit(lambda connection: "ok", fence=new)
    assert admitted.result(timeout=10) == "ok"
    with pytest.raises(LockLostError):
        refused.result(timeout=10)
    assert _resource(service, stack.id).status_reason == "by the holder"


def test_locks_a_resource_row_is_written_only_through_its_own_stack(make_service, database_url):
    service = make_service(database_url)
    first = service.create_stack("first", template(BODY))
    second = service.create_stack("second", template(BODY))
    record = _resource(service, first.id)
    stray = dataclasses.replace(record, stack_id=second.id)
    service.store.update_resource(stray, status_reason="written through another stack")
    service.store.delete_resources(second.id, [record.id])
    assert _resource(service, first.id).status_reason != "written through another stack"


def test_locks_row_ids_are_never_reused(make_service, database_url):
    service = make_service(database_url)
    stack = service.create_stack("ids", template(BODY))
    record = _resource(service, stack.id)
    service.store.delete_resources(stack.id, [record.id])
    again = ResourceRecord(id=None, uuid=str(uuid.uuid4()), stack_id=stack.id, name="r", type="OS::Heat::None")
    service.store.insert_resources([again])
    assert again.id > record.id
    events = service.store.events.list_events(stack.id)
    with service.store.engine.begin() as connection:
        connection.execute(tables.events.delete().where(tables.events.c.id == events[-1].id))
    service.store.events.add_event(dataclasses.replace(events[-1], id=None, uuid=str(uuid.uuid4())))
    assert service.store.events.list_events(stack.id)[-1].id > events[-1].id


SLOW = """
heat_template_version: 2021-04-16
resources:
  slow:
    type: OS::Heat::TestResource
    properties: {wait_secs: 3}
  after:
    type: OS::Heat::TestResource
    depends_on: [slow]
"""


def test_locks_a_job_whose_lock_is_taken_over_stops_and_writes_nothing(make_service, database_url):
    service = make_service(database_url)
    service.engine.settings.lock_lease_s = 1.5  # the heartbeat looks every 0.5 s
    result = {}
    worker = threading.Thread(target=lambda: result.update(stack=service.create_stack("taken", template(SLOW))), daemon=True)
    worker.start()
    deadline = time.monotonic() + 20
    while (stack := service.store.find_stack("taken")) is None or stack.status != "IN_PROGRESS":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    time.sleep(0.5)
    # Another engine takes the lock over (as after a lease it judged expired).
    _forge_holder(service, stack.id, token="another-job", engine_id="another-engine", host="another-host", expires_at=utcnow() + timedelta(hours=1))
    before = (service.store.get_stack(stack.id), {r.name: r.state for r in service.store.list_resources(stack.id)})
    worker.join(timeout=20)
    assert not worker.is_alive()
    time.sleep(3.5)  # the slow resource's handler has long finished
    after = (service.store.get_stack(stack.id), {r.name: r.state for r in service.store.list_resources(stack.id)})
    assert after[0].state == before[0].state == "CREATE_IN_PROGRESS"
    assert after[1] == before[1] and after[1]["slow"] == "CREATE_IN_PROGRESS", after[1]
    assert service.store.lock_holder(stack.id).token == "another-job"


def test_locks_an_accepted_action_starts_once(make_service, database_url):
    """With workers, a job of an action the API accepted starts it only while the
    action's row exists, and the write that records the stack IN_PROGRESS deletes the
    row: a second delivery of the job (its first worker seemed dead) does nothing."""
    service = make_service(database_url)
    stack = service.create_stack("once", template(BODY))
    job = Job(stack.id, Action.CHECK, accepted=new_id())
    with service.store.engine.begin() as connection:  # as the enqueue writes it, with its job
        service.store.serving.accept_action_on(connection, job.accepted, stack.id, str(job.action), 1)
    assert asyncio.run(service.engine.run(job)).state == "CHECK_COMPLETE"
    with service.store.engine.connect() as connection:
        assert not service.store.serving.accepted_pending(connection, job.accepted)
    assert asyncio.run(service.engine.run(job)).state == "CHECK_COMPLETE"
    started = [e for e in service.store.events.list_events(stack.id) if e.resource_status_reason == "Stack CHECK started"]
    assert len(started) == 1
