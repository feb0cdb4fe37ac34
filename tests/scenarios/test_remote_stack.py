"""OS::Heat::Stack with a context, as Heat's remote stacks behave on a single-region
server (heat-tempest-plugin's test_remote_stack): the server's own region makes the
stack here; another region, or a remote cloud's credential, is refused with Heat's
text; a nested template that does not validate is reported as Heat reports it."""

from __future__ import annotations

import pytest

from stoker.sdk.exceptions import ValidationError
from stoker.template.errors import TemplateErrors
from tests.support.stacks import template

PARENT = """
heat_template_version: 2013-05-23
resources:
  my_stack:
    type: OS::Heat::Stack
    properties:
      context:
        region_name: {region}
      template: {{get_file: remote_stack.yaml}}
outputs:
  key:
    value: {{get_attr: [my_stack, outputs]}}
"""

REMOTE = """
heat_template_version: 2013-05-23
resources:
  random1:
    type: OS::Heat::RandomString
outputs:
  remote_key:
    value: {get_attr: [random1, value]}
"""


def test_the_servers_own_region_makes_the_stack_here(service):
    stack = service.create_stack("r", template(PARENT.format(region="RegionOne")), files={"remote_stack.yaml": REMOTE})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    [record] = service.list_resources("r")
    child = service.get_stack(record.physical_resource_id)
    assert child.id == record.physical_resource_id
    key = {o["output_key"]: o["output_value"] for o in service.outputs("r")}["key"]["remote_key"]
    assert len(key) == 32
    assert {o["output_key"]: o["output_value"] for o in service.outputs(child.id)}["remote_key"] == key
    # An update keeps the same stack, with the new template.
    stack = service.update_stack("r", template(PARENT.format(region="RegionOne")), files={"remote_stack.yaml": REMOTE.replace("random1", "random2")})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    [after] = service.list_resources("r")
    assert after.physical_resource_id == child.id
    assert [r.name for r in service.list_resources(child.id)] == ["random2"]


def test_the_region_is_a_setting(make_service):
    service = make_service(region_name="Elsewhere")
    stack = service.create_stack("r", template(PARENT.format(region="Elsewhere")), files={"remote_stack.yaml": REMOTE})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    with pytest.raises((TemplateErrors, ValidationError), match='region "RegionOne"'):
        service.create_stack("s", template(PARENT.format(region="RegionOne")), files={"remote_stack.yaml": REMOTE})


def test_another_region_is_refused_with_heats_text(service):
    with pytest.raises((TemplateErrors, ValidationError)) as caught:
        service.create_stack("r", template(PARENT.format(region="DARKHOLE")), files={"remote_stack.yaml": REMOTE})
    assert (
        'Cannot establish connection to Heat endpoint at region "DARKHOLE" due to '
        '"publicURL endpoint for orchestration service in DARKHOLE region not found"'
    ) in str(caught.value)


def test_a_remote_clouds_credential_is_refused(service):
    text = PARENT.format(region="RegionOne").replace("        region_name: RegionOne\n", "        region_name: RegionOne\n        credential_secret_id: abc\n")
    with pytest.raises((TemplateErrors, ValidationError), match='at remote cloud due to "credential_secret_id needs a Barbican'):
        service.create_stack("r", template(text), files={"remote_stack.yaml": REMOTE})


def test_a_nested_template_that_does_not_validate_is_reported_as_heat_does(service):
    with pytest.raises((TemplateErrors, ValidationError)) as caught:
        service.create_stack("r", template(PARENT.format(region="RegionOne")), files={"remote_stack.yaml": REMOTE.replace("resources", "resource")})
    assert 'Failed validating stack template using Heat endpoint at region "RegionOne" due to "ERROR: ' in str(caught.value)
    assert "resource" in str(caught.value)
