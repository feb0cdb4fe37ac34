"""Nested stacks: OS::Heat::Stack, template resources and OS::Heat::ResourceGroup.

Each child is a stack of its own (owner_id, nested_depth) run as its own job; these
scenarios check what a template author sees: attributes through the parent, updates
that reach the child, scaling, removal policies, failures, rollback, limits, timeouts.
"""

from __future__ import annotations

import textwrap

import pytest

from stoker.engine.clock import FakeClock
from stoker.sdk.exceptions import ValidationError
from stoker.template.errors import TemplateErrors
from tests.support.stacks import states, template
from tests.support.waiting import finished, in_background, wait_until

GROUP = """
heat_template_version: 2021-04-16
parameters:
  count: {type: number, default: 3}
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: count}
      resource_def:
        type: OS::Heat::Value
        properties: {value: "member-%index%"}
  joined:
    type: OS::Heat::Value
    properties:
      value: {list_join: [",", {get_attr: [group, value]}]}
outputs:
  refs: {value: {get_attr: [group, refs]}}
  refs_map: {value: {get_attr: [group, refs_map]}}
  values: {value: {get_attr: [group, value]}}
  second: {value: {get_attr: [group, resource.1, value]}}
  second_dotted: {value: {get_attr: [group, resource.1.value]}}
  second_ref: {value: {get_attr: [group, resource.1]}}
  by_name: {value: {get_attr: [group, attributes, value]}}
  removed: {value: {get_attr: [group, removed_rsrc_list]}}
  joined: {value: {get_attr: [joined, value]}}
"""


def outputs(service, name: str) -> dict:
    return {o["output_key"]: o.get("output_value") for o in service.outputs(name)}


def child_of(service, stack_name: str, resource_name: str):
    record = next(r for r in service.list_resources(stack_name) if r.name == resource_name)
    return service.store.get_stack(record.physical_resource_id)


def test_group_members_and_their_attributes(service):
    stack = service.create_stack("web", template(GROUP))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    result = outputs(service, "web")
    assert result["values"] == ["member-0", "member-1", "member-2"]
    assert result["second"] == result["second_dotted"] == "member-1"
    assert result["by_name"] == {"0": "member-0", "1": "member-1", "2": "member-2"}
    assert result["joined"] == "member-0,member-1,member-2"
    child = child_of(service, "web", "group")
    members = {r.name: r.physical_resource_id for r in service.list_resources(child.id)}
    assert result["refs"] == [members["0"], members["1"], members["2"]]
    assert result["refs_map"] == members
    assert result["second_ref"] == members["1"]
    assert result["removed"] == []
    # The child is a stack of its own, hidden from the plain list.
    assert (
        child.owner_id == stack.id and child.owner_resource == "group" and child.nested_depth == 1
    )
    assert child.name.startswith("web-group-")
    assert [s.name for s in service.list_stacks()] == ["web"]
    assert {s.name for s in service.list_stacks(nested=True)} == {"web", child.name}


def test_group_scales_up_and_down_keeping_existing_members(service):
    service.create_stack("web", template(GROUP))
    child = child_of(service, "web", "group")
    before = {r.name: r.physical_resource_id for r in service.list_resources(child.id)}
    stack = service.update_stack("web", template(GROUP), parameters={"count": 5})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert child_of(service, "web", "group").id == child.id  # updated in place
    after = {r.name: r.physical_resource_id for r in service.list_resources(child.id)}
    assert set(after) == {"0", "1", "2", "3", "4"}
    assert all(after[name] == before[name] for name in before)
    assert outputs(service, "web")["joined"] == "member-0,member-1,member-2,member-3,member-4"
    stack = service.update_stack("web", template(GROUP), parameters={"count": 2})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert {r.name for r in service.list_resources(child.id)} == {"0", "1"}
    assert outputs(service, "web")["values"] == ["member-0", "member-1"]


