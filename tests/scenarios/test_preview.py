"""Previews predict exactly what the update then does."""

from __future__ import annotations

import pytest

from tests.support.stacks import template

V1 = """
heat_template_version: 2021-04-16
parameters:
  word: {type: string, default: one}
resources:
  secret:
    type: OS::Heat::RandomString
    properties: {length: 8}
  holder:
    type: OS::Heat::TestResource
    properties: {value: {get_param: word}}
  reader:
    type: OS::Heat::TestResource
    properties: {value: {get_attr: [holder, output]}}
  salted:
    type: OS::Heat::RandomString
    properties: {salt: {get_attr: [secret, value]}}
  plain:
    type: OS::Heat::None
  leaving:
    type: OS::Heat::None
"""


def actual_changes(service, name: str, since: int) -> dict[str, set[str]]:
    """What the update did, read from its events."""
    stack = service.get_stack(name)
    events = [e for e in service.store.events.list_events(stack.id) if e.id > since and e.resource_name != name]
    found = {kind: set() for kind in ("added", "deleted", "replaced", "updated", "unchanged")}
    touched = set()
    for event in events:
        touched.add(event.resource_name)
        if event.resource_action == "CREATE" and event.resource_status == "IN_PROGRESS":
            found["replaced" if event.resource_status_reason.startswith("Replacing") else "added"].add(event.resource_name)
        elif event.resource_action == "UPDATE" and event.resource_status == "COMPLETE" and not event.resource_status_reason.startswith("Replacement"):
            found["updated"].add(event.resource_name)
    current = {r.name for r in service.list_resources(name)}
    found["deleted"] = {n for n in touched if n not in current}
    found["unchanged"] = current - touched
    return found


def predicted(preview) -> tuple[dict[str, set[str]], set[str]]:
    """Names per kind, and the names whose change the preview says "may" happen."""
    kinds = {kind: {r["resource_name"] for r in entries} for kind, entries in preview["resource_changes"].items()}
    maybe = {r["resource_name"] for entries in preview["resource_changes"].values() for r in entries if "may change" in r["reason"]}
    return kinds, maybe


@pytest.mark.parametrize(
    ("change", "parameters"),
    [
        (lambda t: t.replace("length: 8", "length: 9"), {}),
        (lambda t: t, {"word": "two"}),
        (lambda t: t.replace("  leaving:\n    type: OS::Heat::None\n", "  arriving:\n    type: OS::Heat::RandomString\n"), {}),
        (lambda t: t.replace("properties: {value: {get_param: word}}", "properties: {value: {get_param: word}, update_replace: true}"), {}),
        (lambda t: t, {}),
    ],
    ids=["replace-chain", "in-place-chain", "add-remove", "plugin-replaces", "nothing"],
)
def test_update_preview_matches_the_update(service, change, parameters):
    service.create_stack("p", template(V1))
    new = template(change(V1))
    preview = service.preview_update("p", new, parameters=parameters)
    before = service.list_events("p")[-1].id
    stack = service.update_stack("p", new, parameters=parameters)
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    kinds, maybe = predicted(preview)
    actual = actual_changes(service, "p", before)
    for kind in kinds:
        # "may change" entries either happen as predicted or not at all
        assert kinds[kind] - maybe == actual[kind] - maybe, kind
    for name in maybe:
        assert any(name in actual[kind] and name in kinds[kind] for kind in kinds) or name in actual["unchanged"], name


def test_update_preview_explains_replacements(service):
    service.create_stack("p", template(V1))
    preview = service.preview_update("p", template(V1.replace("length: 8", "length: 9")))
    reasons = {r["resource_name"]: r["reason"] for r in preview["resource_changes"]["replaced"]}
    assert reasons["secret"] == "property length changed and cannot be updated in place"
    assert reasons["salted"].startswith("property salt changed and cannot be updated in place (may change: values from secret")


def test_create_preview_lists_everything_in_order_and_stores_nothing(service):
    preview = service.preview_create("p", template(V1))
    added = [r["resource_name"] for r in preview["resource_changes"]["added"]]
    assert set(added) == {"secret", "holder", "reader", "salted", "plain", "leaving"}
    assert added.index("holder") < added.index("reader")
    assert service.store.find_stack("p") is None
