"""nova-compute for stoker's test cloud, with a fake virt driver whose snapshots upload an image.

``nova.virt.fake``'s snapshot only moves the task state: the image Nova made for it stays
'queued' in Glance for ever, so a stack snapshot of a server (which, as in Heat, waits for
the image to go active) could never complete. ``SnapshottingFakeDriver`` uploads a small
raw disk instead, as libvirt uploads the disk it extracted.

Nova loads its virt driver only from the ``nova.virt`` package (``compute_driver`` is
imported as ``nova.virt.<compute_driver>``), so this module starts nova-compute itself,
after registering itself there: ``python -m stoker_devcloud_compute`` takes nova-compute's
arguments, with ``compute_driver = stoker_devcloud_compute.SnapshottingFakeDriver``.

Runs in the cloud's own venv, never stoker's; must not touch anything but the image.
"""

import io
import sys

# nova-compute's own entry point first: it monkey patches before the rest of Nova loads.
from nova.cmd import compute

# isort: split
from nova import exception
from nova.compute import task_states
from nova.image import glance
from nova.virt import fake

# Bytes of the disk a snapshot uploads (zeros, as the cloud's stoker-tiny image).
SNAPSHOT_BYTES = 64 * 1024


class SnapshottingFakeDriver(fake.FakeDriverWithoutFakeNodes):
    """The fake driver (restartable, one node), whose snapshots reach Glance."""

    def snapshot(self, context, instance, image_id, update_task_state):
        if instance.uuid not in self.instances:
            raise exception.InstanceNotRunning(instance_id=instance.uuid)
        # The same task states as libvirt, in the same order.
        update_task_state(task_state=task_states.IMAGE_PENDING_UPLOAD)
        update_task_state(
            task_state=task_states.IMAGE_UPLOADING,
            expected_state=task_states.IMAGE_PENDING_UPLOAD,
        )
        glance.API().update(
            context,
            image_id,
            {"disk_format": "raw", "container_format": "bare"},
            io.BytesIO(bytes(SNAPSHOT_BYTES)),
            purge_props=False,
        )


sys.modules[f"nova.virt.{__spec__.name}"] = sys.modules[__name__]

if __name__ == "__main__":
    sys.exit(compute.main())
