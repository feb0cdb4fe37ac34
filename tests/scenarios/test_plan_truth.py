"""The plan is true (issue 32): for each of the update scenarios below, the actions an
applied plan takes (read from the events of the stack and of its nested stacks) are
exactly the planned ones, address by address, and no resource the plan leaves
unchanged is touched. Hooks, failures and rollback are checked by the same reading."""

from __future__ import annotations

import json
from typing import Any

import pytest

from stoker.cli.plans import plan_text
from tests.scenarios.test_plans import _last_events, _tree, _valid
from tests.support.stacks import template
from tests.support.waiting import finished, in_background, wait_until

BASE = """
heat_template_version: 2021-04-16
parameters:
  word: {type: string, default: one}
  length: {type: number, default: 8}
  count: {type: number, default: 2}
  member: {type: string, default: member}
  extra: {type: boolean, default: true}
  settings: {type: json, default: {db: {port: 5432, host: a}, debug: false}}
conditions:
  with_extra: {get_param: extra}
resources:
  secret:
    type: OS::Heat::RandomString
    properties: {length: {get_param: length}}
  holder:
    type: OS::Heat::TestResource
    properties: {value: {get_param: word}}
  config:
    type: OS::Heat::TestResource
    properties:
      value: {str_replace: {template: $s, params: {$s: {get_param: settings}}}}
  group:
    type: OS::Heat::ResourceGroup
    properties:
      count: {get_param: count}
      resource_def:
        type: OS::Heat::TestResource
        properties: {value: {list_join: [" ", [{get_param: member}, "%index%"]]}}
  optional:
    type: OS::Heat::TestResource
    condition: with_extra
    properties: {value: extra}
  switched:
    type: OS::Heat::TestResource
    properties: {value: {if: [with_extra, "on", "off"]}}
  child:
    type: child.yaml
    properties: {length: {get_param: length}}
outputs:
  word: {value: {get_param: word}}
"""

CHILD = """
heat_template_version: 2021-04-16
parameters:
  length: {type: number, default: 8}
resources:
  random:
    type: OS::Heat::RandomString
    properties: {length: {get_param: length}}
  note:
    type: OS::Heat::TestResource
    properties: {value: note}
"""

FILES = {"child.yaml": CHILD}

PLUGIN = '''
from stoker.sdk import properties, resource, support


class NewThing(resource.Resource):
    """The type that replaces Old::Thing."""

    properties_schema = {"size": properties.Schema(properties.Schema.INTEGER, "Size.", update_allowed=True)}

    def handle_create(self):
        self.resource_id_set(self.physical_resource_name())

    def handle_update(self, json_snippet, tmpl_diff, prop_diff):
        pass


class OtherThing(resource.Resource):
    """Not a substitute of Old::Thing: neither the class it names nor one extending it."""

    properties_schema = NewThing.properties_schema

    def handle_create(self):
        self.resource_id_set(self.physical_resource_name())


class OldThing(OtherThing):
    """Deprecated: use New::Thing."""

    support_status = support.SupportStatus(
        status=support.DEPRECATED, version="6.0.0", message="Use New::Thing.", substitute_class=NewThing
    )


def resource_mapping():
    return {"Old::Thing": OldThing, "New::Thing": NewThing, "Other::Thing": OtherThing}
'''


def _edit(old: str, new: str, count: int = 1) -> str:
    assert BASE.count(old) == count, old
    return BASE.replace(old, new)


def _with(resources: str) -> str:
    """BASE with more resources (before its outputs)."""
    return BASE.replace("outputs:\n", resources + "outputs:\n")