def test_group_removal_policies_remove_named_members_for_good(service):
    body = GROUP.replace(
        'properties: {value: "member-%index%"}',
        'properties: {value: "member-%index%"}\n      removal_policies: [{resource_list: {get_param: remove}}]',
    ).replace(
        "count: {type: number, default: 3}",
        "count: {type: number, default: 3}\n  remove: {type: comma_delimited_list, default: []}",
    )
    service.create_stack("web", template(body))
    child = child_of(service, "web", "group")
    refs = outputs(service, "web")["refs"]
    # Remove member 1 by name and member 0 by its reference; the count stays 3.
    stack = service.update_stack("web", template(body), parameters={"remove": f"1,{refs[0]}"})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert sorted(r.name for r in service.list_resources(child.id)) == ["2", "3", "4"]
    result = outputs(service, "web")
    assert result["values"] == ["member-2", "member-3", "member-4"]
    assert sorted(result["removed"]) == ["0", "1"]
    # Removed names are never reused, even once the policy is gone.
    stack = service.update_stack("web", template(body), parameters={"remove": "", "count": 4})
    assert sorted(r.name for r in service.list_resources(child.id)) == ["2", "3", "4", "5"]


def test_group_of_zero_and_index_var(service):
    body = """
    heat_template_version: 2021-04-16
    resources:
      none:
        type: OS::Heat::ResourceGroup
        properties: {count: 0, resource_def: {type: OS::Heat::TestResource}}
      named:
        type: OS::Heat::ResourceGroup
        properties:
          count: 2
          index_var: __n__
          resource_def:
            type: OS::Heat::TestResource
            properties: {value: "server-__n__-%index%"}
    outputs:
      none: {value: {get_attr: [none, refs]}}
      named: {value: {get_attr: [named, output]}}
    """
    stack = service.create_stack("groups", template(body))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert outputs(service, "groups") == {
        "none": [],
        "named": ["server-0-%index%", "server-1-%index%"],
    }


PROVIDER = """
heat_template_version: 2021-04-16
description: One labelled value
parameters:
  name: {type: string, description: The label's name}
  size: {type: number, default: 2}
  tags: {type: comma_delimited_list, default: []}
resources:
  label:
    type: OS::Heat::Value
    properties:
      value:
        str_replace: {template: NAME-SIZE, params: {NAME: {get_param: name}, SIZE: {get_param: size}}}
outputs:
  label: {value: {get_attr: [label, value]}, description: The label}
  tag_count: {value: {length: {get_param: tags}}}
"""

USES_PROVIDER = """
heat_template_version: 2021-04-16
resources:
  mapped: {type: "My::Label", properties: {name: alpha}}
  direct: {type: label.yaml, properties: {name: beta, size: 7, tags: [a, b]}}
outputs:
  mapped: {value: {get_attr: [mapped, label]}}
  direct: {value: {get_attr: [direct, label]}}
  inner: {value: {get_attr: [direct, resource.label, value]}}
  reference: {value: {get_resource: direct}}
"""

ENVIRONMENT = "resource_registry:\n  My::Label: label.yaml\n"


def test_template_resources_from_the_files_map(service):
    files = {
        "label.yaml": textwrap.dedent(PROVIDER).replace(
            "{length: {get_param: tags}}", "{get_param: tags}"
        )
    }
    stack = service.create_stack(
        "labels", template(USES_PROVIDER), [template(ENVIRONMENT, "env.yaml")], files=files
    )
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    result = outputs(service, "labels")
    assert result["mapped"] == "alpha-2"
    assert result["direct"] == result["inner"] == "beta-7"
    direct = child_of(service, "labels", "direct")
    assert result["reference"] == direct.id
    assert direct.parameters == {"name": "beta", "size": 7, "tags": ["a", "b"]}
    assert {r.type for r in service.list_resources("labels")} == {"My::Label", "label.yaml"}


