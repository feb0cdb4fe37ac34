"""Wait condition handles and wait conditions through the engine: credentials, signals
as rows (count, FAILURE, idempotent repeats), timeouts on the fake clock, update and
delete, and the refusals (unserved transports, wrong or revoked credentials)."""

from __future__ import annotations

import json
import time

import pytest

from stoker.engine import signals
from stoker.engine.clock import FakeClock
from stoker.engine.signals import SignalCredentialError
from stoker.resources.heat.wait_condition_handle import SignalRejectedError
from tests.support.stacks import template
from tests.support.waiting import finished, in_background, wait_until

HANDLE = """
heat_template_version: 2021-04-16
parameters:
  transport: {type: string, default: TOKEN_SIGNAL}
resources:
  handle:
    type: OS::Heat::WaitConditionHandle
    properties:
      signal_transport: {get_param: transport}
outputs:
  curl_cli: {value: {get_attr: [handle, curl_cli]}}
  token: {value: {get_attr: [handle, token]}}
  endpoint: {value: {get_attr: [handle, endpoint]}}
  signal: {value: {get_attr: [handle, signal]}}
"""

WAITING = """
heat_template_version: 2021-04-16
parameters:
  transport: {type: string, default: TOKEN_SIGNAL}
  count: {type: number, default: 2}
  timeout: {type: number, default: 600}
resources:
  handle:
    type: OS::Heat::WaitConditionHandle
    properties:
      signal_transport: {get_param: transport}
  wait:
    type: OS::Heat::WaitCondition
    properties:
      handle: {get_resource: handle}
      count: {get_param: count}
      timeout: {get_param: timeout}
outputs:
  data: {value: {get_attr: [wait, data]}}
"""

CFN = """
AWSTemplateFormatVersion: 2010-09-09
Parameters:
  Count: {Type: Number, Default: 1}
Resources:
  Handle:
    Type: AWS::CloudFormation::WaitConditionHandle
  Wait:
    Type: AWS::CloudFormation::WaitCondition
    Properties:
      Handle: {Ref: Handle}
      Count: {Ref: Count}
      Timeout: 600
Outputs:
  Data:
    Value: {"Fn::GetAtt": [Wait, Data]}
"""


def outputs(service, name: str) -> dict:
    return {o["output_key"]: o["output_value"] for o in service.outputs(name)}


def resource(service, stack: str, name: str):
    return next(r for r in service.list_resources(stack) if r.name == name)


def test_wait_condition_handle_token_attributes_and_credential(service):
    stack = service.create_stack("h", template(HANDLE))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    shown = outputs(service, "h")
    token, endpoint = shown["token"], shown["endpoint"]
    assert len(token) >= 43
    assert endpoint == f"http://127.0.0.1:8004/v1/default/stacks/h/{stack.id}/resources/handle/signal"
    assert shown["curl_cli"] == (
        f"curl -i -X POST -H 'X-Auth-Token: {token}' -H 'Content-Type: application/json' -H 'Accept: application/json' {endpoint}"
    )
    assert shown["signal"] == "null"  # as Heat's, for TOKEN_SIGNAL
    record = resource(service, "h", "handle")
    # Only the hash is stored; the secret is sealed in the resource's data.
    assert signals.credential_valid(service.store, record.uuid, token)
    assert not signals.credential_valid(service.store, record.uuid, token + "x")
    assert token not in json.dumps(record.data)
    assert all(token not in e.resource_status_reason for e in service.list_events("h"))


def test_wait_condition_handle_zaqar_signal_without_a_cloud_fails_naming_it(service):
    # ZAQAR_SIGNAL is served (tests/cloud/test_zaqar_signals.py); with no cloud, the
    # handle's create fails saying so.
    stack = service.create_stack("xz", template(HANDLE), parameters={"transport": "ZAQAR_SIGNAL"})
    assert stack.state == "CREATE_FAILED"
    assert "resources.handle: No OpenStack cloud is configured" in stack.status_reason


