"""Test::Recorded: a resource whose physical side effect is a file, for crash tests.

The file is created before the physical id is recorded (as a real cloud call would),
named by ``physical_resource_name()`` so a delete can find it even when the id was
never recorded. STOKER_TEST_SIDE_EFFECTS names the directory; STOKER_TEST_KILL_IN_HANDLER
names a resource whose create kills the process between making the file and recording
its id.
"""

import os
import signal
from pathlib import Path

from stoker.sdk import attributes, properties, resource


def _directory() -> Path:
    return Path(os.environ["STOKER_TEST_SIDE_EFFECTS"])


class Recorded(resource.Resource):
    """A file that stands for a physical resource."""

    properties_schema = {
        "value": properties.Schema(properties.Schema.STRING, "Written into the file.", default=""),
        "delay_s": properties.Schema(properties.Schema.NUMBER, "Seconds before the resource is ready.", default=0.05),
    }
    attributes_schema = {"value": attributes.Schema("What the file holds.")}

    def _path(self, name=None):
        return _directory() / (name or self.resource_id or self.physical_resource_name())

    def handle_create(self):
        name = self.physical_resource_name()
        self._path(name).write_text(self.properties["value"])
        if os.environ.get("STOKER_TEST_KILL_IN_HANDLER") == self.name:
            os.kill(os.getpid(), signal.SIGKILL)
        self.resource_id_set(name)
        return {"name": name, "ready_at": self._hooks.now() + self.properties["delay_s"]}

    def find_created(self):
        """The file an interrupted create made before its id was recorded."""
        name = self.physical_resource_name()
        return name if self._path(name).exists() else None

    def check_create_complete(self, token):
        return self._hooks.now() >= token["ready_at"] and self._path(token["name"]).exists()

    def handle_delete(self):
        path = self._path()
        if path.exists():
            path.unlink()
        return {"name": path.name}

    def check_delete_complete(self, token):
        return not self._path(token["name"]).exists()

    def _resolve_attribute(self, name):
        path = self._path()
        return path.read_text() if path.exists() else None


def resource_mapping():
    return {"Test::Recorded": Recorded}
