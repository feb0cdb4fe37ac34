"""Heat's ``restore_prev_rsrc``: when an update that replaced a resource rolls back, the
old resource becomes current again and takes back what it gave up for its replacement."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from stoker.sdk import properties
from stoker.sdk.exceptions import ResourceFailure
from stoker.sdk.resource import Resource
from tests.support.stacks import event_states, template

# An outside system with named slots, each held by at most one object (as a port's
# address is held by one port, or a port by one server).
SLOTS: dict[str, str] = {}
LOCK = threading.Lock()


class SlotHolder(Resource):
    """Holds a slot; an immutable ``version``, so a new version replaces it."""

    properties_schema = {
        "slot": properties.Schema(properties.Schema.STRING, required=True),
        "version": properties.Schema(properties.Schema.INTEGER, default=1),
        "refuse_restore": properties.Schema(properties.Schema.BOOLEAN, default=False),
    }

    def handle_create(self) -> None:
        slot = self.properties["slot"]
        with LOCK:
            if SLOTS.get(slot):
                raise ResourceFailure(f"slot {slot} is held by {SLOTS[slot]}")
            SLOTS[slot] = f"{self.name}-v{self.properties['version']}"
        self.resource_id_set(SLOTS[slot])

    def handle_delete(self) -> None:
        with LOCK:
            if SLOTS.get(self.properties["slot"]) == self.resource_id:
                SLOTS[self.properties["slot"]] = ""

    def prepare_for_replace(self) -> None:
        with LOCK:
            SLOTS[self.properties["slot"]] = ""

    def restore_prev_rsrc(self, convergence: bool = False) -> None:
        if self.properties["refuse_restore"]:
            raise ResourceFailure("the slot cannot be taken back")
        replacement = self.replacement()
        with LOCK:
            if replacement is not None:
                assert SLOTS[self.properties["slot"]] == replacement.resource_id
            SLOTS[self.properties["slot"]] = str(self.resource_id)


TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  version: {type: number, default: 1}
  fail: {type: boolean, default: false}
resources:
  holder:
    type: Test::SlotHolder
    properties: {slot: SLOT, version: {get_param: version}, refuse_restore: REFUSE}
  after:
    type: OS::Heat::TestResource
    depends_on: holder
    properties: {fail: {get_param: fail}, value: {get_param: version}}
"""


@pytest.fixture
def holder_service(make_service):
    service = make_service()
    service.registry.register_mapping({"Test::SlotHolder": SlotHolder}, "tests")
    return service


def body(slot: str, refuse: bool = False) -> Any:
    return template(TEMPLATE.replace("SLOT", slot).replace("REFUSE", str(refuse).lower()))


def test_the_rolled_back_resource_takes_its_slot_back(holder_service):
    slot = "restore-ok"
    stack = holder_service.create_stack("r", body(slot), disable_rollback=False)
    assert stack.state == "CREATE_COMPLETE" and SLOTS[slot] == "holder-v1"

    stack = holder_service.update_stack("r", body(slot), parameters={"version": 2, "fail": True})
    assert stack.state == "ROLLBACK_COMPLETE", stack.status_reason
    # the replacement (holder-v2) got the slot the old one gave up, was rolled back and
    # deleted; the old one holds its slot again
    assert SLOTS[slot] == "holder-v1"
    assert [r.physical_resource_id for r in holder_service.list_resources("r") if r.name == "holder"] == ["holder-v1"]
    # and the stack goes on from there: a good update replaces it again
    stack = holder_service.update_stack("r", body(slot), parameters={"version": 3})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert SLOTS[slot] == "holder-v3"


def test_a_failed_restore_fails_the_rollback_on_the_old_resource(holder_service):
    slot = "restore-refused"
    holder_service.create_stack("r", body(slot, refuse=True), disable_rollback=False)
    stack = holder_service.update_stack("r", body(slot, refuse=True), parameters={"version": 2, "fail": True})
    assert stack.state == "ROLLBACK_FAILED"
    assert "the slot cannot be taken back" in stack.status_reason
    old = next(r for r in holder_service.store.list_resources(stack.id) if r.physical_resource_id == "holder-v1")
    assert old.state == "UPDATE_FAILED"
    assert old.status_reason.startswith("Restoring it for the rollback failed: ")
    assert event_states(holder_service, "r", "holder")[-1] == "UPDATE_FAILED"