def test_template_resource_reference_is_its_stack_id_output(service):
    provider = textwrap.dedent(PROVIDER) + "  OS::stack_id: {value: {get_resource: label}}\n"
    provider = provider.replace("  tag_count: {value: {length: {get_param: tags}}}\n", "")
    stack = service.create_stack(
        "labels",
        template(USES_PROVIDER),
        [template(ENVIRONMENT, "env.yaml")],
        files={"label.yaml": provider},
    )
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    inner = service.list_resources(child_of(service, "labels", "direct").id)[0]
    assert outputs(service, "labels")["reference"] == inner.physical_resource_id


def test_a_changed_provider_template_updates_the_child_with_the_same_properties(service):
    files = {
        "label.yaml": textwrap.dedent(PROVIDER).replace(
            "  tag_count: {value: {length: {get_param: tags}}}\n", ""
        )
    }
    service.create_stack(
        "labels", template(USES_PROVIDER), [template(ENVIRONMENT, "env.yaml")], files=files
    )
    changed = {"label.yaml": files["label.yaml"].replace("NAME-SIZE", "NAME/SIZE")}
    stack = service.update_stack(
        "labels", template(USES_PROVIDER), [template(ENVIRONMENT, "env.yaml")], files=changed
    )
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert outputs(service, "labels")["direct"] == "beta/7"
    # An update that changes nothing leaves the children alone.
    child = child_of(service, "labels", "direct")
    events = len(service.list_events(child.id))
    service.update_stack(
        "labels", template(USES_PROVIDER), [template(ENVIRONMENT, "env.yaml")], files=changed
    )
    assert len(service.list_events(child.id)) == events


def test_template_resource_errors_name_the_nested_file_and_line(service):
    broken = textwrap.dedent(PROVIDER).replace("type: OS::Heat::Value", "type: OS::Heat::Valeu")
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(
            "labels",
            template(USES_PROVIDER),
            [template(ENVIRONMENT, "env.yaml")],
            files={"label.yaml": broken},
        )
    text = str(raised.value)
    assert (
        "label.yaml:10:11: resources.label.type: The Resource Type (OS::Heat::Valeu) could not be found"
        in text
    )
    assert "template.yaml:4:11: resources.mapped: nested stack: label.yaml:10:11" in text
    assert "template.yaml:5:11: resources.direct: nested stack: label.yaml:10:11" in text
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(
            "labels", template(USES_PROVIDER), [template(ENVIRONMENT, "env.yaml")], files={}
        )
    assert 'Could not fetch remote template "label.yaml"' in str(raised.value)
    files = {"label.yaml": textwrap.dedent(PROVIDER)}
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(
            "labels",
            template(USES_PROVIDER.replace("{name: alpha}", "{nmae: alpha}")),
            [template(ENVIRONMENT, "env.yaml")],
            files=files,
        )
    assert "resources.mapped.properties.nmae: Unknown Property nmae (did you mean 'name'?)" in str(
        raised.value
    )
    assert service.list_stacks(nested=True) == []


NESTED = """
heat_template_version: 2021-04-16
resources:
  inner:
    type: OS::Heat::Stack
    properties:
      parameters: {greeting: {get_param: greeting}}
      template: |
        heat_template_version: 2021-04-16
        parameters:
          greeting: {type: string}
        resources:
          words: {type: OS::Heat::TestResource, properties: {value: {get_param: greeting}, fail: {get_param: fail}}}
        outputs:
          said: {value: {get_attr: [words, output]}}
parameters:
  greeting: {type: string, default: hello}
outputs:
  said: {value: {get_attr: [inner, outputs, said]}}
  all: {value: {get_attr: [inner, outputs]}}
  name: {value: {get_attr: [inner, stack_name]}}
"""


def nested_body(fail: bool = False) -> str:
    text = textwrap.dedent(NESTED)
    return text.replace("fail: {get_param: fail}", f"fail: {str(fail).lower()}")


