"""``stoker stack import`` against the real Nova, Neutron and Cinder of the test cloud: a
network, subnet, security group, port, volume and server made with openstacksdk become a
stack's with no create call (every service's objects counted, and their ids kept); an
update with the same template changes none of them; a delete removes what was imported,
but the resources with ``deletion_policy: Retain``."""

from __future__ import annotations

import secrets
import time

from tests.cloud.fixture import admin_cloud, deleting_service  # noqa: F401 - fixtures
from tests.support.stacks import from_data


def template(suffix: str) -> dict:
    resources = {
        "net": {"type": "OS::Neutron::Net", "properties": {"name": f"imp-net-{suffix}"}},
        "subnet": {
            "type": "OS::Neutron::Subnet",
            "properties": {
                "network": {"get_resource": "net"},
                "cidr": "10.43.0.0/24",
                "name": f"imp-subnet-{suffix}",
            },
        },
        "sg": {
            "type": "OS::Neutron::SecurityGroup",
            "deletion_policy": "Retain",
            "properties": {"name": f"imp-sg-{suffix}"},
        },
        "port": {
            "type": "OS::Neutron::Port",
            "properties": {"network": {"get_resource": "net"}, "name": f"imp-port-{suffix}"},
            "depends_on": ["subnet"],
        },
        "data": {
            "type": "OS::Cinder::Volume",
            "deletion_policy": "Retain",
            "properties": {"size": 1, "name": f"imp-data-{suffix}"},
        },
        "web": {
            "type": "OS::Nova::Server",
            "properties": {
                "name": f"imp-web-{suffix}",
                "flavor": "m1.tiny",
                "image": "stoker-tiny",
                "metadata": {"role": "web"},
                "networks": [{"network": {"get_resource": "net"}}],
            },
            "depends_on": ["subnet"],
        },
    }
    return {"heat_template_version": "2021-04-16", "resources": resources}


def counts(connection) -> dict[str, int]:
    return {
        "networks": len(list(connection.network.networks())),
        "subnets": len(list(connection.network.subnets())),
        "ports": len(list(connection.network.ports())),
        "security_groups": len(list(connection.network.security_groups())),
        "volumes": len(list(connection.block_storage.volumes(all_projects=True))),
        "servers": len(list(connection.compute.servers(all_projects=True))),
    }


def wait_for(read, ready, what: str):
    deadline = time.monotonic() + 180
    while not ready(found := read()):
        assert time.monotonic() < deadline, f"{what}: {found}"
        time.sleep(1)
    return found


def test_import_on_the_test_cloud(admin_cloud, service, openstack_cloud):  # noqa: F811 - the fixture
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    net = connection.network.create_network(name=f"imp-net-{suffix}")
    subnet = connection.network.create_subnet(
        network_id=net.id, cidr="10.43.0.0/24", ip_version=4, name=f"imp-subnet-{suffix}"
    )
    group = connection.network.create_security_group(name=f"imp-sg-{suffix}")
    port = connection.network.create_port(network_id=net.id, name=f"imp-port-{suffix}")
    volume = connection.block_storage.create_volume(size=1, name=f"imp-data-{suffix}")
    server = connection.compute.create_server(
        name=f"imp-web-{suffix}",
        flavor_id=openstack_cloud.flavors["m1.tiny"],
        image_id=openstack_cloud.image_id,
        networks=[{"uuid": net.id}],
        metadata={"role": "web"},
    )
    wait_for(
        lambda: connection.block_storage.get_volume(volume.id),
        lambda v: v.status == "available",
        "volume",
    )
    wait_for(
        lambda: connection.compute.get_server(server.id), lambda s: s.status == "ACTIVE", "server"
    )
    ids = {
        "net": net.id,
        "subnet": subnet.id,
        "sg": group.id,
        "port": port.id,
        "data": volume.id,
        "web": server.id,
    }
    name = f"imp-{suffix}"
    try:
        before = counts(connection)
        stack = service.import_stack(
            name, from_data(template(suffix)), ids, project_id=service.settings.project
        )
        assert stack.state == "ADOPT_COMPLETE", stack.status_reason
        held = {record.name: record.physical_resource_id for record in service.list_resources(name)}
        assert held == ids
        assert counts(connection) == before  # nothing was created
        assert service.detect_drift(name).summary["modified"] == 0

        stamps = (
            connection.compute.get_server(server.id).updated_at,
            connection.block_storage.get_volume(volume.id).updated_at,
            connection.network.get_port(port.id).updated_at,
        )
        stack = service.update_stack(name, from_data(template(suffix)))
        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        assert counts(connection) == before
        updated = {
            record.name: record.physical_resource_id for record in service.list_resources(name)
        }
        assert updated == ids
        assert (
            connection.compute.get_server(server.id).updated_at,
            connection.block_storage.get_volume(volume.id).updated_at,
            connection.network.get_port(port.id).updated_at,
        ) == stamps  # an update that changes nothing touches nothing

        stack = service.delete_stack(name)
        assert stack.state == "DELETE_COMPLETE", stack.status_reason
        assert connection.network.find_network(net.id) is None
        assert connection.network.find_port(port.id) is None
        wait_for(
            lambda: connection.compute.find_server(server.id),
            lambda s: s is None or s.status == "DELETED",
            "server",
        )
        # Retained: the stack let them be.
        assert connection.network.get_security_group(group.id).name == f"imp-sg-{suffix}"
        assert connection.block_storage.get_volume(volume.id).status == "available"
    finally:
        if connection.compute.find_server(server.id) is not None:
            connection.compute.delete_server(server.id)
            wait_for(
                lambda: connection.compute.find_server(server.id), lambda s: s is None, "server"
            )
        for remove, found in (
            (connection.network.delete_port, connection.network.find_port(port.id)),
            (connection.network.delete_subnet, connection.network.find_subnet(subnet.id)),
            (connection.network.delete_network, connection.network.find_network(net.id)),
            (
                connection.network.delete_security_group,
                connection.network.find_security_group(group.id),
            ),
            (
                connection.block_storage.delete_volume,
                connection.block_storage.find_volume(volume.id),
            ),
        ):
            if found is not None:
                remove(found)
