"""Crash safety with real resources: the ``stoker`` command is SIGKILLed while it creates a
server and while it deletes one; the next command finishes what was interrupted, the
server is the stack's (its id was recorded before the engine waited on it), a retry
completes, and the cloud is left with nothing the stack does not know about."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from stoker.service import Service
from stoker.settings import Settings

STOKER = str(Path(sys.executable).with_name("stoker"))
WAIT_S = 300


def _template(suffix: str) -> dict:
    return {
        "heat_template_version": "2021-04-16",
        "parameters": {"flavor": {"type": "string"}, "image": {"type": "string"}},
        "resources": {
            "net": {"type": "OS::Neutron::Net", "properties": {"name": f"crash-{suffix}"}},
            "subnet": {"type": "OS::Neutron::Subnet", "properties": {"network": {"get_resource": "net"}, "cidr": "10.31.0.0/24"}},
            "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "net"}}},
            "server": {
                "type": "OS::Nova::Server",
                "properties": {
                    "flavor": {"get_param": "flavor"},
                    "image": {"get_param": "image"},
                    "networks": [{"port": {"get_resource": "port"}}],
                },
            },
        },
    }


class Crashes:
    """The stoker command on one store, as a user runs it, and the stack's rows."""

    def __init__(self, cloud, tmp_path: Path, suffix: str):
        self.cloud = cloud
        self.name = f"crash-{suffix}"
        self.url = f"sqlite:///{tmp_path / 'stoker.sqlite'}"
        self.template = tmp_path / "crash.yaml"
        self.template.write_text(yaml.safe_dump(_template(suffix)))
        self.environment = {key: value for key, value in os.environ.items() if not key.startswith(("OS_", "STOKER_"))}
        self.environment.update(OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml), STOKER_DATABASE_URL=self.url)
        self.arguments = ["--os-cloud", cloud.cloud("demo")]
        self.parameters = ["--parameter", "flavor=m1.tiny", "--parameter", f"image={cloud.image_name}"]
        self.nova = cloud.connect("demo").compute

    def start(self, *command: str) -> subprocess.Popen:
        return subprocess.Popen(
            [STOKER, *self.arguments, "stack", *command],
            env=self.environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def run(self, *command: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [STOKER, *self.arguments, "stack", *command],
            env=self.environment, capture_output=True, text=True, timeout=WAIT_S, check=False,
        )  # fmt: skip

    def server_row(self):
        service = Service(Settings(database_url=self.url))
        try:
            rows = [row for row in service.list_resources(self.name) if row.name == "server"]
            return rows[0] if rows else None
        except Exception:  # noqa: BLE001 - the stack row may not be written yet
            return None
        finally:
            service.close()

    def kill_when(self, process: subprocess.Popen, ready) -> None:
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            row = self.server_row()
            if row is not None and ready(row):
                process.send_signal(signal.SIGKILL)
                process.wait()
                return
            assert process.poll() is None, f"stoker ended before the crash point: {process.communicate()}"
            time.sleep(0.05)
        process.kill()
        raise AssertionError("the crash point was never reached")

    def servers(self) -> list:
        return [server for server in self.nova.servers() if server.name.startswith(f"{self.name}-server-")]


def test_crash_during_server_create_then_retry_leaves_nothing_orphaned(openstack_cloud, tmp_path):
    crashes = Crashes(openstack_cloud, tmp_path, secrets.token_hex(3))
    creating = crashes.start("create", crashes.name, "-t", str(crashes.template), *crashes.parameters, "--wait")

    # The engine dies while the server is building: its id is already recorded.
    crashes.kill_when(creating, lambda row: row.action == "CREATE" and row.status == "IN_PROGRESS" and row.physical_resource_id)
    recorded = crashes.server_row().physical_resource_id
    assert [server.id for server in crashes.servers()] == [recorded]

    # A read reads at once, and says the create waits to be finished.
    shown = crashes.run("show", crashes.name, "-f", "json")
    assert shown.returncode == 0, shown.stderr
    assert "NOTE: actions interrupted by an engine restart" in shown.stderr
    assert json.loads(shown.stdout)["stack_status"] == "CREATE_IN_PROGRESS"
    # The next command that changes stacks resumes the interrupted create (it polls on
    # from the saved token), then does its own work: an update with the same template,
    # which also completes a create that failed on resume.
    retried = crashes.run("update", crashes.name, "-t", str(crashes.template), *crashes.parameters, "--wait")
    assert retried.returncode == 0, retried.stderr
    assert "Resuming actions interrupted by an engine restart" in retried.stderr
    row = crashes.server_row()
    assert row.status == "COMPLETE"
    assert [server.id for server in crashes.servers()] == [row.physical_resource_id]
    assert crashes.nova.get_server(row.physical_resource_id).status == "ACTIVE"

    deleted = crashes.run("delete", crashes.name, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    assert crashes.servers() == []


def test_crash_during_server_delete_then_retry_deletes_everything(openstack_cloud, tmp_path):
    crashes = Crashes(openstack_cloud, tmp_path, secrets.token_hex(3))
    created = crashes.run("create", crashes.name, "-t", str(crashes.template), *crashes.parameters, "--wait")
    assert created.returncode == 0, created.stderr
    server_id = crashes.server_row().physical_resource_id
    network = openstack_cloud.connect("demo").network
    net = network.find_network(crashes.name)
    assert net is not None

    deleting = crashes.start("delete", crashes.name, "--yes", "--wait")
    crashes.kill_when(deleting, lambda row: row.action == "DELETE" and row.status == "IN_PROGRESS")

    # A read shows the delete interrupted; the delete run again finishes it (the
    # interrupted one first: the stack it asks for is then already gone, which is done).
    listed = crashes.run("list")
    assert listed.returncode == 0, listed.stderr
    assert "DELETE_IN_PROGRESS" in listed.stdout and "NOTE: actions interrupted" in listed.stderr
    again = crashes.run("delete", crashes.name, "--yes", "--wait")
    assert again.returncode == 0, again.stderr
    assert f"Stack {crashes.name} DELETE_COMPLETE" in again.stderr
    assert crashes.nova.find_server(server_id) is None
    assert crashes.servers() == []
    assert network.find_network(net.id) is None
