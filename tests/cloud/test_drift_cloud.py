"""Drift detection against the real Nova, Neutron and Cinder of the test cloud: an
untouched stack of servers, a network, subnet, security groups, port, router and its
interface, a floating IP and a volume reports no drift, run after run; then changes made
with openstacksdk behind the stack's back (a port's security groups, a server's
metadata, a volume extended, a network renamed, a server deleted) are each reported
exactly, with the expected and actual values."""

from __future__ import annotations

import base64
import csv
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path

from tests.cloud.fixture import admin_cloud, deleting_service  # noqa: F401 - fixtures
from tests.support.stacks import from_data

STOKER = str(Path(sys.executable).with_name("stoker"))


def stack_template(suffix: str, public: str) -> dict:
    server = {
        "flavor": "m1.tiny",
        "image": "stoker-tiny",
        "user_data_format": "RAW",
        "networks": [{"network": {"get_resource": "net"}}],
    }
    resources = {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"drift-net-{suffix}"}},
        "subnet": {
            "type": "OS::Neutron::Subnet",
            "properties": {
                "network": {"get_resource": "net"},
                "cidr": "10.41.0.0/24",
                "name": f"drift-subnet-{suffix}",
            },
        },
        "sg_a": {
            "type": "OS::Neutron::SecurityGroup",
            "properties": {"name": f"drift-sg-a-{suffix}"},
        },
        "sg_b": {
            "type": "OS::Neutron::SecurityGroup",
            "properties": {"name": f"drift-sg-b-{suffix}"},
        },
        "port": {
            "type": "OS::Neutron::Port",
            # By name: the live port has ids, and drift compares them as the stack gave them.
            "properties": {
                "network": {"get_resource": "net"},
                "security_groups": [f"drift-sg-a-{suffix}"],
            },
            "depends_on": ["sg_a", "sg_b", "subnet"],
        },
        "router": {
            "type": "OS::Neutron::Router",
            "properties": {
                "name": f"drift-router-{suffix}",
                "external_gateway_info": {"network": public},
            },
        },
        "interface": {
            "type": "OS::Neutron::RouterInterface",
            "properties": {
                "router": {"get_resource": "router"},
                "subnet": {"get_resource": "subnet"},
            },
        },
        "fip": {
            "type": "OS::Neutron::FloatingIP",
            "properties": {"floating_network": public, "port_id": {"get_resource": "port"}},
            "depends_on": ["interface"],
        },
        "web": {
            "type": "OS::Nova::Server",
            "properties": {
                **server,
                "name": f"drift-web-{suffix}",
                "metadata": {"role": "web", "weight": 3},
            },
            "depends_on": ["subnet"],
        },
        "spare": {
            "type": "OS::Nova::Server",
            "properties": {**server, "name": f"drift-spare-{suffix}"},
            "depends_on": ["subnet"],
        },
        "data": {
            "type": "OS::Cinder::Volume",
            "properties": {
                "size": 1,
                "name": f"drift-data-{suffix}",
                "metadata": {"purpose": "data"},
            },
        },
        "word": {"type": "OS::Heat::RandomString"},
    }
    return {"heat_template_version": "2021-04-16", "resources": resources}


def statuses(record) -> dict[str, str]:
    return {result["path"]: result["status"] for result in record.resources}


