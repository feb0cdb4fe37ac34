"""Environments through the service, as Heat reads and loads them: a PATCH update
loading its environment over the stack's own (Heat's Environment.load, where null
removes a mapping), restricted_actions by name pattern, per-resource mappings."""

from __future__ import annotations

import pytest

from stoker.template.errors import TemplateErrors
from tests.support.stacks import template

THING = """
heat_template_version: 2021-04-16
resources:
  thing: {type: My::Thing, properties: {value: one}}
outputs:
  value: {value: {get_attr: [thing, value]}}
"""


def test_update_existing_null_removes_the_stacks_mapping(service):
    service.create_stack("mapped", template(THING), [template("resource_registry:\n  My::*: OS::Heat::*\n  My::Thing: OS::Heat::Value\n", "env.yaml")])
    assert service.get_stack("mapped").state == "CREATE_COMPLETE"
    # "My::*": null removes every mapping its prefix starts (the glob and My::Thing alike).
    with pytest.raises(TemplateErrors) as raised:
        service.update_stack("mapped", environments=[template("resource_registry:\n  My::*: null\n", "unset.yaml")], existing=True)
    assert "The Resource Type (My::Thing) could not be found." in str(raised.value)
    stored = service.store.get_template(service.get_stack("mapped").raw_template_id).environment
    assert stored["resource_registry"] == {"My::*": "OS::Heat::*", "My::Thing": "OS::Heat::Value"}


def test_update_existing_null_removes_one_mapping_and_keeps_others(service):
    service.create_stack("remap", template(THING), [template("resource_registry:\n  My::Thing: OS::Heat::None\n  My::Other: OS::Heat::None\n", "env.yaml")])
    stack = service.update_stack(
        "remap",
        environments=[template("resource_registry:\n  My::Thing: null\n", "unset.yaml"), template("resource_registry:\n  My::Thing: OS::Heat::Value\n", "set.yaml")],
        existing=True,
    )
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    stored = service.store.get_template(stack.raw_template_id).environment
    assert stored["resource_registry"] == {"My::Thing": "OS::Heat::Value", "My::Other": "OS::Heat::None"}


def test_create_null_mapping_is_not_stored(service):
    environment = template("resource_registry:\n  My::Thing: OS::Heat::Value\n  My::Gone: null\n", "env.yaml")
    stack = service.create_stack("plain", template(THING), [environment])
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert service.store.get_template(stack.raw_template_id).environment["resource_registry"] == {"My::Thing": "OS::Heat::Value"}


RESTRICTED = """
heat_template_version: 2021-04-16
resources:
  db_main: {type: OS::Heat::RandomString, properties: {length: 8}}
  db_replica: {type: OS::Heat::RandomString, properties: {length: 8}}
"""


def test_restricted_actions_apply_by_name_pattern(service):
    environment = template("resource_registry:\n  resources:\n    db_*:\n      restricted_actions: replace\n", "env.yaml")
    service.create_stack("dbs", template(RESTRICTED), [environment])
    changed = RESTRICTED.replace("db_replica: {type: OS::Heat::RandomString, properties: {length: 8}}", "db_replica: {type: OS::Heat::RandomString, properties: {length: 9}}")
    stack = service.update_stack("dbs", template(changed), [environment])
    assert stack.state == "UPDATE_FAILED"
    assert "replace is restricted for resource db_replica" in stack.status_reason


def test_per_resource_mapping_changes_one_resource_only(service):
    body = """
    heat_template_version: 2021-04-16
    resources:
      kept: {type: OS::Heat::Value, properties: {value: kept}}
      swapped: {type: OS::Heat::Value, properties: {value: swapped}}
    outputs:
      kept: {value: {get_attr: [kept, value]}}
      swapped: {value: {get_attr: [swapped, value]}}
    """
    environment = template("resource_registry:\n  resources:\n    swapped:\n      OS::Heat::Value: OS::Heat::None\n", "env.yaml")
    stack = service.create_stack("one", template(body), [environment])
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    records = {r.name: r for r in service.list_resources("one")}
    assert records["swapped"].type == "OS::Heat::Value" and records["kept"].type == "OS::Heat::Value"
    outputs = {o["output_key"]: o["output_value"] for o in service.outputs("one")}
    assert outputs == {"kept": "kept", "swapped": None}


WRAP = """
heat_template_version: 2021-04-16
parameters:
  value: {type: string}
resources:
  inner: {type: OS::Heat::Value, properties: {value: {list_join: ["", [{get_param: value}, "!"]]}}}
outputs:
  value: {value: {get_attr: [inner, value]}}
"""