def test_wait_condition_completes_at_count_success_signals(service):
    thread, result = in_background(lambda: service.create_stack("w", template(WAITING)))
    wait_until(lambda: service.store.find_stack("w") and resource(service, "w", "wait").state == "CREATE_IN_PROGRESS", "the wait to begin", interval_s=0.05, ignoring=(StopIteration,))
    service.signal_resource("w", "handle", {"status": "SUCCESS", "data": "one"})
    # a repeat of signal 1 (same id) is not a second signal
    service.signal_resource("w", "handle", {"status": "SUCCESS", "data": "one", "id": "1"})
    time.sleep(0.3)
    assert resource(service, "w", "wait").state == "CREATE_IN_PROGRESS"
    service.signal_resource("w", "handle", {"status": "SUCCESS", "data": "two", "id": "second", "reason": "done"})
    assert finished(thread, result).state == "CREATE_COMPLETE", result["stack"].status_reason
    assert json.loads(outputs(service, "w")["data"]) == {"1": "one", "second": "two"}
    reasons = [e.resource_status_reason for e in service.list_events("w", "handle") if e.resource_action == "SIGNAL"]
    assert reasons == ["Signal: status:SUCCESS reason:Signal 1 received"] * 2 + ["Signal: status:SUCCESS reason:done"]


def test_wait_condition_counts_signals_sent_before_it_waits(service):
    assert service.create_stack("early", template(HANDLE)).state == "CREATE_COMPLETE"
    service.signal_resource("early", "handle", {})
    service.signal_resource("early", "handle", {"data": {"k": 1}})
    stack = service.update_stack("early", template(WAITING))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert json.loads(outputs(service, "early")["data"]) == {"1": None, "2": {"k": 1}}


def test_wait_condition_fails_at_the_first_failure_signal(service):
    assert service.create_stack("f", template(HANDLE)).state == "CREATE_COMPLETE"
    service.signal_resource("f", "handle", {"status": "SUCCESS"})
    service.signal_resource("f", "handle", {"status": "FAILURE", "reason": "disk full"})
    stack = service.update_stack("f", template(WAITING))
    assert stack.state == "UPDATE_FAILED"
    wait = resource(service, "f", "wait")
    assert wait.state == "CREATE_FAILED"
    assert wait.status_reason == "WaitConditionFailure: resources.wait: disk full"


def test_wait_condition_handle_rejects_a_signal_in_another_format(service):
    assert service.create_stack("bad", template(HANDLE)).state == "CREATE_COMPLETE"
    with pytest.raises(SignalRejectedError, match="Metadata format invalid"):
        service.signal_resource("bad", "handle", {"status": "MAYBE"})
    with pytest.raises(SignalRejectedError, match="Metadata format invalid"):
        service.signal_resource("bad", "handle", {"unknown": 1})
    assert service.store.signals.list_signals(resource(service, "bad", "handle").uuid) == []


def test_wait_condition_times_out_on_the_engine_clock(make_service):
    clock = FakeClock()
    service = make_service(clock=clock)
    start = clock.now()
    assert service.create_stack("t", template(HANDLE)).state == "CREATE_COMPLETE"
    service.signal_resource("t", "handle", {"reason": "first one"})
    stack = service.update_stack("t", template(WAITING), parameters={"count": 3, "timeout": 120})
    assert stack.state == "UPDATE_FAILED"
    wait = resource(service, "t", "wait")
    assert wait.status_reason == "WaitConditionTimeout: resources.wait: 1 of 3 received - first one"
    assert 120 <= clock.now() - start < 130


def test_a_create_stopped_by_its_timeout_keeps_the_waiters_properties_and_deletes(make_service):
    # heat-templates' native_waitcondition.yaml with no agent to signal: the stack's
    # timeout stops the wait; the wait condition keeps the handle it was given, which
    # its delete needs (it clears the handle's signals).
    clock = FakeClock()
    service = make_service(clock=clock)
    stack = service.create_stack("late", template(WAITING), parameters={"count": 2, "timeout": 600}, timeout_mins=1)
    assert stack.state == "CREATE_FAILED", stack.status_reason
    wait = resource(service, "late", "wait")
    assert wait.state == "CREATE_FAILED" and "aborted" in wait.status_reason
    assert wait.properties["handle"] == resource(service, "late", "handle").physical_resource_id
    deleted = service.delete_stack("late")
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason


