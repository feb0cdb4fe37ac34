"""Suspend, resume and check."""

from __future__ import annotations

import pytest

from stoker.engine.states import Action
from stoker.sdk.exceptions import ValidationError
from tests.support.stacks import event_states, states, template

BODY = """
heat_template_version: 2021-04-16
resources:
  base:
    type: OS::Heat::TestResource
  top:
    type: OS::Heat::TestResource
    properties: {value: {get_attr: [base, output]}}
  plain:
    type: OS::Heat::RandomString
"""


def test_suspend_reverse_order_then_resume_forward(service):
    service.create_stack("s", template(BODY))
    stack = service.stack_action("s", Action.SUSPEND)
    assert stack.state == "SUSPEND_COMPLETE"
    assert set(states(service, "s").values()) == {"SUSPEND_COMPLETE"}
    events = [(e.resource_name, e.resource_status) for e in service.list_events("s") if e.resource_action == "SUSPEND"]
    assert events.index(("top", "COMPLETE")) < events.index(("base", "IN_PROGRESS"))
    with pytest.raises(ValidationError, match="SUSPEND applies only to"):
        service.stack_action("s", Action.SUSPEND)
    stack = service.stack_action("s", Action.RESUME)
    assert stack.state == "RESUME_COMPLETE"
    events = [(e.resource_name, e.resource_status) for e in service.list_events("s") if e.resource_action == "RESUME"]
    assert events.index(("base", "COMPLETE")) < events.index(("top", "IN_PROGRESS"))
    with pytest.raises(ValidationError, match="RESUME applies only to a suspended stack"):
        service.stack_action("s", Action.RESUME)


def test_check_reports_unsupported_types(service):
    service.create_stack("s", template(BODY))
    stack = service.stack_action("s", Action.CHECK)
    assert stack.state == "CHECK_COMPLETE"
    reasons = {e.resource_name: e.resource_status_reason for e in service.list_events("s") if e.resource_action == "CHECK" and e.resource_status == "COMPLETE"}
    assert reasons["plain"] == "CHECK not supported for OS::Heat::RandomString"
    assert reasons["s"] == "Stack CHECK completed successfully"


CHECKED = '''
from stoker.sdk import properties, resource


class Probe(resource.Resource):
    """A resource whose check can fail."""

    properties_schema = {"healthy": properties.Schema(properties.Schema.BOOLEAN, "Healthy?", default=True)}

    def handle_create(self):
        self.resource_id_set(self.physical_resource_name())

    def handle_check(self):
        if not self.properties["healthy"]:
            raise RuntimeError("probe is unhealthy")


def resource_mapping():
    return {"Demo::Probe": Probe}
'''


def test_failed_check_leads_to_replacement_on_update(make_service, tmp_path):
    (tmp_path / "probe.py").write_text(CHECKED)
    service = make_service(plugin_dirs=[str(tmp_path)])
    body = "heat_template_version: 2021-04-16\nresources:\n  p:\n    type: Demo::Probe\n    properties: {healthy: false}\n  q:\n    type: Demo::Probe\n"
    service.create_stack("c", template(body))
    old = {r.name: r.physical_resource_id for r in service.list_resources("c")}
    stack = service.stack_action("c", Action.CHECK)
    assert stack.state == "CHECK_FAILED"
    assert "RuntimeError: resources.p: probe is unhealthy" in stack.status_reason
    assert states(service, "c") == {"p": "CHECK_FAILED", "q": "CHECK_COMPLETE"}
    stack = service.update_stack("c", template(body.replace("healthy: false", "healthy: true")))
    assert stack.state == "UPDATE_COMPLETE"
    new = {r.name: r.physical_resource_id for r in service.list_resources("c")}
    assert new["p"] != old["p"] and new["q"] == old["q"]
    assert event_states(service, "c", "q")[-2:] == ["CHECK_IN_PROGRESS", "CHECK_COMPLETE"]


def test_a_second_check_visits_every_resource_again(make_service, tmp_path):
    (tmp_path / "probe.py").write_text(CHECKED)
    service = make_service(plugin_dirs=[str(tmp_path)])
    body = "heat_template_version: 2021-04-16\nresources:\n  q:\n    type: Demo::Probe\n"
    service.create_stack("twice", template(body))
    assert service.stack_action("twice", Action.CHECK).state == "CHECK_COMPLETE"
    assert service.stack_action("twice", Action.CHECK).state == "CHECK_COMPLETE"
    assert event_states(service, "twice", "q")[-4:] == ["CHECK_IN_PROGRESS", "CHECK_COMPLETE", "CHECK_IN_PROGRESS", "CHECK_COMPLETE"]
