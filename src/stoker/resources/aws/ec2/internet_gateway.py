"""AWS::EC2::InternetGateway and AWS::EC2::VPCGatewayAttachment, as Heat 27 has them: the
gateway is a name only (Neutron's external network plays it); attaching it to a VPC gives
each route table of the VPC in this stack a gateway to the cloud's one external network.

Owns: the external network lookup (Heat's: exactly one, else "Expected 1 external network,
found N"), the implicit dependency of an attachment on the route tables of its VPC, setting
and clearing their gateways, check.
"""

from __future__ import annotations

from typing import Any

from stoker.resources.aws.ec2.tags import tags_schema
from stoker.sdk import properties
from stoker.sdk.dependencies import UNKNOWN, ResourceView, StackView
from stoker.sdk.exceptions import ResourceFailure
from stoker.sdk.resource import Resource

__all__ = ["InternetGateway", "VPCGatewayAttachment", "external_network_id", "resource_mapping"]

ROUTE_TABLE_TYPE = "AWS::EC2::RouteTable"


def external_network_id(network_client: Any) -> str:
    """The cloud's external network; Heat has no setting to choose among several."""
    external = list(network_client.networks(is_router_external=True))
    if len(external) != 1:
        raise ResourceFailure(f"Expected 1 external network, found {len(external)}")
    return str(external[0].id)


class InternetGateway(Resource):
    """An internet gateway: a name for the cloud's external network, which a
    VPCGatewayAttachment connects a VPC's route tables to."""

    PROPERTIES = (TAGS,) = ("Tags",)

    properties_schema = {
        TAGS: tags_schema("Tags to attach to the gateway.", implemented=False),
    }

    def handle_create(self) -> None:
        self.resource_id_set(self.physical_resource_name())

    def handle_delete(self) -> None:
        return None


class VPCGatewayAttachment(Resource):
    """Connects the route tables of a VPC (those of this stack) to the external network."""

    default_client_name = "neutron"

    PROPERTIES = (VPC_ID, INTERNET_GATEWAY_ID, VPN_GATEWAY_ID) = (
        "VpcId",
        "InternetGatewayId",
        "VpnGatewayId",
    )

    properties_schema = {
        VPC_ID: properties.Schema(
            properties.Schema.STRING, "VPC ID for this gateway association.", required=True
        ),
        INTERNET_GATEWAY_ID: properties.Schema(
            properties.Schema.STRING, "ID of the InternetGateway."
        ),
        VPN_GATEWAY_ID: properties.Schema(
            properties.Schema.STRING,
            "ID of the VPNGateway to attach to the VPC.",
            implemented=False,
        ),
    }

    @classmethod
    def implicit_dependencies(cls, me: ResourceView, stack: StackView) -> list[str]:
        """Heat's rule: every route table of the template on the same VPC comes first
        (the gateway goes on their routers)."""
        vpc = me.get(cls.VPC_ID)
        if vpc is None or vpc is UNKNOWN:
            return []
        return [
            view.name
            for view in stack.of_type(ROUTE_TABLE_TYPE)
            if view.get("VpcId") is not UNKNOWN and view.get("VpcId") == vpc
        ]

    def _route_table_ids(self) -> list[str]:
        """The routers of the stack's route tables on this VPC."""
        vpc = self.properties[self.VPC_ID]
        records = getattr(self.stack, "current", {}).values()
        return [
            str(record.physical_resource_id)
            for record in records
            if record.type == ROUTE_TABLE_TYPE
            and record.physical_resource_id
            and (record.properties or {}).get("VpcId") == vpc
        ]

    def get_reference_id(self) -> str:
        # Heat records no physical id for an attachment, so its Ref is its name.
        return self.name

    def handle_create(self) -> None:
        network_id = external_network_id(self.client())
        for router_id in self._route_table_ids():
            self.client().update_router(router_id, external_gateway_info={"network_id": network_id})
        self.resource_id_set(self.physical_resource_name())

    def handle_delete(self) -> None:
        for router_id in self._route_table_ids():
            with self.client_plugin().ignore_not_found:
                self.client().update_router(router_id, external_gateway_info={})


def resource_mapping() -> dict[str, type[Resource]]:
    return {
        "AWS::EC2::InternetGateway": InternetGateway,
        "AWS::EC2::VPCGatewayAttachment": VPCGatewayAttachment,
    }
