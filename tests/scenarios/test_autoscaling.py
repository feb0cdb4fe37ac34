"""OS::Heat::AutoScalingGroup and OS::Heat::ScalingPolicy as a template author sees
them: the group's members in a nested stack, its attributes, size changes and rolling
updates on a stack update, and signals to a policy scaling the group out and back in
within its bounds, honouring the cooldown (on the engine's fake clock)."""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qs, urlsplit

import pytest

from stoker.engine.clock import FakeClock
from stoker.engine.errors import ActionInProgressError
from stoker.engine.signals import SignalCredentialError
from stoker.engine.states import Action
from stoker.sdk.exceptions import ResourceFailure
from stoker.template.errors import TemplateErrors
from tests.support.stacks import template

GROUP = """
heat_template_version: 2021-04-16
parameters:
  word: {type: string, default: one}
  size: {type: number, default: 2}
  batch: {type: number, default: 1}
  in_service: {type: number, default: 0}
  adjustment_type: {type: string, default: change_in_capacity}
  up_by: {type: number, default: 1}
resources:
  group:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 6
      desired_capacity: {get_param: size}
      cooldown: 60
      rolling_updates: {max_batch_size: {get_param: batch}, min_in_service: {get_param: in_service}, pause_time: 30}
      resource:
        type: OS::Heat::TestResource
        properties: {value: {get_param: word}}
  up:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: {get_resource: group}
      adjustment_type: {get_param: adjustment_type}
      scaling_adjustment: {get_param: up_by}
  down:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: {get_resource: group}
      adjustment_type: change_in_capacity
      scaling_adjustment: -1
      cooldown: 10
outputs:
  size: {value: {get_attr: [group, current_size]}}
  values: {value: {get_attr: [group, outputs_list, output]}}
  by_name: {value: {get_attr: [group, outputs, output]}}
  refs: {value: {get_attr: [group, refs]}}
  refs_map: {value: {get_attr: [group, refs_map]}}
  oldest: {value: {get_attr: [group, resource.0, output]}}
  oldest_dotted: {value: {get_attr: [group, resource.0.output]}}
  oldest_ref: {value: {get_attr: [group, resource.0]}}
  up_url: {value: {get_attr: [up, signal_url]}}
  up_alarm_url: {value: {get_attr: [up, alarm_url]}}
"""


def outputs(service, name: str) -> dict:
    return {o["output_key"]: o.get("output_value") for o in service.outputs(name)}


def child_of(service, stack_name: str):
    record = next(r for r in service.list_resources(stack_name) if r.name == "group")
    return service.store.get_stack(record.physical_resource_id)


def member_events(service, child_id: str) -> list[tuple[str, str]]:
    """(state, member) of the members' completed actions, in the order they happened."""
    return [
        (f"{e.resource_action}_{e.resource_status}", e.resource_name)
        for e in service.list_events(child_id)
        if e.resource_status == "COMPLETE" and e.resource_type == "OS::Heat::TestResource"
    ]


def signal_reasons(service, stack_name: str, policy: str) -> list[str]:
    return [e.resource_status_reason for e in service.list_events(stack_name, policy) if e.resource_action == "SIGNAL"]


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def scaling(make_service, clock):
    return make_service(clock=clock)


def test_group_members_attributes_and_delete(scaling):
    stack = scaling.create_stack("web", template(GROUP))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    result = outputs(scaling, "web")
    child = child_of(scaling, "web")
    members = {r.name: r.physical_resource_id for r in scaling.list_resources(child.id)}
    assert result["size"] == 2 and result["values"] == ["one", "one"]
    assert result["refs_map"] == members and result["refs"] == list(members.values())
    assert result["by_name"] == dict.fromkeys(members, "one")
    # Members have short random names, as in Heat; resource.0 is the oldest.
    assert all(len(name) == 12 for name in members)
    assert result["oldest"] == result["oldest_dotted"] == "one"
    assert result["oldest_ref"] == result["refs"][0]
    assert scaling.delete_stack("web").state == "DELETE_COMPLETE"
    assert scaling.store.get_stack(child.id).deleted_at is not None


