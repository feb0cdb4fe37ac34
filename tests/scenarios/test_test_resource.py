"""OS::Heat::TestResource through the engine: Heat's knobs (waits per action, fail,
update_replace, update_replace_value, attr_wait_secs, constraint_prop_secs, client_name
and entity_name) as a template author uses them."""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest

from stoker.engine.clock import FakeClock
from stoker.engine.states import Action
from stoker.resources.heat import test_resource
from stoker.template.errors import TemplateErrors
from tests.support.stacks import event_states, states, template

BODY = """
heat_template_version: 2021-04-16
parameters:
  value: {type: string, default: one}
  keep: {type: string, default: a}
  replace: {type: boolean, default: false}
  fail: {type: boolean, default: false}
resources:
  r:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: value}
      update_replace_value: {get_param: keep}
      update_replace: {get_param: replace}
      fail: {get_param: fail}
      action_wait_secs: {create: 100, update: 50, delete: 25}
outputs:
  out: {value: {get_attr: [r, output]}}
"""


def physical_id(service, stack: str, name: str = "r") -> str:
    return next(r.physical_resource_id for r in service.list_resources(stack) if r.name == name)


def output(service, stack: str) -> str:
    return service.outputs(stack)[0]["output_value"]


def test_test_resource_waits_per_action_on_the_engine_clock(make_service):
    clock = FakeClock()
    service = make_service(clock=clock)
    start = clock.now()
    assert service.create_stack("t", template(BODY)).state == "CREATE_COMPLETE"
    assert clock.now() - start >= 100
    assert output(service, "t") == "one"

    # A new value waits the update's time and is updated in place.
    before, start = physical_id(service, "t"), clock.now()
    stack = service.update_stack("t", template(BODY), parameters={"value": "two"})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert 50 <= clock.now() - start < 100
    assert physical_id(service, "t") == before
    assert output(service, "t") == "two"

    # As in Heat, an update that leaves the value alone does not wait.
    start = clock.now()
    body = BODY.replace("delete: 25}", "delete: 25}\n      wait_secs: 7")
    stack = service.update_stack("t", template(body), parameters={"value": "two"})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert clock.now() - start < 50
    assert event_states(service, "t", "r")[-1] == "UPDATE_COMPLETE"

    start = clock.now()
    assert service.delete_stack("t").state == "DELETE_COMPLETE"
    assert clock.now() - start >= 25


@pytest.mark.parametrize(
    ("parameters", "replaced"),
    [
        ({"value": "two"}, False),
        ({"value": "two", "replace": True}, True),  # Heat: a new value with update_replace on
        ({"replace": True}, True),  # stoker: turning update_replace on
        ({"keep": "b"}, True),  # update_replace_value cannot be updated in place
    ],
    ids=["value-in-place", "value-with-update-replace", "update-replace-on", "update-replace-value"],
)
def test_test_resource_update_or_replace(make_service, parameters, replaced):
    service = make_service(clock=FakeClock())
    service.create_stack("t", template(BODY))
    before = physical_id(service, "t")
    stack = service.update_stack("t", template(BODY), parameters=parameters)
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert (physical_id(service, "t") != before) == replaced
    assert output(service, "t") == parameters.get("value", "one")


def test_test_resource_update_replace_value_replacement_is_explained(make_service):
    service = make_service(clock=FakeClock())
    service.create_stack("t", template(BODY))
    service.update_stack("t", template(BODY), parameters={"keep": "b"})
    reasons = [e.resource_status_reason for e in service.list_events("t", "r") if e.resource_action == "CREATE"]
    assert any("update_replace_value" in reason for reason in reasons), reasons


def test_test_resource_fail_knob(make_service):
    service = make_service(clock=FakeClock())
    stack = service.create_stack("f", template(BODY), parameters={"fail": True})
    assert stack.state == "CREATE_FAILED"
    assert "Test Resource failed r" in stack.status_reason
    # A failed create recorded no physical id; deleting still works.
    assert physical_id(service, "f") is None
    assert service.delete_stack("f").state == "DELETE_COMPLETE"

    service.create_stack("g", template(BODY))
    # Turning fail on fails the update, even without a new value (as in Heat) ...
    stack = service.update_stack("g", template(BODY), parameters={"fail": True})
    assert stack.state == "UPDATE_FAILED"
    assert "Test Resource failed r" in stack.status_reason
    # ... but never a delete.
    assert service.delete_stack("g").state == "DELETE_COMPLETE"


