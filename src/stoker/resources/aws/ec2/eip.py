"""AWS::EC2::EIP and AWS::EC2::EIPAssociation, as Heat 27 has them: a Neutron floating IP
from the cloud's one external network, and its association with an instance (its first
port) or a network interface (a port), by address or by allocation id.

Owns: allocating and releasing the floating IP (its Ref is the address, ``AllocationId``
its id), associating it on create and on an ``InstanceId`` update, the association's
validation (Heat's messages), create, update in place or replacement (Heat's rule: a new
address or allocation together with a new instance or interface replaces), delete
("already gone" is fine) and check.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from stoker.resources.aws.ec2.internet_gateway import external_network_id
from stoker.resources.aws.ec2.vpc import router_for_vpc
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import EntityNotFound, ResourceFailure, ValidationError
from stoker.sdk.resource import Resource

__all__ = ["ElasticIp", "ElasticIpAssociation", "resource_mapping"]


def _is_ipv4(address: Any) -> bool:
    try:
        return isinstance(address, str) and ipaddress.ip_address(address).version == 4
    except ValueError:
        return False


def associate_with_server(resource: Resource, server_id: str, floating_ip_id: str) -> None:
    """Heat's nova plugin ``associate_floatingip``: the server's first interface and its
    first IPv4 address."""
    interfaces = list(resource.client("nova").server_interfaces(server_id))
    if not interfaces:
        raise ResourceFailure(f"No network interface found for server {server_id}.")
    if len(interfaces) > 1:
        resource.warn(f"Multiple interfaces found for server {server_id}, using the first one.")
    first = interfaces[0]
    addresses = [
        fixed["ip_address"] for fixed in first.fixed_ips or [] if _is_ipv4(fixed.get("ip_address"))
    ]
    if not addresses:
        raise ResourceFailure(
            f"The first interface of server {server_id} (port {first.port_id}) has no IPv4 address."
        )
    resource.client("neutron").update_ip(
        floating_ip_id, port_id=first.port_id, fixed_ip_address=addresses[0]
    )


def floating_ip_by_address(resource: Resource, address: str) -> Any:
    """Heat's lookup of a floating IP by its address (EntityMatchNotFound when none)."""
    found = list(resource.client("neutron").ips(floating_ip_address=address))
    if not found:
        raise EntityNotFound("floating IP", address)
    return found[0]


class ElasticIp(Resource):
    """An elastic IP: a Neutron floating IP from the external network, optionally put on
    an instance."""

    default_client_name = "nova"

    PROPERTIES = (DOMAIN, INSTANCE_ID) = ("Domain", "InstanceId")
    ATTRIBUTES = (ALLOCATION_ID,) = ("AllocationId",)

    properties_schema = {
        DOMAIN: properties.Schema(
            properties.Schema.STRING,
            'Set to "vpc" to have IP address allocation associated to your VPC.',
            support_status=support.SupportStatus(
                status=support.DEPRECATED,
                message="Now we only allow vpc here, so no need to set up this tag anymore.",
                version="9.0.0",
            ),
            constraints=[constraints.AllowedValues(["vpc"])],
        ),
        INSTANCE_ID: properties.Schema(
            properties.Schema.STRING,
            "Instance ID to associate with EIP.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("nova.server")],
        ),
    }

    attributes_schema = {
        ALLOCATION_ID: attributes.Schema(
            "ID that AWS assigns to represent the allocation of the address for use with Amazon VPC. "
            "Returned only for VPC elastic IP addresses.",
            type=attributes.Schema.STRING,
        ),
    }

    def _address(self) -> str:
        if self.resource_id is None:
            return ""
        try:
            return str(self.client("neutron").get_ip(self.resource_id).floating_ip_address or "")
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin("neutron").ignore_not_found(error)
            return ""

    def handle_create(self) -> None:
        neutron = self.client("neutron")
        # The description names the resource, so a create cut short finds its address.
        created = neutron.create_ip(
            floating_network_id=external_network_id(neutron),
            description=self.physical_resource_name(),
        )
        self.resource_id_set(created.id)
        if self.properties[self.INSTANCE_ID]:
            associate_with_server(self, self.properties[self.INSTANCE_ID], created.id)

    def find_created(self) -> str | None:
        name = self.physical_resource_name()
        found = [
            ip for ip in self.client("neutron").ips(description=name) if ip.description == name
        ]
        return str(found[0].id) if len(found) == 1 else None

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if self.INSTANCE_ID not in prop_diff:
            return
        if prop_diff[self.INSTANCE_ID]:
            associate_with_server(self, prop_diff[self.INSTANCE_ID], str(self.resource_id))
        else:
            self.client("neutron").update_ip(self.resource_id, port_id=None, fixed_ip_address=None)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        neutron = self.client_plugin("neutron")
        if self.properties[self.INSTANCE_ID]:
            with neutron.ignore_not_found:
                self.client("neutron").update_ip(
                    self.resource_id, port_id=None, fixed_ip_address=None
                )
        with neutron.ignore_not_found:
            self.client("neutron").delete_ip(self.resource_id)

    def handle_check(self) -> None:
        self.client("neutron").get_ip(self.resource_id)

    def get_reference_id(self) -> str:
        return self._address() or self.name

    def _resolve_attribute(self, name: str) -> Any:
        if name == self.ALLOCATION_ID:
            return str(self.resource_id)
        return None