def test_a_record_that_kept_no_properties_is_deleted_with_the_templates(make_service):
    # A stack an older stoker stopped the same way: its record has no properties.
    service = make_service(clock=FakeClock())
    assert service.create_stack("old", template(WAITING), parameters={"count": 2}, timeout_mins=1).state == "CREATE_FAILED"
    wait = resource(service, "old", "wait")
    service.store.update_resource(wait, properties=None)
    assert resource(service, "old", "wait").properties is None
    deleted = service.delete_stack("old")
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason


def test_no_signal_handle_is_signalled_at_once(make_service):
    service = make_service(clock=FakeClock())
    stack = service.create_stack("n", template(WAITING), parameters={"transport": "NO_SIGNAL", "count": 2})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert json.loads(outputs(service, "n")["data"]) == {"1": None, "2": None}


def test_wrong_token_is_refused_and_delete_revokes_the_credential(service):
    assert service.create_stack("c", template(HANDLE)).state == "CREATE_COMPLETE"
    token = outputs(service, "c")["token"]
    with pytest.raises(SignalCredentialError) as refused:
        service.signal_resource("c", "handle", {}, credential="not-the-token")
    assert "not-the-token" not in str(refused.value)
    service.signal_resource("c", "handle", {}, credential=token)
    record = resource(service, "c", "handle")
    assert len(service.store.signals.list_signals(record.uuid)) == 1
    assert service.delete_stack("c").state == "DELETE_COMPLETE"
    assert not signals.credential_valid(service.store, record.uuid, token)
    assert service.store.signals.list_signals(record.uuid) == []


def test_cfn_handle_url_signals_its_wait_condition(service):
    thread, result = in_background(lambda: service.create_stack("cfn", template(CFN), parameters={"Count": 2}))
    wait_until(lambda: service.store.find_stack("cfn") and resource(service, "cfn", "Wait").state == "CREATE_IN_PROGRESS", "the wait to begin", interval_s=0.05, ignoring=(StopIteration,))
    url = service.resource_attributes(service.get_stack("cfn"), "Handle")  # no attributes: the reference is the URL
    assert url == {}
    handle = resource(service, "cfn", "Handle")
    runtime = service.engine.load_runtime(service.get_stack("cfn"))
    reference = runtime.resource_reference("Handle")
    assert reference.startswith("http://127.0.0.1:8004/v1/waitcondition/")
    credential_id, secret = reference.split("/waitcondition/")[1].split("?secret=")
    body = {"Status": "SUCCESS", "Reason": "ok", "UniqueId": "i-1", "Data": "first"}
    answer = service.signal_by_capability(credential_id, secret, body)
    assert answer == {"resource": "Handle", "metadata": {"i-1": {"Status": "SUCCESS", "Reason": "ok", "Data": "first"}}}
    service.signal_by_capability(credential_id, secret, body)  # a repeat: still one
    with pytest.raises(SignalCredentialError):
        service.signal_by_capability(credential_id, secret + "x", body)
    with pytest.raises(SignalRejectedError):
        service.signal_by_capability(credential_id, secret, {"Status": "SUCCESS"})
    service.signal_by_capability(credential_id, secret, {**body, "UniqueId": "i-2", "Data": "second"})
    assert finished(thread, result).state == "CREATE_COMPLETE", result["stack"].status_reason
    assert json.loads(outputs(service, "cfn")["Data"]) == {"i-1": "first", "i-2": "second"}
    assert secret not in json.dumps(handle.data)
    assert service.delete_stack("cfn").state == "DELETE_COMPLETE"
    with pytest.raises(SignalCredentialError):
        service.signal_by_capability(credential_id, secret, body)


def test_wait_condition_update_of_count_waits_again(service):
    assert service.create_stack("u", template(HANDLE)).state == "CREATE_COMPLETE"
    service.signal_resource("u", "handle", {})
    assert service.update_stack("u", template(WAITING), parameters={"count": 1}).state == "UPDATE_COMPLETE"
    wait = resource(service, "u", "wait")
    thread, result = in_background(lambda: service.update_stack("u", template(WAITING), parameters={"count": 2}))
    wait_until(lambda: resource(service, "u", "wait").state == "UPDATE_IN_PROGRESS", "the update's wait to begin", interval_s=0.05, ignoring=(StopIteration,))
    service.signal_resource("u", "handle", {"id": "b"})
    assert finished(thread, result).state == "UPDATE_COMPLETE", result["stack"].status_reason
    assert resource(service, "u", "wait").uuid == wait.uuid  # in place


