"""AWS::EC2::Instance's schema as Heat 27 declares it, and its pure request rules
(NetworkInterfaces to ports, BlockDeviceMappings to Nova's legacy mapping).

Must not: call a cloud.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stoker.resources.aws.ec2.tags import tags_schema
from stoker.sdk import attributes, constraints, properties

PROPERTIES = (
    IMAGE_ID,
    INSTANCE_TYPE,
    KEY_NAME,
    AVAILABILITY_ZONE,
    DISABLE_API_TERMINATION,
    KERNEL_ID,
    MONITORING,
    PLACEMENT_GROUP_NAME,
    PRIVATE_IP_ADDRESS,
    RAM_DISK_ID,
    SECURITY_GROUPS,
    SECURITY_GROUP_IDS,
    NETWORK_INTERFACES,
    SOURCE_DEST_CHECK,
    SUBNET_ID,
    TAGS,
    NOVA_SCHEDULER_HINTS,
    TENANCY,
    USER_DATA,
    VOLUMES,
    BLOCK_DEVICE_MAPPINGS,
) = (
    "ImageId",
    "InstanceType",
    "KeyName",
    "AvailabilityZone",
    "DisableApiTermination",
    "KernelId",
    "Monitoring",
    "PlacementGroupName",
    "PrivateIpAddress",
    "RamDiskId",
    "SecurityGroups",
    "SecurityGroupIds",
    "NetworkInterfaces",
    "SourceDestCheck",
    "SubnetId",
    "Tags",
    "NovaSchedulerHints",
    "Tenancy",
    "UserData",
    "Volumes",
    "BlockDeviceMappings",
)
HINT_KEY, HINT_VALUE = "Key", "Value"
VOLUME_DEVICE, VOLUME_ID = "Device", "VolumeId"
DEVICE_NAME, EBS, NO_DEVICE, VIRTUAL_NAME = "DeviceName", "Ebs", "NoDevice", "VirtualName"
DELETE_ON_TERMINATION, IOPS, SNAPSHOT_ID, VOLUME_SIZE, VOLUME_TYPE = (
    "DeleteOnTermination",
    "Iops",
    "SnapshotId",
    "VolumeSize",
    "VolumeType",
)
INTERFACE_ID, DEVICE_INDEX = "NetworkInterfaceId", "DeviceIndex"

ATTRIBUTES = (AVAILABILITY_ZONE_ATTR, PRIVATE_DNS_NAME, PUBLIC_DNS_NAME, PRIVATE_IP, PUBLIC_IP) = (
    "AvailabilityZone",
    "PrivateDnsName",
    "PublicDnsName",
    "PrivateIp",
    "PublicIp",
)


def _not_implemented(kind: str) -> properties.Schema:
    return properties.Schema(kind, "Not Implemented.", implemented=False)


PROPERTIES_SCHEMA = {
    IMAGE_ID: properties.Schema(
        properties.Schema.STRING,
        "Glance image ID or name.",
        constraints=[constraints.CustomConstraint("glance.image")],
        required=True,
    ),
    # AWS does not require InstanceType but Heat does: Nova needs a flavor.
    INSTANCE_TYPE: properties.Schema(
        properties.Schema.STRING,
        "Nova instance type (flavor).",
        required=True,
        update_allowed=True,
        constraints=[constraints.CustomConstraint("nova.flavor")],
    ),
    KEY_NAME: properties.Schema(
        properties.Schema.STRING,
        "Optional Nova keypair name.",
        constraints=[constraints.CustomConstraint("nova.keypair")],
    ),
    AVAILABILITY_ZONE: properties.Schema(
        properties.Schema.STRING, "Availability zone to launch the instance in."
    ),
    DISABLE_API_TERMINATION: _not_implemented(properties.Schema.STRING),
    KERNEL_ID: _not_implemented(properties.Schema.STRING),
    MONITORING: _not_implemented(properties.Schema.BOOLEAN),
    PLACEMENT_GROUP_NAME: _not_implemented(properties.Schema.STRING),
    PRIVATE_IP_ADDRESS: _not_implemented(properties.Schema.STRING),
    RAM_DISK_ID: _not_implemented(properties.Schema.STRING),
    SECURITY_GROUPS: properties.Schema(properties.Schema.LIST, "Security group names to assign."),
    SECURITY_GROUP_IDS: properties.Schema(properties.Schema.LIST, "Security group IDs to assign."),
    NETWORK_INTERFACES: properties.Schema(
        properties.Schema.LIST,
        "Network interfaces to associate with instance.",
        update_allowed=True,
    ),
    SOURCE_DEST_CHECK: _not_implemented(properties.Schema.BOOLEAN),
    SUBNET_ID: properties.Schema(
        properties.Schema.STRING, "Subnet ID to launch instance in.", update_allowed=True
    ),
    TAGS: tags_schema("Tags to attach to instance.", on_list=True, update_allowed=True),
    NOVA_SCHEDULER_HINTS: properties.Schema(
        properties.Schema.LIST,
        "Scheduler hints to pass to Nova (Heat extension).",
        schema=properties.Schema(
            properties.Schema.MAP,
            schema={
                HINT_KEY: properties.Schema(
                    properties.Schema.STRING, "The hint's name.", required=True
                ),
                HINT_VALUE: properties.Schema(
                    properties.Schema.STRING, "The hint's value.", required=True
                ),
            },
        ),
    ),
    TENANCY: properties.Schema(
        properties.Schema.STRING,
        "Not Implemented.",
        constraints=[constraints.AllowedValues(["dedicated", "default"])],
        implemented=False,
    ),
    USER_DATA: properties.Schema(properties.Schema.STRING, "User data to pass to instance."),
    VOLUMES: properties.Schema(
        properties.Schema.LIST,
        "Volumes to attach to instance.",
        default=[],
        schema=properties.Schema(
            properties.Schema.MAP,
            schema={
                VOLUME_DEVICE: properties.Schema(
                    properties.Schema.STRING,
                    "The device where the volume is exposed on the instance. This assignment may not be honored and it "
                    "is advised that the path /dev/disk/by-id/virtio-<VolumeId> be used instead.",
                    required=True,
                ),
                VOLUME_ID: properties.Schema(
                    properties.Schema.STRING,
                    "The ID of the volume to be attached.",
                    required=True,
                    constraints=[constraints.CustomConstraint("cinder.volume")],
                ),
            },
        ),
    ),
    BLOCK_DEVICE_MAPPINGS: properties.Schema(
        properties.Schema.LIST,
        "Block device mappings to attach to instance.",
        schema=properties.Schema(
            properties.Schema.MAP,
            schema={
                DEVICE_NAME: properties.Schema(
                    properties.Schema.STRING,
                    "A device name where the volume will be attached in the system at /dev/device_name.e.g. vdb",
                    required=True,
                ),
                EBS: properties.Schema(
                    properties.Schema.MAP,
                    "The ebs volume to attach to the instance.",
                    schema={
                        DELETE_ON_TERMINATION: properties.Schema(
                            properties.Schema.BOOLEAN,
                            "Indicate whether the volume should be deleted when the instance is terminated.",
                            default=True,
                        ),
                        IOPS: properties.Schema(
                            properties.Schema.NUMBER,
                            "The number of I/O operations per second that the volume supports.",
                            implemented=False,
                        ),
                        SNAPSHOT_ID: properties.Schema(
                            properties.Schema.STRING,
                            "The ID of the snapshot to create a volume from.",
                            constraints=[constraints.CustomConstraint("cinder.snapshot")],
                        ),
                        VOLUME_SIZE: properties.Schema(
                            properties.Schema.STRING,
                            "The size of the volume, in GB. Must be equal or greater than the size of the snapshot. It is "
                            "safe to leave this blank and have the Compute service infer the size.",
                        ),
                        VOLUME_TYPE: properties.Schema(
                            properties.Schema.STRING, "The volume type.", implemented=False
                        ),
                    },
                ),
                NO_DEVICE: properties.Schema(
                    properties.Schema.MAP,
                    "The can be used to unmap a defined device.",
                    implemented=False,
                ),
                VIRTUAL_NAME: properties.Schema(
                    properties.Schema.STRING,
                    "The name of the virtual device. The name must be in the form ephemeralX where X is a number "
                    "starting from zero (0); for example, ephemeral0.",
                    implemented=False,
                ),
            },
        ),
    ),
}

ATTRIBUTES_SCHEMA = {
    AVAILABILITY_ZONE_ATTR: attributes.Schema(
        "The Availability Zone where the specified instance is launched.",
        type=attributes.Schema.STRING,
    ),
    PRIVATE_DNS_NAME: attributes.Schema(
        "Private DNS name of the specified instance.", type=attributes.Schema.STRING
    ),
    PUBLIC_DNS_NAME: attributes.Schema(
        "Public DNS name of the specified instance.", type=attributes.Schema.STRING
    ),
    PRIVATE_IP: attributes.Schema(
        "Private IP address of the specified instance.", type=attributes.Schema.STRING
    ),
    PUBLIC_IP: attributes.Schema(
        "Public IP address of the specified instance.", type=attributes.Schema.STRING
    ),
}


def interface_ports(interfaces: Sequence[Any]) -> list[str]:
    """The ports of NetworkInterfaces in DeviceIndex order; a bare id is the next index
    (Heat's ``_build_nics``)."""
    entries: list[Mapping[str, Any]] = []
    for entry in interfaces:
        if isinstance(entry, str):
            entry = {INTERFACE_ID: entry, DEVICE_INDEX: len(entries)}
        entries.append(entry)
    return [
        str(entry[INTERFACE_ID])
        for entry in sorted(entries, key=lambda entry: int(entry[DEVICE_INDEX]))
    ]


def legacy_block_devices(mappings: Sequence[Any] | None) -> list[dict[str, Any]] | None:
    """Heat's ``_build_block_device_mapping`` ("<snapshot>:snap:<size>:<delete>" per
    device) in the form Nova's API takes it (block_device_mapping v1 entries)."""
    devices = []
    for mapping in mappings or []:
        ebs = mapping.get(EBS)
        if not ebs:
            continue
        device: dict[str, Any] = {
            "device_name": mapping[DEVICE_NAME],
            "snapshot_id": ebs.get(SNAPSHOT_ID),
        }
        if ebs.get(VOLUME_SIZE):
            device["volume_size"] = str(ebs[VOLUME_SIZE])
        if ebs.get(DELETE_ON_TERMINATION) is not None:
            device["delete_on_termination"] = bool(ebs[DELETE_ON_TERMINATION])
        devices.append(device)
    return devices or None
