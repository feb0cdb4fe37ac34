"""Saved plans: the actions an applied plan takes (read from its events, nested stacks'
included) are exactly the ones it shows; every plan is valid against its JSON Schema;
a plan made before the stack changed, or for a name taken since, is refused."""

from __future__ import annotations

import json

import jsonschema
import pytest

from stoker.plans import document
from stoker.plans.errors import PlanError, StalePlanError
from stoker.reads import Project
from tests.support.stacks import template

BASE = """
heat_template_version: 2021-04-16
parameters:
  word: {type: string, default: one}
  length: {type: number, default: 8}
  count: {type: number, default: 2}
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
        properties: {value: "member %index%"}
  optional:
    type: OS::Heat::TestResource
    condition: with_extra
    properties: {value: extra}
outputs:
  word: {value: {get_param: word}}
  secret: {value: {get_attr: [secret, value]}}
"""


def _validator() -> jsonschema.Draft202012Validator:
    schema = document.schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _valid(plan: dict) -> dict:
    errors = sorted(_validator().iter_errors(plan), key=str)
    assert not errors, [f"{list(error.absolute_path)}: {error.message}" for error in errors]
    return plan


def _tree(service, stack_id: str, path: str = "") -> dict[str, str]:
    """stack id -> the dotted path of resources that holds it ("" for the top)."""
    found = {stack_id: path}
    for child in service.store.child_stacks(stack_id):
        found.update(
            _tree(
                service,
                child.id,
                f"{path}.{child.owner_resource}" if path else str(child.owner_resource),
            )
        )
    return found


def _address(paths: dict[str, str], stack_id: str, name: str) -> str:
    return f"{paths[stack_id]}.{name}" if paths[stack_id] else name


def applied_actions(
    service, stack_id: str, paths: dict[str, str], since: dict[str, int]
) -> dict[str, str]:
    """address -> create/update/replace/delete, as the events after ``since`` show them."""
    actions: dict[str, str] = {}
    stack_ids = {stack_id} | set(paths)
    for owner in stack_ids:
        for event in service.store.events.list_events(owner):
            if (
                event.id <= since.get(owner, 0)
                or event.resource_name == service.store.get_stack(owner).name
                and event.physical_resource_id == owner
            ):
                continue
            address = _address(paths, owner, event.resource_name)
            if event.resource_action == "CREATE" and event.resource_status == "IN_PROGRESS":
                actions[address] = (
                    "replace" if event.resource_status_reason.startswith("Replacing") else "create"
                )
            elif event.resource_action == "UPDATE" and event.resource_status == "COMPLETE":
                actions.setdefault(address, "update")
            elif event.resource_action == "DELETE" and event.resource_status == "COMPLETE":
                actions.setdefault(address, "delete")
    return actions


def planned_actions(plan: dict) -> dict[str, str]:
    return {
        entry["address"]: entry["action"]
        for entry in plan["resources"]
        if entry["action"] != "no-change"
    }


def _last_events(service, paths: dict[str, str]) -> dict[str, int]:
    return {
        owner: max((event.id or 0 for event in service.store.events.list_events(owner)), default=0)
        for owner in paths
    }


@pytest.mark.parametrize(
    ("parameters", "expected"),
    [
        ({"word": "two"}, {"holder": "update"}),
        ({"length": 12}, {"secret": "replace"}),
        ({"count": 3}, {"group": "update", "group.2": "create"}),
        ({"count": 1}, {"group": "update", "group.1": "delete"}),
        ({"extra": False}, {"optional": "delete"}),
        ({"settings": {"db": {"port": 5433, "host": "a"}, "debug": False}}, {"config": "update"}),
    ],
    ids=[
        "in-place",
        "replace",
        "group-count-up",
        "group-count-down",
        "condition-false",
        "json-key",
    ],
)
def test_plan_applied_takes_exactly_the_planned_actions(service, parameters, expected):
    service.create_stack("p", template(BASE))
    stack = service.get_stack("p")
    plan = _valid(service.plan_update("p", template(BASE), parameters=parameters)["plan"])
    assert planned_actions(plan) == expected
    paths = _tree(service, stack.id)
    since = _last_events(service, paths)
    saved = json.loads(json.dumps(plan))  # as a file holds it
    updated = service.apply_plan(saved)
    assert updated.state == "UPDATE_COMPLETE", updated.status_reason
    assert applied_actions(service, stack.id, paths | _tree(service, stack.id), since) == expected


def test_plan_shows_key_level_changes_outputs_and_the_summary(service):
    service.create_stack("p", template(BASE))
    settings = {"db": {"port": 5433, "host": "a"}, "debug": False}
    plan = _valid(
        service.plan_update(
            "p",
            template(BASE),
            parameters={"settings": settings, "word": "two", "length": 9, "extra": False},
        )["plan"]
    )
    entries = {entry["address"]: entry for entry in plan["resources"]}
    assert entries["config"]["changes"] == [
        {"path": "properties.value.db.port", "old": 5432, "new": 5433, "op": "change"}
    ]
    assert entries["secret"]["reason"] == "property length changed and cannot be updated in place"
    assert entries["optional"]["reason"] == "its condition 'with_extra' is false now"
    outputs = {entry["name"]: entry for entry in plan["outputs"]}
    assert outputs["word"]["action"] == "update" and (
        outputs["word"]["old"],
        outputs["word"]["new"],
    ) == ("one", "two")
    assert (
        outputs["secret"]["action"] == "update" and outputs["secret"]["known_after_apply"] is True
    )
    assert plan["summary"] == {
        "add": 0,
        "change": 2,
        "replace": 1,
        "delete": 1,
        "no_change": 1,
    }  # the group (its members are not visited)
    assert (
        document.summary_line(plan["summary"])
        == "Plan: 0 to add, 2 to change, 1 to replace, 1 to delete"
    )


