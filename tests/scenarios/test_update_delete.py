"""Stack update (in place, replacement, add, remove) and delete order."""

from __future__ import annotations

import pytest

from tests.support.stacks import event_states, states, template

V1 = """
heat_template_version: 2021-04-16
resources:
  base:
    type: OS::Heat::TestResource
    properties: {value: one}
  fixed:
    type: OS::Heat::RandomString
    properties: {length: 8}
  user:
    type: OS::Heat::TestResource
    properties:
      value: {list_join: [":", [{get_attr: [base, output]}, {get_attr: [fixed, value]}]]}
  doomed:
    type: OS::Heat::None
outputs:
  user: {value: {get_attr: [user, output]}}
"""


def physical_ids(service, name):
    return {r.name: r.physical_resource_id for r in service.list_resources(name)}


def test_update_in_place_keeps_physical_id_and_propagates(service):
    service.create_stack("s", template(V1))
    before = physical_ids(service, "s")
    stack = service.update_stack("s", template(V1.replace("value: one", "value: two")))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = physical_ids(service, "s")
    assert after == before
    assert event_states(service, "s", "base") == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE", "UPDATE_IN_PROGRESS", "UPDATE_COMPLETE"]
    # user's value changed because base's output changed: updated in place as well
    assert event_states(service, "s", "user")[-1] == "UPDATE_COMPLETE"
    output = service.outputs("s")[0]["output_value"]
    assert output.startswith("two:")
    # untouched resources get no events
    assert event_states(service, "s", "fixed") == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"]


def test_update_replacement_creates_new_before_deleting_old(service):
    service.create_stack("s", template(V1))
    old = physical_ids(service, "s")["fixed"]
    stack = service.update_stack("s", template(V1.replace("length: 8", "length: 9")))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    new = physical_ids(service, "s")["fixed"]
    assert new != old
    events = [(e.resource_name, e.resource_action + "_" + e.resource_status, e.physical_resource_id) for e in service.list_events("s")]
    created = events.index(("fixed", "CREATE_COMPLETE", new))
    deleted = events.index(("fixed", "DELETE_COMPLETE", old))
    assert created < deleted
    reason = next(e.resource_status_reason for e in service.list_events("s", "fixed") if e.physical_resource_id is None and e.resource_action == "CREATE" and "Replacing" in e.resource_status_reason)
    assert "length" in reason
    # the dependent resource now uses the new string, and no record of the old one remains
    fixed = next(r for r in service.store.list_resources(stack.id) if r.name == "fixed")
    fixed_value = service.store.sealer.open(fixed.data)[0]["value"]
    assert service.outputs("s")[0]["output_value"].endswith(":" + fixed_value)
    assert len(service.store.list_resources(stack.id)) == 4


def test_update_replace_requested_by_plugin(service):
    service.create_stack("s", template(V1))
    old = physical_ids(service, "s")["base"]
    changed = V1.replace("properties: {value: one}", "properties: {value: one, update_replace: true}")
    assert service.update_stack("s", template(changed)).state == "UPDATE_COMPLETE"
    assert physical_ids(service, "s")["base"] != old


def test_update_adds_and_removes_resources(service):
    service.create_stack("s", template(V1))
    changed = V1.replace("  doomed:\n    type: OS::Heat::None\n", "  fresh:\n    type: OS::Heat::None\n")
    stack = service.update_stack("s", template(changed))
    assert stack.state == "UPDATE_COMPLETE"
    assert set(states(service, "s")) == {"base", "fixed", "user", "fresh"}
    assert event_states(service, "s", "doomed")[-2:] == ["DELETE_IN_PROGRESS", "DELETE_COMPLETE"]


def test_update_failure_marks_stack_failed(service):
    service.create_stack("s", template(V1))
    broken = V1.replace("properties: {value: one}", "properties: {value: one, fail: true}")
    stack = service.update_stack("s", template(broken.replace("value: one,", "value: three,")))
    assert stack.state == "UPDATE_FAILED"
    assert "Test Resource failed base" in stack.status_reason
    # a following good update recovers
    assert service.update_stack("s", template(V1)).state == "UPDATE_COMPLETE"


