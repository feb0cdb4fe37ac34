"""Hooks (breakpoints) from the environment; mark-unhealthy; signals."""

from __future__ import annotations

import threading
import time

import pytest

from stoker.sdk.exceptions import ValidationError
from tests.support.stacks import event_states, template

BODY = """
heat_template_version: 2021-04-16
resources:
  gate:
    type: OS::Heat::TestResource
  behind:
    type: OS::Heat::TestResource
    depends_on: gate
  free:
    type: OS::Heat::TestResource
"""

HOOKS = """
resource_registry:
  resources:
    gat*:
      hooks: [pre-create, post-delete]
"""


def wait_for(predicate, deadline_s=30):
    deadline = time.monotonic() + deadline_s
    while not predicate():
        assert time.monotonic() < deadline
        time.sleep(0.05)


def test_pre_create_hook_pauses_dependents_until_cleared(service):
    result = {}
    thread = threading.Thread(target=lambda: result.setdefault("stack", service.create_stack("h", template(BODY), [template(HOOKS, "env.yaml")])))
    thread.start()
    wait_for(lambda: service.store.find_stack("h") and any(r.hook == "pre-create" for r in service.list_resources("h")))
    reasons = {e.resource_name: e.resource_status_reason for e in service.list_events("h")}
    assert reasons["gate"] == "CREATE paused until Hook pre-create is cleared"
    wait_for(lambda: {r.name: r.state for r in service.list_resources("h")}["free"] == "CREATE_COMPLETE")
    assert {r.name: r.state for r in service.list_resources("h")}["behind"] == "INIT_COMPLETE"
    with pytest.raises(ValidationError, match="not waiting at hook pre-update"):
        service.clear_hook("h", "gate", "pre-update")
    service.signal_resource("h", "gate", {"unset_hook": "pre-create"})
    thread.join(timeout=30)
    assert result["stack"].state == "CREATE_COMPLETE"
    assert event_states(service, "h", "gate") == ["CREATE_IN_PROGRESS", "CREATE_IN_PROGRESS", "CREATE_IN_PROGRESS", "CREATE_COMPLETE"]
    reasons = [e.resource_status_reason for e in service.list_events("h", "gate")]
    assert reasons[1] == "Hook pre-create is cleared"

    # post-delete: the stack delete waits after gate is deleted, until cleared
    thread = threading.Thread(target=lambda: result.update(deleted=service.delete_stack("h")))
    thread.start()
    stack_id = service.get_stack("h").id
    wait_for(lambda: any(r.hook == "post-delete" for r in service.store.list_resources(stack_id)))
    service.clear_hook("h", "gate")
    thread.join(timeout=30)
    assert result["deleted"].state == "DELETE_COMPLETE"


def test_mark_unhealthy_then_update_replaces(service):
    service.create_stack("m", template(BODY))
    old = {r.name: r.physical_resource_id for r in service.list_resources("m")}
    service.mark_unhealthy("m", "free", reason="disk died")
    free = next(r for r in service.list_resources("m") if r.name == "free")
    assert (free.state, free.status_reason) == ("CHECK_FAILED", "Marked unhealthy by user: disk died")
    service.mark_unhealthy("m", "behind")
    service.mark_unhealthy("m", "behind", unhealthy=False)
    assert service.update_stack("m", template(BODY)).state == "UPDATE_COMPLETE"
    new = {r.name: r.physical_resource_id for r in service.list_resources("m")}
    assert new["free"] != old["free"]
    assert new["behind"] == old["behind"] and new["gate"] == old["gate"]


def test_signal_needs_a_plugin_that_takes_signals(service):
    service.create_stack("s", template(BODY))
    with pytest.raises(ValidationError, match="does not accept signals"):
        service.signal_resource("s", "free", {"status": "SUCCESS"})
