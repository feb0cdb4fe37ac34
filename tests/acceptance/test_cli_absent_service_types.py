"""The types of services the test cloud cannot run (issue 29: Magnum's ClusterTemplate and
Cluster, Heat's HIDDEN BayModel, Trove's Instance and Cluster, Blazar's Host and Lease,
Zun's Container), through the ``stoker`` command with no
cloud: listed (BayModel not) with Heat's schemas, and ``template validate --strict``
passing good templates and refusing bad ones with Heat's messages at their places.
Their refusal by a cloud without the service is tests/cloud/test_absent_service_types.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

STOKER = str(Path(sys.executable).with_name("stoker"))
TYPES = {
    "OS::Magnum::ClusterTemplate",
    "OS::Magnum::Cluster",
    "OS::Trove::Instance",
    "OS::Trove::Cluster",
    "OS::Blazar::Host",
    "OS::Blazar::Lease",
    "OS::Zun::Container",
}


@pytest.fixture
def stoker(tmp_path):
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("OS_", "STOKER_"))
    }
    environment.update(STOKER_DATABASE_URL=f"sqlite:///{tmp_path / 'stoker.sqlite'}", COLUMNS="200")

    def run(*arguments: str) -> subprocess.CompletedProcess:
        answer = subprocess.run(
            [STOKER, *arguments], capture_output=True, text=True, env=environment,
            cwd=tmp_path, timeout=120, stdin=subprocess.DEVNULL, check=False,
        )  # fmt: skip
        assert "Traceback" not in answer.stdout + answer.stderr, answer.stderr
        return answer

    return run


def validate(stoker, tmp_path: Path, text: str) -> subprocess.CompletedProcess:
    path = tmp_path / "template.yaml"
    path.write_text(
        "heat_template_version: 2021-04-16\nresources:\n"
        + textwrap.indent(textwrap.dedent(text), "  ")
    )
    return stoker("template", "validate", "--strict", "-t", str(path))


def test_the_types_are_listed_with_heats_schemas(stoker):
    listed = stoker("resource", "type", "list", "-f", "json")
    assert listed.returncode == 0, listed.stderr
    names = {row["Resource Type"] for row in json.loads(listed.stdout)}
    assert names >= TYPES
    assert "OS::Magnum::BayModel" not in names  # HIDDEN, as in Heat

    template = json.loads(
        stoker("resource", "type", "show", "OS::Magnum::ClusterTemplate", "-f", "json").stdout
    )
    assert template["properties"]["public"]["update_allowed"] is True
    assert template["properties"]["coe"]["required"] is True
    assert {"allowed_values": ["kubernetes", "swarm", "mesos"], "description": None} in template[
        "properties"
    ]["coe"]["constraints"]
    cluster = json.loads(
        stoker("resource", "type", "show", "OS::Magnum::Cluster", "-f", "json").stdout
    )
    assert {"custom_constraint": "magnum.cluster_template", "description": None} in cluster[
        "properties"
    ]["cluster_template"]["constraints"]
    assert cluster["properties"]["create_timeout"]["default"] == 60
    assert "api_address" in cluster["attributes"]
    instance = json.loads(
        stoker("resource", "type", "show", "OS::Trove::Instance", "-f", "json").stdout
    )
    assert instance["properties"]["users"]["schema"]["*"]["schema"]["host"]["default"] == "%"
    assert set(instance["attributes"]) >= {"hostname", "href"}
    lease = json.loads(stoker("resource", "type", "show", "OS::Blazar::Lease", "-f", "json").stdout)
    reservation = lease["properties"]["reservations"]["schema"]["*"]["schema"]
    assert reservation["before_end"]["default"] == "default"
    assert lease["properties"]["events"]["default"] == []
    host = json.loads(stoker("resource", "type", "show", "OS::Blazar::Host", "-f", "json").stdout)
    assert host["properties"]["name"]["required"] is True
    assert host["properties"]["name"]["update_allowed"] is False


GOOD = """\
template:
  type: OS::Magnum::ClusterTemplate
  properties:
    image: fedora-coreos
    external_network: public
    coe: kubernetes
    volume_driver: cinder
    labels: {kube_tag: v1.30.1}
cluster:
  type: OS::Magnum::Cluster
  properties:
    cluster_template: {get_resource: template}
    node_count: 3
    master_count: 1
db:
  type: OS::Trove::Instance
  properties:
    flavor: m1.small
    size: 10
    datastore_type: mysql
    databases: [{name: shop}]
    users: [{name: alice, password: secret1, databases: [shop]}]
    networks: [{network: private}]
box:
  type: OS::Zun::Container
  properties:
    image: nginx
    command: nginx -g 'daemon off;'
    restart_policy: on-failure:3
    mounts: [{mount_path: /data, volume_size: 1}]
    networks: [{network: private}]
