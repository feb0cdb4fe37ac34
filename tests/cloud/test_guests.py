"""Servers that boot (``addons/guests.py``): a stack's OS::Nova::Server on the guest image
is a real virtual machine (libvirt, QEMU) that runs the user data stoker gave it, read
from the config drive; the stack's delete ends it. And only the guest image's servers go
to that host: any other server asked onto it is refused by Nova's scheduler.

No network yet (the guests' ports are not wired: the next step of issue 29), so the
servers boot with ``networks: allocate_network: none`` and report through the serial
console, which Nova's console log shows.
"""

from __future__ import annotations

import secrets
import time

from tests.cloud import identity
from tests.cloud.addons.guests import GuestsService
from tests.cloud.fixture import admin_cloud, deleting_service  # noqa: F401 - fixtures
from tests.support.stacks import from_data

# Seconds a guest may take to boot and run its user data under emulation (about 100 s on
# a busy 2-core machine).
BOOT_TIMEOUT_S = 600


def console_log(connection, server_id: str) -> str:
    return connection.compute.get_server_console_output(server_id)["output"] or ""


def wait_for_console(connection, server_id: str, marker: str) -> str:
    deadline = time.monotonic() + BOOT_TIMEOUT_S
    while True:
        text = console_log(connection, server_id)
        if marker in text:
            return text
        assert time.monotonic() < deadline, (
            f"the guest's console never showed {marker!r}; its last lines:\n{text[-3000:]}"
        )
        time.sleep(5)


def test_guests_a_stack_server_boots_runs_its_software_config_user_data_and_is_ended_by_the_delete(
    admin_cloud,  # noqa: F811 - the fixture
    guests_service: GuestsService,
    service,
):
    marker = f"stoker-guest-{secrets.token_hex(4)}"
    template = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "vm": {
                "type": "OS::Nova::Server",
                "properties": {
                    "image": guests_service.image_id,
                    "flavor": guests_service.flavor_id,
                    "networks": [{"allocate_network": "none"}],
                    # Heat's multipart cloud-init bundle, with this script as its last part.
                    "user_data_format": "SOFTWARE_CONFIG",
                    "user_data": f"#!/bin/sh\necho {marker} ran as $(id -un) > /dev/ttyS0\n",
                },
            }
        },
        "outputs": {
            "instance": {"value": {"get_attr": ["vm", "show", "OS-EXT-SRV-ATTR:instance_name"]}}
        },
    }
    stack = service.create_stack(f"guest-{secrets.token_hex(3)}", from_data(template))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    server_id = next(record.physical_resource_id for record in service.list_resources(stack.name))
    connection = admin_cloud.connect("admin")
    try:
        server = connection.compute.get_server(server_id)
        assert (server.compute_host, server.status) == (guests_service.host, "ACTIVE")
        instance = {
            output["output_key"]: output.get("output_value")
            for output in service.outputs(stack.name)
        }["instance"]
        assert instance in guests_service.domains()
        wait_for_console(connection, server_id, f"{marker} ran as root")
        # cloud-init read the config drive: no metadata service was asked.
        text = wait_for_console(connection, server_id, "Datasource DataSourceConfigDrive")
        assert "Datasource DataSourceNone" not in text, text[-3000:]
        deleted = service.delete_stack(stack.name)
        assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
        assert instance not in guests_service.domains()
        assert connection.compute.find_server(server_id, ignore_missing=True) is None
    finally:
        connection.close()


def test_guests_only_the_guest_image_goes_to_the_guests_host(
    openstack_cloud, guests_service: GuestsService
):
    # A server of the cloud's fake image asked onto the guests' host (Nova 2.74's
    # requested host, which the scheduler's filters still judge) is refused there: the
    # host's aggregate requires a trait that only the guest image asks for.
    keystone = identity.Keystone(openstack_cloud.keystone_url)
    compute = openstack_cloud.endpoints["compute"]
    version = {"X-OpenStack-Nova-API-Version": "2.74"}
    body = {
        "server": {
            "name": f"not-a-guest-{secrets.token_hex(3)}",
            "imageRef": openstack_cloud.image_id,
            "flavorRef": openstack_cloud.flavors["m1.tiny"],
            "networks": "none",
            "host": guests_service.host,
        }
    }
    made = identity.request(
        "POST", f"{compute}/servers", token=keystone.token, body=body, headers=version
    )
    assert made.status == 202, made.body
    server_id = made.body["server"]["id"]
    try:
        deadline = time.monotonic() + 120
        while True:
            shown = identity.request(
                "GET", f"{compute}/servers/{server_id}", token=keystone.token, headers=version
            ).body["server"]
            if shown["status"] in ("ERROR", "ACTIVE"):
                break
            assert time.monotonic() < deadline, shown
            time.sleep(1)
        assert shown["status"] == "ERROR", shown
        assert "No valid host was found" in shown["fault"]["message"], shown["fault"]
    finally:
        identity.request("DELETE", f"{compute}/servers/{server_id}", token=keystone.token)
