"""AWS::ElasticLoadBalancing::LoadBalancer on the test cloud, through a real ``stoker
serve``: its nested stack is Heat's HAProxy template, whose AWS::EC2::Instance Nova
boots (the fake driver: nothing runs on it) with the rendered HAProxy configuration in
its cfn-init metadata. The test plays the instance's agent: it reads the instance's
user data from Nova, as cloud-init would, and runs the real ``cfn-signal``
(heat-cfntools) against the wait condition handle's URL it finds there, so the create
completes. An update of ``Instances`` changes the configuration in the metadata; an
AWS::AutoScaling::AutoScalingGroup naming the load balancer in ``LoadBalancerNames``
gives it its members at create and after a scaling signal; delete removes every server.

The nested template's AWS::CloudWatch::Alarm (Heat's latency watcher) is mapped to
OS::Heat::None by the stack's environment: Heat's default environment makes it an Aodh
threshold alarm, a rule Aodh no longer has (test_aodh_types shows Aodh refusing it).
The instances sit on one network made for the test: the load balancer's instance has no
network property in Heat's template, so Nova picks the project's only one.
"""

from __future__ import annotations

import base64
import email
import json
import re
import secrets
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.server import Server

CFN_SIGNAL = str(Path(sys.executable).with_name("cfn-signal"))
WAIT_S = 300
CONFIG = "/etc/haproxy/haproxy.cfg"
ENVIRONMENT = {"resource_registry": {"AWS::CloudWatch::Alarm": "OS::Heat::None"}}

LISTENED = """
AWSTemplateFormatVersion: 2010-09-09
Parameters:
  LbImageId: {{Type: String}}
  LbFlavor: {{Type: String}}
  Subnet: {{Type: String}}
Resources:
  web1:
    Type: AWS::EC2::Instance
    Properties: {{ImageId: {{Ref: LbImageId}}, InstanceType: {{Ref: LbFlavor}}, SubnetId: {{Ref: Subnet}}}}
  web2:
    Type: AWS::EC2::Instance
    Properties: {{ImageId: {{Ref: LbImageId}}, InstanceType: {{Ref: LbFlavor}}, SubnetId: {{Ref: Subnet}}}}
  lb:
    Type: AWS::ElasticLoadBalancing::LoadBalancer
    Properties:
      AvailabilityZones: {{'Fn::GetAZs': ''}}
      Listeners: [{{LoadBalancerPort: '80', InstancePort: '8080', Protocol: HTTP}}]
      HealthCheck: {{Target: 'HTTP:8080/', HealthyThreshold: '3', UnhealthyThreshold: '5', Interval: '30', Timeout: '5'}}
      Instances: {instances}
Outputs:
  dns: {{Value: {{'Fn::GetAtt': [lb, DNSName]}}}}
  zone: {{Value: {{'Fn::GetAtt': [lb, CanonicalHostedZoneName]}}}}
  web1: {{Value: {{'Fn::GetAtt': [web1, PrivateIp]}}}}
  web2: {{Value: {{'Fn::GetAtt': [web2, PrivateIp]}}}}
"""

GROUPED = """
AWSTemplateFormatVersion: 2010-09-09
Parameters:
  LbImageId: {Type: String}
  LbFlavor: {Type: String}
  Subnet: {Type: String}
Resources:
  lb:
    Type: AWS::ElasticLoadBalancing::LoadBalancer
    Properties:
      AvailabilityZones: []
      Listeners: [{LoadBalancerPort: '80', InstancePort: '80', Protocol: HTTP}]
  config:
    Type: AWS::AutoScaling::LaunchConfiguration
    Properties: {ImageId: {Ref: LbImageId}, InstanceType: {Ref: LbFlavor}}
  group:
    Type: AWS::AutoScaling::AutoScalingGroup
    Properties:
      AvailabilityZones: []
      LaunchConfigurationName: {Ref: config}
      MinSize: '1'
      MaxSize: '3'
      Cooldown: '0'
      VPCZoneIdentifier: [{Ref: Subnet}]
      LoadBalancerNames: [{Ref: lb}]
  up:
    Type: AWS::AutoScaling::ScalingPolicy
    Properties: {AutoScalingGroupName: {Ref: group}, AdjustmentType: ChangeInCapacity, ScalingAdjustment: '1'}
Outputs:
  ips: {Value: {'Fn::GetAtt': [group, InstanceList]}}
"""


