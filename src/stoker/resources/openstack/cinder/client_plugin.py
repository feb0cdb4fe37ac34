"""The ``cinder`` client plugin (openstacksdk's block-storage proxy) and the custom
constraints Heat registers for Cinder. Block storage has microversions; openstacksdk
picks one per call (seed 004)."""

from __future__ import annotations

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin
from stoker.resources.openstack.constraints import LookupConstraint

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


class _CinderConstraint(LookupConstraint):
    client_plugin_name = "cinder"


class VolumeConstraint(_CinderConstraint):
    name, entity = "cinder.volume", "volume"


class VolumeTypeConstraint(_CinderConstraint):
    name, entity = "cinder.vtype", "type"


class SnapshotConstraint(_CinderConstraint):
    name, entity = "cinder.snapshot", "snapshot"


class BackupConstraint(_CinderConstraint):
    name, entity = "cinder.backup", "backup"


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"cinder": CinderClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {c.name: c for c in (VolumeConstraint, VolumeTypeConstraint, SnapshotConstraint, BackupConstraint)}
