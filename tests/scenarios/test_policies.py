"""external_id, restricted_actions and hidden parameters."""

from __future__ import annotations

import pytest

from stoker.template.errors import TemplateErrors
from tests.support.stacks import event_states, template

EXTERNAL = """
heat_template_version: 2021-04-16
parameters:
  existing: {type: string, default: vol-1234}
resources:
  adopted:
    type: OS::Heat::TestResource
    external_id: {get_param: existing}
    properties: {value: ignored}
  user:
    type: OS::Heat::TestResource
    properties: {value: {get_resource: adopted}}
outputs:
  ref: {value: {get_resource: adopted}}
"""


def test_external_id_adopts_without_applying_or_deleting(service):
    stack = service.create_stack("ext", template(EXTERNAL))
    assert stack.state == "CREATE_COMPLETE"
    adopted = next(r for r in service.list_resources("ext") if r.name == "adopted")
    assert adopted.physical_resource_id == "vol-1234"
    assert adopted.status_reason == "External resource vol-1234 adopted"
    assert service.outputs("ext")[0]["output_value"] == "vol-1234"
    # property changes of an external resource are not applied
    assert service.update_stack("ext", template(EXTERNAL.replace("value: ignored", "value: other"))).state == "UPDATE_COMPLETE"
    assert event_states(service, "ext", "adopted") == ["CREATE_IN_PROGRESS", "CREATE_COMPLETE"]
    # changing external_id is an error
    stack = service.update_stack("ext", template(EXTERNAL), parameters={"existing": "vol-9"})
    assert stack.state == "UPDATE_FAILED"
    assert "Update of external_id of resource adopted is not allowed" in stack.status_reason
    stack = service.delete_stack("ext")
    assert stack.state == "DELETE_COMPLETE"
    reasons = [e.resource_status_reason for e in service.store.events.list_events(stack.id, "adopted")]
    assert reasons[-1] == "External resource vol-1234 is not deleted"


RESTRICTED = """
heat_template_version: 2021-04-16
resources:
  guarded:
    type: OS::Heat::RandomString
    properties: {length: 8}
  editable:
    type: OS::Heat::TestResource
    properties: {value: a}
"""

ENVIRONMENT = """
resource_registry:
  resources:
    guarded:
      restricted_actions: [replace]
    editable:
      restricted_actions: update
"""


def test_restricted_actions_refuse_the_update(service):
    service.create_stack("r", template(RESTRICTED), [template(ENVIRONMENT, "env.yaml")])
    stack = service.update_stack("r", template(RESTRICTED.replace("length: 8", "length: 9")), [template(ENVIRONMENT, "env.yaml")])
    assert stack.state == "UPDATE_FAILED"
    assert "replace is restricted for resource guarded" in stack.status_reason
    service.create_stack("r2", template(RESTRICTED), [template(ENVIRONMENT, "env.yaml")])
    stack = service.update_stack("r2", template(RESTRICTED.replace("value: a", "value: b")), [template(ENVIRONMENT, "env.yaml")])
    assert stack.state == "UPDATE_FAILED"
    assert "update is restricted for resource editable" in stack.status_reason
    service.create_stack("r3", template(RESTRICTED), [template(ENVIRONMENT, "env.yaml")])
    preview = service.preview_update("r3", template(RESTRICTED.replace("value: a", "value: b")), [template(ENVIRONMENT, "env.yaml")])
    assert "update is restricted" in preview["resource_changes"]["updated"][0]["reason"]


HIDDEN = """
heat_template_version: 2021-04-16
parameters:
  password: {type: string, hidden: true}
  user: {type: string, default: admin}
resources:
  r:
    type: OS::Heat::TestResource
    properties: {value: {get_param: user}}
"""


def test_hidden_parameters_are_masked_where_they_leave_the_engine(service):
    stack = service.create_stack("h", template(HIDDEN), parameters={"password": "s3cret"})
    shown = service.stack_parameters(stack)
    assert shown["password"] == "******"
    assert shown["user"] == "admin"
    assert shown["OS::stack_name"] == "h"
    with pytest.raises(TemplateErrors) as caught:
        service.create_stack("h2", template(HIDDEN.replace("type: string, hidden: true", "type: number, hidden: true")), parameters={"password": "s3cret"})
    assert "s3cret" not in str(caught.value)
