"""The types whose services the test cloud does not run (Magnum, Trove, Blazar, Zun), through the
``stoker`` command against the cloud: a stack create is refused with the service named as
missing from the catalog, and the resource and property where it was needed, as a message,
not a traceback; nothing is left behind in the store as a half-made stack that cannot be
deleted. Their validation without a cloud is tests/acceptance/test_cli_absent_service_types.py.

Issue 29: these types are registered with Heat's schema and validation, untested against a
real service (Magnum's clusters need Heat and images, Trove's instances guest VMs,
Blazar its manager and reservable Nova hosts, Zun Docker).
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

STOKER = str(Path(sys.executable).with_name("stoker"))
WAIT_S = 300
HOT = "2021-04-16"
TRACEBACK = "Traceback (most recent call last)"


class Commands:
    """The stoker command on one store, as the project's member."""

    def __init__(self, cloud, tmp_path: Path):
        self.directory = tmp_path
        self.environment = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("OS_", "STOKER_"))
        }
        self.environment.update(
            OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml),
            STOKER_DATABASE_URL=f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        )
        self.cloud = ["--os-cloud", cloud.cloud("demo")]

    def create(self, name: str, resources: dict) -> subprocess.CompletedProcess:
        template = self.directory / f"{name}.yaml"
        template.write_text(yaml.safe_dump({"heat_template_version": HOT, "resources": resources}))
        return self.run("create", name, "-t", str(template), "--wait")

    def run(self, *command: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [STOKER, *self.cloud, "stack", *command],
            env=self.environment,
            capture_output=True,
            text=True,
            timeout=WAIT_S,
            check=False,
        )


@pytest.fixture
def commands(openstack_cloud, tmp_path):
    return Commands(openstack_cloud, tmp_path)


@pytest.fixture
def network(openstack_cloud):
    """A network of the demo project (what a cluster template names as its external network)."""
    connection = openstack_cloud.connect("demo")
    made = connection.network.create_network(name=f"stoker-net-{secrets.token_hex(3)}")
    yield made
    connection.network.delete_network(made, ignore_missing=True)


def refusal(answer: subprocess.CompletedProcess) -> str:
    assert answer.returncode != 0, answer.stdout
    said = answer.stdout + answer.stderr
    assert TRACEBACK not in said, said
    return said


MAGNUM = "The Magnum service (service type container-infrastructure-management) is not in this cloud's catalog"
TROVE = "The Trove service (service type database) is not in this cloud's catalog"


def test_a_cluster_is_refused_at_validation_naming_magnum_and_its_property(commands):
    said = refusal(
        commands.create(
            f"mc-{secrets.token_hex(3)}",
            {"cluster": {"type": "OS::Magnum::Cluster", "properties": {"cluster_template": "k8s"}}},
        )
    )
    assert "resources.cluster.properties.cluster_template" in said, said
    assert MAGNUM in said, said
    assert "deploy Magnum in this cloud" in said, said


def test_a_cluster_template_fails_its_create_naming_magnum_and_the_resource(
    commands, network, openstack_cloud
):
    name = f"mt-{secrets.token_hex(3)}"
    said = refusal(
        commands.create(
            name,
            {
                "template": {
                    "type": "OS::Magnum::ClusterTemplate",
                    "properties": {
                        "image": "stoker-tiny",
                        "external_network": network.name,
                        "coe": "kubernetes",
                        "flavor": "m1.small",
                    },
                }
            },
        )
    )
    # Glance, Nova and Neutron answered the constraints; Magnum is what is missing.
    assert "CREATE_FAILED" in said and "template" in said, said
    assert MAGNUM in said, said
    deleted = commands.run("delete", name, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr


def test_a_trove_instance_is_refused_naming_trove_and_its_property(commands):
    said = refusal(
        commands.create(
            f"tr-{secrets.token_hex(3)}",
            {
                "db": {
                    "type": "OS::Trove::Instance",
                    "properties": {"flavor": "m1.small", "size": 1},
                }
            },
        )
    )
    assert "resources.db.properties.flavor" in said, said
    assert TROVE in said, said


BLAZAR = "The Blazar service (service type reservation) is not in this cloud's catalog"


def test_a_blazar_host_fails_its_create_naming_blazar_and_the_resource(commands):
    name = f"bh-{secrets.token_hex(3)}"
    said = refusal(
        commands.create(
            name, {"host": {"type": "OS::Blazar::Host", "properties": {"name": "compute-1"}}}
        )
    )
    assert "CREATE_FAILED" in said and "host" in said, said
    assert BLAZAR in said, said
    deleted = commands.run("delete", name, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr


def test_a_blazar_lease_is_refused_at_validation_naming_blazar(commands):
    said = refusal(
        commands.create(
            f"bl-{secrets.token_hex(3)}",
            {
                "lease": {
                    "type": "OS::Blazar::Lease",
                    "properties": {
                        "name": "lease",
                        "start_date": "2030-01-01 10:00",
                        "end_date": "2030-01-02 10:00",
                        "reservations": [{"resource_type": "physical:host", "min": 1, "max": 1}],
                    },
                }
            },
        )
    )
    assert "resources.lease" in said, said
    assert BLAZAR in said, said


def test_a_trove_cluster_is_refused_naming_trove_and_its_property(commands):
    said = refusal(
        commands.create(
            f"tc-{secrets.token_hex(3)}",
            {
                "cluster": {
                    "type": "OS::Trove::Cluster",
                    "properties": {
                        "datastore_type": "mongodb",
                        "datastore_version": "4.0",
                        "instances": [{"flavor": "m1.small", "volume_size": 1}],
                    },
                }
            },
        )
    )
    assert "resources.cluster.properties.instances[0].flavor" in said, said
    assert TROVE in said, said


ZUN = "The Zun service (service type application-container) is not in this cloud's catalog"


def test_a_zun_container_fails_its_create_naming_zun_and_the_resource(commands):
    name = f"zc-{secrets.token_hex(3)}"
    said = refusal(
        commands.create(
            name, {"box": {"type": "OS::Zun::Container", "properties": {"image": "cirros"}}}
        )
    )
    assert "CREATE_FAILED" in said and "box" in said, said
    assert ZUN in said, said
    deleted = commands.run("delete", name, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr
