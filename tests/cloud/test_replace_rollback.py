"""Replacements that need what the old object holds (a key pair's name, a port's address,
a server's ports and addresses), and rollbacks that give it back (Heat's
``prepare_for_replace`` and ``restore_prev_rsrc``), against the real Nova and Neutron."""

from __future__ import annotations

import secrets

import sqlalchemy as sa

from stoker.store import tables
from stoker.store.sealing import SEALED
from tests.cloud import test_nova_server as nova
from tests.cloud.test_nova_server import (
    ids_of,
    network_resources,
    server,
    server_gone,
    template,
    wait_gone,
)
from tests.cloud.test_nova_types import new_public_key
from tests.support.stacks import from_data

# The fixtures of the server tests: the admin's cloud, and a service whose stacks are
# deleted at the end whatever the test did.
admin_cloud = nova.admin_cloud
service = nova.service

FAIL_AFTER = {"type": "OS::Heat::TestResource", "properties": {"fail": True}}


def addresses_of_port(connection, port_id: str) -> set[str]:
    return {ip["ip_address"] for ip in connection.network.get_port(port_id).fixed_ips}


def test_a_key_pair_replaced_under_the_same_name_and_its_private_key_sealed(admin_cloud, service, sqlite_url):
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    resources = {
        "made": {"type": "OS::Nova::KeyPair", "properties": {"name": f"made-{suffix}", "save_private_key": True}},
        "key": {"type": "OS::Nova::KeyPair", "properties": {"name": f"same-{suffix}", "public_key": new_public_key()}},
    }
    stack = service.create_stack(f"kp-{suffix}", from_data(template(resources, {"private": {"get_attr": ["made", "private_key"]}})), disable_rollback=False)
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    private_key = service.outputs(stack.name)[0]["output_value"]
    assert private_key.startswith("-----BEGIN")
    engine = sa.create_engine(sqlite_url)
    with engine.connect() as db:
        stored = db.execute(sa.select(tables.resources.c.data).where(tables.resources.c.name == "made")).scalar_one()
    engine.dispose()
    # The whole column is sealed (parameters and properties), and inside it the private
    # key is sealed on its own (redacted resource data).
    assert set(stored) == {SEALED} and "BEGIN" not in str(stored)
    stored = service.store.sealer.open_value(stored, "resource data")
    assert set(stored["private_key"]) == {SEALED} and "BEGIN" not in str(stored)

    # A new public key replaces the key pair; the name stays, so the old one goes first.
    new_key = new_public_key()
    resources["key"]["properties"]["public_key"] = new_key
    stack = service.update_stack(stack.name, from_data(template(resources, {"private": {"get_attr": ["made", "private_key"]}})))

    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert connection.compute.get_keypair(f"same-{suffix}").public_key.strip() == new_key

    # Replaced again, then rolled back: the key pair of before the update is back.
    resources["key"]["properties"]["public_key"] = new_public_key()
    stack = service.update_stack(stack.name, from_data(template({**resources, "after": {**FAIL_AFTER, "depends_on": "key"}})))
    assert stack.state == "ROLLBACK_COMPLETE", stack.status_reason
    assert connection.compute.get_keypair(f"same-{suffix}").public_key.strip() == new_key
    assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"
    assert connection.compute.find_keypair(f"same-{suffix}") is None


def test_a_port_replaced_keeps_its_address_and_a_rollback_gives_it_back(admin_cloud, service):
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    port = {
        "type": "OS::Neutron::Port",
        "properties": {
            "name": f"p-{suffix}",
            "network": {"get_resource": "net"},
            "fixed_ips": [{"subnet": {"get_resource": "subnet"}, "ip_address": "10.36.0.50"}],
            "replacement_policy": "REPLACE_ALWAYS",
        },
    }
    resources = {**network_resources(suffix, "10.36.0.0/24"), "port": port}
    stack = service.create_stack(f"port-{suffix}", from_data(template(resources)), disable_rollback=False)
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    first = ids_of(service, stack.name)["port"]

    port["properties"]["name"] = f"p2-{suffix}"  # REPLACE_ALWAYS: any change replaces
    stack = service.update_stack(stack.name, from_data(template(resources)))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    second = ids_of(service, stack.name)["port"]
    assert second != first and connection.network.find_port(first) is None
    assert addresses_of_port(connection, second) == {"10.36.0.50"}

    port["properties"]["name"] = f"p3-{suffix}"
    stack = service.update_stack(stack.name, from_data(template({**resources, "after": {**FAIL_AFTER, "depends_on": "port"}})))
    assert stack.state == "ROLLBACK_COMPLETE", stack.status_reason
    assert ids_of(service, stack.name)["port"] == second
    assert addresses_of_port(connection, second) == {"10.36.0.50"}
    assert connection.network.find_port(f"p3-{suffix}") is None  # the replacement is gone
    assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"


def test_a_server_replacement_rolled_back_gets_its_ports_and_addresses_back(admin_cloud, service):
    """Heat moves only the given ports back; here the old server is attached again to
    everything its ``networks`` name: the port it was given, and its network at the
    fixed address (whose port Nova deleted when it was detached)."""
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    keys = [connection.compute.create_keypair(name=f"rb-{suffix}-{n}") for n in (1, 2)]
    try:
        resources = {
            **network_resources(suffix, "10.37.0.0/24"),
            "port": {"type": "OS::Neutron::Port", "properties": {"network": {"get_resource": "net"}}},
            "vm": server(
                [{"port": {"get_resource": "port"}}, {"network": {"get_resource": "net"}, "fixed_ip": "10.37.0.77"}],
                key_name=keys[0].name,
            ),
        }
        stack = service.create_stack(f"srb-{suffix}", from_data(template(resources)), disable_rollback=False)
        assert stack.state == "CREATE_COMPLETE", stack.status_reason
        before = ids_of(service, stack.name)

        resources["vm"]["properties"]["key_name"] = keys[1].name  # not updatable: replaced
        failing = {**resources, "after": {**FAIL_AFTER, "depends_on": "vm"}}
        stack = service.update_stack(stack.name, from_data(template(failing)))

        assert stack.state == "ROLLBACK_COMPLETE", stack.status_reason
        assert ids_of(service, stack.name) == before
        replacement = next(
            e.physical_resource_id
            for e in service.list_events(stack.name, "vm")
            if e.resource_action == "CREATE" and e.resource_status == "COMPLETE" and e.physical_resource_id not in (None, before["vm"])
        )
        wait_gone(lambda server_id: None if server_gone(connection, server_id) else server_id, replacement)
        interfaces = list(connection.compute.server_interfaces(before["vm"]))
        assert before["port"] in {interface.port_id for interface in interfaces}
        assert "10.37.0.77" in {ip["ip_address"] for interface in interfaces for ip in interface.fixed_ips}
        assert len(interfaces) == 2
        # the stack goes on: the same update without the failure replaces the server
        resources["vm"]["properties"]["key_name"] = keys[1].name
        stack = service.update_stack(stack.name, from_data(template(resources)))
        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"
    finally:
        for key in keys:
            connection.compute.delete_keypair(key, ignore_missing=True)