UPDATE_HANDLE = """
heat_template_version: 2021-04-16
parameters:
  rev: {type: string, default: "1"}
resources:
  handle:
    type: OS::Heat::UpdateWaitConditionHandle
  wait:
    type: AWS::CloudFormation::WaitCondition
    properties:
      Handle: {get_resource: handle}
      Timeout: 600
"""


def test_update_wait_condition_handle_is_replaced_at_every_update(service):
    thread, result = in_background(lambda: service.create_stack("uw", template(UPDATE_HANDLE)))
    wait_until(lambda: service.store.find_stack("uw") and resource(service, "uw", "wait").state == "CREATE_IN_PROGRESS", "the wait to begin", interval_s=0.05, ignoring=(StopIteration,))
    first = resource(service, "uw", "handle")
    url = service.engine.load_runtime(service.get_stack("uw")).resource_reference("handle")
    credential_id, secret = url.split("/waitcondition/")[1].split("?secret=")
    service.signal_by_capability(credential_id, secret, {"Status": "SUCCESS", "Reason": "r", "UniqueId": "1", "Data": "d"})
    assert finished(thread, result).state == "CREATE_COMPLETE", result["stack"].status_reason
    # An update with nothing changed still makes a new handle, and the wait waits again.
    thread, result = in_background(lambda: service.update_stack("uw", template(UPDATE_HANDLE)))
    wait_until(lambda: resource(service, "uw", "handle").uuid != first.uuid and resource(service, "uw", "wait").state.endswith("IN_PROGRESS"), "a new handle and the wait again", interval_s=0.05, ignoring=(StopIteration,))
    url2 = service.engine.load_runtime(service.get_stack("uw")).resource_reference("handle")
    assert url2 != url
    credential_id2, secret2 = url2.split("/waitcondition/")[1].split("?secret=")
    service.signal_by_capability(credential_id2, secret2, {"Status": "SUCCESS", "Reason": "r", "UniqueId": "1", "Data": "d2"})
    assert finished(thread, result).state == "UPDATE_COMPLETE", result["stack"].status_reason
    # the old handle's credential went with it
    with pytest.raises(SignalCredentialError):
        service.signal_by_capability(credential_id, secret, {"Status": "SUCCESS", "Reason": "r", "UniqueId": "2", "Data": "d"})


@pytest.mark.parametrize("transport", ["CFN_SIGNAL", "TEMP_URL_SIGNAL"])
def test_url_transports_of_the_heat_handle_accept_a_put_to_their_alarm_url(service, transport):
    name = transport.split("_")[0].lower()
    assert service.create_stack(name, template(HANDLE), parameters={"transport": transport}).state == "CREATE_COMPLETE"
    shown = outputs(service, name)
    assert (shown["token"], shown["endpoint"], shown["curl_cli"]) == (None, None, None)
    url = json.loads(shown["signal"])["alarm_url"]
    credential_id, secret = url.split("/v1/waitcondition/")[1].split("?secret=")
    # an empty body (a temp URL's PUT of nothing) is a SUCCESS signal, numbered
    answer = service.signal_by_capability(credential_id, secret, None)
    assert answer == {"resource": "handle", "metadata": {"1": {"data": None, "reason": "Signal 1 received", "status": "SUCCESS"}}}
    assert secret not in json.dumps(resource(service, name, "handle").data)


def test_signals_are_read_only_in_a_preview(service):
    assert service.create_stack("p", template(HANDLE)).state == "CREATE_COMPLETE"
    service.signal_resource("p", "handle", {})
    changes = service.preview_update("p", template(WAITING))
    assert [c["resource_name"] for c in changes["resource_changes"]["added"]] == ["wait"]


BAD_HANDLE = """
heat_template_version: 2021-04-16
resources:
  wait_handle:
    type: OS::Heat::RandomString
  wait_condition:
    type: OS::Heat::WaitCondition
    properties:
      handle: {get_resource: wait_handle}
      timeout: 5
"""


def test_wait_condition_refuses_a_handle_of_another_type(service):
    stack = service.create_stack("bt", template(BAD_HANDLE))
    assert stack.state == "CREATE_FAILED"
    wait = resource(service, "bt", "wait_condition")
    assert wait.status_reason == "ValueError: resources.wait_condition: wait_handle is not a valid wait condition handle."
