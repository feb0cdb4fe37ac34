"""Nested stacks of OS::Heat::ResourceGroup under load: batched creates and rolling
updates (update_policy), and the tree's resource limit when a group's count is known only
at run time. Split from test_nested.py, which keeps the other nested stack scenarios.
"""

from __future__ import annotations

import textwrap

import pytest

from stoker.engine.clock import FakeClock
from stoker.sdk.exceptions import ValidationError
from stoker.template.errors import TemplateErrors
from tests.scenarios.test_nested import child_of, outputs
from tests.support.stacks import template

BATCHED = """
heat_template_version: 2021-04-16
parameters:
  word: {type: string, default: one}
resources:
  group:
    type: OS::Heat::ResourceGroup
    update_policy:
      batch_create: {max_batch_size: 2, pause_time: 60}
      rolling_update: {max_batch_size: 2, pause_time: 30}
    properties:
      count: 5
      resource_def:
        type: OS::Heat::TestResource
        properties: {value: {get_param: word}}
outputs:
  values: {value: {get_attr: [group, output]}}
"""


def member_events(service, child_id: str, state: str) -> list[str]:
    return [
        e.resource_name
        for e in service.list_events(child_id)
        if f"{e.resource_action}_{e.resource_status}" == state and e.resource_type == "OS::Heat::TestResource"
    ]


def test_group_batch_create_and_rolling_update(make_service):
    clock = FakeClock()
    service = make_service(clock=clock)
    start = clock.now()
    stack = service.create_stack("batched", template(BATCHED))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    # Three batches (2, 2, 1) with a 60 s pause after each of the first two.
    assert clock.now() - start >= 120
    child = child_of(service, "batched", "group")
    created = member_events(service, child.id, "CREATE_COMPLETE")
    assert set(created[:2]) == {"0", "1"} and set(created[2:4]) == {"2", "3"} and created[4:] == ["4"]
    assert outputs(service, "batched")["values"] == ["one"] * 5
    before = {r.name: r.physical_resource_id for r in service.list_resources(child.id)}

    start = clock.now()
    stack = service.update_stack("batched", template(BATCHED), parameters={"word": "two"})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert clock.now() - start >= 60
    assert outputs(service, "batched")["values"] == ["two"] * 5
    after = {r.name: r.physical_resource_id for r in service.list_resources(child.id)}
    assert after == before  # updated in place, two at a time, in member order
    updated = member_events(service, child.id, "UPDATE_COMPLETE")
    assert set(updated[:2]) == {"0", "1"} and set(updated[2:4]) == {"2", "3"} and updated[4:] == ["4"]


def test_group_update_policy_is_validated(service):
    body = BATCHED.replace("pause_time: 30", "pause_time: 4000")
    with pytest.raises(TemplateErrors, match=r"Maximum pause_time allowed is 1hr\(3600s\), provided 4000"):
        service.create_stack("batched", template(body))
    with pytest.raises(TemplateErrors, match="max_batch_size"):
        service.create_stack("batched", template(BATCHED.replace("max_batch_size: 2, pause_time: 60", "max_batch_size: 0")))


def test_group_rolling_update_with_a_new_count_resizes_last(make_service):
    service = make_service(clock=FakeClock())
    body = BATCHED.replace("count: 5", "count: {get_param: count}").replace(
        "word: {type: string, default: one}", "word: {type: string, default: one}\n  count: {type: number, default: 3}"
    )
    service.create_stack("batched", template(body))
    stack = service.update_stack("batched", template(body), parameters={"word": "two", "count": 4})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert outputs(service, "batched")["values"] == ["two"] * 4
    child = child_of(service, "batched", "group")
    assert member_events(service, child.id, "CREATE_COMPLETE")[-1] == "3"  # the new member comes with the last step
    stack = service.update_stack("batched", template(body), parameters={"word": "three", "count": 1})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert outputs(service, "batched")["values"] == ["three"]


COUNT_AT_RUN_TIME = """
heat_template_version: 2021-04-16
parameters:
  members: {type: number, default: 1000}
resources:
  size:
    type: OS::Heat::Value
    properties: {type: number, value: {get_param: members}}
  outer:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_attr: [size, value]}
      resource_def:
        type: OS::Heat::ResourceGroup
        properties:
          count: 2
          resource_def: {type: OS::Heat::None}
"""


def test_tree_limit_fails_a_group_whose_count_is_known_only_at_run_time(service):
    """Validation cannot multiply a count that comes from get_attr; the group's create
    counts the tree before it writes its members out, and fails cleanly, naming the
    resource and the setting; no nested stack is made."""
    stack = service.create_stack("runtime", template(COUNT_AT_RUN_TIME))
    assert stack.state == "CREATE_FAILED", stack.status_reason
    outer = next(r for r in service.list_resources("runtime") if r.name == "outer")
    assert outer.status == "FAILED"
    assert "resources.outer: The nested stack would bring the stack tree of runtime to 3002 resources" in outer.status_reason
    assert "at most 1000 together" in outer.status_reason
    assert "STOKER_MAX_RESOURCES_PER_STACK" in outer.status_reason
    assert outer.physical_resource_id is None
    assert service.list_stacks(nested=True) == [service.get_stack("runtime")]
    assert service.store.count_tree_resources(stack.id) == 2


def test_tree_limit_fails_an_update_whose_count_grows_at_run_time(service):
    """A legal tree, then an update whose new parameter reaches the outer count only
    through get_attr: the outer group's update counts the tree (less the nested stacks
    it replaces) and fails cleanly before its nested stack changes."""
    stack = service.create_stack("grows", template(COUNT_AT_RUN_TIME), parameters={"members": 3})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    stack = service.update_stack("grows", template(COUNT_AT_RUN_TIME), parameters={"members": 1000})
    assert stack.state == "UPDATE_FAILED", stack.status_reason
    assert "resources.outer: The nested stack would bring the stack tree of grows to 3002 resources (2 in the rest of the tree, 3000 in this nested stack" in stack.status_reason
    assert "STOKER_MAX_RESOURCES_PER_STACK" in stack.status_reason
    assert service.store.count_tree_resources(stack.id) == 2 + 3 + 3 * 2


def test_tree_limit_counts_through_template_resources_and_parameters(make_service):
    """Validation multiplies a group's count given by a parameter, inside a template
    resource, by its member template's own resources: 1 + 1 + 40 x (1 + 3) = 162, what
    the store then holds; one over the limit is refused at the count's place."""
    leaf = "heat_template_version: 2021-04-16\nresources:\n" + "".join(f"  r{i}: {{type: OS::Heat::None}}\n" for i in range(3))
    inner = textwrap.dedent(
        """
        heat_template_version: 2021-04-16
        parameters:
          n: {type: number}
        resources:
          group:
            type: OS::Heat::ResourceGroup
            properties:
              count: {get_param: n}
              resource_def: {type: leaf.yaml}
        """
    )
    top = "heat_template_version: 2021-04-16\nresources:\n  child:\n    type: inner.yaml\n    properties: {n: 40}\n"
    files = {"inner.yaml": inner, "leaf.yaml": leaf}
    with pytest.raises(ValidationError) as refused:
        make_service(max_resources_per_stack=161).create_stack("over", template(top), files=files)
    assert refused.value.path == "resources.child.resources.group.properties.count"
    assert refused.value.message.startswith("The stack would have 162 resources with its nested stacks (40 members of 4 resources each)")
    service = make_service(max_resources_per_stack=162)
    stack = service.create_stack("fits", template(top), files=files)
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert service.store.count_tree_resources(stack.id) == 162
