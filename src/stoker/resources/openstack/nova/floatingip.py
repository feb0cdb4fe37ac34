"""OS::Nova::FloatingIP and OS::Nova::FloatingIPAssociation, as Heat 27 has them.

Both are HIDDEN in Heat since 11.0.0 (use OS::Neutron::FloatingIP and
OS::Neutron::FloatingIPAssociation) and still work there, through Neutron: nova-network
is gone, so the "pool" is the external network, and an association puts the floating IP
on the server's first port (its first IPv4 address). Old templates use them, so they are
accepted here too, with the support-status warning every HIDDEN type gives.

Owns: allocating and releasing the floating IP (the physical id is Neutron's floating IP
id), its ``pool`` and ``ip`` attributes, and associating it with a server's port and
taking it off again (update moves it, as Heat's does).
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ResourceFailure
from stoker.sdk.resource import Resource

__all__ = ["NovaFloatingIp", "NovaFloatingIpAssociation", "resource_mapping"]


def _hidden(message: str) -> support.SupportStatus:
    return support.SupportStatus(
        status=support.HIDDEN,
        message=message,
        version="11.0.0",
        previous_status=support.SupportStatus(
            status=support.DEPRECATED,
            message=message,
            version="9.0.0",
            previous_status=support.SupportStatus(version="2014.1"),
        ),
    )


class NovaFloatingIp(Resource):
    """A resource for managing Nova floating IPs.

    Floating IP addresses can change their association between instances by action of
    the user. One of the most common use cases for floating IPs is to provide public IP
    addresses to a private cloud, where there are a limited number of IP addresses
    available. Another is for a public cloud user to have a "static" IP address that can
    be reassigned when an instance is upgraded or moved.
    """

    support_status = _hidden("Please use OS::Neutron::FloatingIP instead.")
    default_client_name = "neutron"

    PROPERTIES = (POOL,) = ("pool",)
    ATTRIBUTES = (POOL_ATTR, IP) = ("pool", "ip")

    properties_schema = {
        POOL: properties.Schema(
            properties.Schema.STRING,
            "Allocate a floating IP from a given floating IP pool. Now that nova-network is "
            "not supported this represents the external network.",
        ),
    }

    attributes_schema = {
        POOL_ATTR: attributes.Schema("Pool from which floating IP is allocated.", type=attributes.Schema.STRING),
        IP: attributes.Schema("Allocated floating IP address.", type=attributes.Schema.STRING),
    }

    def _external_network_id(self) -> str:
        """The pool's network, or the cloud's only external network (as Heat: exactly one)."""
        pool = self.properties[self.POOL]
        if pool:
            return self.client_plugin().find_resourceid_by_name_or_id("network", pool)
        external = list(self.client().networks(is_router_external=True))
        if len(external) != 1:
            raise ResourceFailure(
                f"Expected 1 external network, found {len(external)} (give the pool property: the external network to allocate from)",
                path=f"resources.{self.name}.properties.{self.POOL}",
            )
        return str(external[0].id)

    def handle_create(self) -> None:
        created = self.client().create_ip(floating_network_id=self._external_network_id())
        self.resource_id_set(created.id)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        with self.client_plugin().ignore_not_found:
            self.client().delete_ip(self.resource_id)

    def handle_check(self) -> None:
        self.client().get_ip(self.resource_id)

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        found = self.client().get_ip(self.resource_id)
        value = found.floating_network_id if name == self.POOL_ATTR else found.floating_ip_address
        return str(value)


class NovaFloatingIpAssociation(Resource):
    """A resource associates Nova floating IP with Nova server resource.

    Resource for associating existing Nova floating IP and Nova server.
    """

    support_status = _hidden("Please use OS::Neutron::FloatingIPAssociation instead.")
    default_client_name = "nova"

    PROPERTIES = (SERVER, FLOATING_IP) = ("server_id", "floating_ip")

    properties_schema = {
        SERVER: properties.Schema(
            properties.Schema.STRING,
            "Server to assign floating IP to.",
            required=True,
            update_allowed=True,
            constraints=[constraints.CustomConstraint("nova.server")],
        ),
        FLOATING_IP: properties.Schema(
            properties.Schema.STRING,
            "ID of the floating IP to assign to the server.",
            required=True,
            update_allowed=True,
        ),
    }

    def get_reference_id(self) -> str:
        return self.physical_resource_name()

    def _associate(self, server_id: str, floating_ip_id: str) -> None:
        """Heat's nova plugin ``associate_floatingip``: the server's first interface (a
        warning when it has several) and that port's first IPv4 address."""
        interfaces = list(self.client().server_interfaces(server_id))
        if not interfaces:
            raise ResourceFailure(f"No network interface found for server {server_id}.")
        if len(interfaces) > 1:
            self.warn(f"Multiple interfaces found for server {server_id}, using the first one.")
        first = interfaces[0]
        addresses = [fixed["ip_address"] for fixed in first.fixed_ips or [] if _is_ipv4(fixed.get("ip_address"))]
        if not addresses:
            raise ResourceFailure(f"The first interface of server {server_id} (port {first.port_id}) has no IPv4 address.")
        self.client("neutron").update_ip(floating_ip_id, port_id=first.port_id, fixed_ip_address=addresses[0])

    def _dissociate(self, floating_ip_id: str) -> None:
        self.client("neutron").update_ip(floating_ip_id, port_id=None, fixed_ip_address=None)

    def handle_create(self) -> None:
        self._associate(self.properties[self.SERVER], self.properties[self.FLOATING_IP])
        # Heat records the resource's own id; the stack-unique uuid serves the same end.
        self.resource_id_set(self.uuid or self.physical_resource_name())

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        with self.client_plugin("neutron").ignore_not_found:
            self._dissociate(self.properties[self.FLOATING_IP])

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> None:
        if not prop_diff:
            return
        # A new floating IP: the old one leaves the server first.
        if self.FLOATING_IP in prop_diff:
            self.handle_delete()
        server_id = prop_diff.get(self.SERVER) or self.properties[self.SERVER]
        floating_ip_id = prop_diff.get(self.FLOATING_IP) or self.properties[self.FLOATING_IP]
        self._associate(server_id, floating_ip_id)
        self.resource_id_set(self.uuid or self.physical_resource_name())


def _is_ipv4(address: Any) -> bool:
    try:
        return isinstance(address, str) and ipaddress.ip_address(address).version == 4
    except ValueError:
        return False


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Nova::FloatingIP": NovaFloatingIp, "OS::Nova::FloatingIPAssociation": NovaFloatingIpAssociation}
