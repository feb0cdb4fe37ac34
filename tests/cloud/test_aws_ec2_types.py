"""Heat's AWS::EC2 types against the real Nova, Neutron, Cinder and Glance of the test
cloud: a VPC (network and router), its subnet moved to a route table and back, a security
group from CFN rules updated in place, a network interface, an instance on it booted with
the cfn tools' user data (Heat's parts, in Heat's order) and a volume attached two ways
(Volumes and VolumeAttachment); tags updated in place; check, suspend, resume; elastic IPs
from the one external network, on an instance and by association; the gateway attachment
giving the route tables the external gateway; Heat's validation messages. openstacksdk is
the witness, and nothing is left in the cloud.

Not covered here: InstanceType resize (the resize steps are OS::Nova::Server's, tested in
test_nova_server.py where the cloud allows it) and the cfn-metadata-server parts (stoker
serves no CFN metadata API yet: ``instance_user_data.cfn_metadata_server_url``)."""

from __future__ import annotations

import base64
import email
import json
import secrets

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from tests.cloud.test_nova_server import ids_of, outputs, server_gone, wait_gone
from tests.support.stacks import from_data, states


@pytest.fixture
def admin_cloud(openstack_cloud):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    yield openstack_cloud
    set_cloud_source(None)


@pytest.fixture
def service(make_service):
    """A service whose stacks are deleted at the end, whatever the test did."""
    made = make_service()
    yield made
    for stack in made.list_stacks():
        try:
            made.delete_stack(stack.name)
        except Exception:  # noqa: BLE001, S110 - best effort; the test's own failure is what matters
            pass


def cfn(resources: dict, outputs_: dict | None = None) -> dict:
    return {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": resources,
        "Outputs": {name: {"Value": value} for name, value in (outputs_ or {}).items()},
    }


def ref(name: str) -> dict:
    return {"Ref": name}


def vpc_resources(cidr: str, ingress: list) -> dict:
    return {
        "vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/8"}},
        "subnet": {
            "Type": "AWS::EC2::Subnet",
            "Properties": {"VpcId": ref("vpc"), "CidrBlock": cidr, "AvailabilityZone": "nova"},
        },
        "table": {"Type": "AWS::EC2::RouteTable", "Properties": {"VpcId": ref("vpc")}},
        "association": {
            "Type": "AWS::EC2::SubnetRouteTableAssociation",
            "Properties": {"RouteTableId": ref("table"), "SubnetId": ref("subnet")},
        },
        "group": {
            "Type": "AWS::EC2::SecurityGroup",
            "Properties": {
                "GroupDescription": "web",
                "SecurityGroupIngress": ingress,
                "SecurityGroupEgress": [
                    {"IpProtocol": "tcp", "FromPort": "443", "ToPort": "443", "CidrIp": "0.0.0.0/0"}
                ],
            },
        },
        "interface": {
            "Type": "AWS::EC2::NetworkInterface",
            "Properties": {"SubnetId": ref("subnet"), "GroupSet": [ref("group")]},
        },
    }


def instance_stack(cidr: str, ingress: list, tags: list) -> dict:
    resources = {
        **vpc_resources(cidr, ingress),
        "disk": {
            "Type": "AWS::EC2::Volume",
            "Properties": {
                "AvailabilityZone": "nova",
                "Size": 1,
                "Tags": [{"Key": "role", "Value": "data"}],
            },
        },
        "extra": {
            "Type": "AWS::EC2::Volume",
            "Properties": {"AvailabilityZone": "nova", "Size": 1},
        },
        "web": {
            "Type": "AWS::EC2::Instance",
            "Metadata": {
                "AWS::CloudFormation::Init": {
                    "config": {"files": {"/tmp/hello": {"content": "hello"}}}
                }
            },
            "Properties": {
                "ImageId": "stoker-tiny",
                "InstanceType": "m1.tiny",
                "NetworkInterfaces": [{"NetworkInterfaceId": ref("interface"), "DeviceIndex": "0"}],
                "UserData": "#!/bin/sh\necho booted\n",
                "Tags": tags,
                "Volumes": [{"VolumeId": ref("disk"), "Device": "/dev/vdb"}],
            },
        },
        "attachment": {
            "Type": "AWS::EC2::VolumeAttachment",
            "Properties": {
                "InstanceId": ref("web"),
                "VolumeId": ref("extra"),
                "Device": "/dev/vdc",
            },
        },
    }
    values = {
        "private_ip": {"Fn::GetAtt": ["web", "PrivateIp"]},
        "public_ip": {"Fn::GetAtt": ["web", "PublicIp"]},
        "zone": {"Fn::GetAtt": ["web", "AvailabilityZone"]},
        "interface_ip": {"Fn::GetAtt": ["interface", "PrivateIpAddress"]},
        "subnet_zone": {"Fn::GetAtt": ["subnet", "AvailabilityZone"]},
        "association": ref("association"),
    }
    return cfn(resources, values)


