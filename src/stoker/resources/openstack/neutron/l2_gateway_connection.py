"""OS::Neutron::L2GatewayConnection, as Heat has it (networking-l2gw): a network connected to
an L2 gateway on a segmentation id; never updated in place (any change replaces it).
Neutron's default policy lets administrators only manage them."""

from __future__ import annotations

from stoker.resources.openstack.neutron.extension_resource import ExtensionResource
from stoker.sdk import constraints, properties, support

__all__ = ["L2GatewayConnection", "resource_mapping"]


class L2GatewayConnection(ExtensionResource):
    """A resource for managing Neutron L2 Gateway Connections.

    The L2 Gateway Connection provides a mapping to connect a Neutron network to a L2 Gateway
    on a particular segmentation ID.
    """

    support_status = support.SupportStatus(version="12.0.0")
    extension_entity = "l2_gateway_connection"

    PROPERTIES = (L2_GATEWAY_ID, NETWORK_ID, SEGMENTATION_ID) = (
        "l2_gateway_id", "network_id", "segmentation_id",
    )  # fmt: skip

    properties_schema = {
        L2_GATEWAY_ID: properties.Schema(
            properties.Schema.STRING,
            "A string specifying a id of the l2gateway resource.",
            required=True,
        ),
        NETWORK_ID: properties.Schema(
            properties.Schema.STRING,
            "A string specifying a id of the network resource to connect to the l2gateway.",
            required=True,
            constraints=[constraints.CustomConstraint("neutron.network")],
        ),
        SEGMENTATION_ID: properties.Schema(
            properties.Schema.STRING,
            "A string specifying a segmentation id for the interface on the l2gateway.",
        ),
    }


def resource_mapping() -> dict[str, type[ExtensionResource]]:
    return {"OS::Neutron::L2GatewayConnection": L2GatewayConnection}