def test_group_validation_follows_heat(scaling):
    with pytest.raises(TemplateErrors, match="MinSize can not be greater than MaxSize"):
        scaling.create_stack("bad", template(GROUP.replace("min_size: 1", "min_size: 7")))
    with pytest.raises(TemplateErrors, match="DesiredCapacity must be between MinSize and MaxSize"):
        scaling.create_stack("bad", template(GROUP), parameters={"size": 9})
    # A policy is validated once its group's reference resolves: at its create.
    stack = scaling.create_stack("bad", template(GROUP.replace("cooldown: 10", "cooldown: 10\n      min_adjustment_step: 2")))
    assert stack.state == "CREATE_FAILED"
    assert "min_adjustment_step property should only be specified for adjustment_type with value percent_change_in_capacity" in stack.status_reason
    with pytest.raises(TemplateErrors, match="adjustment_type"):
        scaling.create_stack("bad2", template(GROUP), parameters={"adjustment_type": "double"})


def test_group_size_changes_on_update_remove_the_oldest_first(scaling):
    scaling.create_stack("web", template(GROUP))
    first = list(outputs(scaling, "web")["refs_map"])
    stack = scaling.update_stack("web", template(GROUP), parameters={"size": 4})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    grown = list(outputs(scaling, "web")["refs_map"])
    assert len(grown) == 4 and grown[:2] == first  # existing members are kept
    stack = scaling.update_stack("web", template(GROUP), parameters={"size": 1})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert list(outputs(scaling, "web")["refs_map"]) == grown[-1:]  # the newest stays
    child = child_of(scaling, "web")
    assert [r.name for r in scaling.list_resources(child.id)] == grown[-1:]


def test_member_definition_change_rolls_out_in_batches(scaling, clock):
    scaling.create_stack("web", template(GROUP), parameters={"size": 4, "batch": 2})
    child = child_of(scaling, "web")
    names = list(outputs(scaling, "web")["refs_map"])
    before = member_events(scaling, child.id)
    start = clock.now()
    stack = scaling.update_stack("web", template(GROUP), parameters={"size": 4, "batch": 2, "word": "two"})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    # Two batches of two, the oldest members first, with one 30 s pause between them.
    assert clock.now() - start >= 30
    updated = member_events(scaling, child.id)[len(before) :]
    assert [state for state, _ in updated] == ["UPDATE_COMPLETE"] * 4
    assert {name for _, name in updated[:2]} == set(names[:2]) and {name for _, name in updated[2:]} == set(names[2:])
    assert outputs(scaling, "web")["values"] == ["two"] * 4


def test_rolling_update_keeps_min_in_service_by_adding_members_first(scaling):
    parameters = {"size": 2, "batch": 1, "in_service": 2}
    scaling.create_stack("web", template(GROUP), parameters=parameters)
    child = child_of(scaling, "web")
    old = list(outputs(scaling, "web")["refs_map"])
    before = member_events(scaling, child.id)
    stack = scaling.update_stack("web", template(GROUP), parameters={**parameters, "word": "two"})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    steps = member_events(scaling, child.id)[len(before) :]
    # Heat's batches for 2 members, 1 at a time, 2 in service: grow to 3 with a new
    # member, update the oldest, then drop the other old one.
    assert [state for state, _ in steps] == ["CREATE_COMPLETE", "UPDATE_COMPLETE", "DELETE_COMPLETE"]
    assert steps[1][1] == old[0] and steps[2][1] == old[1]
    result = outputs(scaling, "web")
    assert result["values"] == ["two", "two"] and set(result["refs_map"]) == {steps[0][1], old[0]}


def test_policy_scales_out_and_in_with_cooldown(scaling, clock):
    scaling.create_stack("web", template(GROUP))
    child = child_of(scaling, "web")
    # The group's cooldown (60 s) starts when it is created, as in Heat.
    scaling.signal_resource("web", "up", {})
    assert outputs(scaling, "web")["size"] == 2
    clock.advance(61)
    scaling.signal_resource("web", "up", {})
    assert outputs(scaling, "web")["size"] == 3
    assert scaling.store.get_stack(child.id).state == "UPDATE_COMPLETE"
    scaling.signal_resource("web", "up", {})  # within the cooldown: ignored
    assert outputs(scaling, "web")["size"] == 3
    assert signal_reasons(scaling, "web", "up") == [
        "Signal: The resource group could not perform scaling action: due to cooldown, cooldown 60",
        "Signal: Resized the group group from 2 to 3 (change_in_capacity : 1)",
        "Signal: The resource group could not perform scaling action: due to cooldown, cooldown 60",
    ]
    clock.advance(61)
    members = list(outputs(scaling, "web")["refs_map"])
    scaling.signal_resource("web", "down", {})
    result = outputs(scaling, "web")
    assert result["size"] == 2 and list(result["refs_map"]) == members[1:]  # the oldest goes
    # The down policy's own cooldown (10 s) now runs, not the group's.
    clock.advance(11)
    scaling.signal_resource("web", "down", {})
    assert outputs(scaling, "web")["size"] == 1
    clock.advance(11)
    scaling.signal_resource("web", "down", {})  # at min_size: nothing to do
    assert outputs(scaling, "web")["size"] == 1
    assert signal_reasons(scaling, "web", "down")[-1] == "Signal: group NOT performing scaling adjustment, as there is no change in capacity."
    # The stack itself never left its state: scaling is the group's nested stack's.
    assert scaling.get_stack("web").state == "CREATE_COMPLETE"