def _case(
    name: str,
    expected: dict[str, str],
    new: str = BASE,
    parameters: dict[str, Any] | None = None,
    env: str | None = None,
    files: dict[str, str] | None = None,
    old: str = BASE,
    old_parameters: dict[str, Any] | None = None,
    old_env: str | None = None,
    existing: bool = False,
    before=None,
):
    return pytest.param(
        {
            "old": old,
            "old_parameters": old_parameters or {},
            "old_env": old_env,
            "new": None if existing else new,
            "parameters": parameters or {},
            "env": env,
            "old_files": FILES,
            "files": {**FILES, **(files or {})},
            "existing": existing,
            "before": before,
        },
        expected,
        id=name,
    )


WITH_THING = _with("  thing:\n    type: Old::Thing\n    properties: {size: 1}\n")
WITH_MINE = _with("  mine:\n    type: My::Thing\n    properties: {value: mine}\n")
MINE_TEST = "resource_registry:\n  My::Thing: OS::Heat::TestResource\n"
MINE_NONE = "resource_registry:\n  My::Thing: OS::Heat::None\n"
MINE_NESTED = "resource_registry:\n  My::Thing: mine.yaml\n"
MINE_YAML = """
heat_template_version: 2021-04-16
parameters:
  value: {type: string}
resources:
  inner:
    type: OS::Heat::TestResource
    properties: {value: {get_param: value}}
"""
RETAINED = _with("  kept:\n    type: OS::Heat::TestResource\n    deletion_policy: Retain\n")
CHAIN = _with(
    "  first:\n    type: OS::Heat::TestResource\n"
    "  second:\n    type: OS::Heat::TestResource\n    properties: {value: {get_attr: [first, output]}}\n"
)
ATTR = _with("  user:\n    type: OS::Heat::TestResource\n    properties: {value: {get_attr: [secret, value]}}\n")


def _mark_unhealthy(service):
    service.mark_unhealthy("p", "holder", reason="disk broken")


