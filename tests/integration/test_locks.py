"""Stack locks: two engines never act on one stack; a dead holder's lock is taken over."""

from __future__ import annotations

from datetime import timedelta

import pytest
import sqlalchemy as sa

from stoker.engine.errors import ActionInProgressError
from stoker.store import tables
from stoker.store.repository import utcnow
from tests.support.stacks import template

BODY = "heat_template_version: 2021-04-16\nresources:\n  r: {type: OS::Heat::None}\n"


def test_a_live_holder_keeps_others_out(make_service, database_url):
    first = make_service(database_url)
    second = make_service(database_url)
    stack = first.create_stack("locked", template(BODY))
    assert first.store.acquire_lock(stack.id, first.engine.engine_id, 30) is None
    with pytest.raises(ActionInProgressError, match=r"holds its lock"):
        second.update_stack("locked", template(BODY))
    # the holder itself may take it again (re-entrant for its own engine id)
    assert first.store.acquire_lock(stack.id, first.engine.engine_id, 30) is None
    first.store.release_lock(stack.id, first.engine.engine_id)
    assert second.update_stack("locked", template(BODY)).state == "UPDATE_COMPLETE"


def _forge_holder(service, stack_id, **values):
    with service.store.engine.begin() as connection:
        connection.execute(tables.stack_locks.update().where(tables.stack_locks.c.stack_id == stack_id).values(**values))


def test_an_expired_lease_is_taken_over(make_service, database_url):
    service = make_service(database_url)
    stack = service.create_stack("lease", template(BODY))
    assert service.store.acquire_lock(stack.id, "another-engine", 30) is None
    _forge_holder(service, stack.id, host="some-other-host", expires_at=utcnow() - timedelta(seconds=1))
    assert service.update_stack("lease", template(BODY)).state == "UPDATE_COMPLETE"


def test_a_dead_process_on_this_host_is_taken_over_at_once(make_service, database_url):
    service = make_service(database_url)
    stack = service.create_stack("dead", template(BODY))
    assert service.store.acquire_lock(stack.id, "crashed-engine", 3600) is None
    _forge_holder(service, stack.id, pid=2**22 + 12345)  # no such process
    assert service.update_stack("dead", template(BODY)).state == "UPDATE_COMPLETE"
    with service.store.engine.connect() as connection:
        assert connection.execute(sa.select(sa.func.count()).select_from(tables.stack_locks)).scalar() == 0