@pytest.fixture
def subnet(openstack_cloud):
    """The admin project's only network, with a subnet (Nova gives it to the load balancer's instance)."""
    admin = openstack_cloud.connect("admin")
    suffix = secrets.token_hex(3)
    network = admin.network.create_network(name=f"elb-{suffix}")
    made = admin.network.create_subnet(
        network_id=network.id, ip_version=4, cidr="10.91.0.0/24", name=f"elb-{suffix}"
    )
    yield made
    for port in admin.network.ports(network_id=network.id):
        if port.device_owner in ("", "compute:nova", "compute:None"):
            admin.network.delete_port(port.id, ignore_missing=True)
    admin.network.delete_network(network.id, ignore_missing=True)


@pytest.fixture
def server(openstack_cloud, tmp_path):
    serving = Server(
        f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        tmp_path / "serve.log",
        start_timeout_s=60,
        **openstack_cloud.cloud_environ("admin"),
    )
    # The URLs in the instance's user data lead its agent (here, the test) to this server.
    serving.environment["STOKER_PUBLIC_URL"] = serving.url
    serving.start()
    yield serving
    log = serving.stop()
    assert "Traceback" not in log, log


def parameters(cloud, subnet) -> dict:
    return {"LbImageId": cloud.image_id, "LbFlavor": "m1.tiny", "Subnet": subnet.id}


def get(server: Server, path: str) -> dict:
    status, body = server.request("GET", path)
    assert status == 200, (path, body)
    return body


def resource(server: Server, stack: str, name: str) -> dict | None:
    status, body = server.request("GET", f"/stacks/{stack}/resources/{name}")
    assert status in (200, 404), body
    return body["resource"] if status == 200 else None


def nested(server: Server, stack: str) -> str:
    """``<name>/<id>`` of the load balancer's nested stack."""
    child_id = resource(server, stack, "lb")["physical_resource_id"]
    child = get(server, f"/stacks/{child_id}")["stack"]
    return f"{child['stack_name']}/{child['id']}"


def wait_for_waiting(server: Server, stack: str) -> str:
    """Until the nested stack's WaitCondition waits; returns the nested stack."""
    deadline = time.monotonic() + WAIT_S
    while True:
        found = resource(server, stack, "lb")
        if found is not None and found.get("physical_resource_id"):
            child = nested(server, stack)
            waiting = resource(server, child, "WaitCondition")
            if waiting is not None and waiting["resource_status"] == "CREATE_IN_PROGRESS":
                return child
        status = get(server, f"/stacks/{stack}")["stack"]
        assert status["stack_status"] == "CREATE_IN_PROGRESS", status["stack_status_reason"]
        assert time.monotonic() < deadline, (
            "the load balancer's WaitCondition never started waiting"
        )
        time.sleep(0.5)