def test_test_resource_check_suspend_resume(make_service):
    service = make_service(clock=FakeClock())
    service.create_stack("c", template(BODY))
    assert service.stack_action("c", Action.CHECK).state == "CHECK_COMPLETE"
    assert service.stack_action("c", Action.SUSPEND).state == "SUSPEND_COMPLETE"
    assert service.stack_action("c", Action.RESUME).state == "RESUME_COMPLETE"
    assert states(service, "c") == {"r": "RESUME_COMPLETE"}


class RecordingTime:
    """Stands in for the ``time`` module of test_resource (the OS clock is the boundary):
    records each pause and whether the pausing thread ran an event loop."""

    def __init__(self):
        self.pauses: list[tuple[float, str]] = []
        self.lock = threading.Lock()

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.pauses.append((seconds, threading.current_thread().name))


@pytest.fixture
def pauses(monkeypatch) -> RecordingTime:
    recording = RecordingTime()
    monkeypatch.setattr(test_resource, "time", recording)
    return recording


SLOW = """
heat_template_version: 2021-04-16
resources:
  slow:
    type: OS::Heat::TestResource
    properties: {value: v, attr_wait_secs: 7, constraint_prop_secs: 3}
outputs:
  out: {value: {get_attr: [slow, output]}}
"""


def test_test_resource_constraint_prop_secs_slows_validation(service, pauses):
    service.preview_create("s", template(SLOW))
    assert [seconds for seconds, _ in pauses.pauses] == [3]
    with pytest.raises(TemplateErrors, match=r"constraint_prop_secs: a delay of -1 seconds is negative"):
        service.preview_create("s", template(SLOW.replace("constraint_prop_secs: 3", "constraint_prop_secs: -1")))
    # Template validate judges no value (Heat: strict validation off), so never waits.
    pauses.pauses.clear()
    service.validate_template(template(SLOW))
    assert pauses.pauses == []


def test_test_resource_attr_wait_secs_slows_reading_the_output(service, pauses):
    assert service.create_stack("s", template(SLOW)).state == "CREATE_COMPLETE"
    pauses.pauses.clear()
    assert output(service, "s") == "v"
    assert 7 in [seconds for seconds, _ in pauses.pauses]


def test_test_resource_never_pauses_an_event_loop(pauses):
    async def on_the_loop() -> None:
        test_resource.pause_off_loop(5, "a test")
        test_resource.DelayConstraint().validate(5, None)

    asyncio.run(on_the_loop())
    assert pauses.pauses == []
    test_resource.pause_off_loop(5, "a test")
    assert pauses.pauses == [(5, threading.current_thread().name)]


CLIENT_PLUGIN = '''
from stoker.sdk.clients import ClientPlugin

LOOKUPS = []


class Entries:
    def get(self, entry_id):
        LOOKUPS.append(("entries", entry_id))
        raise LookupError("no such entry")  # a failed lookup is only logged


class LedgerClient:
    entries = Entries()

    def get_book(self, book_id):  # openstacksdk's style: get_<entity>
        LOOKUPS.append(("books", book_id))


class LedgerClientPlugin(ClientPlugin):
    name = "ledger"

    def create_client(self, version):
        return LedgerClient()


def client_mapping():
    return {"ledger": LedgerClientPlugin}
'''

POLLED = """
heat_template_version: 2021-04-16
resources:
  polled:
    type: OS::Heat::TestResource
    properties: {value: the-id, wait_secs: 5, client_name: ledger, entity_name: ENTITY}
"""


@pytest.mark.parametrize("entity", ["entries", "books"])
def test_test_resource_polls_an_entity_through_a_client_plugin(make_service, tmp_path, entity):
    (tmp_path / "ledger.py").write_text(CLIENT_PLUGIN)
    service = make_service(clock=FakeClock(), plugin_dirs=[str(tmp_path)])
    stack = service.create_stack("p", template(POLLED.replace("ENTITY", entity)))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    plugin_class = service.registry.clients.get_class("ledger")
    lookups = sys.modules[plugin_class.__module__].LOOKUPS
    assert lookups and set(lookups) == {(entity, "the-id")}


def test_test_resource_client_errors_are_clear(make_service, tmp_path):
    (tmp_path / "ledger.py").write_text(CLIENT_PLUGIN)
    service = make_service(clock=FakeClock(), plugin_dirs=[str(tmp_path)])
    with pytest.raises(TemplateErrors, match=r"client_name: No client plugin named 'ledgr' is registered \(did you mean 'ledger'\?\)"):
        service.create_stack("p", template(POLLED.replace("client_name: ledger", "client_name: ledgr")))
    stack = service.create_stack("p", template(POLLED.replace("ENTITY", "pages")))
    assert stack.state == "CREATE_FAILED"
    assert "The client of client plugin 'ledger' has no entity 'pages' (neither pages.get nor get_page)" in stack.status_reason
