"""AWS::CloudFormation::Stack, OS::Heat::AccessPolicy and OS::Heat::HARestarter, and
Heat's default environment (AWS::CloudWatch::Alarm, AWS::RDS::DBInstance), as a
template author sees them on a real store: the nested stack's template from the
request's files under its TemplateURL, or fetched from a real HTTP server when the
operator allows it; ``Outputs.<name>`` attributes; updates, delete; Heat's messages."""

from __future__ import annotations

import http.server
import threading

import pytest

from stoker.engine.errors import NotSupportedError
from stoker.template.errors import TemplateErrors
from tests.support.stacks import template

URL = "https://templates.example.com/child.yaml"

PARENT = """
HeatTemplateFormatVersion: '2012-12-12'
Parameters:
  Word: {Type: String, Default: one}
  Url: {Type: String, Default: "https://templates.example.com/child.yaml"}
Resources:
  child:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: {Ref: Url}
      TimeoutInMinutes: 5
      Parameters: {word: {Ref: Word}}
Outputs:
  said: {Value: {'Fn::GetAtt': [child, Outputs.said]}}
  reference: {Value: {Ref: child}}
"""

CHILD = """
heat_template_version: 2021-04-16
parameters:
  word: {type: string}
resources:
  value:
    type: OS::Heat::Value
    properties: {value: {get_param: word}}
outputs:
  said: {value: {get_attr: [value, value]}}
"""


def outputs(service, name: str) -> dict:
    return {o["output_key"]: o.get("output_value") for o in service.outputs(name)}


def child_of(service, stack_name: str):
    record = next(r for r in service.list_resources(stack_name) if r.name == "child")
    return service.store.get_stack(record.physical_resource_id)


def test_nested_stack_from_the_files_outputs_reference_update_delete(service):
    stack = service.create_stack("cfn", template(PARENT), files={URL: CHILD})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    child = child_of(service, "cfn")
    assert child.owner_id == stack.id and child.state == "CREATE_COMPLETE"
    result = outputs(service, "cfn")
    assert result["said"] == "one"
    # The reference is the child stack's ARN, as in Heat.
    assert result["reference"].startswith("arn:openstack:heat::")
    assert result["reference"].endswith(f":stacks/{child.name}/{child.id}")
    # New parameters update the same child in place.
    stack = service.update_stack(
        "cfn", template(PARENT), parameters={"Word": "two"}, files={URL: CHILD}
    )
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert child_of(service, "cfn").id == child.id
    assert outputs(service, "cfn")["said"] == "two"
    # A new template at the same URL updates the child too (Heat: even with no property changed).
    changed = CHILD.replace(
        "{get_attr: [value, value]}", "{list_join: ['-', [{get_attr: [value, value]}, x]]}"
    )
    stack = service.update_stack(
        "cfn", template(PARENT), parameters={"Word": "two"}, files={URL: changed}
    )
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert outputs(service, "cfn")["said"] == "two-x"
    assert service.delete_stack("cfn").state == "DELETE_COMPLETE"
    assert service.store.get_stack(child.id).deleted_at is not None


def test_an_unknown_output_or_attribute_is_refused_with_heats_words(service):
    bad = PARENT.replace("Outputs.said", "Outputs.nothing")
    stack = service.create_stack("cfn", template(bad), files={URL: CHILD})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    (output,) = [o for o in service.outputs("cfn") if o["output_key"] == "said"]
    assert (
        "The Referenced Attribute (child Outputs.nothing) is incorrect." in output["output_error"]
    )
    bad = PARENT.replace("Outputs.said", "Said")
    service.create_stack("cfn2", template(bad), files={URL: CHILD})
    (output,) = [o for o in service.outputs("cfn2") if o["output_key"] == "said"]
    assert "The Referenced Attribute (child Said) is incorrect." in output["output_error"]


def test_a_url_not_in_the_files_is_not_fetched_unless_the_operator_allows_it(service):
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack("cfn", template(PARENT))
    message = str(raised.value)
    assert f"Could not fetch remote template '{URL}'" in message
    assert "allow_template_urls" in message and "TemplateURL" in message
    with pytest.raises(TemplateErrors, match="Invalid URL scheme ftp"):
        service.create_stack(
            "cfn", template(PARENT), parameters={"Url": "ftp://example.com/child.yaml"}
        )