def test_os_heat_stack_outputs_and_update(service):
    stack = service.create_stack("outer", template(nested_body()))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    child = child_of(service, "outer", "inner")
    assert outputs(service, "outer") == {
        "said": "hello",
        "all": {"said": "hello"},
        "name": child.name,
    }
    stack = service.update_stack("outer", template(nested_body()), parameters={"greeting": "bye"})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert outputs(service, "outer")["said"] == "bye"
    assert service.store.get_stack(child.id).state == "UPDATE_COMPLETE"
    assert states(service, child.id) == {"words": "UPDATE_COMPLETE"}


def test_a_failure_inside_a_nested_stack_fails_its_parent_resource(service):
    stack = service.create_stack("outer", template(nested_body(fail=True)))
    assert stack.state == "CREATE_FAILED"
    record = service.list_resources("outer")[0]
    assert record.state == "CREATE_FAILED"
    assert record.status_reason.startswith(
        "resources.inner: nested stack CREATE failed: Resource CREATE failed:"
    )
    assert "resources.words" in record.status_reason
    assert service.store.get_stack(record.physical_resource_id).state == "CREATE_FAILED"
    # A rollback deletes the nested stacks with their parent's resources.
    rolled = service.create_stack(
        "outer2", template(nested_body(fail=True)), disable_rollback=False
    )
    assert rolled.state == "ROLLBACK_COMPLETE"
    assert [s for s in service.list_stacks(nested=True) if s.owner_id == rolled.id] == []
    assert service.store.child_stacks(rolled.id) == []


def test_failed_update_rolls_the_nested_stack_back(service):
    service.create_stack("outer", template(nested_body()), disable_rollback=False)
    child = child_of(service, "outer", "inner")
    stack = service.update_stack(
        "outer", template(nested_body(fail=True)), parameters={"greeting": "bye"}
    )
    assert stack.state == "ROLLBACK_COMPLETE", stack.status_reason
    assert outputs(service, "outer")["said"] == "hello"
    assert service.store.get_stack(child.id).state == "UPDATE_COMPLETE"


def test_nested_stacks_change_only_through_their_parent(service):
    service.create_stack("outer", template(nested_body()))
    child = child_of(service, "outer", "inner")
    with pytest.raises(ValidationError, match="is nested in stack outer"):
        service.delete_stack(child.id)
    with pytest.raises(ValidationError, match="act on the parent stack"):
        service.update_stack(child.name, existing=True)
    assert service.delete_stack("outer").state == "DELETE_COMPLETE"
    assert service.store.get_stack(child.id).deleted_at is not None


def test_a_nested_resource_marked_unhealthy_is_replaced_by_the_root_update(service):
    """Heat marks a nested stack's resource unhealthy too (heat-templates' autohealing marks
    a group member's server), under the root's lock; the root's update replaces it."""
    body = """
heat_template_version: 2021-04-16
resources:
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def: {type: OS::Heat::RandomString, properties: {length: 8}}
"""
    assert service.create_stack("healed", template(body)).state == "CREATE_COMPLETE"
    child = child_of(service, "healed", "group")
    before = {r.name: r.physical_resource_id for r in service.list_resources(child.id)}
    service.mark_unhealthy(child.id, "1", unhealthy=True, reason="alarm")
    marked = next(r for r in service.list_resources(child.id) if r.name == "1")
    assert (marked.action, marked.status, marked.status_reason) == ("CHECK", "FAILED", "alarm")
    with pytest.raises(ValidationError, match="act on the parent stack"):
        service.update_stack(child.id, existing=True)
    stack = service.update_stack("healed", existing=True)
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = {r.name: r.physical_resource_id for r in service.list_resources(child.id)}
    assert after["0"] == before["0"] and after["1"] != before["1"]


