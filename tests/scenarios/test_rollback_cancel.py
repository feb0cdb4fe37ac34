"""Update rollback and cancel (with and without rollback)."""

from __future__ import annotations

import pytest

from stoker.sdk.exceptions import ValidationError
from tests.support.stacks import event_states, states, template
from tests.support.waiting import finished, in_background, wait_until

V1 = """
heat_template_version: 2021-04-16
parameters:
  word: {type: string, default: one}
resources:
  keep:
    type: OS::Heat::RandomString
    properties: {length: 8}
  edit:
    type: OS::Heat::TestResource
    properties: {value: {get_param: word}}
  gone:
    type: OS::Heat::None
outputs:
  value: {value: {get_attr: [edit, output]}}
  secret: {value: {get_attr: [keep, value]}}
"""

BROKEN = """
heat_template_version: 2021-04-16
parameters:
  word: {type: string, default: one}
resources:
  keep:
    type: OS::Heat::RandomString
    properties: {length: 9}
  edit:
    type: OS::Heat::TestResource
    properties: {value: {get_param: word}}
  extra:
    type: OS::Heat::TestResource
    depends_on: [keep, edit]
    properties: {fail: true}
"""


def test_failed_update_rolls_back_to_the_previous_template(service):
    service.create_stack("rb", template(V1), disable_rollback=False)
    before = {r.name: r.physical_resource_id for r in service.list_resources("rb")}
    secret = service.outputs("rb")[1]["output_value"]
    stack = service.update_stack("rb", template(BROKEN), parameters={"word": "two"})
    assert stack.state == "ROLLBACK_COMPLETE", stack.status_reason
    after = {r.name: r.physical_resource_id for r in service.list_resources("rb")}
    # the replaced RandomString is the original again; extra is gone; gone is back (never deleted)
    assert after == before
    assert set(states(service, "rb").values()) <= {"CREATE_COMPLETE", "UPDATE_COMPLETE"}
    outputs = {o["output_key"]: o["output_value"] for o in service.outputs("rb")}
    assert outputs == {"value": "one", "secret": secret}
    assert event_states(service, "rb", "extra") == ["CREATE_IN_PROGRESS", "CREATE_FAILED", "DELETE_IN_PROGRESS", "DELETE_COMPLETE"]
    assert [e for e in event_states(service, "rb", "rb")][-4:] == ["UPDATE_IN_PROGRESS", "UPDATE_FAILED", "ROLLBACK_IN_PROGRESS", "ROLLBACK_COMPLETE"]
    # and the stack works on: a later good update goes from the restored state
    assert service.update_stack("rb", template(V1), parameters={"word": "three"}).state == "UPDATE_COMPLETE"


def test_failed_update_without_rollback_stays_failed(service):
    service.create_stack("nb", template(V1))
    stack = service.update_stack("nb", template(BROKEN))
    assert stack.state == "UPDATE_FAILED"


@pytest.mark.parametrize("rollback", [True, False], ids=["rollback", "no-rollback"])
def test_cancel_update_in_progress(service, rollback):
    service.create_stack("c", template(V1))
    hanging = V1.replace("properties: {value: {get_param: word}}", "properties: {value: {get_param: word}, wait_secs: -1}")
    thread, result = in_background(lambda: service.update_stack("c", template(hanging), parameters={"word": "two"}))
    wait_until(lambda: service.get_stack("c").state == "UPDATE_IN_PROGRESS", lambda: f"the update to start (stack {service.get_stack('c').state})", interval_s=0.05)
    wait_until(lambda: any(e.resource_name == "edit" and e.resource_action == "UPDATE" for e in service.list_events("c")), "edit's update to start", interval_s=0.05)
    service.cancel_stack("c", rollback=rollback)
    stack = finished(thread, result)
    edit = next(r for r in service.list_resources("c") if r.name == "edit")
    if rollback:
        assert stack.state == "ROLLBACK_COMPLETE", stack.status_reason
        assert service.outputs("c")[0]["output_value"] == "one"
    else:
        assert stack.state == "UPDATE_FAILED"
        assert stack.status_reason == "Cancelled by the user"
        assert edit.state == "UPDATE_FAILED"
        assert edit.status_reason == "UPDATE aborted: Cancelled by the user"
    with pytest.raises(ValidationError, match="only a create or update in progress can be cancelled"):
        service.cancel_stack("c")