def test_drift_on_the_test_cloud(admin_cloud, service):  # noqa: F811 - the fixture
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    public = connection.network.create_network(
        name=f"drift-public-{suffix}", is_router_external=True
    )
    connection.network.create_subnet(
        network_id=public.id, cidr="172.26.0.0/24", ip_version=4, enable_dhcp=False
    )
    name = f"drift-{suffix}"
    try:
        stack = service.create_stack(
            name,
            from_data(stack_template(suffix, public.name)),
            [],
            {},
            project_id=service.settings.project,
        )
        assert stack.state == "CREATE_COMPLETE", stack.status_reason
        ids = {record.name: record.physical_resource_id for record in service.list_resources(name)}

        untouched = {
            resource: "IN_SYNC"
            for resource in (
                "net",
                "subnet",
                "sg_a",
                "sg_b",
                "port",
                "router",
                "fip",
                "web",
                "spare",
                "data",
            )
        }
        untouched.update(interface="NOT_CHECKED", word="NOT_CHECKED")
        for _ in range(2):
            record = service.detect_drift(name)
            differing = [
                (r["path"], r["properties"], r["reason"])
                for r in record.resources
                if r["status"] != untouched[r["path"]]
            ]
            assert statuses(record) == untouched, differing
            assert record.summary["stack_status"] == "IN_SYNC"

        sg_b = ids["sg_b"]
        connection.network.update_port(ids["port"], security_group_ids=[sg_b])
        web = connection.compute.get_server(ids["web"])
        connection.compute.set_server_metadata(web, role="db")
        connection.block_storage.extend_volume(ids["data"], 2)
        connection.network.update_network(ids["net"], name=f"renamed-{suffix}")
        connection.compute.delete_server(ids["spare"])
        deadline = time.monotonic() + 120
        while (
            volume := connection.block_storage.get_volume(ids["data"])
        ).size != 2 or volume.status != "available":
            assert time.monotonic() < deadline, f"volume {volume.status} size {volume.size}"
            time.sleep(1)
        while (
            gone := connection.compute.find_server(ids["spare"])
        ) is not None and gone.status != "DELETED":
            assert time.monotonic() < deadline, f"server {gone.status}"
            time.sleep(1)

        record = service.detect_drift(name)
        results = {result["path"]: result for result in record.resources}
        changed = {
            path: (r["status"], r["properties"])
            for path, r in results.items()
            if r["status"] in ("MODIFIED", "DELETED")
        }
        assert changed == {
            "port": (
                "MODIFIED",
                [
                    {
                        "name": "security_groups",
                        "expected": [f"drift-sg-a-{suffix}"],
                        "actual": [sg_b],
                    }
                ],
            ),
            "web": (
                "MODIFIED",
                [
                    {
                        "name": "metadata",
                        "expected": {"role": "web", "weight": 3},
                        "actual": {"role": "db", "weight": "3"},
                    }
                ],
            ),
            "data": ("MODIFIED", [{"name": "size", "expected": 1, "actual": 2}]),
            "net": (
                "MODIFIED",
                [
                    {
                        "name": "name",
                        "expected": f"drift-net-{suffix}",
                        "actual": f"renamed-{suffix}",
                    }
                ],
            ),
            "spare": ("DELETED", []),
        }
        assert results["spare"]["reason"] == "the live object is gone"
        assert record.summary == {
            "stack_status": "DRIFTED",
            "resources": 12,
            "in_sync": 5,
            "modified": 4,
            "deleted": 1,
            "not_checked": 2,
        }
        assert service.last_drift(name).resources == record.resources
        # The command shows the kept result without asking the cloud.
        shown = subprocess.run(
            [STOKER, "stack", "drift", name, "--last", "-f", "csv"],
            env={**os.environ, "STOKER_DATABASE_URL": service.settings.database_url, "STOKER_NO_RECOVERY": "1"},
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        rows = {row[0]: row[2:] for row in csv.reader(shown.stdout.splitlines())}
        assert rows["data"] == ["MODIFIED", "size: expected 1, actual 2"]
        assert rows["spare"] == ["DELETED", "the live object is gone"]
        table = subprocess.run(
            [STOKER, "stack", "drift", name, "--last"],
            env={**os.environ, "STOKER_DATABASE_URL": service.settings.database_url, "STOKER_NO_RECOVERY": "1", "COLUMNS": "150"},
            capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        print(table.stdout, table.stderr)  # noqa: T201 - the output docs/drift.md shows
        events = [e.resource_status_reason for e in service.list_events(name, "data")]
        assert "Drift MODIFIED: size expected 1, actual 2" in events
    finally:
        try:
            service.delete_stack(name)
        finally:
            for subnet in connection.network.subnets(network_id=public.id):
                connection.network.delete_subnet(subnet)
            connection.network.delete_network(public)


def test_update_with_converge_changes_the_cloud_back(admin_cloud, service):  # noqa: F811 - the fixture
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    template = stack_template(suffix, "unused")
    resources = {
        name: template["resources"][name]
        for name in ("net", "subnet", "sg_a", "sg_b", "port", "web", "spare")
    }
    name = f"converge-{suffix}"
    stack = service.create_stack(name, from_data({**template, "resources": resources}), [], {})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = {record.name: record.physical_resource_id for record in service.list_resources(name)}
    connection.network.update_port(ids["port"], security_group_ids=[ids["sg_b"]])
    connection.compute.set_server_metadata(connection.compute.get_server(ids["web"]), role="db")
    connection.network.update_network(ids["net"], name=f"renamed-{suffix}")
    connection.compute.delete_server(ids["spare"])
    deadline = time.monotonic() + 120
    while (
        gone := connection.compute.find_server(ids["spare"])
    ) is not None and gone.status != "DELETED":
        assert time.monotonic() < deadline, f"server {gone.status}"
        time.sleep(1)
    assert service.detect_drift(name).summary["stack_status"] == "DRIFTED"

    stack = service.update_stack(name, existing=True, converge=True)

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert connection.network.get_port(ids["port"]).security_group_ids == [ids["sg_a"]]
    assert connection.compute.get_server(ids["web"]).metadata == {"role": "web", "weight": "3"}
    assert connection.network.get_network(ids["net"]).name == f"drift-net-{suffix}"
    spare = next(record for record in service.list_resources(name) if record.name == "spare")
    assert spare.physical_resource_id != ids["spare"]
    assert connection.compute.get_server(spare.physical_resource_id).status == "ACTIVE"
    record = service.detect_drift(name)
    assert record.summary["stack_status"] == "IN_SYNC", [
        r for r in record.resources if r["status"] != "IN_SYNC"
    ]


def server_template(suffix: str) -> dict:
    """A server on two networks, with a data volume in its block device mapping and RAW
    user data."""
    def network(index: int) -> dict:
        return {
            f"net{index}": {"type": "OS::Neutron::Net", "properties": {"name": f"nics-{index}-{suffix}"}},
            f"subnet{index}": {
                "type": "OS::Neutron::Subnet",
                "properties": {"network": {"get_resource": f"net{index}"}, "cidr": f"10.4{index}.7.0/24"},
            },
        }

    web = {
        "type": "OS::Nova::Server",
        "properties": {
            "name": f"nics-web-{suffix}",
            "flavor": "m1.tiny",
            "image": "stoker-tiny",
            "user_data_format": "RAW",
            "user_data": "#!/bin/sh\necho first\n",
            "networks": [{"network": {"get_resource": "net1"}}, {"network": {"get_resource": "net2"}}],
            "block_device_mapping": [{"device_name": "vdb", "volume_id": {"get_resource": "data"}}],
        },
        "depends_on": ["subnet1", "subnet2"],
    }
    data = {"type": "OS::Cinder::Volume", "properties": {"size": 1, "name": f"nics-data-{suffix}"}}
    return {"heat_template_version": "2021-04-16", "resources": {**network(1), **network(2), "data": data, "web": web}}


def interfaces(connection, server_id: str) -> list[tuple[str, str]]:
    return sorted((str(i.net_id), str(i.port_id)) for i in connection.compute.server_interfaces(server_id))


def wait_for(check, what: str, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, what
        time.sleep(1)


def test_server_interfaces_volumes_and_user_data_drift_and_converge(admin_cloud, service):  # noqa: F811 - the fixture
    """An interface detached and another attached behind the stack's back are reported as
    the server's ``networks`` and put back in place by a converging update; a volume of
    its block device mapping detached and its user data rebuilt (both replace the server)
    are reported as such and converge by a replacement; drift is clean after each."""
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    name = f"nics-{suffix}"
    stack = service.create_stack(name, from_data(server_template(suffix)), [], {})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = {record.name: record.physical_resource_id for record in service.list_resources(name)}
    web, net1, net2 = ids["web"], ids["net1"], ids["net2"]
    first = interfaces(connection, web)
    assert sorted(network for network, _ in first) == sorted([net1, net2])
    assert statuses(service.detect_drift(name))["web"] == "IN_SYNC"

    # One of its interfaces detached, and an interface attached on its first network.
    on_net2 = next(port for network, port in first if network == net2)
    connection.compute.delete_server_interface(on_net2, server=web)
    wait_for(lambda: len(interfaces(connection, web)) == 1, "the interface detached")
    extra = connection.compute.create_server_interface(web, net_id=net1)
    wait_for(lambda: len(interfaces(connection, web)) == 2, "the interface attached")

    record = service.detect_drift(name)
    assert statuses(record)["web"] == "MODIFIED"
    (changed,) = next(r for r in record.resources if r["path"] == "web")["properties"]
    assert changed["name"] == "networks"
    assert [(e.get("network"), e.get("port")) for e in changed["expected"]] == [(net1, None), (net2, None)]
    assert [(e.get("network"), e.get("port")) for e in changed["actual"]] == [(net1, None), (net1, extra.port_id)]

    stack = service.update_stack(name, existing=True, converge=True)
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert [record.physical_resource_id for record in service.list_resources(name) if record.name == "web"] == [web]
    now = interfaces(connection, web)
    assert sorted(network for network, _ in now) == sorted([net1, net2])
    assert extra.port_id not in {port for _, port in now}
    assert statuses(service.detect_drift(name))["web"] == "IN_SYNC"

    # Its data volume detached, and its user data rebuilt (Nova 2.57).
    connection.compute.delete_volume_attachment(web, ids["data"])
    connection.block_storage.wait_for_status(connection.block_storage.get_volume(ids["data"]), "available", wait=120)
    compute = admin_cloud.connect("admin")
    compute.compute.default_microversion = "2.57"
    rebuilt = "#!/bin/sh\necho second\n"
    compute.compute.rebuild_server(web, connection.compute.get_server(web).image["id"], user_data=base64.b64encode(rebuilt.encode()).decode())
    connection.compute.wait_for_server(connection.compute.get_server(web), wait=120)

    record = service.detect_drift(name)
    found = {p["name"]: (p["expected"], p["actual"]) for p in next(r for r in record.resources if r["path"] == "web")["properties"]}
    assert sorted(found) == ["block_device_mapping", "user_data"], found
    assert found["user_data"] == ("#!/bin/sh\necho first\n", rebuilt)
    assert [entry["volume_id"] for entry in found["block_device_mapping"][0]] == [ids["data"]]
    assert found["block_device_mapping"][1] == []

    stack = service.update_stack(name, existing=True, converge=True)
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    replaced = next(record.physical_resource_id for record in service.list_resources(name) if record.name == "web")
    assert replaced != web
    assert [volume["id"] for volume in connection.compute.get_server(replaced).attached_volumes] == [ids["data"]]
    record = service.detect_drift(name)
    assert record.summary["stack_status"] == "IN_SYNC", [r for r in record.resources if r["status"] != "IN_SYNC"]
    assert service.delete_stack(name).state == "DELETE_COMPLETE"
