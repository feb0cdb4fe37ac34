"""Stored templates live as long as a stack refers to them: updates, rollbacks, nested
stacks and refused requests leave no template behind that nothing refers to."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from stoker.engine.errors import ActionInProgressError
from stoker.store import tables
from stoker.store.locks import Fence
from tests.support.stacks import template

BODY = """
heat_template_version: 2021-04-16
parameters:
  n: {type: number, default: 0}
resources:
  value:
    type: OS::Heat::Value
    properties: {value: {get_param: n}}
  nested:
    type: OS::Heat::Stack
    properties:
      template: {get_file: child.yaml}
      parameters: {n: {get_param: n}}
"""
CHILD = "heat_template_version: 2021-04-16\nparameters:\n  n: {type: number}\nresources:\n  v: {type: OS::Heat::Value, properties: {value: {get_param: n}}}\n"


def unreferenced_templates(service) -> int:
    templates, stacks = tables.raw_templates, tables.stacks
    referenced = sa.select(stacks.c.id).where(sa.or_(stacks.c.raw_template_id == templates.c.id, stacks.c.prev_raw_template_id == templates.c.id))
    with service.store.engine.connect() as connection:
        return connection.execute(sa.select(sa.func.count()).select_from(templates).where(~referenced.exists())).scalar()


def test_template_pruning_updates_leave_no_unreferenced_template(make_service, database_url):
    service = make_service(database_url)
    files = {"child.yaml": CHILD}
    service.create_stack("pruned", template(BODY), files=files)
    for n in range(1, 12):
        assert service.update_stack("pruned", template(BODY), parameters={"n": n}, files=files).state == "UPDATE_COMPLETE"
    assert unreferenced_templates(service) == 0
    with service.store.engine.connect() as connection:
        # Two stacks (the parent and its child), each with its template and the previous one.
        assert connection.execute(sa.select(sa.func.count()).select_from(tables.raw_templates)).scalar() <= 4


def test_template_pruning_a_refused_update_leaves_no_template(make_service, database_url):
    service = make_service(database_url)
    service.engine.settings.lock_finish_wait_s = 0.1
    stack = service.create_stack("busy", template(BODY), files={"child.yaml": CHILD})
    held = Fence(stack.id, "another-job")
    assert service.store.acquire_lock(stack.id, held.token, "another-engine", 30) is None
    with pytest.raises(ActionInProgressError):
        service.update_stack("busy", template(BODY), parameters={"n": 5}, files={"child.yaml": CHILD})
    service.store.release_lock(held)
    assert unreferenced_templates(service) == 0


FAILING = """
heat_template_version: 2021-04-16
resources:
  value:
    type: OS::Heat::TestResource
    properties: {fail: true}
"""


def test_template_pruning_keeps_what_rollback_and_restore_need(make_service, database_url):
    service = make_service(database_url)
    files = {"child.yaml": CHILD}
    stack = service.create_stack("kept", template(BODY), files=files, parameters={"n": 1}, disable_rollback=False)
    snapshot = service.create_snapshot("kept", "first")
    assert service.update_stack("kept", template(BODY), parameters={"n": 2}, files=files).state == "UPDATE_COMPLETE"
    # A failed update rolls back to the template before it: that one must still be there.
    rolled = service.update_stack("kept", template(FAILING))
    assert rolled.state == "ROLLBACK_COMPLETE", rolled.status_reason
    assert service.store.get_template(service.get_stack("kept").raw_template_id).template["resources"].keys() == {"value", "nested"}
    assert service.restore_snapshot("kept", snapshot.id).state == "RESTORE_COMPLETE"
    assert service.update_stack("kept", template(BODY), parameters={"n": 3}, files=files).state == "UPDATE_COMPLETE"
    assert {output["output_key"] for output in service.outputs("kept")} == set()
    assert unreferenced_templates(service) == 0
    assert service.get_stack(stack.id).parameters == {"n": 3}


def test_template_pruning_a_read_that_raced_an_update_is_done_again(make_service, database_url):
    """A read that took a stack's record just before an update ended, and so names a
    template the update pruned, is done again whole and shows the stack as it is now.
    Before, it failed with NoResultFound: a GET of a stack whose cancelled update was
    rolling back answered 500 (CI of stop 38)."""
    from stoker.api import views
    from stoker.cli.embedded import EmbeddedBackend
    from stoker.store.stale import StaleRead, fresh

    service = make_service(database_url)
    files = {"child.yaml": CHILD}
    service.create_stack("raced", template(BODY), files=files, parameters={"n": 1}, project_id=service.settings.project)
    backend = EmbeddedBackend(service)
    stale = service.get_stack("raced")
    for n in (2, 3):  # two updates: the template the record names and the one before it both go
        assert service.update_stack("raced", template(BODY), parameters={"n": n}, files=files).state == "UPDATE_COMPLETE"
    with pytest.raises(StaleRead, match="updated while it was read"):
        views.stack_detail(backend.links, stale)

    records = iter([stale])  # the first try reads the stale record, the next ones the store
    shown = fresh(lambda: views.stack_detail(backend.links, next(records, None) or service.get_stack("raced")))
    assert shown["parameters"]["n"] == "3"
    assert backend.get_stack("raced")["parameters"]["n"] == "3"
    assert unreferenced_templates(service) == 0
