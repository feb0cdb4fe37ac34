"""AWS::EC2::NetworkInterface, as Heat 27 has it: a Neutron port on a subnet.

Owns: creating the port (named by the physical resource name, so a create cut short finds
it), its security groups (none given: Neutron's default group; an empty list: none) and
their update in place, deletion ("already gone" is fine), check, and the
``PrivateIpAddress`` attribute (the port's first fixed IP).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.aws.ec2.tags import tags_schema
from stoker.sdk import attributes, constraints, properties
from stoker.sdk.resource import Resource

__all__ = ["NetworkInterface", "resource_mapping"]


class NetworkInterface(Resource):
    """A network interface: a Neutron port on a subnet, which an Instance's
    NetworkInterfaces can name."""

    default_client_name = "neutron"

    PROPERTIES = (
        DESCRIPTION,
        GROUP_SET,
        PRIVATE_IP_ADDRESS,
        SOURCE_DEST_CHECK,
        SUBNET_ID,
        TAGS,
    ) = (
        "Description",
        "GroupSet",
        "PrivateIpAddress",
        "SourceDestCheck",
        "SubnetId",
        "Tags",
    )
    ATTRIBUTES = (PRIVATE_IP_ADDRESS_ATTR,) = ("PrivateIpAddress",)

    properties_schema = {
        DESCRIPTION: properties.Schema(properties.Schema.STRING, "Description for this interface."),
        GROUP_SET: properties.Schema(
            properties.Schema.LIST,
            "List of security group IDs associated with this interface.",
            update_allowed=True,
        ),
        # Heat gives this property no description; this is what it does.
        PRIVATE_IP_ADDRESS: properties.Schema(
            properties.Schema.STRING, "The fixed IP address the interface is given on the subnet."
        ),
        SOURCE_DEST_CHECK: properties.Schema(
            properties.Schema.BOOLEAN,
            "Flag indicating if traffic to or from instance is validated.",
            implemented=False,
        ),
        SUBNET_ID: properties.Schema(
            properties.Schema.STRING,
            "Subnet ID to associate with this interface.",
            required=True,
            constraints=[constraints.CustomConstraint("neutron.subnet")],
        ),
        TAGS: tags_schema("List of tags associated with this interface.", implemented=False),
    }

    attributes_schema = {
        PRIVATE_IP_ADDRESS_ATTR: attributes.Schema(
            "Private IP address of the network interface.", type=attributes.Schema.STRING
        ),
    }

    def handle_create(self) -> str:
        subnet_id = self.properties[self.SUBNET_ID]
        network_id = self.client().get_subnet(subnet_id).network_id
        fixed_ip: dict[str, str] = {"subnet_id": subnet_id}
        if self.properties[self.PRIVATE_IP_ADDRESS]:
            fixed_ip["ip_address"] = self.properties[self.PRIVATE_IP_ADDRESS]
        request: dict[str, Any] = {
            "name": self.physical_resource_name(),
            "admin_state_up": True,
            "network_id": network_id,
            "fixed_ips": [fixed_ip],
        }
        # Left out, Neutron gives the port the default group; [] means no group at all.
        if self.properties.data.get(self.GROUP_SET) is not None:
            request["security_groups"] = self.client_plugin().get_secgroup_uuids(
                list(self.properties[self.GROUP_SET])
            )
        port = self.client().create_port(**request)
        self.resource_id_set(port.id)
        return str(port.id)

    def find_created(self) -> str | None:
        name = self.physical_resource_name()
        found = [port for port in self.client().ports(name=name) if port.name == name]
        return str(found[0].id) if len(found) == 1 else None

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if self.GROUP_SET not in prop_diff:
            return
        # As at create; a GroupSet removed means the default group again.
        groups = prop_diff[self.GROUP_SET]
        ids = self.client_plugin().get_secgroup_uuids(
            list(groups) if groups is not None else ["default"]
        )
        self.client().update_port(self.resource_id, security_groups=ids)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        with self.client_plugin().ignore_not_found:
            self.client().delete_port(self.resource_id)

    def handle_check(self) -> None:
        self.client().get_port(self.resource_id)

    def _resolve_attribute(self, name: str) -> Any:
        if name != self.PRIVATE_IP_ADDRESS_ATTR or self.resource_id is None:
            return None
        fixed_ips = self.client().get_port(self.resource_id).fixed_ips or []
        return fixed_ips[0]["ip_address"] if fixed_ips else None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"AWS::EC2::NetworkInterface": NetworkInterface}
