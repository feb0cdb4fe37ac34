"""AWS::EC2::VPC, as Heat 27 has it: a Neutron network and a router of the same name
(the name is what ties them: Heat's ``router_for_vpc`` finds the router by it).

Owns: creating both (the physical id is the network's), waiting for them to be built,
deleting both ("already gone" is fine), check, and the lookups the other VPC types use
(``router_for_vpc``, ``network_for_vpc``).

Crash safety: the network and router are named by the physical resource name, so a create
cut short finds the network by name (``find_created``) and the poll makes the router if it
is still missing, never a second one.
"""

from __future__ import annotations

from typing import Any

from stoker.resources.aws.ec2.tags import tags_schema
from stoker.resources.openstack.neutron.client_plugin import as_dict
from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import constraints, properties
from stoker.sdk.exceptions import ResourceFailure
from stoker.sdk.resource import Resource

__all__ = ["VPC", "network_for_vpc", "resource_mapping", "router_for_vpc"]


def network_for_vpc(network_client: Any, network_id: str) -> Any:
    return network_client.get_network(network_id)


def router_for_vpc(network_client: Any, network_id: str) -> Any | None:
    """The VPC's router: the one named as its network (None when there is none, as for a
    network made outside a VPC). Several is Heat's error."""
    network = network_for_vpc(network_client, network_id)
    routers = [
        router
        for router in network_client.routers(name=network.name)
        if router.name == network.name
    ]
    if not routers:
        return None
    if len(routers) > 1:
        raise ResourceFailure(f"Multiple routers found with name {network.name}")
    return routers[0]


class VPC(Resource):
    """A Virtual Private Cloud: a Neutron network and a router named as it, to which the
    VPC's subnets are attached."""

    default_client_name = "neutron"

    PROPERTIES = (CIDR_BLOCK, INSTANCE_TENANCY, TAGS) = ("CidrBlock", "InstanceTenancy", "Tags")

    properties_schema = {
        CIDR_BLOCK: properties.Schema(properties.Schema.STRING, "CIDR block to apply to the VPC."),
        INSTANCE_TENANCY: properties.Schema(
            properties.Schema.STRING,
            "Allowed tenancy of instances launched in the VPC. default - any tenancy; dedicated - "
            "instance will be dedicated, regardless of the tenancy option specified at instance launch.",
            default="default",
            constraints=[constraints.AllowedValues(["default", "dedicated"])],
            implemented=False,
        ),
        TAGS: tags_schema("List of tags to attach to the instance.", implemented=False),
    }

    def _ensure_router(self) -> None:
        if router_for_vpc(self.client(), str(self.resource_id)) is None:
            self.client().create_router(name=self.physical_resource_name())

    def handle_create(self) -> str:
        network = self.client().create_network(name=self.physical_resource_name())
        self.resource_id_set(network.id)
        self._ensure_router()
        return str(network.id)

    def find_created(self) -> str | None:
        name = self.physical_resource_name()
        found = [network for network in self.client().networks(name=name) if network.name == name]
        return str(found[0].id) if len(found) == 1 else None

    def check_create_complete(self, token: Any) -> bool:
        if not NeutronResource.is_built(
            as_dict(network_for_vpc(self.client(), str(self.resource_id)))
        ):
            return False
        router = router_for_vpc(self.client(), str(self.resource_id))
        if router is None:
            # A create resumed after the network was made and before the router was.
            self._ensure_router()
            return False
        return NeutronResource.is_built(as_dict(router))

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        plugin = self.client_plugin()
        with plugin.ignore_not_found:
            router = router_for_vpc(self.client(), self.resource_id)
            if router is not None:
                self.client().delete_router(router.id)
        with plugin.ignore_not_found:
            self.client().delete_network(self.resource_id)

    def handle_check(self) -> None:
        NeutronResource.is_built(as_dict(network_for_vpc(self.client(), str(self.resource_id))))
        router = router_for_vpc(self.client(), str(self.resource_id))
        if router is None:
            raise ResourceFailure(f"The router of VPC {self.resource_id} is gone")
        NeutronResource.is_built(as_dict(router))


def resource_mapping() -> dict[str, type[Resource]]:
    return {"AWS::EC2::VPC": VPC}
