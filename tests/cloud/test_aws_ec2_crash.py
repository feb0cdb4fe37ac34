"""Crash safety of the AWS::EC2 VPC family on the real Neutron: the ``stoker`` command is
SIGKILLed right after each store commit of a create in turn (``STOKER_FAULT_KILL_AFTER_COMMITS``),
then the next command finishes the work (a retry of the create by an update with the same
template, or a delete), and Neutron is left with nothing the stack does not know about: no
network, router, subnet, port or security group named for the stack.

Every object is named by its resource's physical name (the VPC's network and router, the
route table's router, the subnet, the interface's port, the security group), which is how
the command after a crash finds one whose id was never recorded (``find_created``)."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

STOKER = str(Path(sys.executable).with_name("stoker"))
WAIT_S = 300
TEMPLATE = {
    "AWSTemplateFormatVersion": "2010-09-09",
    "Resources": {
        "vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/8"}},
        "subnet": {
            "Type": "AWS::EC2::Subnet",
            "Properties": {"VpcId": {"Ref": "vpc"}, "CidrBlock": "10.43.0.0/24"},
        },
        "table": {"Type": "AWS::EC2::RouteTable", "Properties": {"VpcId": {"Ref": "vpc"}}},
        "association": {
            "Type": "AWS::EC2::SubnetRouteTableAssociation",
            "Properties": {"RouteTableId": {"Ref": "table"}, "SubnetId": {"Ref": "subnet"}},
        },
        "group": {
            "Type": "AWS::EC2::SecurityGroup",
            "Properties": {
                "GroupDescription": "crash",
                "SecurityGroupIngress": [
                    {"IpProtocol": "tcp", "FromPort": "22", "ToPort": "22", "CidrIp": "0.0.0.0/0"}
                ],
            },
        },
        "interface": {
            "Type": "AWS::EC2::NetworkInterface",
            "Properties": {"SubnetId": {"Ref": "subnet"}, "GroupSet": [{"Ref": "group"}]},
        },
        "gateway": {"Type": "AWS::EC2::InternetGateway"},
    },
}


class Commands:
    """The stoker command on one store, as the cloud's admin."""

    def __init__(self, cloud, tmp_path: Path):
        self.template = tmp_path / "vpc.template"
        self.template.write_text(json.dumps(TEMPLATE))
        self.environment = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("OS_", "STOKER_"))
        }
        self.environment.update(
            OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml),
            STOKER_DATABASE_URL=f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        )
        self.cloud = ["--os-cloud", cloud.cloud("admin")]

    def run(self, *command: str, kill_after: int | None = None) -> subprocess.CompletedProcess:
        environment = dict(self.environment)
        if kill_after is not None:
            environment["STOKER_FAULT_KILL_AFTER_COMMITS"] = str(kill_after)
        return subprocess.run(
            [STOKER, *self.cloud, "stack", *command],
            env=environment,
            capture_output=True,
            text=True,
            timeout=WAIT_S,
            check=False,
        )


def left_in_neutron(network, stack_name: str) -> dict[str, list[str]]:
    prefix = f"{stack_name}-"
    return {
        kind: sorted(
            item.name for item in getattr(network, kind)() if (item.name or "").startswith(prefix)
        )
        for kind in ("networks", "routers", "subnets", "ports", "security_groups")
    }


def test_aws_ec2_vpc_create_killed_at_commits_across_the_create_then_finished_leaves_nothing(
    openstack_cloud, tmp_path
):
    network = openstack_cloud.connect("admin").network
    commands = Commands(openstack_cloud, tmp_path)
    suffix = secrets.token_hex(3)
    nothing = {"networks": [], "routers": [], "subnets": [], "ports": [], "security_groups": []}
    crashes = 0
    # A point every third commit until the create completes (about 25 commits): each type's
    # IN_PROGRESS, id and COMPLETE commits are cut across the runs.
    for commits in range(3, 80, 3):
        name = f"ec{commits}-{suffix}"
        created = commands.run(
            "create", name, "-t", str(commands.template), "--wait", kill_after=commits
        )
        if created.returncode == 0:
            break  # the create ran to its end before that many commits
        assert created.returncode == -9, created.stderr
        crashes += 1
        if commands.run("show", name).returncode != 0:
            # Killed before the stack was recorded: nothing was asked of Neutron.
            assert left_in_neutron(network, name) == nothing
            continue
        if crashes % 2:
            # The next command resumes the create, then the update completes the stack.
            retried = commands.run("update", name, "-t", str(commands.template), "--wait")
            assert retried.returncode == 0, retried.stderr
            (table,) = [
                router
                for router in network.routers()
                if (router.name or "").startswith(f"{name}-table-")
            ]
            (subnet,) = [
                found
                for found in network.subnets()
                if (found.name or "").startswith(f"{name}-subnet-")
            ]
            attached = {
                fixed["subnet_id"]
                for port in network.ports(device_id=table.id)
                for fixed in port.fixed_ips
            }
            assert attached == {subnet.id}
        deleted = commands.run("delete", name, "--yes", "--wait")
        assert deleted.returncode == 0, deleted.stderr
        assert left_in_neutron(network, name) == nothing, (commits, created.stderr)
    else:
        raise AssertionError("the create never completed")
    assert crashes >= 4
    deleted = commands.run("delete", name, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    assert left_in_neutron(network, name) == nothing
