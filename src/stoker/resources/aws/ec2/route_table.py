"""AWS::EC2::RouteTable and AWS::EC2::SubnetRouteTableAssociation, as Heat 27 has them: a
route table is a Neutron router of its own (given the VPC router's external gateway, if
that has one); associating a subnet moves the subnet's interface from the VPC's router to
the route table's, and the delete moves it back.

Owns: the route table's router (named by the physical resource name, so a create cut short
finds it), its gateway, the interface moves, check.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.aws.ec2.tags import tags_schema
from stoker.resources.aws.ec2.vpc import router_for_vpc
from stoker.resources.openstack.neutron.client_plugin import as_dict
from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import constraints, properties, support
from stoker.sdk.exceptions import ResourceFailure, UpdateReplace
from stoker.sdk.resource import Resource

__all__ = ["RouteTable", "SubnetRouteTableAssociation", "resource_mapping"]


def _router_interface_subnets(network_client: Any, router_id: str) -> set[str]:
    return {
        fixed.get("subnet_id")
        for port in network_client.ports(device_id=router_id)
        for fixed in port.fixed_ips or []
    }


class RouteTable(Resource):
    """A route table of a VPC: a Neutron router the VPC's subnets can be moved to."""

    support_status = support.SupportStatus(version="2014.1")
    default_client_name = "neutron"

    PROPERTIES = (VPC_ID, TAGS) = ("VpcId", "Tags")

    properties_schema = {
        VPC_ID: properties.Schema(
            properties.Schema.STRING, "VPC ID for where the route table is created.", required=True
        ),
        TAGS: tags_schema("List of tags to be attached to this resource.", implemented=False),
    }

    def handle_create(self) -> str:
        router = self.client().create_router(name=self.physical_resource_name())
        self.resource_id_set(router.id)
        return str(router.id)

    def find_created(self) -> str | None:
        name = self.physical_resource_name()
        found = [router for router in self.client().routers(name=name) if router.name == name]
        return str(found[0].id) if len(found) == 1 else None

    def check_create_complete(self, token: Any) -> bool:
        client = self.client()
        if not NeutronResource.is_built(as_dict(client.get_router(self.resource_id))):
            return False
        default_router = router_for_vpc(client, self.properties[self.VPC_ID])
        gateway = default_router.external_gateway_info if default_router is not None else None
        if gateway:
            # The VPC's router reaches the external network: so does this one.
            client.update_router(
                self.resource_id, external_gateway_info={"network_id": gateway["network_id"]}
            )
        return True

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        plugin = self.client_plugin()
        with plugin.ignore_not_found:
            # Neutron refuses to delete a router with a gateway port only in old
            # releases; Heat clears it after the delete, which "already gone" makes moot.
            self.client().update_router(self.resource_id, external_gateway_info={})
        with plugin.ignore_not_found:
            self.client().delete_router(self.resource_id)

    def handle_check(self) -> None:
        NeutronResource.is_built(as_dict(self.client().get_router(self.resource_id)))


class SubnetRouteTableAssociation(Resource):
    """Routes a subnet through a route table instead of its VPC's router."""

    default_client_name = "neutron"

    PROPERTIES = (ROUTE_TABLE_ID, SUBNET_ID) = ("RouteTableId", "SubnetId")

    properties_schema = {
        ROUTE_TABLE_ID: properties.Schema(
            properties.Schema.STRING, "Route table ID.", required=True
        ),
        SUBNET_ID: properties.Schema(
            properties.Schema.STRING,
            "Subnet ID.",
            required=True,
            constraints=[constraints.CustomConstraint("neutron.subnet")],
        ),
    }

    def _router_for_subnet(self, subnet_id: str) -> Any | None:
        subnet = self.client().get_subnet(subnet_id)
        return router_for_vpc(self.client(), subnet.network_id)

    def get_reference_id(self) -> str:
        # Heat records no physical id for an association, so its Ref is its name.
        return self.name

    def needs_replace_failed(self) -> bool:
        # A replacement's delete would take the subnet off the route table again (back to
        # the VPC's router) after the new one put it there: a failed create is taken over.
        return not self.resource_id

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if prop_diff:
            raise UpdateReplace(self.name)
        self.handle_create()  # a failed create taken over: every step is idempotent

    def handle_create(self) -> None:
        client, plugin = self.client(), self.client_plugin()
        subnet_id, router_id = self.properties[self.SUBNET_ID], self.properties[self.ROUTE_TABLE_ID]
        with plugin.ignore_not_found:
            previous = self._router_for_subnet(subnet_id)
            if previous is not None and subnet_id in _router_interface_subnets(client, previous.id):
                client.remove_interface_from_router(previous.id, subnet=subnet_id)
        if subnet_id not in _router_interface_subnets(client, router_id):
            client.add_interface_to_router(router_id, subnet=subnet_id)
        # Recorded last: an association with an id is done, one without is redone by its
        # replacement (every step above is idempotent) and its delete does nothing.
        self.resource_id_set(f"{router_id}:subnet_id={subnet_id}")

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return  # never associated (or a replacement has the association now)
        client, plugin = self.client(), self.client_plugin()
        subnet_id, router_id = self.properties[self.SUBNET_ID], self.properties[self.ROUTE_TABLE_ID]
        with plugin.ignore_not_found:
            client.remove_interface_from_router(router_id, subnet=subnet_id)
        with plugin.ignore_not_found:
            default_router = self._router_for_subnet(subnet_id)
            if default_router is not None and subnet_id not in _router_interface_subnets(
                client, default_router.id
            ):
                client.add_interface_to_router(default_router.id, subnet=subnet_id)

    def handle_check(self) -> None:
        router_id, subnet_id = self.properties[self.ROUTE_TABLE_ID], self.properties[self.SUBNET_ID]
        if subnet_id not in _router_interface_subnets(self.client(), router_id):
            raise ResourceFailure(f"Subnet {subnet_id} is not attached to route table {router_id}")


def resource_mapping() -> dict[str, type[Resource]]:
    return {
        "AWS::EC2::RouteTable": RouteTable,
        "AWS::EC2::SubnetRouteTableAssociation": SubnetRouteTableAssociation,
    }