SCENARIOS = [
    # in place
    _case("in-place-value", {"holder": "update"}, parameters={"word": "two"}),
    _case("in-place-json-key", {"config": "update"}, parameters={"settings": {"db": {"port": 5433, "host": "a"}, "debug": False}}),
    _case("in-place-two-at-once", {"holder": "update", "config": "update"}, parameters={"word": "two", "settings": {"db": {"port": 1, "host": "a"}, "debug": False}}),
    _case("in-place-metadata", {"holder": "update"}, new=_edit("  holder:\n    type: OS::Heat::TestResource\n", "  holder:\n    type: OS::Heat::TestResource\n    metadata: {owner: me}\n")),
    _case("depends-on-only", {}, new=_edit("  holder:\n    type: OS::Heat::TestResource\n", "  holder:\n    type: OS::Heat::TestResource\n    depends_on: [config]\n")),
    # replace
    _case("replace-forced-property", {"secret": "replace", "child": "update", "child.random": "replace"}, parameters={"length": 12}),
    _case("replace-update-replace-value", {"holder": "replace"}, new=_edit("properties: {value: {get_param: word}}", "properties: {value: {get_param: word}, update_replace_value: x}")),
    _case("replace-type-change", {"holder": "replace"}, new=_edit("  holder:\n    type: OS::Heat::TestResource\n    properties: {value: {get_param: word}}\n", "  holder:\n    type: OS::Heat::None\n")),
    _case("replace-marked-unhealthy", {"holder": "replace"}, before=_mark_unhealthy),
    _case("replace-then-dependent-updates", {"secret": "replace", "user": "update", "child": "update", "child.random": "replace"}, old=ATTR, new=ATTR, parameters={"length": 10}),
    # nested stacks and template resources
    _case("template-resource-property", {"child": "update", "child.random": "replace", "secret": "replace"}, parameters={"length": 9}),
    _case("template-resource-file-adds", {"child": "update", "child.extra": "create"}, files={"child.yaml": CHILD + "  extra:\n    type: OS::Heat::TestResource\n"}),
    _case("template-resource-file-removes", {"child": "update", "child.note": "delete"}, files={"child.yaml": CHILD.split("  note:")[0]}),
    _case("template-resource-file-in-place", {"child": "update", "child.note": "update"}, files={"child.yaml": CHILD.replace("value: note", "value: other")}),
    # groups
    _case("group-count-up", {"group": "update", "group.2": "create"}, parameters={"count": 3}),
    _case("group-count-down", {"group": "update", "group.1": "delete", "group.2": "delete"}, old_parameters={"count": 3}, parameters={"count": 1}),
    _case("group-member-property", {"group": "update", "group.0": "update", "group.1": "update"}, parameters={"member": "node"}),
    _case("group-count-up-and-member-property", {"group": "update", "group.0": "update", "group.1": "update", "group.2": "create"}, parameters={"member": "node", "count": 3}),
    _case("group-member-type", {"group": "update", "group.0": "replace", "group.1": "replace"}, new=_edit("        type: OS::Heat::TestResource\n        properties: {value: {list_join", "        type: OS::Heat::Value\n        properties: {value: {list_join")),
    # conditions
    _case("condition-false", {"optional": "delete", "switched": "update"}, parameters={"extra": False}),
    _case("condition-true", {"optional": "create", "switched": "update"}, old_parameters={"extra": False}, parameters={"extra": True}),
    # environment remaps and plugins
    _case("registry-remap-to-other-type", {"mine": "replace"}, old=WITH_MINE, new=WITH_MINE, old_env=MINE_TEST, env=MINE_NONE),
    _case("registry-remap-to-template", {"mine": "replace", "mine.inner": "create"}, old=WITH_MINE, new=WITH_MINE, old_env=MINE_TEST, env=MINE_NESTED, files={"mine.yaml": MINE_YAML}),
    _case("substitute-class", {"thing": "update"}, old=WITH_THING, new=WITH_THING.replace("Old::Thing", "New::Thing")),
    _case("other-plugin", {"thing": "replace"}, old=WITH_THING, new=WITH_THING.replace("Old::Thing", "Other::Thing")),
    # removed, added, retained
    _case("resource-removed", {"holder": "delete"}, new=_edit("  holder:\n    type: OS::Heat::TestResource\n    properties: {value: {get_param: word}}\n", "")),
    _case("chain-removed", {"first": "delete", "second": "delete"}, old=CHAIN),
    _case("chain-added", {"first": "create", "second": "create"}, new=CHAIN),
    _case("renamed", {"holder": "delete", "keeper": "create"}, new=_edit("  holder:\n", "  keeper:\n")),
    _case("retained-removed", {"kept": "delete"}, old=RETAINED),
    # outputs, parameters, environments
    _case("outputs-only", {}, new=BASE + "  more: {value: {get_param: length}}\n"),
    _case("no-op", {}),
    _case("defaults-through-environment", {"holder": "update"}, env="parameter_defaults:\n  word: three\n"),
    _case("parameters-through-environment", {"holder": "update"}, env="parameters:\n  word: four\n"),
    _case("existing-one-parameter", {"holder": "update"}, old_parameters={"extra": False}, parameters={"word": "five"}, existing=True),
]


@pytest.fixture
def plugin_service(make_service, tmp_path):
    (tmp_path / "things.py").write_text(PLUGIN)
    return make_service(plugin_dirs=[str(tmp_path)])


