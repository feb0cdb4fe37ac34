"""Stack create: ordering, real concurrency, failures and rollback."""

from __future__ import annotations

import asyncio

from stoker.engine.clock import FakeClock
from tests.support.stacks import event_states, states, template

THREE = """
heat_template_version: 2021-04-16
parameters:
  prefix: {type: string, default: app}
resources:
  secret:
    type: OS::Heat::RandomString
    properties: {length: 12}
  holder:
    type: OS::Heat::TestResource
    properties:
      value: {str_replace: {template: "P-S", params: {P: {get_param: prefix}, S: {get_attr: [secret, value]}}}}
  summary:
    type: OS::Heat::Value
    properties:
      value: {list_join: ["/", [{get_resource: holder}, {get_attr: [holder, output]}]]}
outputs:
  stored: {value: {get_attr: [holder, output]}}
  summary: {value: {get_attr: [summary, value]}}
"""


def test_create_resolves_functions_across_resources(service):
    stack = service.create_stack("three", template(THREE))
    assert stack.state == "CREATE_COMPLETE"
    assert states(service, "three") == {"secret": "CREATE_COMPLETE", "holder": "CREATE_COMPLETE", "summary": "CREATE_COMPLETE"}
    outputs = {o["output_key"]: o["output_value"] for o in service.outputs("three")}
    secret = next(r for r in service.store.list_resources(stack.id) if r.name == "secret")
    assert outputs["stored"] == "app-" + service.store.sealer.open(secret.data)[0]["value"]
    holder = next(r for r in service.list_resources("three") if r.name == "holder")
    assert outputs["summary"] == f"{holder.physical_resource_id}/{outputs['stored']}"
    assert holder.physical_resource_id.startswith("three-holder-")


def test_create_orders_by_dependencies_and_records_every_transition(service):
    service.create_stack("three", template(THREE))
    events = service.list_events("three")
    order = [(e.resource_name, e.resource_action + "_" + e.resource_status) for e in events]
    assert order[0] == ("three", "CREATE_IN_PROGRESS")
    assert order[-1] == ("three", "CREATE_COMPLETE")
    position = {item: index for index, item in enumerate(order)}
    assert position[("secret", "CREATE_COMPLETE")] < position[("holder", "CREATE_IN_PROGRESS")]
    assert position[("holder", "CREATE_COMPLETE")] < position[("summary", "CREATE_IN_PROGRESS")]
    for name in ("secret", "holder", "summary"):
        assert event_states(service, "three", name) == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"]


def test_create_runs_independent_resources_concurrently(make_service):
    clock = FakeClock()
    service = make_service(clock=clock)
    body = "heat_template_version: 2021-04-16\nresources:\n" + "".join(
        f"  r{i}:\n    type: OS::Heat::TestResource\n    properties: {{wait_secs: 1}}\n" for i in range(50)
    )
    start = clock.now()
    stack = service.create_stack("fifty", template(body))
    assert stack.state == "CREATE_COMPLETE"
    # Fifty one-second waits overlap: the engine's clock moved by about one second.
    assert 1 <= clock.now() - start < 3
    events = [e for e in service.list_events("fifty") if e.resource_name != "fifty"]
    first_complete = next(i for i, e in enumerate(events) if e.resource_status == "COMPLETE")
    assert sum(1 for e in events[:first_complete] if e.resource_status == "IN_PROGRESS") == 50


FAILING = """
heat_template_version: 2021-04-16
resources:
  good:
    type: OS::Heat::TestResource
  bad:
    type: OS::Heat::TestResource
    depends_on: good
    properties: {fail: true}
  after:
    type: OS::Heat::TestResource
    depends_on: bad
"""


def test_create_failure_reports_reason_and_never_starts_dependents(service):
    stack = service.create_stack("failing", template(FAILING))
    assert stack.state == "CREATE_FAILED"
    assert stack.status_reason == "Resource CREATE failed: ValueError: resources.bad: Test Resource failed bad"
    resources = {r.name: r for r in service.list_resources("failing")}
    assert resources["good"].state == "CREATE_COMPLETE"
    assert resources["bad"].state == "CREATE_FAILED"
    assert resources["bad"].status_reason == "ValueError: resources.bad: Test Resource failed bad"
    assert resources["after"].state == "INIT_COMPLETE"
    assert event_states(service, "failing", "after") == []


def test_create_failure_rolls_back_when_enabled(service):
    stack = service.create_stack("rolled", template(FAILING), disable_rollback=False)
    assert stack.state == "ROLLBACK_COMPLETE"
    assert service.list_resources("rolled") == []
    assert event_states(service, "rolled", "good") == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE", "DELETE_IN_PROGRESS", "DELETE_COMPLETE"]
    stack_events = event_states(service, "rolled", "rolled")
    assert stack_events == ["CREATE_IN_PROGRESS", "CREATE_FAILED", "ROLLBACK_IN_PROGRESS", "ROLLBACK_COMPLETE"]


def test_create_failure_then_delete_cleans_up(service):
    service.create_stack("failing", template(FAILING))
    deleted = service.delete_stack("failing")
    assert deleted.state == "DELETE_COMPLETE"
    assert service.store.find_stack("failing") is None


def test_create_stack_name_reused_after_delete(service):
    service.create_stack("again", template(THREE))
    service.delete_stack("again")
    assert service.create_stack("again", template(THREE)).state == "CREATE_COMPLETE"


def test_fake_clock_jumps_to_next_deadline():
    clock = FakeClock()

    async def scenario() -> float:
        start = clock.now()
        await asyncio.gather(clock.sleep(5), clock.sleep(2), clock.sleep(5))
        return clock.now() - start

    assert asyncio.run(scenario()) == 5


def test_create_timeout_fails_in_flight_resources(make_service):
    clock = FakeClock()
    service = make_service(clock=clock)
    body = """
    heat_template_version: 2021-04-16
    resources:
      quick:
        type: OS::Heat::TestResource
      slow:
        type: OS::Heat::TestResource
        properties: {wait_secs: 600}
      after:
        type: OS::Heat::TestResource
        depends_on: slow
    """
    stack = service.create_stack("late", template(body), timeout_mins=2)
    assert stack.state == "CREATE_FAILED"
    assert stack.status_reason == "Timed out: the action took longer than timeout_mins (2 minutes)"
    assert states(service, "late") == {"quick": "CREATE_COMPLETE", "slow": "CREATE_FAILED", "after": "INIT_COMPLETE"}
    slow = next(r for r in service.list_resources("late") if r.name == "slow")
    assert slow.status_reason == "CREATE aborted: Timed out: the action took longer than timeout_mins (2 minutes)"
    rolled = service.create_stack("late2", template(body), timeout_mins=2, disable_rollback=False)
    assert rolled.state == "ROLLBACK_COMPLETE"
    assert service.list_resources("late2") == []