def test_a_bad_child_template_is_placed_in_its_url(service):
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack(
            "cfn",
            template(PARENT),
            files={URL: CHILD.replace("OS::Heat::Value", "OS::Heat::Nothing")},
        )
    assert "OS::Heat::Nothing" in str(raised.value)


class _Templates(http.server.BaseHTTPRequestHandler):
    bodies = {
        "/child.yaml": CHILD.encode(),
        "/big.yaml": CHILD.encode() + b"# " + b"x" * 2000 + b"\n",
    }

    def do_GET(self):  # noqa: N802 - http.server's name
        body = self.bodies.get(self.path)
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def template_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Templates)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_template_is_fetched_over_http_when_allowed(make_service, template_server):
    service = make_service(allow_template_urls=True)
    stack = service.create_stack(
        "cfn", template(PARENT), parameters={"Url": f"{template_server}/child.yaml"}
    )
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert outputs(service, "cfn")["said"] == "one"
    with pytest.raises(TemplateErrors, match="Could not fetch remote template .*404"):
        service.create_stack(
            "cfn2", template(PARENT), parameters={"Url": f"{template_server}/missing.yaml"}
        )
    small = make_service(allow_template_urls=True, max_template_bytes=1000)
    with pytest.raises(
        TemplateErrors, match=r"Template exceeds maximum allowed size \(1000 bytes\)"
    ):
        small.create_stack(
            "cfn3", template(PARENT), parameters={"Url": f"{template_server}/big.yaml"}
        )
    assert service.delete_stack("cfn").state == "DELETE_COMPLETE"


POLICY = """
heat_template_version: 2021-04-16
resources:
  value: {type: OS::Heat::Value, properties: {value: x}}
  policy:
    type: OS::Heat::AccessPolicy
    properties: {AllowedResources: [value]}
"""


def test_access_policy_names_resources_of_the_stack_only(service):
    stack = service.create_stack("p", template(POLICY))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    with pytest.raises(TemplateErrors, match="AccessPolicy resource other not in stack"):
        service.create_stack("p2", template(POLICY.replace("[value]", "[value, other]")))
    # A changed list replaces the policy (Heat updates nothing in place).
    before = {r.name: r.physical_resource_id for r in service.list_resources("p")}
    stack = service.update_stack("p", template(POLICY.replace("[value]", "[value, policy]")))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    after = {r.name: r.physical_resource_id for r in service.list_resources("p")}
    assert after["policy"] != before["policy"] and after["value"] == before["value"]
    assert service.delete_stack("p").state == "DELETE_COMPLETE"


RESTARTER = """
heat_template_version: 2021-04-16
resources:
  restarter:
    type: OS::Heat::HARestarter
    properties: {InstanceId: whatever}
"""


def test_ha_restarter_is_a_hidden_placeholder(service):
    assert "OS::Heat::HARestarter" not in service.resource_types()
    assert "OS::Heat::HARestarter" in service.resource_types(include_hidden=True)
    with pytest.raises(NotSupportedError):
        service.resource_type_schema("OS::Heat::HARestarter")
    _, warnings = service.validate_template(template(RESTARTER))
    assert any("The HARestarter resource type has been removed." in warning for warning in warnings)
    stack = service.create_stack("h", template(RESTARTER))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert service.delete_stack("h").state == "DELETE_COMPLETE"


def test_heats_default_environment_lists_its_template_types(service):
    types = service.resource_types()
    assert {
        "AWS::CloudWatch::Alarm",
        "AWS::RDS::DBInstance",
        "AWS::CloudFormation::Stack",
        "AWS::S3::Bucket",
    } <= set(types)
    # Aliases are not types (Heat's get_types).
    assert "OS::Metering::Alarm" not in types
    schema = service.resource_type_schema("AWS::RDS::DBInstance")
    assert schema["description"] == "Builtin AWS::RDS::DBInstance"
    assert schema["properties"]["Engine"]["constraints"][0]["allowed_values"] == ["MySQL"]
    alarm = service.resource_type_schema("AWS::CloudWatch::Alarm")
    assert {"MetricName", "ComparisonOperator", "Statistic", "AlarmActions"} <= set(
        alarm["properties"]
    )


def test_an_operators_environment_may_remove_a_default_mapping(make_service, tmp_path):
    (tmp_path / "local.yaml").write_text('resource_registry:\n  "AWS::RDS::DBInstance": null\n')
    service = make_service(environment_dir=str(tmp_path))
    assert "AWS::RDS::DBInstance" not in service.resource_types()
    assert "AWS::CloudWatch::Alarm" in service.resource_types()
