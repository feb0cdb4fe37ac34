"""Servers that boot (``addons/guests.py``): a stack's OS::Nova::Server on the guest image
is a real virtual machine (libvirt, QEMU) on a stack network, that runs the user data
stoker gave it, read from the config drive, signals the stack's wait condition and
answers ping through a floating IP; the stack's delete ends it. And only the guest
image's servers go to that host: any other server asked onto it is refused by Nova's
scheduler.

A guest boots under emulation (a core for about a minute, more on a busy machine), so
each boot here checks all it can: one guest serves the user data, the signal, the
network and the delete.
"""

from __future__ import annotations

import json
import secrets
import subprocess
import time

from tests.cloud import identity
from tests.cloud.addons.guests import GuestsService
from tests.support.server import Server

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


NETWORKED_TEMPLATE = """\
heat_template_version: 2021-04-16
parameters:
  image: {type: string}
  flavor: {type: string}
  public_net: {type: string}
  marker: {type: string}
resources:
  net: {type: OS::Neutron::Net}
  subnet:
    type: OS::Neutron::Subnet
    properties: {network: {get_resource: net}, cidr: 10.77.0.0/24, dns_nameservers: []}
  router:
    type: OS::Neutron::Router
    properties: {external_gateway_info: {network: {get_param: public_net}}}
  router_interface:
    type: OS::Neutron::RouterInterface
    properties: {router: {get_resource: router}, subnet: {get_resource: subnet}}
  sg:
    type: OS::Neutron::SecurityGroup
    properties:
      rules: [{protocol: icmp}, {protocol: tcp, port_range_min: 22, port_range_max: 22}]
  handle: {type: OS::Heat::WaitConditionHandle}
  vm:
    type: OS::Nova::Server
    depends_on: router_interface
    properties:
      image: {get_param: image}
      flavor: {get_param: flavor}
      networks: [{subnet: {get_resource: subnet}}]
      security_groups: [{get_resource: sg}]
      # Heat's multipart cloud-init bundle, with this script as its last part.
      user_data_format: SOFTWARE_CONFIG
      user_data:
        str_replace:
          template: |
            #!/bin/sh
            echo $marker ran as $(id -un) > /dev/ttyS0
            wc_notify --data-binary '{"status": "SUCCESS", "data": "signalled from the guest"}'
          params:
            wc_notify: {get_attr: [handle, curl_cli]}
            $marker: {get_param: marker}
  fip:
    type: OS::Neutron::FloatingIP
    depends_on: router_interface
    properties: {floating_network: {get_param: public_net}}
  fip_association:
    type: OS::Neutron::FloatingIPAssociation
    properties:
      floatingip_id: {get_resource: fip}
      port_id: {get_attr: [vm, addresses, {get_resource: net}, 0, port]}
  wait:
    type: OS::Heat::WaitCondition
    properties: {handle: {get_resource: handle}, timeout: 600}
outputs:
  wc_data: {value: {get_attr: [wait, data]}}
  server_ip: {value: {get_attr: [fip, floating_ip_address]}}
  server_id: {value: {get_resource: vm}}
"""


def test_guests_a_stack_server_runs_its_user_data_signals_answers_ping_and_is_ended_by_the_delete(
    openstack_cloud, guests_service: GuestsService, tmp_path
):
    # As heat-tempest-plugin's ServerSignalIntegrationTest, with what only stoker's own
    # test sees: a network, a router to the guests' external network, a floating IP, and
    # a guest whose SOFTWARE_CONFIG user data (run as root) writes a marker to the serial
    # console and signals the stack's wait condition with the handle's curl_cli, reaching
    # `stoker serve` on the host's address through the router. cloud-init reads the config
    # drive; the host pings the guest; the delete ends the libvirt domain.
    marker = f"stoker-guest-{secrets.token_hex(4)}"
    token = secrets.token_hex(16)
    tokens = tmp_path / "tokens.yaml"
    project = openstack_cloud.connect("demo").current_project_id
    tokens.write_text(
        f"tokens:\n  {token}: {{project_id: {project}, user_id: tester, roles: [member]}}\n"
    )
    host = guests_service.external_network.host_address
    server = Server(
        f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        tmp_path / "serve.log",
        host=host,
        token=token,
        STOKER_AUTH_MODE="token",
        STOKER_AUTH_TOKENS_FILE=str(tokens),
        **openstack_cloud.cloud_environ("demo"),
    )
    server.environment["STOKER_PUBLIC_URL"] = server.url
    server.endpoint = f"{server.url}/v1/{project}"
    server.start()
    connection = openstack_cloud.connect("admin")
    try:
        name = f"signal-{secrets.token_hex(3)}"
        parameters = {
            "image": guests_service.image_id,
            "flavor": guests_service.flavor_id,
            "public_net": guests_service.external_network.id,
            "marker": marker,
        }
        status, body = server.request(
            "POST",
            "/stacks",
            {"stack_name": name, "template": NETWORKED_TEMPLATE, "parameters": parameters},
        )
        assert status == 201, body
        stack_id = body["stack"]["id"]
        created = server.wait_for(stack_id, timeout=BOOT_TIMEOUT_S + 120)
        status, shown = server.request("GET", f"/stacks/{name}/{stack_id}")
        outputs = {
            output["output_key"]: output.get("output_value")
            for output in shown["stack"].get("outputs") or []
        }
        if created["stack_status"] != "CREATE_COMPLETE":
            console = (
                console_log(connection, outputs["server_id"]) if outputs.get("server_id") else ""
            )
            raise AssertionError(
                f"{created['stack_status']}: {created['stack_status_reason']}\nthe guest's console:\n{console[-4000:]}"
            )
        assert json.loads(outputs["wc_data"]) == {"1": "signalled from the guest"}
        server_id = outputs["server_id"]
        booted = connection.compute.get_server(server_id)
        assert booted.compute_host == guests_service.host
        instance = booted.instance_name
        assert instance in guests_service.domains()
        wait_for_console(connection, server_id, f"{marker} ran as root")
        # cloud-init read the config drive: no metadata service was asked.
        text = wait_for_console(connection, server_id, "Datasource DataSourceConfigDrive")
        assert "Datasource DataSourceNone" not in text, text[-3000:]
        address = outputs["server_ip"]
        deadline = time.monotonic() + 120
        while (
            subprocess.run(
                ["ping", "-c", "1", "-W", "2", address], capture_output=True, check=False
            ).returncode
            != 0
        ):
            assert time.monotonic() < deadline, f"the guest never answered ping on {address}"
        status, _ = server.request("DELETE", f"/stacks/{name}/{stack_id}")
        assert status == 204
        deleted = server.wait_for(stack_id, timeout=300)
        assert deleted["stack_status"] == "DELETE_COMPLETE", deleted["stack_status_reason"]
        assert instance not in guests_service.domains()
        assert connection.compute.find_server(server_id, ignore_missing=True) is None
    finally:
        connection.close()
        log = server.stop()
    assert "Traceback" not in log, log[-4000:]
