"""``Service`` is composed of parts (service.py), not mixins: each part is made with the
collaborators it uses, and no part reaches into another's private members."""

from __future__ import annotations

import ast
from pathlib import Path

import stoker
from stoker.service import Service

SOURCE = Path(stoker.__file__).parent
# The modules of Service's parts, and the attribute each is held under.
PARTS = {
    "reads.py": "reads",
    "serving.py": "serving",
    "request_checks.py": "checks",
    "stack_actions.py": "actions",
    "resource_actions.py": "resource_actions",
    "stack_copies.py": "copies",
    "previews.py": "previews",
    "plan_actions.py": "plans",
}


def test_service_is_composed_not_inherited():
    assert Service.__bases__ == (object,)


def test_service_parts_never_reach_into_another_part_privately():
    members = set(PARTS.values())
    found = []
    for module in ["service.py", "stack_checks.py", *PARTS]:
        tree = ast.parse((SOURCE / module).read_text())
        for node in ast.walk(tree):
            # self.<part>._name: a part's private member used from outside it
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and isinstance(node.value, ast.Attribute)
                and node.value.attr in members
                and isinstance(node.value.value, ast.Name)
                and node.value.value.id == "self"
            ):
                found.append(f"{module}:{node.lineno}: self.{node.value.attr}.{node.attr}")
    assert found == []
