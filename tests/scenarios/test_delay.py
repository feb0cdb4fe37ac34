"""OS::Heat::Delay through the engine, on a fake clock: where the pause falls in each
action (create, delete, suspend, resume), jitter bounds, in-place update, validation."""

from __future__ import annotations

import pytest

from stoker.engine.clock import FakeClock
from stoker.engine.states import Action
from stoker.template.errors import TemplateErrors
from tests.support.stacks import template

BODY = """
heat_template_version: 2021-04-16
parameters:
  actions: {type: comma_delimited_list, default: CREATE}
  min_wait: {type: number, default: 60}
  max_jitter: {type: number, default: 0}
resources:
  before:
    type: OS::Heat::None
  pause:
    type: OS::Heat::Delay
    depends_on: [before]
    properties:
      min_wait: {get_param: min_wait}
      max_jitter: {get_param: max_jitter}
      jitter_multiplier: 2
      actions: {get_param: actions}
  after:
    type: OS::Heat::None
    depends_on: [pause]
"""


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def delayed(make_service, clock):
    return make_service(clock=clock)


def order(service, stack_id: str, action: str) -> list[tuple[str, str]]:
    """(resource, status) of ``action``'s resource events, in the order they happened
    (read from the store, which keeps a deleted stack's events)."""
    return [
        (e.resource_name, e.resource_status)
        for e in service.store.events.list_events(stack_id)
        if e.resource_action == action and e.resource_type != "OS::Heat::Stack"
    ]


def timed(clock: FakeClock, run) -> tuple[object, float]:
    start = clock.now()
    result = run()
    return result, clock.now() - start


def test_delay_on_create_falls_between_its_dependencies(delayed, clock):
    stack, took = timed(clock, lambda: delayed.create_stack("d", template(BODY)))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert took >= 60
    assert order(delayed, stack.id, "CREATE") == [
        ("before", "IN_PROGRESS"),
        ("before", "COMPLETE"),
        ("pause", "IN_PROGRESS"),
        ("pause", "COMPLETE"),
        ("after", "IN_PROGRESS"),
        ("after", "COMPLETE"),
    ]
    # Not listed for DELETE: the delete does not wait.
    stack, took = timed(clock, lambda: delayed.delete_stack("d"))
    assert stack.state == "DELETE_COMPLETE"
    assert took < 60


def test_delay_on_delete_only(delayed, clock):
    stack, took = timed(clock, lambda: delayed.create_stack("d", template(BODY), parameters={"actions": "DELETE"}))
    assert stack.state == "CREATE_COMPLETE"
    assert took < 60
    stack_id = stack.id
    stack, took = timed(clock, lambda: delayed.delete_stack("d"))
    assert stack.state == "DELETE_COMPLETE"
    assert took >= 60
    # Deleted after what depends on it, before what it depends on.
    assert order(delayed, stack_id, "DELETE") == [
        ("after", "IN_PROGRESS"),
        ("after", "COMPLETE"),
        ("pause", "IN_PROGRESS"),
        ("pause", "COMPLETE"),
        ("before", "IN_PROGRESS"),
        ("before", "COMPLETE"),
    ]


def test_delay_on_suspend_and_resume(delayed, clock):
    delayed.create_stack("d", template(BODY), parameters={"actions": "SUSPEND,RESUME"})
    stack, took = timed(clock, lambda: delayed.stack_action("d", Action.SUSPEND))
    assert stack.state == "SUSPEND_COMPLETE", stack.status_reason
    assert took >= 60
    # Heat's check_resume_complete calls a method that does not exist; this one waits.
    stack, took = timed(clock, lambda: delayed.stack_action("d", Action.RESUME))
    assert stack.state == "RESUME_COMPLETE", stack.status_reason
    assert took >= 60
    stack, took = timed(clock, lambda: delayed.stack_action("d", Action.SUSPEND))
    assert took >= 60


def test_delay_jitter_stays_within_its_bounds(delayed, clock):
    # min_wait 10 plus up to max_jitter 15 x jitter_multiplier 2 = 30 seconds of jitter.
    for name in ("j0", "j1", "j2", "j3", "j4"):
        start = clock.now()
        stack = delayed.create_stack(name, template(BODY), parameters={"min_wait": 10, "max_jitter": 15})
        took = clock.now() - start
        assert stack.state == "CREATE_COMPLETE"
        # The poll that sees the end comes at most one poll interval (2 s) late.
        assert 10 <= took <= 40 + 2


def test_delay_update_is_in_place_and_does_not_wait(delayed, clock):
    delayed.create_stack("d", template(BODY))
    before = {r.name: r.physical_resource_id for r in delayed.list_resources("d")}
    stack, took = timed(clock, lambda: delayed.update_stack("d", template(BODY), parameters={"min_wait": 120}))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert took < 60
    assert {r.name: r.physical_resource_id for r in delayed.list_resources("d")} == before
    assert ("pause", "COMPLETE") in order(delayed, stack.id, "UPDATE")


def test_delay_validation(delayed):
    with pytest.raises(TemplateErrors, match=r"OS::Heat::Delay maximum delay 120s exceeds stack timeout\."):
        delayed.create_stack("d", template(BODY), parameters={"min_wait": 60, "max_jitter": 30}, timeout_mins=1)
    with pytest.raises(TemplateErrors, match=r'actions: "\[\'UPDATE\'\]" is not an allowed value \["CREATE", "DELETE", "SUSPEND", "RESUME"\]'):
        delayed.create_stack("d", template(BODY), parameters={"actions": "UPDATE"})
    with pytest.raises(TemplateErrors, match=r"min_wait: -1 must be no less than 0"):
        delayed.create_stack("d", template(BODY), parameters={"min_wait": -1})