class ElasticIpAssociation(Resource):
    """Puts an elastic IP (by address or allocation id) on an instance or a network
    interface."""

    default_client_name = "nova"

    PROPERTIES = (INSTANCE_ID, EIP, ALLOCATION_ID, NETWORK_INTERFACE_ID) = (
        "InstanceId",
        "EIP",
        "AllocationId",
        "NetworkInterfaceId",
    )

    properties_schema = {
        INSTANCE_ID: properties.Schema(
            properties.Schema.STRING,
            "Instance ID to associate with EIP specified by EIP property.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("nova.server")],
        ),
        EIP: properties.Schema(
            properties.Schema.STRING,
            "EIP address to associate with instance.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("ip_addr")],
        ),
        ALLOCATION_ID: properties.Schema(
            properties.Schema.STRING, "Allocation ID for VPC EIP address.", update_allowed=True
        ),
        NETWORK_INTERFACE_ID: properties.Schema(
            properties.Schema.STRING,
            "Network interface ID to associate with EIP.",
            update_allowed=True,
        ),
    }

    def get_reference_id(self) -> str:
        return self.physical_resource_name()

    def validate(self) -> None:
        super().validate()
        eip, allocation_id = self.properties[self.EIP], self.properties[self.ALLOCATION_ID]
        instance_id, interface_id = (
            self.properties[self.INSTANCE_ID],
            self.properties[self.NETWORK_INTERFACE_ID],
        )
        path = f"resources.{self.name}.properties"
        if bool(eip) == bool(allocation_id):
            raise ValidationError("Either 'EIP' or 'AllocationId' must be provided.", path=path)
        if eip and not instance_id:
            raise ValidationError("Must specify 'InstanceId' if you specify 'EIP'.", path=path)
        if not instance_id and not interface_id:
            raise ValidationError(
                "At least one of the following properties must be specified: InstanceId, NetworkInterfaceId.",
                path=path,
            )

    # -- Neutron steps --------------------------------------------------------------------

    def _port(self, interface_id: str | None, instance_id: str | None) -> Any | None:
        neutron = self.client("neutron")
        if interface_id:
            return neutron.get_port(interface_id)
        if instance_id:
            ports = list(neutron.ports(device_id=instance_id))
            return ports[0] if ports else None
        return None

    def _add_gateway_router(self, floating_ip_id: str, network_id: str) -> None:
        """A port on a VPC network: the VPC's router gets the floating IP's network as
        its gateway, so Neutron can reach the port."""
        neutron = self.client("neutron")
        router = router_for_vpc(neutron, network_id)
        if router is not None:
            floating_network = neutron.get_ip(floating_ip_id).floating_network_id
            neutron.update_router(router.id, external_gateway_info={"network_id": floating_network})

    def _associate_allocation(
        self,
        allocation_id: str,
        interface_id: str | None,
        instance_id: str | None,
        *,
        required: bool,
    ) -> bool:
        port = self._port(interface_id, instance_id)
        if port is None:
            if required:
                raise ResourceFailure("Failed to update, can not found port info.")
            self.warn("Skipping association, resource not specified")
            return False
        self._add_gateway_router(allocation_id, port.network_id)
        self.client("neutron").update_ip(allocation_id, port_id=port.id)
        return True

    def _release_allocation(self, allocation_id: str, ignore_not_found: bool = False) -> None:
        try:
            self.client("neutron").update_ip(allocation_id, port_id=None)
        except Exception as error:  # noqa: BLE001
            if not (ignore_not_found and self.client_plugin("neutron").is_not_found(error)):
                raise

    def _release_address(self, address: str, ignore_not_found: bool = False) -> None:
        try:
            found = floating_ip_by_address(self, address)
            self.client("neutron").update_ip(found.id, port_id=None, fixed_ip_address=None)
        except EntityNotFound:
            if not ignore_not_found:
                raise
        except Exception as error:  # noqa: BLE001
            if not (ignore_not_found and self.client_plugin("neutron").is_not_found(error)):
                raise

    def _detach_current(self) -> None:
        if self.properties[self.EIP]:
            self._release_address(self.properties[self.EIP])
        else:
            self._release_allocation(self.properties[self.ALLOCATION_ID])

    # -- lifecycle ------------------------------------------------------------------------

    def handle_create(self) -> None:
        eip = self.properties[self.EIP]
        if eip:
            associate_with_server(
                self, self.properties[self.INSTANCE_ID], floating_ip_by_address(self, eip).id
            )
            self.resource_id_set(eip)
            return
        allocation_id = self.properties[self.ALLOCATION_ID]
        if self._associate_allocation(
            allocation_id,
            self.properties[self.NETWORK_INTERFACE_ID],
            self.properties[self.INSTANCE_ID],
            required=False,
        ):
            self.resource_id_set(allocation_id)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        if self.properties[self.EIP]:
            self._release_address(self.properties[self.EIP], ignore_not_found=True)
        elif self.properties[self.ALLOCATION_ID]:
            self._release_allocation(self.properties[self.ALLOCATION_ID], ignore_not_found=True)

    def handle_check(self) -> None:
        if self.properties[self.EIP]:
            floating_ip_by_address(self, self.properties[self.EIP])
        elif self.resource_id is not None:
            self.client("neutron").get_ip(self.resource_id)

    def needs_replace_with_prop_diff(
        self,
        changed_properties_set: set[str],
        after_props: Mapping[str, Any],
        before_props: Mapping[str, Any],
    ) -> bool:
        if self.ALLOCATION_ID in changed_properties_set or self.EIP in changed_properties_set:
            instance_id = (
                after_props.get(self.INSTANCE_ID)
                if self.INSTANCE_ID in changed_properties_set
                else None
            )
            interface_id = (
                after_props.get(self.NETWORK_INTERFACE_ID)
                if self.NETWORK_INTERFACE_ID in changed_properties_set
                else None
            )
            return bool(instance_id or interface_id)
        return False

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if not prop_diff:
            return
        instance_id, interface_id = (
            self.properties[self.INSTANCE_ID],
            self.properties[self.NETWORK_INTERFACE_ID],
        )
        if prop_diff.get(self.EIP):
            self._detach_current()
            associate_with_server(
                self, instance_id, floating_ip_by_address(self, prop_diff[self.EIP]).id
            )
            self.resource_id_set(prop_diff[self.EIP])
        elif prop_diff.get(self.ALLOCATION_ID):
            self._detach_current()
            self._associate_allocation(
                prop_diff[self.ALLOCATION_ID], interface_id, instance_id, required=True
            )
            self.resource_id_set(prop_diff[self.ALLOCATION_ID])
        elif self.INSTANCE_ID in prop_diff or self.NETWORK_INTERFACE_ID in prop_diff:
            # The address stays; it moves to the new instance or interface.
            new_instance, new_interface = (
                prop_diff.get(self.INSTANCE_ID),
                prop_diff.get(self.NETWORK_INTERFACE_ID),
            )
            if self.properties[self.EIP]:
                # An EIP goes on an instance (validate requires InstanceId with it): the new
                # one, or the same one when only NetworkInterfaceId changed (Heat's
                # _handle_update_portInfo asks Nova for server None then, and fails).
                after_instance = new_instance if self.INSTANCE_ID in prop_diff else instance_id
                if not after_instance:
                    raise ResourceFailure("Must specify 'InstanceId' if you specify 'EIP'.")
                associate_with_server(
                    self, after_instance, floating_ip_by_address(self, self.properties[self.EIP]).id
                )
            else:
                self._associate_allocation(
                    self.properties[self.ALLOCATION_ID], new_interface, new_instance, required=True
                )


def resource_mapping() -> dict[str, type[Resource]]:
    return {"AWS::EC2::EIP": ElasticIp, "AWS::EC2::EIPAssociation": ElasticIpAssociation}
