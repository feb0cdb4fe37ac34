"""Octavia through the ``stoker`` command, as a user runs it: the resource types listed and
shown, a public template of openstack/heat-templates that uses Octavia created and deleted
(and the other one refused as Heat refuses it), and crash safety: the command SIGKILLed
while a load balancer is PENDING_CREATE, then the next command finishes the create with the
same load balancer, and nothing is orphaned in Octavia.

Octavia's no-op drivers are named in test_octavia_types.py and tests/cloud/README.md.
"""

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
PUBLIC = Path(__file__).with_name("heat_templates") / "hot"
OCTAVIA_TYPES = [
    "OS::Octavia::AvailabilityZone", "OS::Octavia::AvailabilityZoneProfile", "OS::Octavia::Flavor", "OS::Octavia::FlavorProfile", "OS::Octavia::HealthMonitor", "OS::Octavia::L7Policy",
    "OS::Octavia::L7Rule", "OS::Octavia::Listener", "OS::Octavia::LoadBalancer", "OS::Octavia::Pool",
    "OS::Octavia::PoolMember", "OS::Octavia::Quota",
]  # fmt: skip


class Command:
    """The stoker command on one store, as admin of the test cloud (clouds.yaml)."""

    def __init__(self, cloud, tmp_path: Path):
        self.url = f"sqlite:///{tmp_path / 'stoker.sqlite'}"
        self.environment = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("OS_", "STOKER_"))
        }
        self.environment.update(STOKER_DATABASE_URL=self.url)
        self.arguments: list[str] = []
        if cloud is not None:
            self.environment.update(OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml))
            self.arguments = ["--os-cloud", cloud.cloud("admin")]

    def start(self, *command: str) -> subprocess.Popen:
        return subprocess.Popen(
            [STOKER, *self.arguments, *command],
            env=self.environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def run(self, *command: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [STOKER, *self.arguments, *command],
            env=self.environment, capture_output=True, text=True, timeout=WAIT_S, check=False, cwd=cwd,
        )  # fmt: skip
        log = Path(self.url.removeprefix("sqlite:///")).with_name("stoker.log")
        if result.returncode != 0 and log.exists():
            # A plugin's unexpected error: its traceback is in the engine's log (engine_log.py).
            result.stderr += f"\n--- {log} ---\n{log.read_text()}"
        return result

    def row(self, stack: str, resource: str):
        service = Service(Settings(database_url=self.url))
        try:
            rows = [row for row in service.list_resources(stack) if row.name == resource]
            return rows[0] if rows else None
        except Exception:  # noqa: BLE001 - the stack row may not be written yet
            return None
        finally:
            service.close()


def test_resource_type_list_and_show_give_the_octavia_types(tmp_path):
    command = Command(None, tmp_path)

    listed = command.run("resource", "type", "list", "-f", "json")
    assert listed.returncode == 0, listed.stderr
    names = {
        entry["Resource Type"] if isinstance(entry, dict) else entry
        for entry in json.loads(listed.stdout)
    }
    assert set(OCTAVIA_TYPES) <= names

    shown = command.run("resource", "type", "show", "OS::Octavia::LoadBalancer", "-f", "json")
    assert shown.returncode == 0, shown.stderr
    schema = json.loads(shown.stdout)
    vip_subnet = schema["properties"]["vip_subnet"]
    assert (vip_subnet["required"], vip_subnet["update_allowed"]) == (True, False)
    assert vip_subnet["constraints"] == [
        {"custom_constraint": "neutron.subnet", "description": None}
    ]
    assert schema["properties"]["name"]["update_allowed"] is True
    assert set(schema["attributes"]) >= {
        "vip_address",
        "vip_port_id",
        "vip_subnet_id",
        "pools",
        "flavor_id",
        "show",
    }
    member = json.loads(
        command.run("resource", "type", "show", "OS::Octavia::PoolMember", "-f", "json").stdout
    )
    assert (
        member["properties"]["weight"]["default"],
        member["properties"]["weight"]["update_allowed"],
    ) == (1, True)


def _network_template(suffix: str, cidr: str, with_pool: bool) -> dict:
    resources: dict = {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"lbcli-{suffix}"}},
        "subnet": {
            "type": "OS::Neutron::Subnet",
            "properties": {"network": {"get_resource": "net"}, "cidr": cidr},
        },
        "lb": {
            "type": "OS::Octavia::LoadBalancer",
            "properties": {"vip_subnet": {"get_resource": "subnet"}},
        },
    }
    if with_pool:
        # The servers' own network: the members name its subnet, not the VIP's (see
        # test_octavia_types.py's member on the VIP subnet, a gap of Octavia's no-op driver).
        resources["back"] = {"type": "OS::Neutron::Net", "properties": {"name": f"lbback-{suffix}"}}
        resources["back_subnet"] = {
            "type": "OS::Neutron::Subnet",
            "properties": {"network": {"get_resource": "back"}, "cidr": "10.45.0.0/24"},
        }
        resources["pool"] = {
            "type": "OS::Octavia::Pool",
            "properties": {
                "loadbalancer": {"get_resource": "lb"},
                "lb_algorithm": "ROUND_ROBIN",
                "protocol": "HTTP",
            },
        }
    return {"heat_template_version": "2021-04-16", "resources": resources}