@pytest.mark.parametrize(
    ("adjustment_type", "adjustment", "step", "start", "expected"),
    [
        ("exact_capacity", 5, None, 2, 5),
        ("exact_capacity", 9, None, 2, 6),  # max_size bounds it
        ("change_in_capacity", 3, None, 4, 6),
        ("change_in_capacity", -5, None, 2, 1),  # min_size bounds it
        ("percent_change_in_capacity", 50, None, 2, 3),
        ("percent_change_in_capacity", 10, None, 4, 5),  # less than one member still moves one
        ("percent_change_in_capacity", 10, 2, 4, 6),  # min_adjustment_step
        ("percent_change_in_capacity", -60, None, 5, 2),  # more than one: rounded toward zero
    ],
)
def test_policy_adjustment_types_and_bounds(scaling, clock, adjustment_type, adjustment, step, start, expected):
    body = GROUP
    if step is not None:
        body = body.replace("scaling_adjustment: {get_param: up_by}", f"scaling_adjustment: {{get_param: up_by}}\n      min_adjustment_step: {step}")
    parameters = {"size": start, "adjustment_type": adjustment_type, "up_by": adjustment}
    scaling.create_stack("web", template(body), parameters=parameters)
    clock.advance(61)
    scaling.signal_resource("web", "up", {})
    assert outputs(scaling, "web")["size"] == expected
    child = child_of(scaling, "web")
    assert len(scaling.list_resources(child.id)) == expected


def test_the_scaled_size_is_stored_and_kept_by_later_updates(scaling, make_service, clock):
    body = GROUP.replace("      desired_capacity: {get_param: size}\n", "")
    scaling.create_stack("web", template(body))
    clock.advance(61)
    scaling.signal_resource("web", "up", {})
    members = outputs(scaling, "web")["refs_map"]
    assert len(members) == 2
    # Another engine over the same store sees the same group, and its cooldown.
    later = make_service(clock=clock)
    assert outputs(later, "web")["refs_map"] == members
    later.signal_resource("web", "up", {})
    assert outputs(later, "web")["size"] == 2
    assert signal_reasons(later, "web", "up")[-1].endswith("due to cooldown, cooldown 60")
    # Without desired_capacity an update keeps the scaled size (rolling out a change).
    stack = later.update_stack("web", template(body), parameters={"word": "two"})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert outputs(later, "web")["values"] == ["two", "two"]
    stack = later.update_stack("web", template(body), parameters={"word": "two"}, disable_rollback=False)
    assert stack.state == "UPDATE_COMPLETE" and outputs(later, "web")["size"] == 2


def test_a_signal_while_the_stack_is_busy_is_refused(scaling, clock):
    stack = scaling.create_stack("web", template(GROUP))
    clock.advance(61)

    async def while_held() -> None:
        async with scaling.engine.holding(stack.id):
            with pytest.raises(ActionInProgressError):
                await asyncio.to_thread(scaling.signal_resource, "web", "up", {})

    asyncio.run(while_held())
    assert outputs(scaling, "web")["size"] == 2
    scaling.signal_resource("web", "up", {})  # once idle again, it scales
    assert outputs(scaling, "web")["size"] == 3


def test_signal_url_names_the_policy(scaling, clock):
    stack = scaling.create_stack("web", template(GROUP))
    result = outputs(scaling, "web")
    assert result["up_url"].endswith(f"/stacks/web/{stack.id}/resources/up/signal")
    # alarm_url is the policy's own capability URL: an alarm POSTs to it with no token.
    alarm = result["up_alarm_url"]
    assert alarm.startswith("http://127.0.0.1:8004/v1/waitcondition/") and "?secret=" in alarm
    parts = urlsplit(alarm)
    credential_id, secret = parts.path.rsplit("/", 1)[1], parse_qs(parts.query)["secret"][0]
    assert outputs(scaling, "web")["size"] == 2
    clock.advance(61)  # past the group's cooldown
    scaling.signal_by_capability(credential_id, secret, {"current": "alarm"})
    assert outputs(scaling, "web")["size"] == 3
    with pytest.raises(SignalCredentialError):
        scaling.signal_by_capability(credential_id, secret + "x", {})
    scaling.delete_stack("web")
    with pytest.raises(SignalCredentialError):
        scaling.signal_by_capability(credential_id, secret, {})


