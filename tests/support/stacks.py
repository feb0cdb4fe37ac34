"""Helpers to write templates and read results in tests."""

from __future__ import annotations

import textwrap

import yaml

from stoker.service import Source


def template(text: str, name: str = "template.yaml") -> Source:
    return Source(textwrap.dedent(text), name)


def from_data(data: dict, name: str = "template.yaml") -> Source:
    return Source(yaml.safe_dump(data, sort_keys=False), name)


def states(service, stack_name: str) -> dict[str, str]:
    return {r.name: r.state for r in service.list_resources(stack_name)}


def event_states(service, stack_name: str, resource_name: str) -> list[str]:
    return [f"{e.resource_action}_{e.resource_status}" for e in service.list_events(stack_name, resource_name)]


# Issue 26: 265 bytes that ask for 1001001 resources (a group of 1000 groups of 1000),
# which a limit counted per nested stack let through and a create could not survive.
GROUP_OF_GROUPS = """heat_template_version: queens
resources:
  outer:
    type: OS::Heat::ResourceGroup
    properties:
      count: 1000
      resource_def:
        type: OS::Heat::ResourceGroup
        properties:
          count: 1000
          resource_def: {type: OS::Heat::None}
"""
assert len(GROUP_OF_GROUPS.encode()) == 265
