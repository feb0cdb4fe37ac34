"""Hooks (breakpoints) from the environment; mark-unhealthy; signals."""

from __future__ import annotations

import pytest

from stoker.sdk.exceptions import ValidationError
from tests.support.stacks import event_states, states, template
from tests.support.waiting import finished, in_background, wait_until

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


def test_pre_create_hook_pauses_dependents_until_cleared(service):
    thread, result = in_background(lambda: service.create_stack("h", template(BODY), [template(HOOKS, "env.yaml")]))
    wait_until(lambda: service.store.find_stack("h") and any(r.hook == "pre-create" for r in service.list_resources("h")), "the pre-create hook's pause")
    reasons = {e.resource_name: e.resource_status_reason for e in service.list_events("h")}
    assert reasons["gate"] == "CREATE paused until Hook pre-create is cleared"
    # Heat: waiting is not a state; the resource is still INIT_COMPLETE, so is the event.
    assert states(service, "h")["gate"] == "INIT_COMPLETE"
    assert event_states(service, "h", "gate") == ["INIT_COMPLETE"]
    wait_until(lambda: {r.name: r.state for r in service.list_resources("h")}["free"] == "CREATE_COMPLETE", "free created")
    assert {r.name: r.state for r in service.list_resources("h")}["behind"] == "INIT_COMPLETE"
    with pytest.raises(ValidationError, match="not waiting at hook pre-update"):
        service.clear_hook("h", "gate", "pre-update")
    service.signal_resource("h", "gate", {"unset_hook": "pre-create"})
    assert finished(thread, result).state == "CREATE_COMPLETE"
    assert event_states(service, "h", "gate") == ["INIT_COMPLETE", "INIT_COMPLETE", "CREATE_IN_PROGRESS", "CREATE_COMPLETE"]
    reasons = [e.resource_status_reason for e in service.list_events("h", "gate")]
    assert reasons[1] == "Hook pre-create is cleared"

    # post-delete: the stack delete waits after gate is deleted, until cleared
    stack_id = service.get_stack("h").id
    thread, result = in_background(lambda: service.delete_stack("h"), "deleted")
    wait_until(lambda: any(r.hook == "post-delete" for r in service.store.list_resources(stack_id)), "the post-delete hook's pause")
    service.clear_hook("h", "gate")
    assert finished(thread, result, "deleted").state == "DELETE_COMPLETE"


UPDATE_HOOK = """
resource_registry:
  resources:
    gate:
      hooks: [pre-update, pre-create]
"""


def _update_in_thread(service, name, body):
    return in_background(lambda: service.update_stack(name, template(body), [template(UPDATE_HOOK, "env.yaml")]))


def _paused(service, name, hook):
    stack_id = service.get_stack(name).id
    return lambda: any(r.hook == hook for r in service.store.list_resources(stack_id))


def test_pre_update_hook_stops_an_update_that_changes_nothing(service):
    service.create_stack("u", template(BODY))
    thread, result = _update_in_thread(service, "u", BODY)
    wait_until(_paused(service, "u", "pre-update"), "the pre-update hook's pause")
    # Heat: the resource keeps its previous state while it waits; the event is in it.
    assert states(service, "u")["gate"] == "CREATE_COMPLETE"
    paused = service.list_events("u", "gate")[-1]
    assert (paused.resource_action, paused.resource_status) == ("CREATE", "COMPLETE")
    assert paused.resource_status_reason == "UPDATE paused until Hook pre-update is cleared"
    assert states(service, "u")["behind"] == "CREATE_COMPLETE"
    service.signal_resource("u", "gate", {"unset_hook": "pre-update"})
    assert finished(thread, result).state == "UPDATE_COMPLETE"
    cleared = service.list_events("u", "gate")[-1]
    assert (cleared.resource_action, cleared.resource_status, cleared.resource_status_reason) == ("CREATE", "COMPLETE", "Hook pre-update is cleared")


def test_pre_update_hook_stops_before_a_replacement_and_the_replacement_has_no_pre_create(service):
    service.create_stack("r", template(BODY))
    old_id = next(r.physical_resource_id for r in service.list_resources("r") if r.name == "gate")
    replaced = BODY.replace("  gate:\n    type: OS::Heat::TestResource\n", "  gate:\n    type: OS::Heat::TestResource\n    properties: {update_replace_value: new}\n")
    assert replaced != BODY
    thread, result = _update_in_thread(service, "r", replaced)
    wait_until(_paused(service, "r", "pre-update"), "the pre-update hook's pause")
    assert states(service, "r")["gate"] == "CREATE_COMPLETE"
    service.signal_resource("r", "gate", {"unset_hook": "pre-update"})
    # The replacement is created during a stack update: Heat stops it at no pre-create hook.
    assert finished(thread, result).state == "UPDATE_COMPLETE", result["stack"].status_reason
    gate = next(r for r in service.list_resources("r") if r.name == "gate")
    assert gate.physical_resource_id != old_id
    reasons = [e.resource_status_reason for e in service.list_events("r", "gate")]
    assert "CREATE paused until Hook pre-create is cleared" not in reasons


def test_mark_unhealthy_then_update_replaces(service):
    service.create_stack("m", template(BODY))
    old = {r.name: r.physical_resource_id for r in service.list_resources("m")}
    service.mark_unhealthy("m", "free", reason="disk died")
    free = next(r for r in service.list_resources("m") if r.name == "free")
    # Heat keeps the user's reason verbatim, and has its own when none is given.
    assert (free.state, free.status_reason) == ("CHECK_FAILED", "disk died")
    service.mark_unhealthy("m", "behind")
    behind = next(r for r in service.list_resources("m") if r.name == "behind")
    assert (behind.state, behind.status_reason) == ("CHECK_FAILED", "state changed by resource_mark_unhealthy api")
    service.mark_unhealthy("m", "behind", unhealthy=False, reason="fixed by hand")
    behind = next(r for r in service.list_resources("m") if r.name == "behind")
    assert (behind.state, behind.status_reason) == ("CHECK_COMPLETE", "fixed by hand")
    assert service.update_stack("m", template(BODY)).state == "UPDATE_COMPLETE"
    new = {r.name: r.physical_resource_id for r in service.list_resources("m")}
    assert new["free"] != old["free"]
    assert new["behind"] == old["behind"] and new["gate"] == old["gate"]


def test_signal_needs_a_plugin_that_takes_signals(service):
    service.create_stack("s", template(BODY))
    with pytest.raises(ValidationError, match="does not accept signals"):
        service.signal_resource("s", "free", {"status": "SUCCESS"})
