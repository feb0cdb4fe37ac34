"""AWS::ElasticLoadBalancing::LoadBalancer without a cloud: the operator's own nested
template (``loadbalancer_template``) with the parameters Heat passes it, DNSName from
its PublicIp output, an update that keeps the HAProxy configuration, and Heat's
validation messages. The built-in HAProxy template, Instances and an autoscaling
group's members run on the test cloud (tests/cloud/test_aws_elb.py)."""

from __future__ import annotations

import json

import pytest

from stoker.template.errors import TemplateErrors
from tests.support.stacks import template

CUSTOM = {
    "HeatTemplateFormatVersion": "2012-12-12",
    "Parameters": {
        "LbFlavor": {"Type": "String", "Default": "m1.small"},
        "SecurityGroups": {"Type": "CommaDelimitedList", "Default": ""},
    },
    "Resources": {
        "LB_instance": {
            "Type": "OS::Heat::None",
            "Metadata": {
                "AWS::CloudFormation::Init": {
                    "config": {
                        "files": {"/etc/haproxy/haproxy.cfg": {"content": "", "mode": "000644"}}
                    }
                }
            },
        }
    },
    "Outputs": {
        "PublicIp": {
            "Value": {
                "Fn::Join": [
                    "/",
                    [{"Ref": "LbFlavor"}, {"Fn::Join": [",", {"Ref": "SecurityGroups"}]}],
                ]
            }
        }
    },
}

PARENT = """
HeatTemplateFormatVersion: '2012-12-12'
Parameters:
  LbFlavor: {Type: String, Default: m1.tiny}
  Groups: {Type: CommaDelimitedList, Default: 'web,ssh'}
Resources:
  lb:
    Type: AWS::ElasticLoadBalancing::LoadBalancer
    Properties:
      AvailabilityZones: []
      Listeners: [{LoadBalancerPort: '80', InstancePort: '8080', Protocol: HTTP}]
      SecurityGroups: {Ref: Groups}
%s
Outputs:
  dns: {Value: {'Fn::GetAtt': [lb, DNSName]}}
  owner: {Value: {'Fn::GetAtt': [lb, SourceSecurityGroup.OwnerAlias]}}
  ref: {Value: {Ref: lb}}
"""


@pytest.fixture
def custom(tmp_path):
    path = tmp_path / "lb.json"
    path.write_text(json.dumps(CUSTOM))
    return path


def child_metadata(service, stack_name: str) -> dict:
    (record,) = [r for r in service.list_resources(stack_name) if r.name == "lb"]
    (instance,) = [
        r for r in service.list_resources(record.physical_resource_id) if r.name == "LB_instance"
    ]
    return instance.definition["metadata"]


def test_the_operators_template_gets_heats_parameters_and_gives_dns_name(make_service, custom):
    service = make_service(loadbalancer_template=str(custom))
    stack = service.create_stack("lb", template(PARENT % ""))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    shown = {o["output_key"]: o.get("output_value") for o in service.outputs("lb")}
    # The parent's LbFlavor (its template declares it) and SecurityGroups reach the child.
    assert shown == {"dns": "m1.tiny/web,ssh", "owner": "", "ref": "lb"}
    files = child_metadata(service, "lb")["AWS::CloudFormation::Init"]["config"]["files"]
    assert files["/etc/haproxy/haproxy.cfg"]["content"] == ""  # no members yet

    # SecurityGroups updated in place: the child gets them, the configuration it has stays.
    stack = service.update_stack("lb", template(PARENT % ""), parameters={"Groups": "web"})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    shown = {o["output_key"]: o.get("output_value") for o in service.outputs("lb")}
    assert shown["dns"] == "m1.tiny/web"
    assert service.delete_stack("lb").state == "DELETE_COMPLETE"


def test_a_health_check_interval_shorter_than_its_timeout_is_heats_error(make_service, custom):
    service = make_service(loadbalancer_template=str(custom))
    check = "      HealthCheck: {Target: 'HTTP:8080/', HealthyThreshold: '3', UnhealthyThreshold: '5', Interval: '5', Timeout: '30'}"
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack("lb", template(PARENT % check))
    message = str(raised.value)
    assert "Interval must be larger than Timeout" in message
    assert "Resources.lb.Properties.HealthCheck: Interval must be larger than Timeout" in message


def test_an_unreadable_operator_template_is_heats_error(make_service, tmp_path):
    service = make_service(loadbalancer_template=str(tmp_path / "missing.yaml"))
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack("lb", template(PARENT % ""))
    message = str(raised.value)
    assert "Custom LoadBalancer template can not be found" in message
    assert "missing.yaml" in message


def test_a_listener_protocol_is_tcp_or_http(service):
    body = (PARENT % "").replace("Protocol: HTTP", "Protocol: UDP")
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack("lb", template(body))
    assert "UDP" in str(raised.value) and "Protocol" in str(raised.value)
