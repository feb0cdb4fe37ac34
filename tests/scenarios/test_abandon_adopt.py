"""Export, abandon and adopt."""

from __future__ import annotations

import pytest

from stoker.sdk.exceptions import ValidationError
from tests.support.stacks import template

BODY = """
heat_template_version: 2021-04-16
parameters:
  word: {type: string, default: hello}
resources:
  secret:
    type: OS::Heat::RandomString
    properties: {length: 10}
  holder:
    type: OS::Heat::TestResource
    properties: {value: {get_param: word}}
outputs:
  secret: {value: {get_attr: [secret, value]}}
  held: {value: {get_attr: [holder, output]}}
"""


def test_abandon_and_adopt_keep_the_physical_resources(make_service, tmp_path):
    service = make_service(enable_stack_abandon=True, enable_stack_adopt=True)
    service.create_stack("old", template(BODY), parameters={"word": "hi"})
    before = {r.name: r.physical_resource_id for r in service.list_resources("old")}
    outputs_before = {o["output_key"]: o["output_value"] for o in service.outputs("old")}
    exported = service.export_stack("old")
    assert service.get_stack("old").state == "CREATE_COMPLETE"  # export leaves the stack
    data = service.abandon_stack("old")
    assert data["resources"] == exported["resources"]
    assert service.store.find_stack("old") is None
    events = service.store.events.list_events(data["id"])
    assert not any(e.resource_action == "DELETE" and e.resource_name != "old" for e in events)

    stack = service.adopt_stack("new", data)
    assert stack.state == "ADOPT_COMPLETE", stack.status_reason
    after = {r.name: r.physical_resource_id for r in service.list_resources("new")}
    assert after == before
    assert {o["output_key"]: o["output_value"] for o in service.outputs("new")} == outputs_before
    assert {r.state for r in service.list_resources("new")} == {"ADOPT_COMPLETE"}
    # the adopted stack lives on normally
    assert service.update_stack("new", template(BODY), parameters={"word": "bye"}).state == "UPDATE_COMPLETE"


def test_adopt_without_a_resource_id_fails_with_heats_reason(make_service):
    service = make_service(enable_stack_adopt=True)
    data = {"template": {"heat_template_version": "2021-04-16", "resources": {"r": {"type": "OS::Heat::None"}}}, "resources": {}}
    stack = service.adopt_stack("bare", data)
    assert stack.state == "ADOPT_FAILED"
    assert stack.status_reason == "Resource ADOPT failed: StokerError: resources.r: Resource ID was not provided."


def test_abandon_and_adopt_are_off_by_default(service):
    service.create_stack("s", template(BODY))
    with pytest.raises(ValidationError, match="Stack abandon is disabled"):
        service.abandon_stack("s")
    with pytest.raises(ValidationError, match="Stack adopt is disabled"):
        service.adopt_stack("t", service.export_stack("s"))
