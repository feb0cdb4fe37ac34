"""The pure rules of the AWS::EC2 types: the instance's user data (Heat's parts, in Heat's
order, the metadata API's parts only once something serves it), NetworkInterfaces and
BlockDeviceMappings as Nova takes them, and CFN security group rules as Neutron's."""

from __future__ import annotations

import email
import json

import pytest

from stoker.resources.aws.ec2 import instance_schema, instance_user_data
from stoker.resources.aws.ec2.security_group import rules_from_neutron, rules_from_properties


def parts_of(message: str) -> dict:
    return {
        part.get_filename(): (part.get_content_type(), part.get_payload())
        for part in email.message_from_string(message).get_payload()
    }


def test_instance_user_data_has_heats_parts_without_a_metadata_api():
    built = instance_user_data.build_instance_user_data(
        "echo hi",
        {"AWS::CloudFormation::Init": {}},
        instance_user_data.cfn_metadata_server_url(None),
    )

    parts = parts_of(built)
    assert list(parts) == [
        "cloud-config",
        "boothook.sh",
        "part-handler.py",
        "cfn-userdata",
        "loguserdata.py",
        "cfn-init-data",
    ]
    assert parts["cloud-config"][0] == "text/cloud-config"
    assert parts["cloud-config"][1].startswith("user: ec2-user\n")
    assert parts["boothook.sh"][0] == "text/cloud-boothook"
    assert "useradd -m ec2-user" in parts["boothook.sh"][1]
    assert parts["cfn-userdata"] == ("text/x-cfninitdata", "echo hi")
    assert parts["loguserdata.py"][0] == "text/x-shellscript"
    assert json.loads(parts["cfn-init-data"][1]) == {"AWS::CloudFormation::Init": {}}


def test_instance_user_data_names_the_metadata_api_once_it_is_served():
    instance_user_data.set_cfn_metadata_server_url_source(
        lambda resource: "http://192.0.2.7:8000/v1/"
    )
    try:
        url = instance_user_data.cfn_metadata_server_url(object())
        parts = parts_of(instance_user_data.build_instance_user_data(None, None, url))
    finally:
        instance_user_data.set_cfn_metadata_server_url_source(None)

    assert list(parts)[-2:] == ["cfn-metadata-server", "cfn-boto-cfg"]
    assert "cfn-init-data" not in parts  # no Metadata, no part
    assert parts["cfn-metadata-server"][1] == "http://192.0.2.7:8000/v1/"
    assert "cfn_region_endpoint = 192.0.2.7" in parts["cfn-boto-cfg"][1]
    assert "is_secure = False" in parts["cfn-boto-cfg"][1]
    assert instance_user_data.cfn_metadata_server_url(object()) is None


def test_network_interfaces_are_ordered_by_device_index_and_bare_ids_take_the_next():
    given = [
        {"NetworkInterfaceId": "b", "DeviceIndex": "1"},
        {"NetworkInterfaceId": "a", "DeviceIndex": "0"},
    ]
    assert instance_schema.interface_ports(given) == ["a", "b"]
    assert instance_schema.interface_ports(["x", "y"]) == ["x", "y"]


def test_block_device_mappings_become_nova_legacy_entries():
    mappings = [
        {
            "DeviceName": "vdb",
            "Ebs": {"SnapshotId": "snap", "VolumeSize": "2", "DeleteOnTermination": False},
        },
        {"DeviceName": "vdc", "Ebs": {"SnapshotId": "other", "DeleteOnTermination": True}},
    ]
    assert instance_schema.legacy_block_devices(mappings) == [
        {
            "device_name": "vdb",
            "snapshot_id": "snap",
            "volume_size": "2",
            "delete_on_termination": False,
        },
        {"device_name": "vdc", "snapshot_id": "other", "delete_on_termination": True},
    ]
    assert instance_schema.legacy_block_devices(None) is None


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (
            {"IpProtocol": "tcp", "FromPort": "80", "ToPort": "80", "CidrIp": "0.0.0.0/0"},
            {
                "IpProtocol": "tcp",
                "FromPort": 80,
                "ToPort": 80,
                "CidrIp": "0.0.0.0/0",
                "SourceSecurityGroupId": None,
            },
        ),
        # A negative port is "any"; a rule without ports has no CIDR (Heat's rules).
        (
            {"IpProtocol": "icmp", "FromPort": "-1", "ToPort": "-1", "CidrIp": "10.0.0.0/8"},
            {
                "IpProtocol": "icmp",
                "FromPort": None,
                "ToPort": None,
                "CidrIp": "10.0.0.0/8",
                "SourceSecurityGroupId": None,
            },
        ),
        (
            {"IpProtocol": "tcp", "CidrIp": "10.0.0.0/8", "SourceSecurityGroupName": "web"},
            {
                "IpProtocol": "tcp",
                "FromPort": None,
                "ToPort": None,
                "CidrIp": None,
                "SourceSecurityGroupId": "web",
            },
        ),
    ],
)
def test_cfn_rules_become_neutron_rules(rule, expected):
    assert rules_from_properties([rule], "ingress") == [{**expected, "direction": "ingress"}]


def test_live_rules_compare_equal_to_the_template_rules_they_came_from():
    live = [
        {
            "id": "r1",
            "port_range_min": 22,
            "port_range_max": 22,
            "protocol": "tcp",
            "direction": "ingress",
            "remote_ip_prefix": "0.0.0.0/0",
            "remote_group_id": None,
        }
    ]
    wanted = rules_from_properties(
        [{"IpProtocol": "tcp", "FromPort": "22", "ToPort": "22", "CidrIp": "0.0.0.0/0"}], "ingress"
    )
    assert list(rules_from_neutron(live).values()) == wanted
