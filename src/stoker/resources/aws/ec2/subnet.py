"""AWS::EC2::Subnet, as Heat 27 has it: an IPv4 Neutron subnet on the VPC's network,
attached to the VPC's router when it has one.

Owns: creating the subnet (named by the physical resource name, so a create cut short
finds it) and its router interface, deleting both ("already gone" is fine), check, and the
``AvailabilityZone`` attribute (the property, as Heat answers it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.aws.ec2.tags import tags_schema
from stoker.resources.aws.ec2.vpc import router_for_vpc
from stoker.sdk import attributes, properties
from stoker.sdk.exceptions import UpdateReplace
from stoker.sdk.resource import Resource

__all__ = ["Subnet", "resource_mapping"]


class Subnet(Resource):
    """A subnet of a VPC: a Neutron subnet on the VPC's network, routed by its router."""

    default_client_name = "neutron"

    PROPERTIES = (AVAILABILITY_ZONE, CIDR_BLOCK, VPC_ID, TAGS) = (
        "AvailabilityZone",
        "CidrBlock",
        "VpcId",
        "Tags",
    )
    ATTRIBUTES = (AVAILABILITY_ZONE_ATTR,) = ("AvailabilityZone",)

    properties_schema = {
        AVAILABILITY_ZONE: properties.Schema(
            properties.Schema.STRING, "Availability zone in which you want the subnet."
        ),
        CIDR_BLOCK: properties.Schema(
            properties.Schema.STRING, "CIDR block to apply to subnet.", required=True
        ),
        VPC_ID: properties.Schema(
            properties.Schema.STRING,
            "Ref structure that contains the ID of the VPC on which you want to create the subnet.",
            required=True,
        ),
        TAGS: tags_schema("List of tags to attach to this resource.", implemented=False),
    }

    attributes_schema = {
        AVAILABILITY_ZONE_ATTR: attributes.Schema(
            "Availability Zone of the subnet.", type=attributes.Schema.STRING
        ),
    }

    def _attach_to_router(self, subnet_id: str) -> None:
        router = router_for_vpc(self.client(), self.properties[self.VPC_ID])
        if router is None:
            return
        attached = any(
            any(fixed.get("subnet_id") == subnet_id for fixed in port.fixed_ips or [])
            for port in self.client().ports(device_id=router.id)
        )
        if not attached:
            self.client().add_interface_to_router(router.id, subnet=subnet_id)

    def handle_create(self) -> str:
        subnet = self.client().create_subnet(
            network_id=self.properties[self.VPC_ID],
            cidr=self.properties[self.CIDR_BLOCK],
            name=self.physical_resource_name(),
            ip_version=4,
        )
        self.resource_id_set(subnet.id)
        return str(subnet.id)

    def check_create_complete(self, token: Any) -> bool:
        # Here, not in handle_create, so a create resumed after the subnet was made
        # still attaches it (once: an interface already there is kept).
        self._attach_to_router(str(self.resource_id))
        return True

    def find_created(self) -> str | None:
        name = self.physical_resource_name()
        found = [subnet for subnet in self.client().subnets(name=name) if subnet.name == name]
        return str(found[0].id) if len(found) == 1 else None

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        plugin = self.client_plugin()
        with plugin.ignore_not_found:
            router = router_for_vpc(self.client(), self.properties[self.VPC_ID])
            if router is not None:
                self.client().remove_interface_from_router(router.id, subnet=self.resource_id)
        with plugin.ignore_not_found:
            self.client().delete_subnet(self.resource_id)

    def needs_replace_failed(self) -> bool:
        """Only a subnet that is gone: a second one with the same CIDR on the VPC's network
        would overlap the first (Neutron refuses it), so a failed create is taken over."""
        if not self.resource_id:
            return True
        try:
            self.client().get_subnet(self.resource_id)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return True
        return False

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if prop_diff:
            raise UpdateReplace(self.name)
        # A failed create taken over: attach it as its create would have.
        self._attach_to_router(str(self.resource_id))

    def handle_check(self) -> None:
        self.client().get_subnet(self.resource_id)

    def _resolve_attribute(self, name: str) -> Any:
        if name == self.AVAILABILITY_ZONE_ATTR:
            return self.properties[self.AVAILABILITY_ZONE]
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"AWS::EC2::Subnet": Subnet}
