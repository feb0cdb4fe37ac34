"""``Store`` is composed of parts (store/repository.py), not mixins: each repository is
a class of its own, made by the Store with the collaborators it uses and held as a
member; the Store does not re-export a part's methods, and no code reaches into a part's
private members, nor a part into another's or into the Store's."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from pathlib import Path

import stoker
from stoker.store import Store, tables
from stoker.store.drift import DriftRepository
from stoker.store.events import EventRepository
from stoker.store.records import StackRecord
from stoker.store.serving import ServingRepository
from stoker.store.signals import SignalRepository
from stoker.store.software_configs import SoftwareConfigRepository

SOURCE = Path(stoker.__file__).parent
STORE = SOURCE / "store"
# The modules of Store's parts: the attribute each is held under, and its class.
PARTS = {
    "events.py": ("events", EventRepository),
    "signals.py": ("signals", SignalRepository),
    "software_configs.py": ("software_configs", SoftwareConfigRepository),
    "serving.py": ("serving", ServingRepository),
    "drift.py": ("drift", DriftRepository),
}
MEMBERS = {member for member, _ in PARTS.values()}


def _public(cls: type) -> set[str]:
    return {name for name, _ in inspect.getmembers(cls, callable) if not name.startswith("_")}


def test_store_is_composed_not_inherited():
    assert Store.__bases__ == (object,)
    for _, part in PARTS.values():
        assert part.__bases__ == (object,), part


def test_store_makes_each_part_and_holds_it_as_its_member():
    init = ast.parse(inspect.getsource(Store.__init__).strip())
    made = {
        node.targets[0].attr: node.value.func.id
        for node in ast.walk(init)
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Attribute)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Name)
    }
    assert {member: made.get(member) for member, _ in PARTS.values()} == {member: part.__name__ for member, part in PARTS.values()}


def test_store_does_not_re_export_its_parts_methods():
    store = _public(Store)
    found = {f"{part.__name__}.{name}" for _, part in PARTS.values() for name in _public(part) & store}
    assert found == set()


def test_store_parts_know_neither_the_store_nor_each_other():
    found = []
    for module in PARTS:
        tree = ast.parse((STORE / module).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module is not None:
                imported = node.module.rsplit(".", 1)[-1] + ".py"
                if node.module.startswith("stoker.store.") and (imported in PARTS or imported == "repository.py"):
                    found.append(f"{module}:{node.lineno}: imports {node.module}")
            elif isinstance(node, ast.Name) and node.id == "Store":
                found.append(f"{module}:{node.lineno}: names Store")
    assert found == []


def test_store_parts_never_reach_into_a_part_privately():
    # <anything>.<part>._name, anywhere in stoker: a part's private member used from
    # outside it (by the Store, another part, or any caller).
    found = []
    # Only the modules whose text could hold one are parsed (parsing all is seconds).
    maybe = re.compile(r"\.(" + "|".join(MEMBERS) + r")\s*\.\s*_")
    for path in sorted(SOURCE.rglob("*.py")):
        text = path.read_text()
        if not maybe.search(text):
            continue
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and isinstance(node.value, ast.Attribute)
                and node.value.attr in MEMBERS
            ):
                found.append(f"{path.relative_to(SOURCE)}:{node.lineno}: .{node.value.attr}.{node.attr}")
    assert found == []


def test_store_stack_record_fields_are_the_stacks_columns():
    # records.stack_record, which the Store and its events part build stacks with,
    # reads a row by the record's fields.
    fields = {field.name for field in dataclasses.fields(StackRecord)}
    assert fields == {column.name for column in tables.stacks.columns}
