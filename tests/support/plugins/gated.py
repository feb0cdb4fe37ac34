"""Test::Gated: a resource whose create holds its handler thread until a gate opens, as
a call to a cloud that does not answer holds it.

STOKER_TEST_GATE names a file; a create returns once that file exists. Tests use it to
keep a stack's handler calls running for as long as they need (a busy tree), then open
the gate (write the file) to let them end.
"""

import os
import time
from pathlib import Path

from stoker.sdk import resource


class Gated(resource.Resource):
    """Created once the gate file (STOKER_TEST_GATE) exists; its create waits for it."""

    def handle_create(self):
        gate = Path(os.environ["STOKER_TEST_GATE"])
        while not gate.exists():
            time.sleep(0.05)
        self.resource_id_set(self.physical_resource_name())


def resource_mapping():
    return {"Test::Gated": Gated}
