"""OS::Cinder::Volume, as Heat has it.

Owns: the volume's create request (from nothing, an image, a volume, a snapshot or a
backup), validation of those sources, update in place (name, description, metadata,
retype, extend, read-only flag), deletion that waits the volume out (and, with
``deletion_policy: Snapshot``, backs it up first), check, attributes, and stack
snapshots as Cinder backups.

Every handler returns a JSON token and every ``check_*_complete`` decides from the live
volume what is left to do, so a restarted engine that polls the stored token carries on
without repeating a call it already made (an extend is only asked while the volume is
smaller than asked and not already extending).

Stack snapshots: Heat backs a volume up with Cinder's backup service, and so do we: a
backup, unlike a Cinder snapshot, does not pin its volume (a volume with snapshots cannot
be deleted, so deleting or replacing it would fail while the stack snapshot exists).
Restoring writes the backup onto the same volume, detached from its server meanwhile,
after that server's own restore (``update_dependencies``: a rebuild that meets a detach
leaves the server in ERROR). A cloud without the cinder-backup service fails the
snapshot with Cinder's own message.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.cinder.volume_attachment import (
    ATTACH_ATTEMPTS,
    CinderVolumeAttachment,
)
from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.dependencies import Reference, ResourceView, StackView
from stoker.sdk.exceptions import ResourceFailure, ValidationError
from stoker.sdk.resource import Resource

__all__ = ["CinderVolume", "resource_mapping"]

# Cinder microversion that lets an attached volume be extended.
MICROVERSION_EXTEND_INUSE = "3.42"
CREATING_STATUSES = ("creating", "restoring-backup", "downloading")


class CinderVolume(Resource):
    """A resource that implements Cinder volumes.

    Cinder volume is a storage in the form of block devices. It can be used, for example,
    for providing storage to instance. Volume supports creation from snapshot, backup or
    image. Also volume can be created only by size.
    """

    default_client_name = "cinder"
    entity = "volume"

    PROPERTIES: tuple[str, ...]
    PROPERTIES = (
        AVAILABILITY_ZONE, SIZE, SNAPSHOT_ID, BACKUP_ID, NAME,
        DESCRIPTION, VOLUME_TYPE, METADATA, IMAGE_REF, IMAGE,
        SOURCE_VOLID, CINDER_SCHEDULER_HINTS, READ_ONLY, MULTI_ATTACH,
    ) = (
        "availability_zone", "size", "snapshot_id", "backup_id", "name",
        "description", "volume_type", "metadata", "imageRef", "image",
        "source_volid", "scheduler_hints", "read_only", "multiattach",
    )

    ATTRIBUTES: tuple[str, ...]
    ATTRIBUTES = (
        AVAILABILITY_ZONE_ATTR, SIZE_ATTR, SNAPSHOT_ID_ATTR, DISPLAY_NAME_ATTR,
        DISPLAY_DESCRIPTION_ATTR, VOLUME_TYPE_ATTR, METADATA_ATTR,
        SOURCE_VOLID_ATTR, STATUS, CREATED_AT, BOOTABLE, METADATA_VALUES_ATTR,
        ENCRYPTED_ATTR, ATTACHMENTS, ATTACHMENTS_LIST, MULTI_ATTACH_ATTR,
    ) = (
        "availability_zone", "size", "snapshot_id", "display_name",
        "display_description", "volume_type", "metadata",
        "source_volid", "status", "created_at", "bootable", "metadata_values",
        "encrypted", "attachments", "attachments_list", "multiattach",
    )

    properties_schema = {
        AVAILABILITY_ZONE: properties.Schema(
            properties.Schema.STRING, "The availability zone in which the volume will be created."
        ),
        SIZE: properties.Schema(
            properties.Schema.INTEGER,
            "The size of the volume in GB. On update only increase in size is supported. This "
            "property is required unless property backup_id or source_volid or snapshot_id is "
            "specified.",
            update_allowed=True,
            constraints=[constraints.Range(min=1)],
        ),
        SNAPSHOT_ID: properties.Schema(
            properties.Schema.STRING,
            "If specified, the snapshot to create the volume from.",
            constraints=[constraints.CustomConstraint("cinder.snapshot")],
        ),
        BACKUP_ID: properties.Schema(
            properties.Schema.STRING,
            "If specified, the backup to create the volume from.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("cinder.backup")],
        ),
        NAME: properties.Schema(
            properties.Schema.STRING, "A name used to distinguish the volume.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "A description of the volume.", update_allowed=True
        ),
        VOLUME_TYPE: properties.Schema(
            properties.Schema.STRING,
            "If specified, the type of volume to use, mapping to a specific backend.",
            constraints=[constraints.CustomConstraint("cinder.vtype")],
            update_allowed=True,
        ),
        METADATA: properties.Schema(
            properties.Schema.MAP,
            "Key/value pairs to associate with the volume.",
            update_allowed=True,
            default={},
        ),
        IMAGE_REF: properties.Schema(
            properties.Schema.STRING,
            "The ID of the image to create the volume from.",
            support_status=support.SupportStatus(
                status=support.HIDDEN,
                message="Use property image.",
                version="5.0.0",
                previous_status=support.SupportStatus(status=support.DEPRECATED, version="2014.1"),
            ),
        ),
        IMAGE: properties.Schema(
            properties.Schema.STRING,
            "If specified, the name or ID of the image to create the volume from.",
            constraints=[constraints.CustomConstraint("glance.image")],
        ),
        SOURCE_VOLID: properties.Schema(
            properties.Schema.STRING,
            "If specified, the volume to use as source.",
            constraints=[constraints.CustomConstraint("cinder.volume")],
        ),
        CINDER_SCHEDULER_HINTS: properties.Schema(
            properties.Schema.MAP,
            "Arbitrary key-value pairs specified by the client to help the Cinder scheduler "
            "creating a volume.",
            support_status=support.SupportStatus(version="2015.1"),
        ),
        READ_ONLY: properties.Schema(
            properties.Schema.BOOLEAN,
            "Enables or disables read-only access mode of volume.",
            support_status=support.SupportStatus(version="5.0.0"),
            update_allowed=True,
        ),
        MULTI_ATTACH: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether allow the volume to be attached more than once.",
            default=False,
            # Heat: SUPPORTED in 6.0.0, then HIDDEN in 13.0.0 (stoker's support statuses
            # allow SUPPORTED -> HIDDEN only through DEPRECATED, so the history is cut).
            support_status=support.SupportStatus(
                status=support.HIDDEN,
                version="13.0.0",
                message="Use a volume type with extra spec multiattach=\"<is> True\".",
            ),
        ),
    }

    attributes_schema = {
        AVAILABILITY_ZONE_ATTR: attributes.Schema(
            "The availability zone in which the volume is located.", type=attributes.Schema.STRING
        ),
        SIZE_ATTR: attributes.Schema("The size of the volume in GB.", type=attributes.Schema.STRING),
        SNAPSHOT_ID_ATTR: attributes.Schema(
            "The snapshot the volume was created from, if any.", type=attributes.Schema.STRING
        ),
        DISPLAY_NAME_ATTR: attributes.Schema("Name of the volume.", type=attributes.Schema.STRING),
        DISPLAY_DESCRIPTION_ATTR: attributes.Schema("Description of the volume.", type=attributes.Schema.STRING),
        VOLUME_TYPE_ATTR: attributes.Schema(
            "The type of the volume mapping to a backend, if any.", type=attributes.Schema.STRING
        ),
        METADATA_ATTR: attributes.Schema("Key/value pairs associated with the volume.", type=attributes.Schema.STRING),
        SOURCE_VOLID_ATTR: attributes.Schema("The volume used as source, if any.", type=attributes.Schema.STRING),
        STATUS: attributes.Schema(
            "The current status of the volume.",
            type=attributes.Schema.STRING,
            cache_mode=attributes.Schema.CACHE_NONE,
        ),
        CREATED_AT: attributes.Schema("The timestamp indicating volume creation.", type=attributes.Schema.STRING),
        BOOTABLE: attributes.Schema(
            "Boolean indicating if the volume can be booted or not.", type=attributes.Schema.STRING
        ),
        METADATA_VALUES_ATTR: attributes.Schema(
            "Key/value pairs associated with the volume in raw dict form.", type=attributes.Schema.MAP
        ),
        ENCRYPTED_ATTR: attributes.Schema(
            "Boolean indicating if the volume is encrypted or not.", type=attributes.Schema.STRING
        ),
        ATTACHMENTS: attributes.Schema(
            "A string representation of the list of attachments of the volume.",
            type=attributes.Schema.STRING,
            cache_mode=attributes.Schema.CACHE_NONE,
            support_status=support.SupportStatus(
                status=support.DEPRECATED,
                message="Use property attachments_list.",
                version="9.0.0",
                previous_status=support.SupportStatus(status=support.SUPPORTED, version="2015.1"),
            ),
        ),
        ATTACHMENTS_LIST: attributes.Schema(
            "The list of attachments of the volume.",
            type=attributes.Schema.LIST,
            cache_mode=attributes.Schema.CACHE_NONE,
            support_status=support.SupportStatus(version="9.0.0"),
        ),
        MULTI_ATTACH_ATTR: attributes.Schema(
            "Boolean indicating whether allow the volume to be attached more than once.",
            type=attributes.Schema.BOOLEAN,
            support_status=support.SupportStatus(version="6.0.0"),
        ),
    }

    # Attribute name -> the openstacksdk field holding it (the rest are spelt alike).
    _SDK_FIELDS = {
        DISPLAY_NAME_ATTR: "name",
        DISPLAY_DESCRIPTION_ATTR: "description",
        SOURCE_VOLID_ATTR: "source_volume_id",
        BOOTABLE: "is_bootable",
        ENCRYPTED_ATTR: "is_encrypted",
        MULTI_ATTACH_ATTR: "is_multiattach",
        METADATA_VALUES_ATTR: "metadata",
        ATTACHMENTS_LIST: "attachments",
    }

    @classmethod
    def update_dependencies(cls, me: ResourceView, stack: StackView) -> list[str]:
        """The servers of this stack that a VolumeAttachment of this stack attaches this
        volume to: an update that detaches the volume (a restore, a read-only flag, an
        extend below block-storage 3.42) waits for theirs, so that the volume never leaves a
        server Nova is rebuilding or resizing (Nova puts the server in ERROR)."""
        servers = []
        for attachment in stack.of_type("OS::Cinder::VolumeAttachment"):
            if attachment.get(CinderVolumeAttachment.VOLUME_ID) == Reference(me.name):
                server = attachment.get(CinderVolumeAttachment.INSTANCE_ID)
                if isinstance(server, Reference):
                    servers.append(server.name)
        return servers

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(props, translation.TranslationRule.REPLACE, [self.IMAGE], value_path=[self.IMAGE_REF])
        ]

    def given(self, key: str) -> Any:
        """The value the template gave (or the schema's default), else None: an unset
        string reads as '' and an unset boolean as False, which a request must not carry."""
        return self.properties.resolved().get(key)

    # -- validation -------------------------------------------------------------------

    def validate(self) -> None:
        super().validate()
        if self.given(self.BACKUP_ID) is None:
            self._validate_create_sources()

    def _validate_create_sources(self) -> None:
        exclusive = [key for key in (self.SNAPSHOT_ID, self.SOURCE_VOLID, self.IMAGE, self.IMAGE_REF) if self.given(key)]
        allow_no_size = [key for key in (self.SNAPSHOT_ID, self.SOURCE_VOLID) if self.given(key)]
        size = self.given(self.SIZE)
        path = f"resources.{self.name}.properties"
        if size is None and (len(allow_no_size) != 1 or len(exclusive) != 1):
            raise ValidationError(
                'If neither "backup_id" nor "size" is provided, one and only one of "source_volid", '
                f'"snapshot_id" must be specified, but currently specified options: {exclusive}.',
                path=path,
            )
        if size and len(exclusive) > 1:
            raise ValidationError(
                'If "size" is provided, only one of "image", "imageRef", "source_volid", '
                f'"snapshot_id" can be specified, but currently specified options: {exclusive}.',
                path=path,
            )

    # -- requests ---------------------------------------------------------------------

    def volume_name(self) -> str:
        return self.given(self.NAME) or self.physical_resource_name()

    def create_arguments(self, image_id: str | None = None) -> dict[str, Any]:
        """The openstacksdk ``create_volume`` arguments; ``image_id`` is the image
        property resolved to an id (the caller asks Glance)."""
        arguments: dict[str, Any] = {
            "name": self.volume_name(),
            "description": self.given(self.DESCRIPTION) or self.physical_resource_name(),
            "size": self.given(self.SIZE),
        }
        if self.given(self.AVAILABILITY_ZONE):
            arguments["availability_zone"] = self.given(self.AVAILABILITY_ZONE)
        if self.given(self.CINDER_SCHEDULER_HINTS):
            arguments["scheduler_hints"] = dict(self.given(self.CINDER_SCHEDULER_HINTS))
        if image_id:
            arguments["image_id"] = image_id
        for key, field in ((self.SNAPSHOT_ID, "snapshot_id"), (self.VOLUME_TYPE, "volume_type"), (self.SOURCE_VOLID, "source_volume_id")):
            if self.given(key) is not None:
                arguments[field] = self.given(key)
        metadata = self.given(self.METADATA)
        if metadata:
            arguments["metadata"] = {str(key): str(value) for key, value in metadata.items()}
        return arguments

    # -- create -----------------------------------------------------------------------

    def handle_create(self) -> str:
        client = self.client()
        backup_id = self.given(self.BACKUP_ID)
        if backup_id is not None:
            restored = client.restore_backup(backup_id, name=self.volume_name())
            volume_id = restored.volume_id
            self.resource_id_set(volume_id)
            client.update_volume(volume_id, description=self.given(self.DESCRIPTION) or self.physical_resource_name())
            return str(volume_id)
        image = self.given(self.IMAGE)
        image_id = self.client_plugin("glance").find_image_by_name_or_id(image) if image else None
        volume = client.create_volume(**self.create_arguments(image_id))
        self.resource_id_set(volume.id)
        return str(volume.id)

    def check_create_complete(self, token: Any) -> bool:
        volume = self.client().get_volume(self.resource_id)
        if volume.status in CREATING_STATUSES:
            return False
        if volume.status == "error":
            raise ResourceFailure(f"Went to status {volume.status} due to \"Unknown\"")
        if volume.status != "available":
            raise ResourceFailure(f"Volume create failed - Unknown status {volume.status} due to \"Unknown\"")
        # Cinder sets the read-only flag of an available volume only.
        if self.given(self.READ_ONLY) is not None:
            self.client().set_volume_readonly(volume, bool(self.given(self.READ_ONLY)))
        if volume.volume_type is not None:
            self.data_set(self.VOLUME_TYPE, volume.volume_type)
        return True

    def find_created(self) -> str | None:
        # A volume restored from a backup is named by the restore request too.
        if self.given(self.NAME):
            return None
        name = self.physical_resource_name()
        for volume in self.client().volumes(details=False, name=name):
            if volume.name == name:
                return str(volume.id)
        return None

    # -- update -----------------------------------------------------------------------

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> dict[str, Any]:
        client = self.client()
        volume = client.get_volume(self.resource_id)
        changes: dict[str, Any] = {}
        if self.NAME in prop_diff:
            changes["name"] = prop_diff[self.NAME] or self.physical_resource_name()
        if self.DESCRIPTION in prop_diff:
            changes["description"] = prop_diff[self.DESCRIPTION] or self.physical_resource_name()
        if changes:
            client.update_volume(volume, **changes)
        if self.METADATA in prop_diff:
            self._replace_metadata(volume, prop_diff[self.METADATA] or {})
        token: dict[str, Any] = {}
        if self.BACKUP_ID in prop_diff and prop_diff[self.BACKUP_ID]:
            # Heat restores the backup onto this volume, in place.
            token["backup_id"] = prop_diff[self.BACKUP_ID]
        extend_in_use = False
        if self.SIZE in prop_diff and prop_diff[self.SIZE] is not None:
            new_size = int(prop_diff[self.SIZE])
            if new_size < volume.size:
                raise ResourceFailure("Shrinking volume is not supported.")
            if new_size > volume.size:
                token["size"] = new_size
                extend_in_use = self.client_plugin().is_version_supported(MICROVERSION_EXTEND_INUSE)
        if self.VOLUME_TYPE in prop_diff and prop_diff[self.VOLUME_TYPE]:
            new_type = prop_diff[self.VOLUME_TYPE]
            wanted = self.client_plugin().get_volume_type(new_type)
            if volume.volume_type not in (wanted.name, wanted.id):
                client.retype_volume(volume, wanted.id, migration_policy="never")
            token["volume_type"] = [wanted.name, wanted.id]
        if self.READ_ONLY in prop_diff and prop_diff[self.READ_ONLY] is not None:
            token["read_only"] = bool(prop_diff[self.READ_ONLY])
        # Cinder restores, sets the read-only flag and (before 3.42) extends only an
        # available volume: Heat detaches it from its server first and attaches it back.
        needs_detach = "backup_id" in token or "read_only" in token or ("size" in token and not extend_in_use)
        if needs_detach and volume.attachments:
            if len(volume.attachments) > 1:
                raise ResourceFailure(f"Volume {volume.id} is attached to several servers: it cannot be detached to update it")
            attachment = volume.attachments[0]
            token["reattach"] = {"server": attachment["server_id"], "device": attachment.get("device")}
            token["phase"] = "detach"
            if "size" in token and not extend_in_use:
                # An emulation of what the cloud cannot do in place: said, as seed 004 asks.
                available = self.client_plugin().negotiated_version() or "none"
                self.warn(
                    f"This cloud supports a maximum microversion of {available} for service block-storage, "
                    f"and extending an attached volume needs {MICROVERSION_EXTEND_INUSE}: volume {volume.id} "
                    f"is detached from server {attachment['server_id']}, extended and attached back"
                )
        return token

    def _replace_metadata(self, volume: Any, metadata: Mapping[str, Any]) -> None:
        """Make the volume's metadata exactly ``metadata`` (Heat's update_all_metadata)."""
        client = self.client()
        wanted = {str(key): str(value) for key, value in metadata.items()}
        stale = [key for key in (volume.metadata or {}) if key not in wanted and key != "readonly"]
        if stale:
            client.delete_volume_metadata(volume, keys=stale)
        if wanted:
            client.set_volume_metadata(volume, **wanted)

    def check_update_complete(self, token: Any) -> bool:
        """Detach (if needed), then retype, restore, extend and the read-only flag, then
        attach back: each step decided from the live volume, so a restarted engine
        polling the stored token repeats nothing that is done."""
        token = token or {}
        client = self.client()
        volume = client.get_volume(self.resource_id)
        reattach = token.get("reattach")
        if volume.status in ("attaching", "reserved") and reattach and token.get("attach_attempts"):
            # Our attach back: Nova leaves the volume reserved when the server fails it.
            self._server_not_in_error(reattach["server"])
            return False
        if volume.status in ("retyping", "extending", "restoring-backup", "attaching", "detaching", "reserved"):
            return False
        if volume.status.startswith("error"):
            raise ResourceFailure(f"Volume update failed - Unknown status {volume.status} due to \"Unknown\"")
        if reattach and token.get("phase") == "detach":
            if self._detach_from(volume, reattach["server"], token):
                token["phase"] = "work"
            return False
        if token.get("volume_type") and volume.volume_type not in token["volume_type"]:
            # Cinder marks the volume 'retyping' before its retype call answers, so a
            # volume at rest with the old type is a retype that failed.
            raise ResourceFailure(
                f"Volume retype failed - volume {volume.id} is still of type {volume.volume_type} (status {volume.status})"
            )
        if token.get("backup_id") and not token.get("restored"):
            client.restore_backup(token["backup_id"], volume=volume.id)
            token["restored"] = True
            return False
        size = token.get("size")
        if size and volume.size < size:
            ready = ("available", "in-use") if self.client_plugin().is_version_supported(MICROVERSION_EXTEND_INUSE) else ("available",)
            if volume.status not in ready:
                raise ResourceFailure(f"Volume resize failed - Unknown status {volume.status} due to \"Unknown\"")
            client.extend_volume(volume, size)
            return False
        if token.get("read_only") is not None and not token.get("read_only_set"):
            client.set_volume_readonly(volume, token["read_only"])
            token["read_only_set"] = True
        if reattach and not _attached_to(volume, reattach["server"]):
            return self._reattach(volume, reattach, token)
        if volume.volume_type is not None:
            self.data_set(self.VOLUME_TYPE, volume.volume_type)
        return True

    def _reattach(self, volume: Any, reattach: Mapping[str, Any], token: dict[str, Any]) -> bool:
        """One poll of attaching ``volume`` back to the server it was detached from; True
        once it is in use. Nova reserves the volume before its attach call answers, so a
        volume still 'available' was never attached: asked (again). Nova answers 409 while
        the server is busy (rebuilt by the same stack restore, say): asked again at the
        next poll, unless the server is in ERROR, which it does not leave by itself. An
        attach Nova accepted and rolled back is asked anew ATTACH_ATTEMPTS times at most,
        as OS::Cinder::VolumeAttachment does."""
        if volume.status != "available":
            return bool(self.client_plugin().check_attach_volume_complete(volume.id))
        server_id = reattach["server"]
        attempts = token.get("attach_attempts", 0)
        if attempts >= ATTACH_ATTEMPTS:
            raise ResourceFailure(
                f"Volume attachment failed - volume {volume.id} is still 'available' after {attempts} attach requests to server {server_id}"
            )
        nova = self.client_plugin("nova")
        if nova.attach_volume(server_id, volume.id, reattach.get("device")) is not None:
            token["attach_attempts"] = attempts + 1
            return False
        self._server_not_in_error(server_id)
        return False

    def _server_not_in_error(self, server_id: str) -> None:
        """Fail the attach back to a server that is gone or in ERROR (which it does not
        leave by itself), with Nova's fault when it gives one."""
        nova = self.client_plugin("nova")
        try:
            server = nova.client().get_server(server_id)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            if nova.is_not_found(error):
                raise ResourceFailure(f"Volume attachment failed - server {server_id} is gone")
            raise
        if server.status == "ERROR":
            fault = getattr(server, "fault", None)
            fault = fault.get("message") if isinstance(fault, Mapping) else None
            raise ResourceFailure(f"Volume attachment failed - server {server_id} is in status ERROR" + (f": {fault}" if fault else ""))

    def _detach_from(self, volume: Any, server_id: str, token: dict[str, Any]) -> bool:
        """One poll of detaching ``volume`` from ``server_id``; True once Cinder and Nova
        both see it detached."""
        nova = self.client_plugin("nova")
        if not token.get("detach_called"):
            token["detach_called"] = nova.detach_volume(server_id, volume.id)
            return False
        if not self.client_plugin().check_detach_volume_complete(volume.id, server_id):
            return False
        return bool(nova.check_detach_volume_complete(server_id, volume.id))

    # -- delete -----------------------------------------------------------------------

    def handle_delete(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return {"backup": False}

    def handle_snapshot_delete(self, state: Any) -> dict[str, Any] | None:
        """Delete with ``deletion_policy: Snapshot``: a backup first (Heat's rule: not of
        a volume whose create or update failed), then the delete."""
        if self.resource_id is None:
            return None
        action, status = tuple(state) if state else (None, None)
        failed = status == self.FAILED and action in (self.CREATE, self.UPDATE)
        return {"backup": not failed}

    def check_delete_complete(self, token: Any) -> bool:
        if token is None or self.resource_id is None:
            return True
        client, plugin = self.client(), self.client_plugin()
        if token.get("backup"):
            # A restarted engine polls the stored token: the backup it already asked for
            # was recorded in the resource's data.
            token.setdefault("backup_id", self.data().get("delete_backup_id"))
            if not token.get("backup_id"):
                try:
                    token["backup_id"] = client.create_backup(volume_id=self.resource_id, force=True).id
                except Exception as error:  # noqa: BLE001 - openstacksdk's types
                    plugin.ignore_not_found(error)
                    return True  # nothing left to back up or delete
                self.data_set("delete_backup_id", token["backup_id"])
                return False
            if not self._backup_done(token["backup_id"], "Volume backup failed"):
                return False
            token["backup"] = False
        try:
            volume = client.get_volume(self.resource_id)
        except Exception as error:  # noqa: BLE001
            plugin.ignore_not_found(error)
            return True
        if volume.status == "in-use":
            raise ResourceFailure("Volume in use")
        if volume.status == "error_deleting":
            raise ResourceFailure(f"Went to status {volume.status} due to \"delete\"")
        if volume.status != "deleting":
            try:
                client.delete_volume(volume, ignore_missing=True)
            except Exception as error:  # noqa: BLE001
                plugin.ignore_not_found(error)
                return True
        return False

    def needs_replace_failed(self) -> bool:
        if not self.resource_id:
            return True
        try:
            volume = self.client().get_volume(self.resource_id)
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
            return True
        return volume.status in ("error", "deleting")

    # -- check, attributes ------------------------------------------------------------

    def handle_check(self) -> None:
        volume = self.client().get_volume(self.resource_id)
        expected = ["available", "in-use"]
        if volume.status not in expected:
            raise ResourceFailure(f"'status': expected '{expected}', got '{volume.status}'")

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        volume = self.client().get_volume(self.resource_id)
        return volume.to_dict(original_names=True, headers=False, computed=False)

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        """Heat's Volume reading: size, name, description, metadata (without Cinder's
        ``readonly`` key, which is the ``read_only`` property) and the volume type."""
        metadata = dict(resource_data.get(self.METADATA) or {})
        result: dict[str, Any] = {}
        if "readonly" in metadata:
            result[self.READ_ONLY] = str(metadata.pop("readonly")).lower() in ("true", "1")
        result.update({self.SIZE: resource_data.get(self.SIZE), self.DESCRIPTION: resource_data.get(self.DESCRIPTION), self.METADATA: metadata})
        if resource_properties.get(self.NAME) is not None:
            result[self.NAME] = resource_data.get(self.NAME)
        given_type = resource_properties.get(self.VOLUME_TYPE)
        live_type = resource_data.get(self.VOLUME_TYPE)
        if given_type is not None and live_type is not None:
            result[self.VOLUME_TYPE] = given_type if self._same_volume_type(given_type, live_type) else live_type
        return result

    def _same_volume_type(self, given: str, live: str) -> bool:
        if given == live:
            return True
        try:
            return self.client_plugin().get_volume_type_id(given) == self.client_plugin().get_volume_type_id(live)
        except Exception:  # noqa: BLE001 - a type gone since is not the live one
            return False

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        volume = self.client().get_volume(self.resource_id)
        value = getattr(volume, self._SDK_FIELDS.get(name, name))
        if name == self.METADATA_ATTR:
            return json.dumps(value or {})
        if name in (self.METADATA_VALUES_ATTR, self.ATTACHMENTS_LIST, self.DISPLAY_NAME_ATTR, self.DISPLAY_DESCRIPTION_ATTR, self.MULTI_ATTACH_ATTR):
            return value
        return str(value)

    # -- stack snapshots (Cinder backups, as Heat) -----------------------------------

    def handle_snapshot(self) -> str:
        backup = self.client().create_backup(volume_id=self.resource_id, force=True)
        self.data_set("backup_id", backup.id)
        return str(backup.id)

    def check_snapshot_complete(self, backup_id: Any) -> bool:
        return self._backup_done(str(backup_id), None)

    def _backup_done(self, backup_id: str, failure: str | None) -> bool:
        backup = self.client().get_backup(backup_id)
        if backup.status == "creating":
            return False
        if backup.status == "available":
            return True
        if failure is None:
            raise ResourceFailure(backup.fail_reason or f"Backup {backup_id} went to status {backup.status}")
        raise ResourceFailure(f"{failure} - Unknown status {backup.status} due to \"Unknown\"")

    def handle_delete_snapshot(self, snapshot: Mapping[str, Any]) -> str | None:
        backup_id = (snapshot.get("resource_data") or {}).get("backup_id")
        if not backup_id:
            return None
        try:
            self.client().delete_backup(backup_id, ignore_missing=False)
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
            return None
        return str(backup_id)

    def check_delete_snapshot_complete(self, backup_id: Any) -> bool:
        if not backup_id:
            return True
        try:
            self.client().get_backup(backup_id)
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
            return True
        return False

    def handle_restore(self, definition: Any, restore_data: Mapping[str, Any]) -> Any:
        """Restoring a stack snapshot: the volume comes back from its backup (the size
        kept: a volume grown since comes back at the snapshot's size)."""
        backup_id = (restore_data.get("resource_data") or {}).get("backup_id")
        if not backup_id:
            return definition
        ignored = (self.IMAGE_REF, self.IMAGE, self.SOURCE_VOLID, self.SNAPSHOT_ID)
        values = {key: value for key, value in definition.properties_data.items() if key not in ignored and value is not None}
        values[self.BACKUP_ID] = backup_id
        return dataclasses.replace(definition, properties_data=values)


def _attached_to(volume: Any, server_id: str) -> bool:
    return any(attachment.get("server_id") == server_id for attachment in volume.attachments or [])


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Cinder::Volume": CinderVolume}
