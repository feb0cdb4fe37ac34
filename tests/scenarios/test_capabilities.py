"""Capabilities resolution through whole stacks (seed 003): lists in the registry at every
level a mapping works (top level, per-resource blocks, nested stacks that inherit
``requires`` with the registry), validation errors with their place, and updates that
change ``requires``."""

from __future__ import annotations

import textwrap

import pytest

from stoker.service import Source
from stoker.template.errors import TemplateErrors
from tests.support.stacks import template

PARENT = """
heat_template_version: 2021-04-16
resources:
  web:
    type: OS::Demo::Role
  db:
    type: OS::Demo::Role
outputs:
  web: {value: {get_attr: [web, tool]}}
  db: {value: {get_attr: [db, tool]}}
"""


def role(tool: str) -> str:
    # A role's template composes another listed type: the nested stack resolves it with
    # the requires it inherits.
    return textwrap.dedent(
        f"""\
        heat_template_version: 2015-10-15
        capabilities: {{deployment: {tool}, resource_type: OS::Demo::Role}}
        resources:
          agent: {{type: OS::Demo::Agent}}
        outputs:
          tool: {{value: {{list_join: [" ", [{tool}, {{get_attr: [agent, kind]}}]]}}}}
        """
    )


def agent(tool: str) -> str:
    return textwrap.dedent(
        f"""\
        heat_template_version: 2015-10-15
        capabilities: {{deployment: {tool}}}
        resources:
          value: {{type: OS::Heat::Value, properties: {{value: {tool}-agent}}}}
        outputs:
          kind: {{value: {{get_attr: [value, value]}}}}
        """
    )


FILES = {
    "puppet/role.yaml": role("puppet"),
    "docker/role.yaml": role("docker"),
    "puppet/agent.yaml": agent("puppet"),
    "docker/agent.yaml": agent("docker"),
}
REGISTRY = """
resource_registry:
  OS::Demo::Role: [puppet/role.yaml, docker/role.yaml]
  OS::Demo::Agent: [puppet/agent.yaml, docker/agent.yaml]
"""


def env(text: str, name: str = "env.yaml") -> Source:
    return Source(textwrap.dedent(text), name)


def outputs(service, name: str) -> dict:
    return {o["output_key"]: o.get("output_value") for o in service.outputs(name)}


def test_capabilities_nested_stacks_inherit_requires(service):
    stack = service.create_stack("s", template(PARENT), [env(REGISTRY), env("requires: {deployment: docker}\n", "docker.yaml")], files=FILES)
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert outputs(service, "s") == {"web": "docker docker-agent", "db": "docker docker-agent"}


def test_capabilities_per_resource_block_lists(service):
    per_resource = """
    resource_registry:
      OS::Demo::Role: puppet/role.yaml
      OS::Demo::Agent: puppet/agent.yaml
      resources:
        db:
          OS::Demo::Role: [puppet/role.yaml, docker/role.yaml]
          agent:
            OS::Demo::Agent: [puppet/agent.yaml, docker/agent.yaml]
    requires: {deployment: docker}
    """
    stack = service.create_stack("s", template(PARENT), [env(per_resource)], files=FILES)
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    # web takes the type's single mapping; db chooses by requires, and so does the agent
    # inside it: its nested stack gets the blocks under its parent resource's name.
    assert outputs(service, "s") == {"web": "puppet puppet-agent", "db": "docker docker-agent"}


def test_capabilities_unresolvable_list_is_a_validation_error_with_its_place(service):
    with pytest.raises(TemplateErrors) as caught:
        service.create_stack("s", template(PARENT), [env(REGISTRY), env("requires: {deployment: chef}\n")], files=FILES)
    messages = [str(error) for error in caught.value.errors]
    assert len(messages) == 2
    assert all("resources." in m and ".type: No candidate template for OS::Demo::Role satisfies requires deployment=chef" in m for m in messages)
    assert "puppet/role.yaml: does not match (deployment is puppet, not chef)" in messages[0]


def test_capabilities_update_changing_requires_changes_implementations(service):
    environments = [env(REGISTRY), env("requires: {deployment: puppet}\n")]
    assert service.create_stack("s", template(PARENT), environments, files=FILES).state == "CREATE_COMPLETE"
    preview = service.preview_update("s", None, [env("requires: {deployment: docker}\n")], existing=True)
    assert [(c["resource_name"], c["from"], c["to"]) for c in preview["implementation_changes"]] == [
        ("web", "puppet/role.yaml", "docker/role.yaml"),
        ("db", "puppet/role.yaml", "docker/role.yaml"),
    ]
    updated = service.update_stack("s", None, [env("requires: {deployment: docker}\n")], existing=True)
    assert updated.state == "UPDATE_COMPLETE", updated.status_reason
    assert outputs(service, "s") == {"web": "docker docker-agent", "db": "docker docker-agent"}


def test_capabilities_without_lists_behaviour_is_unchanged(service):
    plain = "resource_registry:\n  OS::Demo::Role: puppet/role.yaml\n  OS::Demo::Agent: docker/agent.yaml\n"
    stack = service.create_stack("s", template(PARENT), [env(plain)], files=FILES)
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert outputs(service, "s")["web"] == "puppet docker-agent"
    assert "implementations" not in service.preview_update("s", None, [], existing=True)
