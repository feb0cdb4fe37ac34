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