def play_the_agent(cloud, server: Server, child: str) -> None:
    """Read the instance's user data as cloud-init would and run its final cfn-signal."""
    server_id = resource(server, child, "LB_instance")["physical_resource_id"]
    booted = cloud.connect("admin").compute.get_server(server_id)
    message = email.message_from_string(base64.b64decode(booted.user_data).decode())
    script = next(
        part.get_payload(decode=True).decode()
        for part in message.walk()
        if part.get_filename() == "cfn-userdata"
    )
    assert "/opt/aws/bin/cfn-init -s " in script
    url = re.search(r"cfn-signal -e 0 -r \"LB server setup complete\" '([^']+)'", script).group(1)
    assert url.startswith(f"{server.url}/v1/waitcondition/")
    ran = subprocess.run(
        [CFN_SIGNAL, "-e", "0", "-r", "LB server setup complete", url],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr


def haproxy_config(server: Server, child: str) -> str:
    metadata = get(server, f"/stacks/{child}/resources/LB_instance/metadata")["metadata"]
    return metadata["AWS::CloudFormation::Init"]["config"]["files"][CONFIG]["content"]


def outputs(server: Server, stack: str) -> dict:
    return {
        o["output_key"]: o.get("output_value")
        for o in get(server, f"/stacks/{stack}")["stack"]["outputs"]
    }


def finished(server: Server, stack_id: str, wanted: str) -> None:
    found = server.wait_for(stack_id, timeout=WAIT_S)
    assert found["stack_status"] == wanted, found["stack_status_reason"]


def test_load_balancer_of_listed_instances_signalled_by_cfn_signal_updated_and_deleted(
    openstack_cloud, subnet, server
):
    name = f"elb-{secrets.token_hex(3)}"
    status, body = server.request(
        "POST",
        "/stacks",
        {
            "stack_name": name,
            "template": LISTENED.format(instances="[{Ref: web1}]"),
            "parameters": parameters(openstack_cloud, subnet),
            "environment": ENVIRONMENT,
        },
    )
    assert status == 201, body
    stack = f"{name}/{body['stack']['id']}"
    child = wait_for_waiting(server, stack)
    # Before the agent signals, the instance already has its configuration to read.
    config = haproxy_config(server, child)
    play_the_agent(openstack_cloud, server, child)
    finished(server, body["stack"]["id"], "CREATE_COMPLETE")

    shown = outputs(server, stack)
    assert shown["web1"] and shown["web2"] and shown["web1"] != shown["web2"]
    assert "frontend http\n    bind *:80\n    default_backend servers" in config
    assert "    option httpchk\n    timeout check 5s\n" in config
    assert config.endswith(
        f"    server server1 {shown['web1']}:8080 check inter 30s fall 5 rise 3\n"
    )
    assert "server2" not in config
    # DNSName is the instance's address (the nested stack's PublicIp output); the others are ''.
    lb_server = openstack_cloud.connect("admin").compute.get_server(
        resource(server, child, "LB_instance")["physical_resource_id"]
    )
    assert shown["dns"] in [
        entry["addr"] for entries in lb_server.addresses.values() for entry in entries
    ]
    assert shown["zone"] == ""
    metadata = get(server, f"/stacks/{child}/resources/LB_instance/metadata")["metadata"]
    hooks = metadata["AWS::CloudFormation::Init"]["config"]["files"]["/etc/cfn/hooks.conf"][
        "content"
    ]
    assert "path=Resources.LB_instance.Metadata" in hooks

    # Instances updated: the new configuration is in the metadata, the instance is the same.
    status, body = server.request(
        "PUT",
        f"/stacks/{stack}",
        {
            "template": LISTENED.format(instances="[{Ref: web1}, {Ref: web2}]"),
            "parameters": parameters(openstack_cloud, subnet),
            "environment": ENVIRONMENT,
        },
    )
    assert status == 202, body
    finished(server, stack.split("/")[1], "UPDATE_COMPLETE")
    config = haproxy_config(server, child)
    assert f"    server server1 {shown['web1']}:8080 check" in config
    assert config.endswith(
        f"    server server2 {shown['web2']}:8080 check inter 30s fall 5 rise 3\n"
    )
    assert resource(server, child, "LB_instance")["physical_resource_id"] == lb_server.id

    status, _ = server.request("DELETE", f"/stacks/{stack}")
    assert status == 204
    finished(server, stack.split("/")[1], "DELETE_COMPLETE")
    assert openstack_cloud.connect("admin").compute.find_server(lb_server.id) is None


def test_an_autoscaling_group_tells_its_load_balancer_the_members(openstack_cloud, subnet, server):
    name = f"elb-asg-{secrets.token_hex(3)}"
    status, body = server.request(
        "POST",
        "/stacks",
        {
            "stack_name": name,
            "template": GROUPED,
            "parameters": parameters(openstack_cloud, subnet),
            "environment": ENVIRONMENT,
        },
    )
    assert status == 201, body
    stack = f"{name}/{body['stack']['id']}"
    child = wait_for_waiting(server, stack)
    # No Instances: the configuration has no servers until the group tells it its members.
    assert haproxy_config(server, child) == ""
    play_the_agent(openstack_cloud, server, child)
    finished(server, body["stack"]["id"], "CREATE_COMPLETE")

    (first,) = outputs(server, stack)["ips"].split(",")
    config = haproxy_config(server, child)
    assert config.endswith(f"    server server1 {first}:80\n"), config

    # A scaling signal grows the group; the load balancer hears of the new member.
    status, body = server.request("POST", f"/stacks/{stack}/resources/up/signal", {})
    assert status == 200, body
    deadline = time.monotonic() + WAIT_S
    while len((outputs(server, stack)["ips"] or "").split(",")) < 2:
        assert time.monotonic() < deadline, "the group did not grow"
        time.sleep(0.5)
    ips = outputs(server, stack)["ips"].split(",")
    config = haproxy_config(server, child)
    assert config.endswith(f"    server server1 {ips[0]}:80\n    server server2 {ips[1]}:80\n"), (
        config
    )
    events = get(server, f"/stacks/{child}/events")["events"]
    assert (
        json.dumps(events).count("UPDATE_COMPLETE") >= 2
    )  # the nested stack took both memberships

    status, _ = server.request("DELETE", f"/stacks/{stack}")
    assert status == 204
    finished(server, stack.split("/")[1], "DELETE_COMPLETE")
    assert not [
        s for s in openstack_cloud.connect("admin").compute.servers() if s.name.startswith(name)
    ]