def chain(depth: int) -> dict[str, str]:
    """level0.yaml uses level1.yaml ... uses level<depth>.yaml (a plain Value)."""
    files = {}
    for level in range(depth):
        files[f"level{level}.yaml"] = (
            f"heat_template_version: 2021-04-16\nresources:\n  next: {{type: level{level + 1}.yaml}}\n"
        )
    files[f"level{depth}.yaml"] = (
        "heat_template_version: 2021-04-16\nresources:\n  leaf: {type: OS::Heat::Value, properties: {value: leaf}}\n"
    )
    return files


def test_nested_depth_limit(make_service):
    top = "heat_template_version: 2021-04-16\nresources:\n  start: {type: level0.yaml}\n"
    service = make_service(max_nested_depth=3)
    # depth 1 (level0) .. depth 3 (level2): allowed
    stack = service.create_stack("deep", template(top), files=chain(2))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert max(s.nested_depth for s in service.list_stacks(nested=True)) == 3
    with pytest.raises(TemplateErrors, match=r"Recursion depth exceeds 3\."):
        service.create_stack("deeper", template(top), files=chain(3))
    loop = "heat_template_version: 2021-04-16\nresources:\n  again: {type: loop.yaml}\n"
    with pytest.raises(
        TemplateErrors,
        match=r"The template resource loop.yaml contains itself \(loop.yaml -> loop.yaml\)",
    ):
        service.create_stack("loop", template(loop, "loop.yaml"), files={"loop.yaml": loop})


def test_parent_timeout_stops_the_nested_stacks(make_service):
    service = make_service(clock=FakeClock())
    body = """
    heat_template_version: 2021-04-16
    resources:
      group:
        type: OS::Heat::ResourceGroup
        properties:
          count: 2
          resource_def: {type: OS::Heat::TestResource, properties: {wait_secs: 600}}
    """
    stack = service.create_stack("late", template(body), timeout_mins=2)
    assert stack.state == "CREATE_FAILED"
    assert stack.status_reason == "Timed out: the action took longer than timeout_mins (2 minutes)"
    child = child_of(service, "late", "group")
    assert child.state == "CREATE_FAILED"
    assert child.status_reason.startswith("the parent stack's action stopped: Timed out")
    assert set(states(service, child.id).values()) == {"CREATE_FAILED"}
    assert all(s.status != "IN_PROGRESS" for s in service.list_stacks(nested=True))
    # Deleting the parent cleans everything up.
    assert service.delete_stack("late").state == "DELETE_COMPLETE"
    assert service.list_stacks(nested=True) == []


def test_suspend_and_resume_reach_every_level(service):
    files = chain(1)
    top = "heat_template_version: 2021-04-16\nresources:\n  start: {type: level0.yaml}\n"
    service.create_stack("deep", template(top), files=files)
    assert service.stack_action("deep", "SUSPEND").state == "SUSPEND_COMPLETE"
    assert {s.state for s in service.list_stacks(nested=True)} == {"SUSPEND_COMPLETE"}
    assert service.stack_action("deep", "RESUME").state == "RESUME_COMPLETE"
    assert {s.state for s in service.list_stacks(nested=True)} == {"RESUME_COMPLETE"}


def test_validate_show_nested_parameters(service):
    files = {"label.yaml": textwrap.dedent(PROVIDER)}
    body, _ = service.validate_template(
        template(USES_PROVIDER), [template(ENVIRONMENT, "env.yaml")], files=files, show_nested=True
    )
    nested = body["NestedParameters"]
    assert set(nested) == {"mapped", "direct"}
    assert nested["direct"]["Type"] == "label.yaml"
    assert nested["mapped"]["Type"] == "My::Label"
    assert nested["direct"]["Description"] == "One labelled value"
    assert nested["direct"]["Parameters"]["name"] == {
        "Type": "String",
        "NoEcho": "false",
        "Description": "The label's name",
        "Label": "name",
        "Value": "beta",
    }
    assert nested["direct"]["Parameters"]["size"]["Value"] == 7
    assert nested["mapped"]["Parameters"]["size"] == {
        "Type": "Number",
        "NoEcho": "false",
        "Description": "",
        "Label": "size",
        "Default": 2,  # no Value: nothing gives it one (Heat's user_value)
    }
    plain, _ = service.validate_template(
        template(USES_PROVIDER), [template(ENVIRONMENT, "env.yaml")], files=files
    )
    assert "NestedParameters" not in plain