def rules_of(connection, group_id: str) -> set:
    return {
        (
            rule.direction,
            rule.protocol,
            rule.port_range_min,
            rule.port_range_max,
            rule.remote_ip_prefix,
        )
        for rule in connection.network.security_group_rules(security_group_id=group_id)
    }


def router_subnets(connection, router_id: str) -> set:
    return {
        fixed["subnet_id"]
        for port in connection.network.ports(device_id=router_id)
        for fixed in port.fixed_ips
    }


def test_aws_ec2_vpc_instance_and_volumes_create_update_check_suspend_delete(admin_cloud, service):
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    name = f"ec2-{suffix}"
    http = [{"IpProtocol": "tcp", "FromPort": "80", "ToPort": "80", "CidrIp": "0.0.0.0/0"}]
    stack = service.create_stack(
        name, from_data(instance_stack("10.41.0.0/24", http, [{"Key": "role", "Value": "web"}]))
    )

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = ids_of(service, name)
    network = connection.network.get_network(ids["vpc"])
    (vpc_router,) = [router for router in connection.network.routers(name=network.name)]
    assert network.name.startswith(f"{name}-vpc-")
    # The association moved the subnet from the VPC's router to the route table's.
    assert router_subnets(connection, ids["table"]) == {ids["subnet"]}
    assert ids["subnet"] not in router_subnets(connection, vpc_router.id)
    assert rules_of(connection, ids["group"]) == {
        ("ingress", "tcp", 80, 80, "0.0.0.0/0"),
        ("egress", "tcp", 443, 443, "0.0.0.0/0"),  # Neutron's allow-all egress rules are gone
    }
    port = connection.network.get_port(ids["interface"])
    assert port.security_group_ids == [ids["group"]]
    web = connection.compute.get_server(ids["web"])
    assert (web.status, web.metadata) == ("ACTIVE", {"role": "web"})
    assert port.device_id == web.id
    # Heat's HEAT_CFNTOOLS user data for ec2-user, parts in Heat's order.
    message = email.message_from_string(base64.b64decode(web.user_data).decode())
    parts = {part.get_filename(): part for part in message.get_payload()}
    assert list(parts) == [
        "cloud-config",
        "boothook.sh",
        "part-handler.py",
        "cfn-userdata",
        "loguserdata.py",
        "cfn-init-data",
    ]
    assert "user: ec2-user" in parts["cloud-config"].get_payload()
    assert parts["cfn-userdata"].get_payload() == "#!/bin/sh\necho booted\n"
    assert json.loads(parts["cfn-init-data"].get_payload())["AWS::CloudFormation::Init"]["config"][
        "files"
    ]["/tmp/hello"] == {"content": "hello"}
    disk, extra = (
        connection.block_storage.get_volume(ids["disk"]),
        connection.block_storage.get_volume(ids["extra"]),
    )
    assert (disk.status, disk.size, disk.availability_zone, disk.metadata) == (
        "in-use",
        1,
        "nova",
        {"role": "data"},
    )
    assert [attachment["server_id"] for attachment in disk.attachments] == [web.id]
    assert [attachment["server_id"] for attachment in extra.attachments] == [web.id]
    values = outputs(service, name)
    address = port.fixed_ips[0]["ip_address"]
    assert (values["private_ip"], values["public_ip"], values["interface_ip"]) == (
        address,
        address,
        address,
    )
    assert (values["zone"], values["subnet_zone"], values["association"]) == (
        "nova",
        "nova",
        "association",
    )

    # In place: the group's rules (only the difference), the instance's tags.
    ssh = [{"IpProtocol": "tcp", "FromPort": "22", "ToPort": "22", "CidrIp": "10.0.0.0/8"}]
    kept = {
        rule.id
        for rule in connection.network.security_group_rules(security_group_id=ids["group"])
        if rule.direction == "egress"
    }
    updated = service.update_stack(
        name, from_data(instance_stack("10.41.0.0/24", ssh, [{"Key": "role", "Value": "db"}]))
    )

    assert updated.state == "UPDATE_COMPLETE", updated.status_reason
    assert ids_of(service, name) == ids
    assert rules_of(connection, ids["group"]) == {
        ("ingress", "tcp", 22, 22, "10.0.0.0/8"),
        ("egress", "tcp", 443, 443, "0.0.0.0/0"),
    }
    assert {
        rule.id
        for rule in connection.network.security_group_rules(security_group_id=ids["group"])
        if rule.direction == "egress"
    } == kept
    assert connection.compute.get_server(ids["web"]).metadata == {"role": "db"}
    assert states(service, name)["web"] == "UPDATE_COMPLETE"

    assert service.stack_action(name, "CHECK").state == "CHECK_COMPLETE"
    suspended = service.stack_action(name, "SUSPEND")
    assert suspended.state == "SUSPEND_COMPLETE", suspended.status_reason
    assert connection.compute.get_server(ids["web"]).status == "SUSPENDED"
    resumed = service.stack_action(name, "RESUME")
    assert resumed.state == "RESUME_COMPLETE", resumed.status_reason
    assert connection.compute.get_server(ids["web"]).status == "ACTIVE"

    assert service.delete_stack(name).state == "DELETE_COMPLETE"

    assert server_gone(connection, ids["web"])
    for volume in (ids["disk"], ids["extra"]):
        wait_gone(connection.block_storage.find_volume, volume)
    assert connection.network.find_router(ids["table"]) is None
    assert connection.network.find_router(vpc_router.id) is None
    assert connection.network.find_network(ids["vpc"]) is None
    assert connection.network.find_port(ids["interface"]) is None
    assert connection.network.find_security_group(ids["group"]) is None