def test_update_existing_reuses_template_with_new_parameters(service):
    body = """
    heat_template_version: 2021-04-16
    parameters:
      word: {type: string, default: a}
    resources:
      r:
        type: OS::Heat::TestResource
        properties: {value: {get_param: word}}
    outputs:
      word: {value: {get_attr: [r, output]}}
    """
    service.create_stack("p", template(body))
    stack = service.update_stack("p", None, parameters={"word": "b"}, existing=True)
    assert stack.state == "UPDATE_COMPLETE"
    assert service.outputs("p")[0]["output_value"] == "b"
    stack = service.update_stack("p", None, existing=True, clear_parameters=["word"])
    assert stack.state == "UPDATE_COMPLETE"
    assert service.outputs("p")[0]["output_value"] == "a"


def test_delete_goes_in_reverse_dependency_order(service):
    service.create_stack("s", template(V1))
    stack = service.delete_stack("s")
    assert stack.state == "DELETE_COMPLETE"
    deletes = [e.resource_name for e in service.store.events.list_events(stack.id) if e.resource_action == "DELETE" and e.resource_status == "COMPLETE" and e.resource_name != "s"]
    assert deletes.index("user") < deletes.index("base")
    assert deletes.index("user") < deletes.index("fixed")
    assert service.store.list_resources(stack.id) == []


def test_retain_policy_keeps_physical_resource(service):
    body = V1.replace("  doomed:\n    type: OS::Heat::None\n", "  doomed:\n    type: OS::Heat::None\n    deletion_policy: retain\n")
    stack = service.create_stack("s", template(body))
    service.delete_stack("s")
    reasons = [e.resource_status_reason for e in service.store.events.list_events(stack.id, "doomed")]
    assert reasons[-1] == "Retained: deletion_policy is Retain"


CHAIN = 200


def chain_template(length: int) -> str:
    lines = ["heat_template_version: 2021-04-16", "resources:"]
    for index in range(CHAIN):
        lines += [f"  r{index}:", "    type: OS::Heat::RandomString", "    properties:", f"      length: {length}"]
        if index:
            lines.append(f"      salt: {{get_attr: [r{index - 1}, value]}}")
    lines += ["outputs:", f"  last: {{value: {{get_attr: [r{CHAIN - 1}, value]}}}}"]
    return "\n".join(lines) + "\n"


def test_chain_of_200_creates_updates_and_deletes(make_service):
    service = make_service(max_events_per_stack=-1)  # the full history (Heat's default keeps 1000)
    stack = service.create_stack("chain", template(chain_template(8)))
    assert stack.state == "CREATE_COMPLETE"
    assert set(states(service, "chain").values()) == {"CREATE_COMPLETE"}
    before = physical_ids(service, "chain")
    stack = service.update_stack("chain", template(chain_template(10)))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = physical_ids(service, "chain")
    assert all(after[name] != before[name] for name in before)
    assert set(states(service, "chain").values()) == {"CREATE_COMPLETE"}
    assert len(service.outputs("chain")[0]["output_value"]) == 10
    for index in (0, 100, 199):
        assert event_states(service, "chain", f"r{index}") == [
            "CREATE_IN_PROGRESS", "CREATE_COMPLETE", "CREATE_IN_PROGRESS", "CREATE_COMPLETE", "DELETE_IN_PROGRESS", "DELETE_COMPLETE",
        ]
    stack = service.delete_stack("chain")
    assert stack.state == "DELETE_COMPLETE"
    assert len(service.store.events.list_events(stack.id)) == 200 * 8 + 6


def test_limits_resources_per_stack_and_event_pruning(make_service):
    from stoker.sdk.exceptions import ValidationError

    service = make_service(max_resources_per_stack=3, max_events_per_stack=5)
    body = "heat_template_version: 2021-04-16\nresources:\n" + "".join(f"  r{i}: {{type: OS::Heat::None}}\n" for i in range(4))
    with pytest.raises(ValidationError, match="The template has 4 resources; a stack may have at most 3"):
        service.create_stack("big", template(body))
    body = "heat_template_version: 2021-04-16\nresources:\n" + "".join(f"  r{i}: {{type: OS::Heat::None}}\n" for i in range(3))
    service.create_stack("small", template(body))
    events = service.list_events("small")
    assert len(events) == 5
    assert events[-1].resource_status_reason == "Stack CREATE completed successfully"