MEMBER = """
heat_template_version: 2016-10-14
parameters:
  label: {type: string}
resources:
  word:
    type: OS::Heat::Value
    properties: {value: {get_param: label}}
outputs:
  said: {value: {get_attr: [word, value]}}
"""

OF_STACKS = """
heat_template_version: 2016-10-14
resources:
  asg:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 2
      max_size: 3
      resource:
        type: member.yaml
        properties: {label: hello}
  scaleup_policy:
    type: OS::Heat::ScalingPolicy
    properties:
      adjustment_type: change_in_capacity
      auto_scaling_group_id: {get_resource: asg}
      cooldown: 60
      scaling_adjustment: 1
outputs:
  said: {value: {get_attr: [asg, outputs_list, said]}}
  scale_up_url: {value: {get_attr: [scaleup_policy, alarm_url]}}
"""


def test_group_of_template_resources_as_heat_templates_write_it(scaling):
    """The shape of heat-templates' asg_of_stacks.yaml: members are a template resource."""
    stack = scaling.create_stack("stacks", template(OF_STACKS), files={"member.yaml": MEMBER})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert outputs(scaling, "stacks")["said"] == ["hello", "hello"]
    scaling.signal_resource("stacks", "scaleup_policy", {})  # the group's cooldown is 0: at once
    assert outputs(scaling, "stacks")["said"] == ["hello"] * 3
    assert scaling.delete_stack("stacks").state == "DELETE_COMPLETE"


def test_a_suspended_policy_ignores_signals_until_resumed(scaling, clock):
    scaling.create_stack("web", template(GROUP))
    clock.advance(61)
    assert scaling.stack_action("web", Action.SUSPEND).state == "SUSPEND_COMPLETE"
    scaling.signal_resource("web", "up", {})
    assert outputs(scaling, "web")["size"] == 2
    assert signal_reasons(scaling, "web", "up") == ["Signal: Cannot signal resource during SUSPEND"]
    assert scaling.stack_action("web", Action.RESUME).state == "RESUME_COMPLETE"
    scaling.signal_resource("web", "up", {})
    assert outputs(scaling, "web")["size"] == 3


def test_a_policy_without_its_group_fails_the_signal(scaling):
    body = GROUP.replace("auto_scaling_group_id: {get_resource: group}\n      adjustment_type: change_in_capacity", "auto_scaling_group_id: no-such-group\n      adjustment_type: change_in_capacity")
    scaling.create_stack("web", template(body))
    with pytest.raises(ResourceFailure, match='Alarm down could not find scaling group named "no-such-group"'):
        scaling.signal_resource("web", "down", {})
    (event,) = [e for e in scaling.list_events("web", "down") if e.resource_action == "SIGNAL"]
    assert event.resource_status == "FAILED"


FAILING = """
heat_template_version: 2021-04-16
resources:
  group:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 0
      max_size: 2
      cooldown: 60
      resource:
        type: OS::Heat::TestResource
        properties: {fail: true}
  up:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: {get_resource: group}
      adjustment_type: change_in_capacity
      scaling_adjustment: 1
outputs:
  size: {value: {get_attr: [group, current_size]}}
  refs_map: {value: {get_attr: [group, refs_map]}}
"""


def test_a_failed_resize_fails_the_signal_and_starts_no_cooldown(scaling, clock):
    stack = scaling.create_stack("failing", template(FAILING))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    clock.advance(61)
    with pytest.raises(ResourceFailure, match="nested stack UPDATE failed"):
        scaling.signal_resource("failing", "up", {})
    assert child_of(scaling, "failing").state == "UPDATE_FAILED"
    # A failed member is no part of the group's size (Heat counts the healthy ones).
    result = outputs(scaling, "failing")
    assert result["size"] == 0 and len(result["refs_map"]) == 1
    assert [e.resource_status for e in scaling.list_events("failing", "up") if e.resource_action == "SIGNAL"] == ["FAILED"]
    # No cooldown began, so the next signal tries again at once: from size 0 to 1,
    # the failed member is the one kept (and replaced by the child's update).
    with pytest.raises(ResourceFailure, match="nested stack UPDATE failed"):
        scaling.signal_resource("failing", "up", {})
    assert list(outputs(scaling, "failing")["refs_map"]) == list(result["refs_map"])
    assert scaling.get_stack("failing").state == "CREATE_COMPLETE"