@pytest.fixture
def public_network(admin_cloud):
    """An external network with a subnet, made for the test and removed after it."""
    admin = admin_cloud.connect("admin")
    suffix = secrets.token_hex(3)
    network = admin.network.create_network(name=f"ec2-public-{suffix}", is_router_external=True)
    admin.network.create_subnet(
        network_id=network.id, ip_version=4, cidr="172.25.8.0/24", is_dhcp_enabled=False
    )
    yield network
    admin.network.delete_network(network.id, ignore_missing=True)


def gateway_stack(cidr: str, second: bool, interface_too: bool = False) -> dict:
    """An instance on a VPC subnet routed to the external network, elastic IPs, one put
    on the instance by InstanceId, one on an interface by allocation. ``second``: the
    instance's IP is taken off it, the interface gets the spare allocation, and the first
    loose address goes on the instance by address (after both: Neutron allows one
    floating IP per fixed IP). ``interface_too``: that association names the interface
    too (its address stays on the instance)."""
    resources = {
        "vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/8"}},
        "subnet": {
            "Type": "AWS::EC2::Subnet",
            "Properties": {"VpcId": ref("vpc"), "CidrBlock": cidr},
        },
        "table": {"Type": "AWS::EC2::RouteTable", "Properties": {"VpcId": ref("vpc")}},
        "association": {
            "Type": "AWS::EC2::SubnetRouteTableAssociation",
            "Properties": {"RouteTableId": ref("table"), "SubnetId": ref("subnet")},
        },
        "gateway": {"Type": "AWS::EC2::InternetGateway"},
        "attachment": {
            "Type": "AWS::EC2::VPCGatewayAttachment",
            "Properties": {"VpcId": ref("vpc"), "InternetGatewayId": ref("gateway")},
        },
        "web": {
            "Type": "AWS::EC2::Instance",
            "DependsOn": ["association", "attachment"],
            "Properties": {
                "ImageId": "stoker-tiny",
                "InstanceType": "m1.tiny",
                "SubnetId": ref("subnet"),
            },
        },
        "iface": {
            "Type": "AWS::EC2::NetworkInterface",
            "DependsOn": ["association", "attachment"],
            "Properties": {"SubnetId": ref("subnet")},
        },
        "direct": {
            "Type": "AWS::EC2::EIP",
            "Properties": {} if second else {"InstanceId": ref("web")},
        },
        "loose": {"Type": "AWS::EC2::EIP"},
        "spare": {"Type": "AWS::EC2::EIP"},
        "by_allocation": {
            "Type": "AWS::EC2::EIPAssociation",
            "Properties": {
                "AllocationId": {"Fn::GetAtt": ["spare" if second else "loose", "AllocationId"]},
                "NetworkInterfaceId": ref("iface"),
            },
        },
    }
    if second:
        resources["by_address"] = {
            "Type": "AWS::EC2::EIPAssociation",
            "DependsOn": ["direct", "by_allocation"],
            "Properties": {"InstanceId": ref("web"), "EIP": ref("loose")},
        }
        if interface_too:
            resources["by_address"]["Properties"]["NetworkInterfaceId"] = ref("iface")
    values = {
        "allocation": {"Fn::GetAtt": ["direct", "AllocationId"]},
        "direct": ref("direct"),
        "loose": ref("loose"),
        "spare": ref("spare"),
    }
    return cfn(resources, values)


