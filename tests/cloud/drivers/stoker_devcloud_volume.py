"""A Cinder volume driver for stoker's test cloud: the fake driver, with each volume (and
snapshot) a sparse file that cinder-backup can back up and restore.

``cinder.tests.fake_driver`` keeps no data and hands out an iSCSI connection to nowhere:
the backup service, which attaches a volume itself to read or write it, would fail every
backup. Here a volume is ``<state_path>/volumes/<volume name>`` and its connection is
os-brick's 'local' kind (the path is opened as it is; no root helper, no target). Nova's
fake virt driver ignores the connection it is given, so attachments behave as before.

Runs in the cloud's own venv, never stoker's (cinder.conf names it as the 'fake' back
end's ``volume_driver``); must not touch anything outside its directory.
"""

import os

from cinder.tests import fake_driver
from oslo_config import cfg

GIB = 1024**3
# Bytes copied at a time when a volume is cloned or snapshotted.
COPY_CHUNK_BYTES = 4 * 1024 * 1024


class FileVolumeDriver(fake_driver.FakeLoggingVolumeDriver):
    """The fake driver, keeping each volume's bytes in a sparse file."""

    @staticmethod
    def path(name):
        directory = os.path.join(cfg.CONF.state_path, "volumes")
        os.makedirs(directory, exist_ok=True)
        return os.path.join(directory, name)

    def allocate(self, name, size_gib):
        """Make the file at least ``size_gib``; a hole costs no disk."""
        path = self.path(name)
        with open(path, "ab"):
            pass
        if os.path.getsize(path) < size_gib * GIB:
            os.truncate(path, size_gib * GIB)

    def copy(self, source, target, size_gib):
        """Copy the data of ``source`` into a new ``target``, keeping holes as holes."""
        with open(self.path(source), "rb") as reader, open(self.path(target), "wb") as writer:
            offset = 0
            while chunk := reader.read(COPY_CHUNK_BYTES):
                if chunk.count(0) < len(chunk):
                    writer.seek(offset)
                    writer.write(chunk)
                offset += len(chunk)
        self.allocate(target, size_gib)

    def remove(self, name):
        try:
            os.remove(self.path(name))
        except FileNotFoundError:
            pass

    def create_volume(self, volume):
        update = super().create_volume(volume)
        self.allocate(volume["name"], volume["size"])
        return update

    def delete_volume(self, volume):
        self.remove(volume["name"])

    def create_cloned_volume(self, volume, src_vref):
        self.copy(src_vref["name"], volume["name"], volume["size"])

    def create_snapshot(self, snapshot):
        self.copy(snapshot.volume_name, snapshot.name, snapshot.volume_size)

    def delete_snapshot(self, snapshot):
        self.remove(snapshot.name)

    def create_volume_from_snapshot(self, volume, snapshot):
        self.copy(snapshot.name, volume["name"], volume["size"])

    def extend_volume(self, volume, new_size):
        super().extend_volume(volume, new_size)
        self.allocate(volume["name"], new_size)

    def validate_connector(self, connector):
        # LVM's asks for an iSCSI initiator; a local path needs nothing of the host.
        pass

    def initialize_connection(self, volume, connector):
        connection = super().initialize_connection(volume, connector)
        data = dict(connection.get("data") or {}, device_path=self.path(volume["name"]))
        return {"driver_volume_type": "local", "data": data}

    def terminate_connection(self, volume, connector, **kwargs):
        # A restore opens the device "wb", which truncates a file (a disk keeps its size):
        # the volume gets its size back once the backup service lets go of it.
        if os.path.exists(self.path(volume["name"])):
            self.allocate(volume["name"], volume["size"])

    def secure_file_operations_enabled(self):
        # The files belong to the services' own user: nothing to chown through sudo.
        return True
