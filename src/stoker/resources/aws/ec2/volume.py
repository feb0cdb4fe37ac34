"""AWS::EC2::Volume and AWS::EC2::VolumeAttachment, as Heat 27 has them (both on Heat's
volume base classes, as OS::Cinder::Volume and OS::Cinder::VolumeAttachment are): the
machinery is OS::Cinder::Volume's and OS::Cinder::VolumeAttachment's, under CFN's
property names.

Owns: the CFN schemas (every property immutable, as in Heat), the create request (size,
availability zone, Tags as the volume's metadata; ``SnapshotId`` is a Cinder *backup* to
restore, as Heat reads it), and what of the Cinder types does not apply here (no
attributes, no property translation, none of OS::Cinder::Volume's source validation).
Create, deletion that waits the volume out (backing it up first with ``DeletionPolicy:
Snapshot``), check, crash safety (the volume is named by the physical resource name) and
attaching, detaching and checking an attachment are inherited.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from stoker.resources.aws.ec2.tags import tags_schema, tags_to_metadata
from stoker.resources.openstack.cinder.volume import CinderVolume
from stoker.resources.openstack.cinder.volume_attachment import CinderVolumeAttachment
from stoker.sdk import constraints, properties, support, translation
from stoker.sdk.dependencies import ResourceView, StackView
from stoker.sdk.resource import Resource

__all__ = ["Volume", "VolumeAttachment", "resource_mapping"]


class Volume(CinderVolume):
    """An EBS-style volume: a Cinder volume of the given size in an availability zone,
    or restored from a Cinder backup."""

    support_status = support.SupportStatus()

    PROPERTIES = (AVAILABILITY_ZONE, SIZE, BACKUP_ID, TAGS) = (
        "AvailabilityZone",
        "Size",
        "SnapshotId",
        "Tags",
    )
    ATTRIBUTES = ()

    properties_schema = {
        AVAILABILITY_ZONE: properties.Schema(
            properties.Schema.STRING,
            "The availability zone in which the volume will be created.",
            required=True,
            immutable=True,
        ),
        SIZE: properties.Schema(
            properties.Schema.INTEGER,
            "The size of the volume in GB.",
            immutable=True,
            constraints=[constraints.Range(min=1)],
        ),
        BACKUP_ID: properties.Schema(
            properties.Schema.STRING,
            "If specified, the backup used as the source to create the volume.",
            immutable=True,
            constraints=[constraints.CustomConstraint("cinder.backup")],
        ),
        TAGS: tags_schema(
            "The list of tags to associate with the volume.", on_list=True, immutable=True
        ),
    }
    attributes_schema: ClassVar[dict[str, Any]] = {}

    @classmethod
    def update_dependencies(cls, me: ResourceView, stack: StackView) -> list[str]:
        # Every property is immutable: an update never detaches this volume.
        return []

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return []

    def validate(self) -> None:
        Resource.validate(self)

    def create_arguments(self, image_id: str | None = None) -> dict[str, Any]:
        arguments: dict[str, Any] = {
            "name": self.physical_resource_name(),
            "description": self.physical_resource_name(),
            "size": self.given(self.SIZE),
            "availability_zone": self.given(self.AVAILABILITY_ZONE) or None,
        }
        metadata = tags_to_metadata(self.given(self.TAGS))
        if metadata:
            arguments["metadata"] = metadata
        return {key: value for key, value in arguments.items() if value is not None}

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        """The volume in the CloudFormation vocabulary: ``Size``, and ``Tags`` as the
        template gives them while the volume's metadata holds them (else that metadata as
        tags)."""
        metadata = {str(key): str(value) for key, value in (resource_data.get("metadata") or {}).items()}
        given = resource_properties.get(self.TAGS)
        tags = given if given and (tags_to_metadata(given) or {}) == metadata else [{"Key": key, "Value": value} for key, value in sorted(metadata.items())]
        return {self.SIZE: resource_data.get("size"), self.TAGS: tags}

    def _resolve_attribute(self, name: str) -> Any:
        return None


class VolumeAttachment(CinderVolumeAttachment):
    """Attaches a volume to an instance at a device."""

    support_status = support.SupportStatus()

    PROPERTIES = (INSTANCE_ID, VOLUME_ID, DEVICE) = ("InstanceId", "VolumeId", "Device")

    properties_schema = {
        INSTANCE_ID: properties.Schema(
            properties.Schema.STRING,
            "The ID of the instance to which the volume attaches.",
            immutable=True,
            required=True,
            constraints=[constraints.CustomConstraint("nova.server")],
        ),
        VOLUME_ID: properties.Schema(
            properties.Schema.STRING,
            "The ID of the volume to be attached.",
            immutable=True,
            required=True,
            constraints=[constraints.CustomConstraint("cinder.volume")],
        ),
        DEVICE: properties.Schema(
            properties.Schema.STRING,
            "The device where the volume is exposed on the instance. This assignment may not be honored "
            "and it is advised that the path /dev/disk/by-id/virtio-<VolumeId> be used instead.",
            immutable=True,
            required=True,
            constraints=[constraints.AllowedPattern("/dev/vd[b-z]")],
        ),
    }


def resource_mapping() -> dict[str, type[Resource]]:
    return {"AWS::EC2::Volume": Volume, "AWS::EC2::VolumeAttachment": VolumeAttachment}