def test_aws_ec2_elastic_ips_and_the_internet_gateway(admin_cloud, public_network, service):
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    name = f"eip-{suffix}"

    stack = service.create_stack(name, from_data(gateway_stack("10.42.0.0/24", second=False)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = ids_of(service, name)
    # The gateway attachment gave the route table the external gateway (after it: implicit).
    assert (
        connection.network.get_router(ids["table"]).external_gateway_info["network_id"]
        == public_network.id
    )
    (port,) = list(connection.network.ports(device_id=ids["web"]))
    assert port.name.startswith(f"{name}-web-")  # the port Heat makes on SubnetId
    assert port.fixed_ips[0]["subnet_id"] == ids["subnet"]
    values = outputs(service, name)
    direct = connection.network.get_ip(values["allocation"])
    assert (ids["direct"], values["direct"]) == (
        direct.id,
        direct.floating_ip_address,
    )  # Ref: the address
    assert (direct.floating_network_id, direct.port_id) == (public_network.id, port.id)
    loose = list(connection.network.ips(floating_ip_address=values["loose"]))[0]
    spare = list(connection.network.ips(floating_ip_address=values["spare"]))[0]
    assert ids["by_allocation"] == loose.id
    assert (loose.port_id, spare.port_id) == (ids["iface"], None)

    updated = service.update_stack(name, from_data(gateway_stack("10.42.0.0/24", second=True)))

    assert updated.state == "UPDATE_COMPLETE", updated.status_reason
    assert ids_of(service, name)["by_allocation"] == spare.id
    assert (
        states(service, name)["direct"]
        == states(service, name)["by_allocation"]
        == "UPDATE_COMPLETE"
    )
    assert connection.network.get_ip(direct.id).port_id is None
    assert connection.network.get_ip(spare.id).port_id == ids["iface"]
    assert connection.network.get_ip(loose.id).port_id == port.id
    assert ids_of(service, name)["by_address"] == loose.floating_ip_address

    # Only NetworkInterfaceId changes on an EIP association: Heat asks Nova for server None
    # and fails; the address stays on the instance.
    again = service.update_stack(name, from_data(gateway_stack("10.42.0.0/24", second=True, interface_too=True)))

    assert again.state == "UPDATE_COMPLETE", again.status_reason
    assert states(service, name)["by_address"] == "UPDATE_COMPLETE"
    assert connection.network.get_ip(loose.id).port_id == port.id

    assert service.delete_stack(name).state == "DELETE_COMPLETE"

    assert server_gone(connection, ids["web"])
    for floating_ip in (direct.id, loose.id, spare.id):
        wait_gone(connection.network.find_ip, floating_ip)
    assert connection.network.find_port(port.id) is None
    assert connection.network.find_router(ids["table"]) is None
    assert connection.network.find_network(ids["vpc"]) is None


def test_aws_ec2_validation_gives_heats_messages(admin_cloud, service):
    """Refused before anything is made, naming the place."""
    cases = {
        "Either 'EIP' or 'AllocationId' must be provided.": {
            "Type": "AWS::EC2::EIPAssociation",
            "Properties": {"NetworkInterfaceId": "port"},
        },
        "Must specify 'InstanceId' if you specify 'EIP'.": {
            "Type": "AWS::EC2::EIPAssociation",
            "Properties": {"EIP": "172.25.8.10", "NetworkInterfaceId": "port"},
        },
        "At least one of the following properties must be specified: InstanceId, NetworkInterfaceId.": {
            "Type": "AWS::EC2::EIPAssociation",
            "Properties": {"AllocationId": "allocation"},
        },
        "Cannot define the following properties at the same time: SecurityGroups/SecurityGroupIds, NetworkInterfaces.": {
            "Type": "AWS::EC2::Instance",
            "Properties": {
                "ImageId": "stoker-tiny",
                "InstanceType": "m1.tiny",
                "SecurityGroups": ["default"],
                "NetworkInterfaces": ["port"],
            },
        },
        "SnapshotId is missing, this is required when specifying BlockDeviceMappings.": {
            "Type": "AWS::EC2::Instance",
            "Properties": {
                "ImageId": "stoker-tiny",
                "InstanceType": "m1.tiny",
                "BlockDeviceMappings": [{"DeviceName": "vdb", "Ebs": {"VolumeSize": "1"}}],
            },
        },
        '"vpn" is not an allowed value ["vpc"]': {
            "Type": "AWS::EC2::EIP",
            "Properties": {"Domain": "vpn"},
        },
    }
    for message, resource in cases.items():
        with pytest.raises(Exception) as raised:
            service.create_stack(f"bad-{secrets.token_hex(3)}", from_data(cfn({"thing": resource})))
        assert message in str(raised.value), (message, str(raised.value))
        assert "Resources.thing.Properties" in str(raised.value)
