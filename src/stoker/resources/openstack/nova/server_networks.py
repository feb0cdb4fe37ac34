"""OS::Nova::Server's networking in the cloud: the ports a server makes for its ``networks``
entries, floating IP associations, the interfaces of an in-place update, Nova 2.37's
"get me a network" done client-side for an older Nova, and the address attributes.

Owns: the resource data keys ``internal_ports`` and ``external_ports`` (as Heat stores
them: a JSON list of ``{"id": ...}``) and ``auto_network`` (the network and subnet stoker
made for ``allocate_network: auto``, deleted with the server).

Must not: decide what changes (``server_requests.plan_network_update`` does) or touch the
server itself beyond its interfaces.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stoker.resources.openstack.client_plugin import AmbiguousNameError, http_status
from stoker.resources.openstack.nova import server_requests as requests
from stoker.resources.openstack.nova import server_schema as s
from stoker.sdk.exceptions import EntityNotFound, ResourceFailure

if TYPE_CHECKING:
    from stoker.resources.openstack.nova.server import Server

__all__ = ["AUTO_NETWORK_CIDR", "ServerNetworks"]

INTERNAL_PORTS, EXTERNAL_PORTS, AUTO_NETWORK = "internal_ports", "external_ports", "auto_network"
# The subnet of a network stoker makes for "allocate_network: auto" when the project has
# none and Neutron cannot auto-allocate one. Nothing routes it: overlaps do not matter.
AUTO_NETWORK_CIDR = "10.0.0.0/24"


class ServerNetworks:
    """The networking of one Server resource (called from its handlers)."""

    def __init__(self, server: Server):
        self.server = server

    @property
    def neutron(self) -> Any:
        return self.server.client("neutron")

    @property
    def neutron_plugin(self) -> Any:
        return self.server.client_plugin("neutron")

    # -- ports the server made, and ports it was given -------------------------------------

    def ports(self, kind: str = INTERNAL_PORTS) -> list[dict[str, str]]:
        stored = self.server.data().get(kind)
        return json.loads(stored) if stored else []

    def _set_ports(self, kind: str, ports: list[dict[str, str]]) -> None:
        self.server.data_set(kind, json.dumps(ports))

    def _record_port(self, port_id: str, kind: str = INTERNAL_PORTS) -> None:
        self._set_ports(kind, [*self.ports(kind), {"id": port_id}])

    def _forget_port(self, port_id: str, kind: str = INTERNAL_PORTS) -> None:
        self._set_ports(kind, [port for port in self.ports(kind) if port["id"] != port_id])

    def internal_port_ids(self) -> list[str]:
        return [port["id"] for port in self.ports()]

    def network_id(self, network: Mapping[str, Any]) -> str | None:
        """The entry's network: given, or the network of its subnet."""
        if network.get(s.NETWORK_ID):
            return str(network[s.NETWORK_ID])
        if network.get(s.NETWORK_SUBNET):
            return self.network_of_subnet(str(network[s.NETWORK_SUBNET]))
        return None

    def network_of_subnet(self, subnet_id: str) -> str | None:
        return str(self.neutron.get_subnet(subnet_id).network_id)

    def security_group_ids(self, security_groups: Sequence[str] | None) -> list[str]:
        return self.neutron_plugin.get_secgroup_uuids(list(security_groups)) if security_groups else []

    def create_internal_port(self, network: Mapping[str, Any], index: int, security_groups: Sequence[str] | None) -> str:
        """A port for an entry with a subnet or port_extra_properties, named as Heat names
        it and recorded before anything else happens (so delete finds it)."""
        body = requests.internal_port_request(self.network_id(network), network, self.security_group_ids(security_groups))
        body["name"] = f"{self.server.name}-port-{index}"
        self._resolve_qos(body)
        port = self.neutron.create_port(**body)
        self._record_port(str(port.id))
        return str(port.id)

    def _resolve_qos(self, body: dict[str, Any]) -> None:
        policy = body.pop("qos_policy", None)
        if policy:
            body["qos_policy_id"] = self.neutron_plugin.get_qos_policy_id(policy)

    def update_internal_port(self, port_id: str, body: dict[str, Any]) -> None:
        body = dict(body)
        self._resolve_qos(body)
        if body:
            self.neutron.update_port(port_id, **body)

    def delete_internal_port(self, port_id: str) -> None:
        self.neutron.delete_port(port_id, ignore_missing=True)
        self._forget_port(port_id)

    def delete_internal_ports(self) -> None:
        for port_id in self.internal_port_ids():
            self.delete_internal_port(port_id)
        self.server.data_delete(INTERNAL_PORTS)

    def store_external_ports(self, interfaces: Sequence[Mapping[str, Any]]) -> None:
        """Record the server's ports it did not make (Heat's external_ports)."""
        internal = set(self.internal_port_ids())
        external = sorted({str(interface[s.NETWORK_PORT]) for interface in interfaces} - internal)
        if [port["id"] for port in self.ports(EXTERNAL_PORTS)] != external:
            self._set_ports(EXTERNAL_PORTS, [{"id": port} for port in external])

    def associate_floating_ip(self, floating_ip: str, port_id: str, fixed_ip: str | None) -> None:
        body: dict[str, Any] = {"port_id": port_id}
        if fixed_ip:
            body["fixed_ip_address"] = fixed_ip
        self.neutron.update_ip(floating_ip, **body)

    def disassociate_floating_ip(self, floating_ip: str) -> None:
        try:
            self.neutron.update_ip(floating_ip, port_id=None)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.neutron_plugin.ignore_not_found(error)

    # -- create ---------------------------------------------------------------------------

    def build_nics(self, networks: Sequence[Mapping[str, Any]], security_groups: Sequence[str] | None) -> list[dict[str, Any]]:
        """Nova's ``networks`` entries for a list of ``networks`` properties, making the
        ports that entries with a subnet or port_extra_properties need, and associating
        floating IPs with the ports they name."""
        nics = []
        for index, network in enumerate(networks):
            self._check_subnet_in_network(network)
            port_id = network.get(s.NETWORK_PORT) or None
            if not port_id and (network.get(s.NETWORK_SUBNET) or network.get(s.NETWORK_PORT_EXTRA)):
                port_id = self.create_internal_port(network, index, security_groups)
            if network.get(s.NETWORK_FLOATING_IP) and port_id:
                self.associate_floating_ip(network[s.NETWORK_FLOATING_IP], port_id, network.get(s.NETWORK_FIXED_IP))
            network_id = None if port_id else self.network_id(network)
            nics.append(requests.nic_request(network_id, port_id, network.get(s.NETWORK_FIXED_IP), network.get(s.NIC_TAG)))
        return nics

    def _check_subnet_in_network(self, network: Mapping[str, Any]) -> None:
        subnet, net_id = network.get(s.NETWORK_SUBNET), network.get(s.NETWORK_ID)
        if network.get(s.NETWORK_PORT) is None and subnet and net_id and self.network_of_subnet(subnet) != net_id:
            raise ResourceFailure(f"Specified subnet {subnet} does not belongs to network {net_id}.")

    # -- "get me a network" (compute 2.37) on an older Nova --------------------------------

    def available_networks(self) -> list[str]:
        """What Nova's "auto" would choose from: the project's own networks and the shared
        ones, without external networks."""
        project_id = self.neutron_plugin.connection.current_project_id
        found = {}
        for query in ({"project_id": project_id, "is_shared": False, "is_admin_state_up": True}, {"is_shared": True}):
            for network in self.neutron.networks(**query):
                if not network.is_router_external:
                    found[str(network.id)] = network
        return sorted(found)

    def auto_allocate_network(self) -> tuple[str, str]:
        """A network for ``allocate_network: auto`` without Nova 2.37, and how it was got:
        the project's only network; else Neutron's auto-allocated topology when Neutron can
        make one; else a network and subnet named after the server, recorded (``auto_network``)
        so delete removes them."""
        recorded = self.server.data().get(AUTO_NETWORK)
        if recorded:
            return json.loads(recorded)["network"], "made by stoker for this server"
        networks = self.available_networks()
        if len(networks) > 1:
            raise ResourceFailure(
                "Unable to automatically allocate a network for project "
                f"{self.neutron_plugin.connection.current_project_id}: Multiple possible networks "
                "found, use a Network ID to be more specific."
            )
        if networks:
            return networks[0], "the project's only network"
        if self.neutron_plugin.has_extension("auto-allocated-topology"):
            try:
                topology = self.neutron.get_auto_allocated_topology(self.neutron_plugin.connection.current_project_id)
            except Exception as error:  # noqa: BLE001 - no default external network or pool: make one
                if not _is_refusal(error):
                    raise
            else:
                return str(topology.id), "Neutron's auto-allocated topology"
        return self._make_network(), "made by stoker for this server"

    def _make_network(self) -> str:
        name = self.server.physical_resource_name()
        network = self.neutron.create_network(name=name)
        # Recorded at once: a failure below still leaves it for delete to remove.
        self.server.data_set(AUTO_NETWORK, json.dumps({"network": str(network.id)}))
        subnet = self.neutron.create_subnet(network_id=network.id, name=name, ip_version=4, cidr=AUTO_NETWORK_CIDR)
        self.server.data_set(AUTO_NETWORK, json.dumps({"network": str(network.id), "subnet": str(subnet.id)}))
        return str(network.id)

    def delete_auto_network(self) -> bool:
        """Delete the network stoker made for "auto"; False while ports still use it
        (Nova deletes the server's port after the server)."""
        recorded = self.server.data().get(AUTO_NETWORK)
        if not recorded:
            return True
        network_id = json.loads(recorded)["network"]
        try:
            self.neutron.delete_network(network_id, ignore_missing=True)
        except Exception as error:  # noqa: BLE001
            if self.neutron_plugin.is_conflict(error):
                return False
            raise
        self.server.data_delete(AUTO_NETWORK)
        return True

    # -- interfaces (in-place updates, replacement) -------------------------------------------

    def interfaces(self, server_id: str) -> list[dict[str, Any]]:
        """The server's interfaces as ``{port, network, fixed_ip, subnet}``."""
        found = []
        for interface in self.server.client().server_interfaces(server_id):
            fixed_ips = interface.fixed_ips or []
            first = fixed_ips[0] if fixed_ips else {}
            found.append(
                {
                    s.NETWORK_PORT: interface.port_id,
                    s.NETWORK_ID: interface.net_id,
                    s.NETWORK_FIXED_IP: first.get("ip_address"),
                    s.NETWORK_SUBNET: first.get("subnet_id"),
                }
            )
        return found

    def attach_request(self, network: Mapping[str, Any], index: int, security_groups: Sequence[str] | None) -> dict[str, Any]:
        """What an interface attach of one new entry needs (ports made, floating IP
        associated with a port given or made): ``{port_id, net_id, fixed_ip, security_groups}``."""
        if network.get(s.ALLOCATE_NETWORK) == s.NETWORK_AUTO:
            network_id = self.server.emulated_auto_network()
            return {"port_id": None, "net_id": network_id, "fixed_ip": None, "security_groups": self.security_group_ids(security_groups)}
        port_id = network.get(s.NETWORK_PORT) or None
        if not port_id and (network.get(s.NETWORK_SUBNET) or network.get(s.NETWORK_PORT_EXTRA)):
            port_id = self.create_internal_port(network, index, security_groups)
        request: dict[str, Any] = {"port_id": port_id, "net_id": None, "fixed_ip": None, "security_groups": []}
        if not port_id:
            request["net_id"] = self.network_id(network)
            request["security_groups"] = self.security_group_ids(security_groups)
            if request["net_id"]:
                request["fixed_ip"] = network.get(s.NETWORK_FIXED_IP)
        if network.get(s.NETWORK_FLOATING_IP) and port_id:
            self.associate_floating_ip(network[s.NETWORK_FLOATING_IP], port_id, network.get(s.NETWORK_FIXED_IP))
        return request

    def attach(self, server_id: str, request: Mapping[str, Any]) -> str:
        """Attach an interface; the port's id (Nova makes one for a network)."""
        attrs: dict[str, Any] = {}
        if request.get("port_id"):
            attrs["port_id"] = request["port_id"]
        elif request.get("net_id"):
            attrs["net_id"] = request["net_id"]
            if request.get("fixed_ip"):
                attrs["fixed_ips"] = [{"ip_address": request["fixed_ip"]}]
        interface = self.server.client().create_server_interface(server_id, **attrs)
        port_id = str(interface.port_id)
        if not request.get("port_id") and request.get("security_groups"):
            self.neutron.update_port(port_id, security_groups=list(request["security_groups"]))
        return port_id

    def detach(self, server_id: str, port_id: str) -> None:
        try:
            self.server.client().delete_server_interface(port_id, server=server_id, ignore_missing=True)
        except Exception as error:  # noqa: BLE001 - a server already gone has no interface
            self.server.client_plugin().ignore_not_found(error)

    def is_attached(self, server_id: str, port_id: str) -> bool:
        return any(interface[s.NETWORK_PORT] == port_id for interface in self.interfaces(server_id))

    # -- attributes -----------------------------------------------------------------------------

    def _network_ids_by_name(self, names: Sequence[str]) -> dict[str, str]:
        found = {}
        for name in names:
            try:
                found[name] = self.neutron_plugin.find_resourceid_by_name_or_id("network", name)
            except (EntityNotFound, AmbiguousNameError):
                continue  # a name no network or several have: left out, as Heat does
        return found

    def extend_with_ids(self, by_name: Mapping[str, Any]) -> dict[str, Any]:
        """The map again under each network's id too (Heat's _extend_networks)."""
        extended = dict(by_name)
        for name, network_id in self._network_ids_by_name(list(by_name)).items():
            extended[network_id] = by_name[name]
        return extended

    def addresses(self, server_id: str) -> dict[str, Any]:
        """Heat's ``addresses``: per network name (and id), each address of the server's
        ports with its port, MAC, type, version, subnets and network; floating IPs too."""
        by_name: dict[str, list[dict[str, Any]]] = {}
        for port in self.neutron.ports(device_id=server_id):
            network = self.neutron_plugin.show("network", port.network_id)
            entries = by_name.setdefault(network.get("name") or port.network_id, [])
            subnets = [self.neutron_plugin.show("subnet", fixed["subnet_id"]) for fixed in port.fixed_ips or [] if fixed.get("subnet_id")]
            for fixed in port.fixed_ips or []:
                address = fixed.get("ip_address")
                if not address:
                    continue
                version = requests.ip_version(address)
                for floating in self.neutron.ips(port_id=port.id, fixed_ip_address=address):
                    entries.append(
                        {
                            "addr": floating.floating_ip_address, "version": version,
                            "OS-EXT-IPS-MAC:mac_addr": port.mac_address, "OS-EXT-IPS:type": "floating", "port": None,
                        }
                    )
                entries.append(
                    {
                        "addr": address, "version": version, "OS-EXT-IPS-MAC:mac_addr": port.mac_address,
                        "OS-EXT-IPS:type": "fixed", "port": port.id, "subnets": subnets, "network": network,
                    }
                )
        return self.extend_with_ids(by_name)


def server_networks(addresses: Mapping[str, Any] | None) -> dict[str, list[str]]:
    """novaclient's ``server.networks``: each network label's addresses."""
    return {label: [entry.get("addr") for entry in entries or []] for label, entries in (addresses or {}).items()}


def first_address(addresses: Mapping[str, Any] | None) -> str:
    """Heat's first_address: the first address of the last network label, or ''."""
    networks = server_networks(addresses)
    for label in sorted(networks, reverse=True):
        if networks[label]:
            return str(networks[label][0])
    return ""


def _is_refusal(error: BaseException) -> bool:
    return http_status(error) in (400, 404, 409, 500)