def touched(service, stack_id: str, since: dict[str, int]) -> dict[str, dict[str, Any]]:
    """address -> what its events after ``since`` say was done to it: ``action`` (create,
    update, replace, delete, or ``touched`` for any other event), and separately what a
    rollback did and which hooks it paused at."""
    paths = _tree(service, stack_id)
    found: dict[str, dict[str, Any]] = {}
    for owner, path in paths.items():
        rolling = False
        stack_name = service.store.get_stack(owner).name
        for event in service.store.events.list_events(owner):
            if event.resource_name == stack_name and event.physical_resource_id == owner:
                if event.id > since.get(owner, 0) and event.resource_action == "ROLLBACK":
                    rolling = True
                continue
            if event.id <= since.get(owner, 0):
                continue
            address = f"{path}.{event.resource_name}" if path else event.resource_name
            entry = found.setdefault(address, {"action": None, "rollback": None, "hooks": []})
            reason = event.resource_status_reason or ""
            if "paused until Hook" in reason:
                entry["hooks"].append(reason.rsplit("Hook ", 1)[1].split()[0])
                continue
            if "Hook" in reason and "is cleared" in reason:
                continue
            key = "rollback" if rolling else "action"
            if event.resource_action == "CREATE" and event.resource_status == "IN_PROGRESS":
                entry[key] = "replace" if reason.startswith("Replacing") else "create"
            elif event.resource_action == "UPDATE":
                entry[key] = entry[key] or "update"
            elif event.resource_action == "DELETE":
                entry[key] = entry[key] or "delete"
            else:
                entry[key] = entry[key] or f"touched ({event.resource_action}_{event.resource_status})"
    return found


def planned(plan: dict) -> dict[str, str]:
    return {e["address"]: e["action"] for e in plan["resources"] if e["action"] != "no-change"}


def _forward(found: dict[str, dict[str, Any]]) -> dict[str, str]:
    return {address: entry["action"] for address, entry in found.items() if entry["action"]}


def _request(case: dict, service) -> dict[str, Any]:
    return {
        "template": template(case["new"]) if case["new"] is not None else None,
        "environments": [template(case["env"], "env.yaml")] if case["env"] else [],
        "parameters": case["parameters"],
        "files": case["files"],
        "existing": case["existing"],
    }


def _created(service, case: dict):
    old_env = [template(case["old_env"], "env.yaml")] if case["old_env"] else []
    stack = service.create_stack("p", template(case["old"]), old_env, parameters=case["old_parameters"], files=case["old_files"])
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    if case["before"] is not None:
        case["before"](service)
    return stack


@pytest.mark.parametrize(("case", "expected"), SCENARIOS)
def test_the_applied_plan_takes_exactly_the_planned_actions(plugin_service, case, expected):
    service = plugin_service
    stack = _created(service, case)
    plan = _valid(service.plan_update("p", **_request(case, service))["plan"])
    assert planned(plan) == expected
    if "kept" in expected:
        assert {e["address"]: e["reason"] for e in plan["resources"]}["kept"] == (
            "not in the new template (deletion_policy Retain: it leaves the stack, its physical resource is kept)"
        )
    since = _last_events(service, _tree(service, stack.id))
    updated = service.apply_plan(json.loads(json.dumps(plan)))
    assert updated.state == "UPDATE_COMPLETE", updated.status_reason
    found = touched(service, stack.id, since)
    assert _forward(found) == expected
    assert not any(entry["rollback"] or entry["hooks"] for entry in found.values())


def test_suite_has_thirty_distinct_scenarios():
    assert len({param.id for param in SCENARIOS}) == len(SCENARIOS) >= 30


HOOKED = "resource_registry:\n  resources:\n    holder: {hooks: [pre-update]}\n    config: {hooks: pre-update}\n"


