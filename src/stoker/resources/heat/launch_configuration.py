"""AWS::AutoScaling::LaunchConfiguration: the definition an AWS autoscaling group (or
OS::Heat::InstanceGroup) gives its AWS::EC2::Instance members.

It makes nothing in a cloud: its physical id is its physical name, so that a group's
``LaunchConfigurationName: {Ref: config}`` finds it (Heat's reference is that name too).
A group reads its properties and metadata when it lays out its members
(``member_properties``). Any change replaces it (its metadata too, as in Heat), so a
group whose configuration changed sees a new reference and rolls its members.
"""

from __future__ import annotations

from typing import Any

from stoker.sdk import constraints, properties
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource

__all__ = ["LaunchConfiguration", "resource_mapping"]


class LaunchConfiguration(Resource):
    """The properties of the instances an autoscaling group makes (image, flavor, key,
    user data, security groups, block devices, scheduler hints), or an existing
    instance (``InstanceId``) to take them from."""

    PROPERTIES = (
        IMAGE_ID,
        INSTANCE_TYPE,
        KEY_NAME,
        USER_DATA,
        SECURITY_GROUPS,
        KERNEL_ID,
        RAM_DISK_ID,
        BLOCK_DEVICE_MAPPINGS,
        NOVA_SCHEDULER_HINTS,
        INSTANCE_ID,
    ) = (
        "ImageId",
        "InstanceType",
        "KeyName",
        "UserData",
        "SecurityGroups",
        "KernelId",
        "RamDiskId",
        "BlockDeviceMappings",
        "NovaSchedulerHints",
        "InstanceId",
    )
    _NOVA_SCHEDULER_HINT_KEYS = (NOVA_SCHEDULER_HINT_KEY, NOVA_SCHEDULER_HINT_VALUE) = (
        "Key",
        "Value",
    )
    _BLOCK_DEVICE_MAPPING_KEYS = (DEVICE_NAME, EBS, NO_DEVICE, VIRTUAL_NAME) = (
        "DeviceName",
        "Ebs",
        "NoDevice",
        "VirtualName",
    )
    _EBS_KEYS = (DELETE_ON_TERMINATION, IOPS, SNAPSHOT_ID, VOLUME_SIZE, VOLUME_TYPE) = (
        "DeleteOnTermination",
        "Iops",
        "SnapshotId",
        "VolumeSize",
        "VolumeType",
    )

    # Its members are Nova servers, and its checks ask Nova and Glance: the conformance
    # lifecycle runs it against the test cloud (tests/cloud/test_aws_autoscaling.py).
    default_client_name = "nova"

    properties_schema = {
        IMAGE_ID: properties.Schema(
            properties.Schema.STRING,
            "Glance image ID or name.",
            constraints=[constraints.CustomConstraint("glance.image")],
        ),
        INSTANCE_TYPE: properties.Schema(
            properties.Schema.STRING,
            "Nova instance type (flavor).",
            constraints=[constraints.CustomConstraint("nova.flavor")],
        ),
        INSTANCE_ID: properties.Schema(
            properties.Schema.STRING,
            "The ID of an existing instance you want to use to create the launch configuration. All properties are "
            "derived from the instance with the exception of BlockDeviceMapping.",
            constraints=[constraints.CustomConstraint("nova.server")],
        ),
        KEY_NAME: properties.Schema(
            properties.Schema.STRING,
            "Optional Nova keypair name.",
            constraints=[constraints.CustomConstraint("nova.keypair")],
        ),
        USER_DATA: properties.Schema(properties.Schema.STRING, "User data to pass to instance."),
        SECURITY_GROUPS: properties.Schema(
            properties.Schema.LIST, "Security group names to assign."
        ),
        KERNEL_ID: properties.Schema(
            properties.Schema.STRING, "Not Implemented.", implemented=False
        ),
        RAM_DISK_ID: properties.Schema(
            properties.Schema.STRING, "Not Implemented.", implemented=False
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
                                "The size of the volume, in GB. Must be equal or greater than the size of the snapshot. "
                                "It is safe to leave this blank and have the Compute service infer the size.",
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
        NOVA_SCHEDULER_HINTS: properties.Schema(
            properties.Schema.LIST,
            "Scheduler hints to pass to Nova (Heat extension).",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    NOVA_SCHEDULER_HINT_KEY: properties.Schema(
                        properties.Schema.STRING, required=True
                    ),
                    NOVA_SCHEDULER_HINT_VALUE: properties.Schema(
                        properties.Schema.STRING, required=True
                    ),
                },
            ),
        ),
    }

    def validate(self) -> None:
        super().validate()
        place = f"resources.{self.name}.properties"
        for mapping in self.properties[self.BLOCK_DEVICE_MAPPINGS] or []:
            ebs = mapping.get(self.EBS)
            if not ebs:
                raise ValidationError(
                    "Ebs is missing, this is required when specifying BlockDeviceMappings.",
                    path=f"{place}.{self.BLOCK_DEVICE_MAPPINGS}",
                )
            if not ebs.get(self.SNAPSHOT_ID):
                raise ValidationError(
                    "SnapshotId is missing, this is required when specifying BlockDeviceMappings.",
                    path=f"{place}.{self.BLOCK_DEVICE_MAPPINGS}",
                )
        if not self.properties[self.INSTANCE_ID] and not (
            self.properties[self.IMAGE_ID] and self.properties[self.INSTANCE_TYPE]
        ):
            raise ValidationError(
                "If without InstanceId, ImageId and InstanceType are required.",
                path=place,
                hint=f"give {self.IMAGE_ID} and {self.INSTANCE_TYPE}, or {self.INSTANCE_ID}",
            )

    def handle_create(self) -> None:
        self.resource_id_set(self.physical_resource_name())

    def needs_replace_with_tmpl_diff(self, tmpl_diff: Any) -> bool:
        """New metadata replaces the configuration (Heat), so the groups roll it out."""
        return bool(tmpl_diff) and "Metadata" in tmpl_diff

    def get_reference_id(self) -> str:
        return self.resource_id or self.physical_resource_name()

    # -- what a group reads -------------------------------------------------------------

    def _instance_properties(self, instance_id: str) -> dict[str, Any]:
        """An existing server's image, flavor, key and security groups (Heat's
        rebuild_lc_properties)."""
        server = self.client_plugin("nova").get_server(instance_id)
        image = getattr(server, "image", None) or {}
        flavor = getattr(server, "flavor", None) or {}
        return {
            self.IMAGE_ID: image.get("id"),
            self.INSTANCE_TYPE: flavor.get("id") or flavor.get("original_name"),
            self.KEY_NAME: getattr(server, "key_name", None),
            self.SECURITY_GROUPS: [
                group["name"] for group in getattr(server, "security_groups", None) or []
            ],
        }

    def member_properties(self) -> dict[str, Any]:
        """The properties a member instance gets: those the template gave (the ones of the
        instance named by InstanceId filling the gaps), without InstanceId."""
        given = {
            key: self.properties[key]
            for key in self.properties_schema
            if self.properties.data.get(key) is not None
        }
        for key in (self.BLOCK_DEVICE_MAPPINGS, self.NOVA_SCHEDULER_HINTS):
            if given.get(key) is not None:
                raw = self.properties.data[key]
                given[key] = [
                    {
                        name: value
                        for name, value in item.items()
                        if isinstance(raw, list) and index < len(raw) and name in (raw[index] or {})
                    }
                    for index, item in enumerate(given[key])
                ]
        instance_id = given.pop(self.INSTANCE_ID, None)
        if instance_id:
            for key, value in self._instance_properties(instance_id).items():
                given.setdefault(key, value)
        return {key: value for key, value in given.items() if value is not None}

    def member_metadata(self) -> Any:
        return self.t.resolved_metadata() if self.t is not None else {}


def resource_mapping() -> dict[str, type[Resource]]:
    return {"AWS::AutoScaling::LaunchConfiguration": LaunchConfiguration}
