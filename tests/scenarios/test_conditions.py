"""Conditions decide which resources exist; updates follow when they flip."""

from __future__ import annotations

from tests.support.stacks import states, template

BODY = """
heat_template_version: 2021-04-16
parameters:
  env: {type: string, default: test, constraints: [{allowed_values: [test, prod]}]}
conditions:
  is_prod: {equals: [{get_param: env}, prod]}
  is_test: {not: is_prod}
resources:
  always:
    type: OS::Heat::Value
    properties:
      value: {if: [is_prod, "big", "small"]}
  backup:
    type: OS::Heat::RandomString
    condition: is_prod
  scratch:
    type: OS::Heat::None
    condition: is_test
outputs:
  size: {value: {get_attr: [always, value]}}
  backup:
    value: {get_attr: [backup, value]}
    condition: is_prod
"""


def test_conditions_choose_resources_and_values(service):
    stack = service.create_stack("c", template(BODY))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert set(states(service, "c")) == {"always", "scratch"}
    outputs = {o["output_key"]: o.get("output_value") for o in service.outputs("c")}
    assert outputs == {"size": "small", "backup": None}
    stack = service.update_stack("c", template(BODY), parameters={"env": "prod"})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert set(states(service, "c")) == {"always", "backup"}
    outputs = {o["output_key"]: o.get("output_value") for o in service.outputs("c")}
    assert outputs["size"] == "big" and len(outputs["backup"]) == 32


def test_condition_preview_matches(service):
    service.create_stack("c", template(BODY))
    preview = service.preview_update("c", template(BODY), parameters={"env": "prod"})
    changes = {kind: {r["resource_name"] for r in entries} for kind, entries in preview["resource_changes"].items()}
    assert changes["added"] == {"backup"}
    assert changes["deleted"] == {"scratch"}
    assert changes["updated"] == {"always"}