def test_crash_during_load_balancer_create_then_retry_leaves_nothing_orphaned(
    openstack_cloud, octavia_service, tmp_path
):
    suffix = secrets.token_hex(3)
    command = Command(openstack_cloud, tmp_path)
    lbaas = openstack_cloud.connect("admin").load_balancer
    name = f"lbcrash-{suffix}"
    template = tmp_path / "lb.yaml"
    template.write_text(yaml.safe_dump(_network_template(suffix, "10.43.0.0/24", with_pool=False)))

    creating = command.start("stack", "create", name, "-t", str(template), "--wait")
    deadline = time.monotonic() + WAIT_S
    while True:
        row = command.row(name, "lb")
        if (
            row is not None
            and row.action == "CREATE"
            and row.status == "IN_PROGRESS"
            and row.physical_resource_id
        ):
            break
        assert creating.poll() is None, (
            f"stoker ended before the crash point: {creating.communicate()}"
        )
        assert time.monotonic() < deadline, "the crash point was never reached"
        time.sleep(0.05)
    # The engine dies while the load balancer is PENDING_CREATE: its id is already recorded.
    creating.send_signal(signal.SIGKILL)
    creating.wait()
    recorded = command.row(name, "lb").physical_resource_id
    mine = [lb for lb in lbaas.load_balancers() if lb.name.startswith(f"{name}-lb-")]
    assert [lb.id for lb in mine] == [recorded]

    # The next command resumes the create: polled on from its saved token, the same load
    # balancer completes; killed before the token was saved (the id is written by the
    # first poll), the create is FAILED with the id known and the update replaces it, as
    # Heat replaces a failed resource, deleting the first. Either way one load balancer.
    retried = command.run("stack", "update", name, "-t", str(template), "--wait")
    assert retried.returncode == 0, retried.stderr
    assert "Resuming actions interrupted by an engine restart" in retried.stderr
    row = command.row(name, "lb")
    assert row.status == "COMPLETE", retried.stderr
    if row.physical_resource_id != recorded:
        assert "Replacing lb: resource is CREATE_FAILED" in retried.stderr
        assert lbaas.find_load_balancer(recorded) is None
    recorded = row.physical_resource_id
    assert lbaas.get_load_balancer(recorded).provisioning_status == "ACTIVE"
    mine = [lb.id for lb in lbaas.load_balancers() if lb.name.startswith(f"{name}-lb-")]
    assert mine == [recorded]

    deleted = command.run("stack", "delete", name, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    assert lbaas.find_load_balancer(recorded) is None
    assert [lb for lb in lbaas.load_balancers() if lb.name.startswith(f"{name}-")] == []


def test_public_templates_using_octavia(openstack_cloud, octavia_service, tmp_path):
    """hot/lb_server.yaml (a server and its pool member) created and deleted, its
    parameters filled as a user would: a keypair, flavor and image of the cloud, a pool
    made by another stack, the servers' network and subnet (the load balancer's VIP is on
    another network). hot/octavia/servers_with_octavia.yaml gives its monitor
    ``max_retries_down``, a property Heat's OS::Octavia::HealthMonitor does not have:
    refused, as Heat refuses it, at that property."""
    suffix = secrets.token_hex(3)
    command = Command(openstack_cloud, tmp_path)
    connection = openstack_cloud.connect("admin")
    base = f"lbbase-{suffix}"
    base_template = tmp_path / "base.yaml"
    base_template.write_text(
        yaml.safe_dump(_network_template(suffix, "10.44.0.0/24", with_pool=True))
    )
    keypair = connection.compute.create_keypair(name=f"lbkey-{suffix}")
    try:
        made = command.run("stack", "create", base, "-t", str(base_template), "--wait")
        assert made.returncode == 0, made.stderr
        pool_id = command.row(base, "pool").physical_resource_id
        network, subnet = (
            command.row(base, "back").physical_resource_id,
            command.row(base, "back_subnet").physical_resource_id,
        )

        name = f"lbserver-{suffix}"
        created = command.run(
            "stack", "create", name, "-t", "lb_server.yaml", "--wait",
            "--parameter", f"image={openstack_cloud.image_name}", "--parameter", f"key_name={keypair.name}",
            "--parameter", "flavor=m1.tiny", "--parameter", f"pool_id={pool_id}",
            "--parameter", "user_data=", "--parameter", 'metadata={"role": "web"}',
            "--parameter", f"network={network}", "--parameter", f"subnet={subnet}",
            cwd=PUBLIC,
        )  # fmt: skip
        assert created.returncode == 0, created.stderr
        member_id = command.row(name, "member").physical_resource_id
        server_id = command.row(name, "server").physical_resource_id
        address = connection.compute.get_server(server_id).addresses
        member = connection.load_balancer.get_member(member_id, pool_id)
        assert member.address in [
            entry["addr"] for entries in address.values() for entry in entries
        ]
        assert (member.protocol_port, member.provisioning_status) == (80, "ACTIVE")
        shown = command.run("stack", "output", "show", name, "lb_member", "-f", "json")
        assert shown.returncode == 0, shown.stderr
        assert member_id in shown.stdout

        deleted = command.run("stack", "delete", name, "--yes", "--wait")
        assert deleted.returncode == 0, deleted.stderr
        assert connection.load_balancer.find_member(member_id, pool_id) is None
        assert connection.compute.find_server(server_id) is None

        refused = command.run("stack", "create", f"refused-{suffix}", "-t", "servers_with_octavia.yaml",
                              "--parameter", f"subnet={subnet}", "--parameter", f"private_network={network}",
                              "--parameter", f"image={openstack_cloud.image_name}", "--parameter", "flavor=m1.tiny",
                              "--parameter", "server1_name=web1", "--parameter", "server2_name=web2",
                              cwd=PUBLIC / "octavia")  # fmt: skip
        assert refused.returncode != 0
        assert (
            "resources.monitor.properties" in refused.stderr
            and "max_retries_down" in refused.stderr
        )
    finally:
        # Whatever failed, the load balancer goes with all it holds (cascade); the stacks
        # then find it gone, which their deletes tolerate.
        lb = command.row(base, "lb")
        lbaas = connection.load_balancer
        if lb is not None and lbaas.find_load_balancer(lb.physical_resource_id) is not None:
            lbaas.delete_load_balancer(lb.physical_resource_id, cascade=True)
            lbaas.wait_for_delete(lbaas.get_load_balancer(lb.physical_resource_id), wait=120)
        command.run("stack", "delete", f"lbserver-{suffix}", "--yes", "--wait")
        command.run("stack", "delete", base, "--yes", "--wait")
        connection.compute.delete_keypair(keypair)