"""


def test_good_templates_validate(stoker, tmp_path):
    answer = validate(stoker, tmp_path, GOOD)
    assert answer.returncode == 0, answer.stdout + answer.stderr
    assert "NOTE" not in answer.stdout, answer.stdout


@pytest.mark.parametrize(
    ("resources", "place", "message"),
    [
        (
            """\
            template:
              type: OS::Magnum::ClusterTemplate
              properties: {image: i, external_network: n, coe: swarm, volume_driver: cinder}
            """,
            "resources.template.properties.volume_driver",
            "Volume driver type cinder is not supported by COE:swarm, expecting a ['rexray'] volume driver.",
        ),
        (
            """\
            template:
              type: OS::Magnum::ClusterTemplate
              properties: {image: i, external_network: n, coe: openshift}
            """,
            "resources.template.properties.coe",
            '"openshift" is not an allowed value',
        ),
        (
            """\
            template:
              type: OS::Magnum::ClusterTemplate
              properties: {image: i, coe: kubernetes}
            """,
            "resources.template.properties",
            "external_network",
        ),
        (
            """\
            cluster:
              type: OS::Magnum::Cluster
              properties: {cluster_template: k8s, node_count: 0}
            """,
            "resources.cluster.properties.node_count",
            "0",
        ),
        (
            """\
            db:
              type: OS::Trove::Instance
              properties: {flavor: f, size: 151}
            """,
            "resources.db.properties.size",
            "151 is out of range (min: 1, max: 150)",
        ),
        (
            """\
            db:
              type: OS::Trove::Instance
              properties:
                flavor: f
                size: 1
                users: [{name: alice, password: secret1, databases: [shop]}]
            """,
            "resources.db.properties.databases",
            "Databases property is required if users property is provided for resource db.",
        ),
        (
            """\
            db:
              type: OS::Trove::Instance
              properties:
                flavor: f
                size: 1
                databases: [{name: shop}]
                users: [{name: alice, password: secret1, databases: [stock]}]
            """,
            "resources.db.properties.users[0].databases",
            "Database ['stock'] specified for user does not exist in databases for resource db.",
        ),
        (
            """\
            db:
              type: OS::Trove::Instance
              properties: {flavor: f, size: 1, networks: [{network: private, port: p1}]}
            """,
            "resources.db.properties.networks[0]",
            "Either network or port must be provided.",
        ),
        (
            """\
            db:
              type: OS::Trove::Instance
              properties: {flavor: f, size: 1, datastore_version: "8.0"}
            """,
            "resources.db.properties.datastore_version",
            "Not allowed - datastore_version without datastore_type.",
        ),
        (
            """\
            db:
              type: OS::Trove::Instance
              properties: {flavor: f, size: 1, users: [{name: "a-b", password: secret1, databases: [shop]}], databases: [{name: shop}]}
            """,
            "resources.db.properties.users[0].name",
            '"a-b" does not match pattern',
        ),
        (
            """\
            cluster:
              type: OS::Trove::Cluster
              properties:
                datastore_type: mongodb
                datastore_version: "4.0"
                instances: [{flavor: f, volume_size: 1, networks: [{network: private, port: p1}]}]
            """,
            "resources.cluster.properties.instances[0].networks[0]",
            "Cannot define the following properties at the same time: network, port.",
        ),
        (
            """\
            cluster:
              type: OS::Trove::Cluster
              properties:
                datastore_type: mongodb
                datastore_version: "4.0"
                instances: [{flavor: f, volume_size: 1, networks: [{fixed_ip: 10.0.0.5}]}]
            """,
            "resources.cluster.properties.instances[0].networks[0]",
            "Either network or port must be provided.",
        ),
        (
            """\
            cluster:
              type: OS::Trove::Cluster
              properties: {instances: [{flavor: f, volume_size: 1}]}
            """,
            "resources.cluster.properties",
            "datastore_type",
        ),
        (
            """\
            box:
              type: OS::Zun::Container
              properties: {image: cirros, restart_policy: sometimes}
            """,
            "resources.box.properties.restart_policy",
            'restart_policy "sometimes" is invalid. Valid values are "no", "on-failure[:max-retry]", "always", and "unless-stopped".',
        ),
        (
            """\
            box:
              type: OS::Zun::Container
              properties: {image: cirros, mounts: [{mount_path: /data}]}
            """,
            "resources.box.properties.mounts[0]",
            'One of the properties "volume_id" or "volume_size" should be set for the specified mount of container "box".',
        ),
        (
            """\
            box:
              type: OS::Zun::Container
              properties: {image: cirros, networks: [{fixed_ip: 10.0.0.4}]}
            """,
            "resources.box.properties.networks[0]",
            "At least one of the following properties must be specified: network, port.",
        ),
        (
            """\
            box:
              type: OS::Zun::Container
              properties: {image: cirros, networks: [{port: p1, fixed_ip: 10.0.0.4}]}
            """,
            "resources.box.properties.networks[0]",
            "Cannot define the following properties at the same time: networks.fixed_ip, networks.port.",
        ),
        (
            """\
            host:
              type: OS::Blazar::Host
              properties: {extra_capability: {gpu: "1"}}
            """,
            "resources.host.properties",
            "name",
        ),
        (
            """\
            lease:
              type: OS::Blazar::Lease
              properties:
                name: l
                start_date: tomorrow
                end_date: "2030-01-02 10:00"
                reservations: [{resource_type: physical:host, min: 1, max: 2}]
            """,
            "resources.lease.properties.start_date",
            '"tomorrow" does not match pattern',
        ),
        (
            """\
            lease:
              type: OS::Blazar::Lease
              properties:
                name: l
                start_date: "2030-01-01 10:00"
                end_date: "2030-01-02 10:00"
                reservations: [{resource_type: physical:server}]
            """,
            "resources.lease.properties.reservations[0].resource_type",
            '"physical:server" is not an allowed value',
        ),
    ],
)
def test_bad_templates_are_refused_at_their_place(stoker, tmp_path, resources, place, message):
    answer = validate(stoker, tmp_path, textwrap.dedent(resources))
    said = answer.stdout + answer.stderr
    assert answer.returncode != 0, said
    assert place in said, said
    assert message in said, said