def test_a_pre_update_hook_is_in_the_plan_and_the_apply_stops_there_then_does_the_plan(service):
    service.create_stack("p", template(BASE), files=FILES)
    stack = service.get_stack("p")
    plan = _valid(service.plan_update("p", template(BASE), [template(HOOKED, "env.yaml")], parameters={"word": "two"}, files=FILES)["plan"])
    entries = {entry["address"]: entry for entry in plan["resources"]}
    assert planned(plan) == {"holder": "update"}
    # config is unchanged, but the update visits it: its hook stops the apply too.
    assert (entries["holder"]["hooks"], entries["config"]["hooks"]) == (["pre-update"], ["pre-update"])
    assert not any("hooks" in entry for address, entry in entries.items() if address not in ("holder", "config"))
    printed = " ".join(" ".join(plan_text(plan)).split())  # as one line, however wrapped
    assert "~ holder (OS::Heat::TestResource) update in place: value changed (stops at hook pre-update)" in printed
    assert "= config (OS::Heat::TestResource) no change (stops at hook pre-update)" in printed
    since = _last_events(service, _tree(service, stack.id))
    thread, result = in_background(lambda: service.apply_plan(json.loads(json.dumps(plan))))
    for name in ("holder", "config"):
        wait_until(lambda name=name: touched(service, stack.id, since).get(name, {}).get("hooks"), f"{name}'s pause")
    paused = touched(service, stack.id, since)
    assert {address: entry["hooks"] for address, entry in paused.items() if entry["hooks"]} == {"holder": ["pre-update"], "config": ["pre-update"]}
    assert paused["holder"]["action"] is None  # nothing done to it before the hook is cleared
    for name in ("holder", "config"):
        service.signal_resource("p", name, {"unset_hook": "pre-update"})
    assert finished(thread, result).state == "UPDATE_COMPLETE"
    assert _forward(touched(service, stack.id, since)) == planned(plan)


NESTED_HOOK = "resource_registry:\n  resources:\n    child:\n      note: {hooks: pre-update}\n"


def test_a_hook_in_a_nested_stack_is_in_the_plan_and_the_apply_stops_there(service):
    service.create_stack("p", template(BASE), files=FILES)
    stack = service.get_stack("p")
    plan = _valid(service.plan_update("p", template(BASE), [template(NESTED_HOOK, "env.yaml")], parameters={"length": 9}, files=FILES)["plan"])
    entries = {entry["address"]: entry for entry in plan["resources"]}
    assert entries["child.note"]["hooks"] == ["pre-update"]  # unchanged, but the child's update visits it
    assert [address for address, entry in entries.items() if "hooks" in entry] == ["child.note"]
    printed = " ".join(" ".join(plan_text(plan)).split())
    assert "= child.note (OS::Heat::TestResource) no change (stops at hook pre-update)" in printed
    since = _last_events(service, _tree(service, stack.id))
    thread, result = in_background(lambda: service.apply_plan(json.loads(json.dumps(plan))))
    wait_until(lambda: touched(service, stack.id, since).get("child.note", {}).get("hooks"), "child.note's pause")
    [child_id] = [owner for owner, path in _tree(service, stack.id).items() if path == "child"]
    service.signal_resource(child_id, "note", {"unset_hook": "pre-update"})
    assert finished(thread, result).state == "UPDATE_COMPLETE"
    assert _forward(touched(service, stack.id, since)) == planned(plan)


FAILING = CHAIN.replace("  first:\n    type: OS::Heat::TestResource\n", "  first:\n    type: OS::Heat::TestResource\n    properties: {value: changed, fail: true}\n")


@pytest.mark.parametrize("rollback", [False, True], ids=["failure", "rollback"])
def test_a_failed_apply_takes_a_part_of_the_plan_and_nothing_outside_it(service, rollback):
    service.create_stack("p", template(CHAIN), files=FILES)
    stack = service.get_stack("p")
    plan = _valid(service.plan_update("p", template(FAILING), files=FILES, parameters={"word": "two"}, disable_rollback=not rollback)["plan"])
    expected = planned(plan)
    assert expected == {"first": "update", "second": "update", "holder": "update"}
    since = _last_events(service, _tree(service, stack.id))
    updated = service.apply_plan(json.loads(json.dumps(plan)))
    found = touched(service, stack.id, since)
    forward = _forward(found)
    assert forward.items() <= expected.items()
    assert forward["first"] == "update" and "second" not in forward  # it waits on first
    rolled = {address: entry["rollback"] for address, entry in found.items() if entry["rollback"]}
    if rollback:
        assert updated.state == "ROLLBACK_COMPLETE", updated.status_reason
        # What the rollback did is reported as such, and undoes only what the apply did.
        assert rolled and set(rolled) <= set(forward)
    else:
        assert updated.state == "UPDATE_FAILED"
        assert rolled == {}
