"""The ``cinder`` client plugin (openstacksdk's block-storage proxy) and the custom
constraints Heat registers for Cinder. Block storage has microversions; openstacksdk
picks one per call (seed 004)."""

from __future__ import annotations

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin
from stoker.resources.openstack.constraints import LookupConstraint
from stoker.sdk.exceptions import ResourceFailure

__all__ = ["CinderClientPlugin", "client_mapping", "constraint_mapping"]


class CinderClientPlugin(OpenStackClientPlugin):
    """Cinder through openstacksdk's ``connection.block_storage``."""

    name = "cinder"
    service_type = "block-storage"
    proxy_name = "block_storage"
    microversioned = True

    def get_volume(self, volume: str) -> object:
        return self.find("volume", volume)

    def get_volume_type(self, volume_type: str) -> object:
        return self.find("type", volume_type)

    def get_volume_type_id(self, volume_type: str) -> str:
        return self.find_id("type", volume_type)

    def get_qos_specs(self, qos_specs: str) -> str:
        """The id of the QoS specs named (or with the id) ``qos_specs``."""
        return self.find_id("qos_spec", qos_specs)

    def check_attach_volume_complete(self, volume_id: str) -> bool:
        """Heat's rule: attaching while 'available', 'attaching' or 'reserved'; done at
        'in-use'; any other status is a failure."""
        volume = self.client().get_volume(volume_id)
        if volume.status in ("available", "attaching", "reserved"):
            return False
        if volume.status != "in-use":
            raise ResourceFailure(f"Volume attachment failed - Unknown status {volume.status} due to \"Unknown\"")
        return True

    def check_detach_volume_complete(self, volume_id: str, server_id: str | None = None) -> bool:
        """Heat's rule: done when the volume is gone, no longer attached to ``server_id``,
        or 'available' (or 'deleting'); waiting while 'in-use', 'detaching' or 'reserved'."""
        try:
            volume = self.client().get_volume(volume_id)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.ignore_not_found(error)
            return True
        servers = [attachment.get("server_id") for attachment in volume.attachments or []]
        if server_id and server_id not in servers:
            return True
        if volume.status in ("in-use", "detaching", "reserved"):
            return False
        if volume.status not in ("available", "deleting"):
            raise ResourceFailure(f"Volume detachment failed - Unknown status {volume.status} due to \"Unknown\"")
        return True


class _CinderConstraint(LookupConstraint):
    client_plugin_name = "cinder"


class VolumeConstraint(_CinderConstraint):
    name, entity, listing = "cinder.volume", "volume", "volumes"


class VolumeTypeConstraint(_CinderConstraint):
    name, entity, listing = "cinder.vtype", "type", "types"


class SnapshotConstraint(_CinderConstraint):
    name, entity, listing = "cinder.snapshot", "snapshot", "snapshots"


class BackupConstraint(_CinderConstraint):
    name, entity, listing = "cinder.backup", "backup", "backups"


class QoSSpecsConstraint(_CinderConstraint):
    name, entity = "cinder.qos_specs", "qos_spec"


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"cinder": CinderClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {
        c.name: c
        for c in (
            VolumeConstraint,
            VolumeTypeConstraint,
            SnapshotConstraint,
            BackupConstraint,
            QoSSpecsConstraint,
        )
    }