def test_export_and_abandon_include_the_nested_stacks(make_service):
    service = make_service(enable_stack_abandon=True)
    service.create_stack("outer", template(nested_body()))
    child = child_of(service, "outer", "inner")
    exported = service.export_stack("outer")
    inner = exported["resources"]["inner"]
    assert inner["resource_id"] == child.id
    assert inner["resources"]["words"]["type"] == "OS::Heat::TestResource"
    assert service.abandon_stack("outer")["resources"] == exported["resources"]
    assert service.list_stacks(nested=True) == []
    assert service.store.get_stack(child.id).deleted_at is not None


def test_nested_stacks_inherit_the_registry_and_parameter_defaults_not_parameters(service):
    inner = """
    heat_template_version: 2021-04-16
    parameters:
      flavor: {type: string, default: small}
      name: {type: string, default: unnamed}
    resources:
      v: {type: OS::Heat::Value, properties: {value: {list_join: ["-", [{get_param: flavor}, {get_param: name}]]}}}
    outputs:
      label: {value: {get_attr: [v, value]}}
    """
    outer = """
    heat_template_version: 2021-04-16
    parameters:
      name: {type: string}
    resources:
      group:
        type: OS::Heat::ResourceGroup
        properties: {count: 1, resource_def: {type: "My::Inner"}}
    outputs:
      labels: {value: {get_attr: [group, label]}}
    """
    environment = """
    parameters: {name: outer-only}
    parameter_defaults: {flavor: large}
    resource_registry: {"My::Inner": inner.yaml}
    """
    stack = service.create_stack("inherit", template(outer), [template(environment, "env.yaml")], files={"inner.yaml": textwrap.dedent(inner)})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert outputs(service, "inherit")["labels"] == ["large-unnamed"]


def test_hooks_nest_by_resource_name(service):
    body = """
    heat_template_version: 2021-04-16
    resources:
      group:
        type: OS::Heat::ResourceGroup
        properties: {count: 2, resource_def: {type: OS::Heat::TestResource}}
      "0": {type: OS::Heat::TestResource}
    """
    # The hook is on member 0 of the group, not on the top-level resource named 0.
    hooks = 'resource_registry:\n  resources:\n    gr*:\n      "0": {hooks: pre-create}\n'
    thread, result = in_background(lambda: service.create_stack("hooked", template(body), [template(hooks, "env.yaml")]))

    def waiting_member():
        stack = service.store.find_stack("hooked")
        record = next((r for r in service.list_resources(stack.id) if r.name == "group"), None) if stack else None
        if record is None or record.physical_resource_id is None:
            return None
        # The parent records the child's id before the child's row is written.
        members = {r.name: r for r in service.store.list_resources(record.physical_resource_id) if r.current}
        return record.physical_resource_id if members.get("0") and members["0"].hook == "pre-create" else None

    child_id = wait_until(waiting_member, "member 0's pre-create hook's pause", interval_s=0.05)
    assert {r.name: r.state for r in service.list_resources("hooked")}["0"] == "CREATE_COMPLETE"
    service.clear_hook(child_id, "0", "pre-create")
    assert finished(thread, result).state == "CREATE_COMPLETE", result["stack"].status_reason


# -- the resource limit counts the whole tree (issue 26) --------------------------------

# A group of groups whose outer count is known only once ``size`` exists: validation
# counts one member (a lower bound), the outer group's create or update multiplies it.
