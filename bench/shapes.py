"""The benchmark's stack shapes: HOT templates generated from (shape, N, generation).

Both engines are fed the very same text: stoker's runner (lifecycle.py, stoker's venv)
and Heat's runner (heat_runner.py, bench/.heat-venv) both import this module, so it
must use the standard library only and must not import stoker or heat.

Generation 0 is the template a stack is created from; generation 1 changes a property
on every resource and is the template of the update phase. What the change does is
each resource type's own rule, the same in Heat and in stoker:

- independent: N OS::Heat::RandomString. ``length`` is not update_allowed, so every
  resource is replaced.
- chain: N OS::Heat::Value, each reading the previous one with get_attr (with a path,
  so values stay small). ``value`` is update_allowed, so every resource is updated in
  place, one after another along the chain.
- group: one OS::Heat::ResourceGroup of N OS::Heat::None. The group's resource_def
  changes, so its nested stack is updated; OS::Heat::None never needs an update, so
  its members are left as they are.
- fan: one RandomString root, N RandomString in the middle (each salted with the
  root's value) and one OS::Heat::Value sink listing every middle value. Root and
  middle are replaced; the sink is updated in place.
"""

from __future__ import annotations

SHAPES = ("independent", "chain", "group", "fan")

# The resource types a shape needs; a runner reports a shape whose types its engine
# lacks as not implemented instead of running it.
TYPES = {
    "independent": ("OS::Heat::RandomString",),
    "chain": ("OS::Heat::Value",),
    "group": ("OS::Heat::ResourceGroup", "OS::Heat::None"),
    "fan": ("OS::Heat::RandomString", "OS::Heat::Value"),
}

_HEADER = ["heat_template_version: 2021-04-16", "resources:"]


def template(shape: str, count: int, generation: int = 0) -> str:
    """The template text of ``shape`` with ``count`` resources (the group's members
    and the fan's middle count; the fan adds a root and a sink)."""
    build = {"independent": _independent, "chain": _chain, "group": _group, "fan": _fan}[shape]
    return "\n".join(_HEADER + build(count, generation)) + "\n"


def resource_count(shape: str, count: int, nested: bool = True) -> int:
    """How many resources a complete stack of ``shape`` holds: with ``nested``, the
    group's members in its nested stack too; without, the top-level ones only."""
    if shape == "group":
        return 1 + count if nested else 1
    return count + (2 if shape == "fan" else 0)


def _independent(count: int, generation: int) -> list[str]:
    lines = []
    for index in range(count):
        lines += [f"  r{index}:", "    type: OS::Heat::RandomString", "    properties:", f"      length: {8 + generation}"]
    return lines


def _chain(count: int, generation: int) -> list[str]:
    lines = []
    for index in range(count):
        lines += [
            f"  r{index}:",
            "    type: OS::Heat::Value",
            "    properties:",
            "      value:",
            f"        index: {index}",
            f"        generation: {generation}",
        ]
        if index:
            lines.append(f"        previous: {{get_attr: [r{index - 1}, value, index]}}")
    return lines


def _group(count: int, generation: int) -> list[str]:
    return [
        "  group:",
        "    type: OS::Heat::ResourceGroup",
        "    properties:",
        f"      count: {count}",
        "      resource_def:",
        "        type: OS::Heat::None",
        "        properties:",
        f"          generation: {generation}",
    ]


def _fan(count: int, generation: int) -> list[str]:
    lines = ["  root:", "    type: OS::Heat::RandomString", "    properties:", f"      length: {8 + generation}"]
    for index in range(count):
        lines += [
            f"  m{index}:",
            "    type: OS::Heat::RandomString",
            "    properties:",
            f"      length: {8 + generation}",
            "      salt: {get_attr: [root, value]}",
        ]
    lines += ["  sink:", "    type: OS::Heat::Value", "    properties:", "      value:"]
    lines += [f"        - {{get_attr: [m{index}, value]}}" for index in range(count)]
    return lines
