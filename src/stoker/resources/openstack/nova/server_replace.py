"""OS::Nova::Server's ports around a replacement (Heat's ``prepare_for_replace`` and
``restore_prev_rsrc``): the old server gives up its ports before its replacement is
made; a rollback takes them back from the replacement. Each step waits until Nova has
attached or detached what it asked.

Must not: decide when a server is replaced (``server.Server``'s update does).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from stoker.resources.openstack.nova import server_schema as s
from stoker.sdk.exceptions import ResourceFailure

if TYPE_CHECKING:
    from stoker.resources.openstack.nova.server import Server

__all__ = ["DETACH_WAIT_S", "reattach_networks", "release_interfaces", "wait_for_ports"]

# Seconds a replacement waits for Nova to detach the old server's ports (or to attach them).
DETACH_WAIT_S = 120


def release_interfaces(server: Server) -> None:
    """A replacement lets go of its interfaces, so that the server it replaced can have
    them back: each detached (once it is no longer building), the ports stoker made for it
    deleted."""
    server_id = str(server.resource_id)
    # Nova cannot detach an interface from a server still building.
    deadline = time.monotonic() + DETACH_WAIT_S
    while _building(server, server_id) and time.monotonic() < deadline:
        time.sleep(1)
    helper = server.networks_helper()
    try:
        ports = [interface[s.NETWORK_PORT] for interface in helper.interfaces(server_id)]
    except Exception as error:  # noqa: BLE001 - a replacement gone holds nothing
        server.client_plugin().ignore_not_found(error)
        ports = []
    for port_id in ports:
        helper.detach(server_id, port_id)
    wait_for_ports(server, server_id, ports, attached=False)
    helper.delete_internal_ports()


def reattach_networks(server: Server) -> None:
    """The server gets back every entry of its ``networks`` it no longer has: the ports
    it was given, and its networks with the fixed addresses they name."""
    server_id = str(server.resource_id)
    helper = server.networks_helper()
    present = helper.interfaces(server_id)
    ports = {interface[s.NETWORK_PORT] for interface in present}
    unmatched = [(interface[s.NETWORK_ID], interface[s.NETWORK_FIXED_IP]) for interface in present]
    attached = []
    for index, entry in enumerate(server.properties[s.NETWORKS] or []):
        if entry.get(s.ALLOCATE_NETWORK) == s.NETWORK_NONE:
            continue
        if entry.get(s.NETWORK_PORT):
            if entry[s.NETWORK_PORT] in ports:
                continue
        elif entry.get(s.ALLOCATE_NETWORK) != s.NETWORK_AUTO:
            network_id = helper.network_id(entry)
            match = next(
                (
                    n
                    for n in unmatched
                    if n[0] == network_id and entry.get(s.NETWORK_FIXED_IP) in (None, n[1])
                ),
                None,
            )
            if match is not None:
                unmatched.remove(match)
                continue
        request = helper.attach_request(entry, index, server.properties[s.SECURITY_GROUPS])
        attached.append(helper.attach(server_id, request))
    wait_for_ports(server, server_id, attached, attached=True)
    helper.store_external_ports(helper.interfaces(server_id))


def _building(server: Server, server_id: str) -> bool:
    from stoker.resources.openstack.nova.server import status_of

    try:
        return status_of(server.client().get_server(server_id)) == "BUILD"
    except Exception as error:  # noqa: BLE001 - a server gone is not building
        server.client_plugin().ignore_not_found(error)
        return False


def wait_for_ports(server: Server, server_id: str, ports: list[str], attached: bool) -> None:
    """Wait until Nova has attached (or detached) every one of ``ports``."""
    helper = server.networks_helper()
    deadline = time.monotonic() + DETACH_WAIT_S
    while ports:
        try:
            present = {interface[s.NETWORK_PORT] for interface in helper.interfaces(server_id)}
        except Exception as error:  # noqa: BLE001 - a server gone holds no port
            server.client_plugin().ignore_not_found(error)
            if attached:
                raise
            return
        if all((port_id in present) == attached for port_id in ports):
            return
        if time.monotonic() > deadline:
            verb = "attach" if attached else "detach"
            raise ResourceFailure(
                f"Nova did not {verb} the ports {', '.join(ports)} of server {server_id} in {DETACH_WAIT_S} s"
            )
        time.sleep(0.5)