def test_plan_of_a_create_shows_values_and_every_group_member(service):
    plan = _valid(service.plan_create("p", template(BASE), parameters={"count": 3})["plan"])
    entries = {entry["address"]: entry for entry in plan["resources"]}
    assert {"group.0", "group.1", "group.2"} <= set(entries)
    assert entries["holder"]["changes"] == [
        {"path": "properties.value", "old": None, "new": "one", "op": "add"}
    ]
    outputs = {entry["name"]: entry for entry in plan["outputs"]}
    assert outputs["word"] == {
        "name": "word",
        "action": "create",
        "old": None,
        "new": "one",
        "changes": [],
    }
    assert outputs["secret"]["known_after_apply"] is True
    assert plan["summary"]["add"] == 8
    created = service.apply_plan(json.loads(json.dumps(plan)), Project(""))
    assert created.state == "CREATE_COMPLETE", created.status_reason
    assert {r.name for r in service.list_resources("p")} == {
        "secret",
        "holder",
        "config",
        "group",
        "optional",
    }


def test_plan_made_before_another_update_is_refused(service):
    service.create_stack("p", template(BASE))
    stale = service.plan_update("p", template(BASE), parameters={"word": "two"})["plan"]
    service.update_stack("p", template(BASE), parameters={"length": 10})
    with pytest.raises(StalePlanError) as refused:
        service.apply_plan(stale)
    assert "The plan is stale: stack p changed since the plan was made" in str(refused.value)
    assert service.get_stack("p").parameters == {"length": 10}  # nothing ran


def test_plan_made_before_a_resource_was_marked_unhealthy_is_refused(service):
    service.create_stack("p", template(BASE))
    stale = service.plan_update("p", template(BASE), parameters={"word": "two"})["plan"]
    service.mark_unhealthy("p", "holder", reason="disk broken")
    with pytest.raises(StalePlanError, match="changed since the plan was made"):
        service.apply_plan(stale)
    fresh = service.plan_update("p", template(BASE), parameters={"word": "two"})["plan"]
    assert {e["address"]: e["reason"] for e in fresh["resources"]}[
        "holder"
    ] == "marked unhealthy: disk broken"


def test_plan_of_a_create_is_refused_once_the_name_is_taken(service):
    plan = service.plan_create("p", template(BASE))["plan"]
    service.create_stack("p", template(BASE))
    with pytest.raises(StalePlanError, match="a stack named p was created since the plan was made"):
        service.apply_plan(plan)


def test_printed_plan_without_inputs_is_refused_with_the_fix(service):
    service.create_stack("p", template(BASE))
    plan = service.plan_update("p", template(BASE), parameters={"word": "two"})["plan"]
    printed = {key: value for key, value in plan.items() if key != "inputs"}
    _valid(printed)
    with pytest.raises(PlanError) as refused:
        service.apply_plan(printed)
    assert refused.value.hint == "save the plan with --plan-out FILE and apply that file"
    with pytest.raises(PlanError, match="is a plan of version 2"):
        service.apply_plan({**plan, "version": 2})


def test_saved_plan_with_a_wrong_input_is_refused_naming_it(service):
    service.create_stack("p", template(BASE))
    plan = service.plan_update("p", template(BASE), parameters={"word": "two"})["plan"]
    with pytest.raises(PlanError, match="inputs.timeout_mins must be a positive integer or null"):
        service.apply_plan({**plan, "inputs": {**plan["inputs"], "timeout_mins": "soon"}})
    with pytest.raises(PlanError, match=r"inputs.environments\[0\] must be an object"):
        service.apply_plan({**plan, "inputs": {**plan["inputs"], "environments": [7]}})
    assert service.get_stack("p").state == "CREATE_COMPLETE"


CHILD = """
heat_template_version: 2021-04-16
parameters:
  length: {type: number, default: 8}
resources:
  random:
    type: OS::Heat::RandomString
    properties: {length: {get_param: length}}
"""


def test_plan_shows_the_values_of_a_new_nested_stacks_resources(service):
    files = {"child.yaml": CHILD}
    before = "heat_template_version: 2021-04-16\nresources:\n  child: {type: child.yaml}\n"
    service.create_stack("p", template(before), files=files)
    after = before + "  fresh: {type: child.yaml, properties: {length: 5}}\n"
    plan = _valid(service.plan_update("p", template(after), files=files)["plan"])
    entries = {entry["address"]: entry for entry in plan["resources"]}
    assert entries["fresh.random"]["action"] == "create"
    assert entries["fresh.random"]["changes"] == [
        {"path": "properties.length", "old": None, "new": 5, "op": "add"}
    ]
    assert entries["child"]["action"] == "no-change"
