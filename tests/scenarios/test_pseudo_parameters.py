"""Pseudo parameters of a running stack, as Heat's HOTParameters._pseudo_parameters
fills them from the stack identifier: OS::stack_name, OS::stack_id and OS::project_id
(the identifier's tenant: the project that made the stack)."""

from __future__ import annotations

from tests.support.stacks import template

PSEUDO = """
heat_template_version: 2021-04-16
resources:
  value:
    type: OS::Heat::Value
    properties:
      value: {get_param: OS::project_id}
  nested:
    type: inner.yaml
outputs:
  project: {value: {get_param: OS::project_id}}
  through_a_resource: {value: {get_attr: [value, value]}}
  nested_project: {value: {get_attr: [nested, project]}}
  stack: {value: {get_param: OS::stack_id}}
"""
INNER = """
heat_template_version: 2021-04-16
outputs:
  project: {value: {get_param: OS::project_id}}
"""


def test_os_project_id_is_the_project_that_made_the_stack(service):
    stack = service.create_stack("pseudo", template(PSEUDO), files={"inner.yaml": INNER}, project_id="5b2c0f6e-project")

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    outputs = {o["output_key"]: o["output_value"] for o in service.outputs("pseudo")}
    assert outputs == {
        "project": "5b2c0f6e-project",
        "through_a_resource": "5b2c0f6e-project",
        "nested_project": "5b2c0f6e-project",  # a nested stack belongs to its parent's project
        "stack": stack.id,
    }


def test_os_project_id_without_a_project_is_empty(service):
    # The CLI makes stacks without a project (no Keystone): Heat's default, str('').
    service.create_stack("local", template("heat_template_version: 2021-04-16\noutputs:\n  p: {value: {get_param: OS::project_id}}\n"))

    assert [o["output_value"] for o in service.outputs("local")] == [""]