@pytest.mark.parametrize(
    "registry",
    ["resource_registry:\n  OS::Heat::Value: wrap.yaml\n", "resource_registry:\n  resources:\n    v:\n      OS::Heat::Value: wrap.yaml\n"],
    ids=["type", "per-resource"],
)
def test_template_wrapping_a_type_uses_the_type_inside(service, registry):
    # Heat's get_child_environment removes the entry that made the resource a template
    # resource (item_to_remove): inside wrap.yaml, OS::Heat::Value is the plugin again.
    body = "heat_template_version: 2021-04-16\nresources:\n  v: {type: OS::Heat::Value, properties: {value: hi}}\noutputs:\n  v: {value: {get_attr: [v, value]}}\n"
    stack = service.create_stack("wrapped", template(body), [template(registry, "env.yaml")], files={"wrap.yaml": WRAP})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert service.outputs("wrapped")[0]["output_value"] == "hi!"


# -- an environment that maps a type to another class: Heat replaces the resource ------

PLUGIN_MAPPED = "resource_registry:\n  My::Thing: {}\n"


def _thing(service, stack_name: str):
    [record] = [r for r in service.list_resources(stack_name) if r.name == "thing"]
    return record


def test_environment_mapping_a_type_to_another_class_replaces_the_resource(service):
    service.create_stack("remapped", template(THING), [template(PLUGIN_MAPPED.format("OS::Heat::None"), "env.yaml")])
    before = _thing(service, "remapped")
    assert service.outputs("remapped")[0]["output_value"] is None  # OS::Heat::None has no attributes
    plan = service.preview_update("remapped", template(THING), [template(PLUGIN_MAPPED.format("OS::Heat::Value"), "env.yaml")])
    [change] = plan["resource_changes"]["replaced"]
    assert change["reason"] == "the environment now maps My::Thing to OS::Heat::Value instead of OS::Heat::None"

    stack = service.update_stack("remapped", template(THING), [template(PLUGIN_MAPPED.format("OS::Heat::Value"), "env.yaml")])
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = _thing(service, "remapped")
    assert after.id != before.id and after.physical_resource_id != before.physical_resource_id
    assert service.outputs("remapped")[0]["output_value"] == "one"  # the new class made it
    assert [r.id for r in service.list_resources("remapped")] == [after.id]  # the old one is deleted
    reasons = [e.resource_status_reason for e in service.list_events("remapped", "thing")]
    assert any("instead of OS::Heat::None" in (reason or "") for reason in reasons)


def test_environment_mapping_to_the_same_class_again_updates_in_place(service):
    # The same class under another route (a glob instead of a name): nothing to replace.
    service.create_stack("same", template(THING), [template(PLUGIN_MAPPED.format("OS::Heat::Value"), "env.yaml")])
    before = _thing(service, "same")
    stack = service.update_stack("same", template(THING.replace("value: one", "value: two")), [template("resource_registry:\n  My::*: OS::Heat::*\n  My::Thing: OS::Heat::Value\n", "env.yaml")])
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = _thing(service, "same")
    assert (after.id, after.physical_resource_id) == (before.id, before.physical_resource_id)
    assert service.outputs("same")[0]["output_value"] == "two"


PROVIDER = """
heat_template_version: 2021-04-16
parameters:
  value: {{type: string}}
resources:
  inner: {{type: OS::Heat::Value, properties: {{value: {{list_join: ["", [{{get_param: value}}, "{mark}"]]}}}}}}
outputs:
  value: {{value: {{get_attr: [inner, value]}}}}
"""


def test_environment_mapping_a_type_to_another_template_updates_the_nested_stack_in_place(service):
    # Heat: both are TemplateResource; the nested stack is updated to the new template.
    files = {"a.yaml": PROVIDER.format(mark="a"), "b.yaml": PROVIDER.format(mark="b")}
    service.create_stack("provided", template(THING), [template(PLUGIN_MAPPED.format("a.yaml"), "env.yaml")], files=files)
    before = _thing(service, "provided")
    assert service.outputs("provided")[0]["output_value"] == "onea"
    stack = service.update_stack("provided", template(THING), [template(PLUGIN_MAPPED.format("b.yaml"), "env.yaml")], files=files)
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = _thing(service, "provided")
    assert (after.id, after.physical_resource_id) == (before.id, before.physical_resource_id)
    assert service.outputs("provided")[0]["output_value"] == "oneb"


def test_rollback_of_a_remapped_resource_brings_back_the_old_class(service):
    service.create_stack("back", template(THING), [template(PLUGIN_MAPPED.format("OS::Heat::Value"), "env.yaml")])
    before = _thing(service, "back")
    failing = THING.replace("outputs:", "  broken: {type: OS::Heat::TestResource, properties: {fail: true}, depends_on: [thing]}\noutputs:")
    stack = service.update_stack("back", template(failing), [template(PLUGIN_MAPPED.format("OS::Heat::None"), "env.yaml")], disable_rollback=False)
    assert stack.state == "ROLLBACK_COMPLETE", stack.status_reason
    after = _thing(service, "back")
    assert after.physical_resource_id == before.physical_resource_id  # the Value is current again
    assert service.outputs("back")[0]["output_value"] == "one"
    assert [r.name for r in service.list_resources("back")] == ["thing"]
