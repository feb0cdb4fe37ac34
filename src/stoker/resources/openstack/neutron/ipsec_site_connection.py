"""OS::Neutron::IPsecSiteConnection, as Heat has it: a site-to-site IPsec connection of a
VPN service (VPNaaS) with an IKE and an IPsec policy. Name, description and admin state
change in place; anything else replaces it. Created when Neutron reports it ACTIVE."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.rest_resource import NeutronRestResource
from stoker.sdk import attributes, constraints, properties

__all__ = ["IPsecSiteConnection", "resource_mapping"]

_STRING = attributes.Schema.STRING


class IPsecSiteConnection(NeutronRestResource):
    """A resource for IPsec site connection in Neutron.

    This resource has details for the site-to-site IPsec connection, including the peer
    CIDRs, MTU, peer address, DPD settings and status.
    """

    entity = "ipsec_site_connection"
    collection = "/vpn/ipsec-site-connections"
    required_service_extension = "vpnaas"

    PROPERTIES = (
        NAME, DESCRIPTION, PEER_ADDRESS, PEER_ID, PEER_CIDRS, MTU, DPD, PSK, INITIATOR,
        ADMIN_STATE_UP, IKEPOLICY_ID, IPSECPOLICY_ID, VPNSERVICE_ID,
    ) = (
        "name", "description", "peer_address", "peer_id", "peer_cidrs", "mtu", "dpd", "psk", "initiator",
        "admin_state_up", "ikepolicy_id", "ipsecpolicy_id", "vpnservice_id",
    )  # fmt: skip
    _DPD_KEYS = (DPD_ACTIONS, DPD_INTERVAL, DPD_TIMEOUT) = ("actions", "interval", "timeout")
    ATTRIBUTES = (
        ADMIN_STATE_UP_ATTR, AUTH_MODE, DESCRIPTION_ATTR, DPD_ATTR, IKEPOLICY_ID_ATTR, INITIATOR_ATTR,
        IPSECPOLICY_ID_ATTR, MTU_ATTR, NAME_ATTR, PEER_ADDRESS_ATTR, PEER_CIDRS_ATTR, PEER_ID_ATTR, PSK_ATTR,
        ROUTE_MODE, STATUS, TENANT_ID, VPNSERVICE_ID_ATTR,
    ) = (
        "admin_state_up", "auth_mode", "description", "dpd", "ikepolicy_id", "initiator",
        "ipsecpolicy_id", "mtu", "name", "peer_address", "peer_cidrs", "peer_id", "psk",
        "route_mode", "status", "tenant_id", "vpnservice_id",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name for the ipsec site connection.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING,
            "Description for the ipsec site connection.",
            update_allowed=True,
        ),
        PEER_ADDRESS: properties.Schema(
            properties.Schema.STRING,
            "Remote branch router public IPv4 address or IPv6 address or FQDN.",
            required=True,
        ),
        PEER_ID: properties.Schema(
            properties.Schema.STRING, "Remote branch router identity.", required=True
        ),
        PEER_CIDRS: properties.Schema(
            properties.Schema.LIST,
            "Remote subnet(s) in CIDR format.",
            required=True,
            schema=properties.Schema(
                properties.Schema.STRING, constraints=[constraints.CustomConstraint("net_cidr")]
            ),
        ),
        MTU: properties.Schema(
            properties.Schema.INTEGER,
            "Maximum transmission unit size (in bytes) for the ipsec site connection.",
            default=1500,
        ),
        DPD: properties.Schema(
            properties.Schema.MAP,
            "Dead Peer Detection protocol configuration for the ipsec site connection.",
            schema={
                DPD_ACTIONS: properties.Schema(
                    properties.Schema.STRING,
                    "Controls DPD protocol mode.",
                    default="hold",
                    constraints=[
                        constraints.AllowedValues(
                            ["clear", "disabled", "hold", "restart", "restart-by-peer"]
                        )
                    ],
                ),
                DPD_INTERVAL: properties.Schema(
                    properties.Schema.INTEGER, "Number of seconds for the DPD delay.", default=30
                ),
                DPD_TIMEOUT: properties.Schema(
                    properties.Schema.INTEGER, "Number of seconds for the DPD timeout.", default=120
                ),
            },
        ),
        PSK: properties.Schema(
            properties.Schema.STRING,
            "Pre-shared key string for the ipsec site connection.",
            required=True,
        ),
        INITIATOR: properties.Schema(
            properties.Schema.STRING,
            "Initiator state in lowercase for the ipsec site connection.",
            default="bi-directional",
            constraints=[constraints.AllowedValues(["bi-directional", "response-only"])],
        ),
        ADMIN_STATE_UP: properties.Schema(
            properties.Schema.BOOLEAN,
            "Administrative state for the ipsec site connection.",
            default=True,
            update_allowed=True,
        ),
        IKEPOLICY_ID: properties.Schema(
            properties.Schema.STRING,
            "Unique identifier for the ike policy associated with the ipsec site connection.",
            required=True,
        ),
        IPSECPOLICY_ID: properties.Schema(
            properties.Schema.STRING,
            "Unique identifier for the ipsec policy associated with the ipsec site connection.",
            required=True,
        ),
        VPNSERVICE_ID: properties.Schema(
            properties.Schema.STRING,
            "Unique identifier for the vpn service associated with the ipsec site connection.",
            required=True,
        ),
    }

    attributes_schema = {
        ADMIN_STATE_UP_ATTR: attributes.Schema(
            "The administrative state of the ipsec site connection.", type=_STRING
        ),
        AUTH_MODE: attributes.Schema(
            "The authentication mode of the ipsec site connection.", type=_STRING
        ),
        DESCRIPTION_ATTR: attributes.Schema(
            "The description of the ipsec site connection.", type=_STRING
        ),
        DPD_ATTR: attributes.Schema(
            "The dead peer detection protocol configuration of the ipsec site connection.",
            type=attributes.Schema.MAP,
        ),
        IKEPOLICY_ID_ATTR: attributes.Schema(
            "The unique identifier of ike policy associated with the ipsec site connection.",
            type=_STRING,
        ),
        INITIATOR_ATTR: attributes.Schema(
            "The initiator of the ipsec site connection.", type=_STRING
        ),
        IPSECPOLICY_ID_ATTR: attributes.Schema(
            "The unique identifier of ipsec policy associated with the ipsec site connection.",
            type=_STRING,
        ),
        MTU_ATTR: attributes.Schema(
            "The maximum transmission unit size (in bytes) of the ipsec site connection.",
            type=_STRING,
        ),
        NAME_ATTR: attributes.Schema("The name of the ipsec site connection.", type=_STRING),
        PEER_ADDRESS_ATTR: attributes.Schema(
            "The remote branch router public IPv4 address or IPv6 address or FQDN.", type=_STRING
        ),
        PEER_CIDRS_ATTR: attributes.Schema(
            "The remote subnet(s) in CIDR format of the ipsec site connection.",
            type=attributes.Schema.LIST,
        ),
        PEER_ID_ATTR: attributes.Schema(
            "The remote branch router identity of the ipsec site connection.", type=_STRING
        ),
        PSK_ATTR: attributes.Schema(
            "The pre-shared key string of the ipsec site connection.", type=_STRING
        ),
        ROUTE_MODE: attributes.Schema("The route mode of the ipsec site connection.", type=_STRING),
        STATUS: attributes.Schema("The status of the ipsec site connection.", type=_STRING),
        TENANT_ID: attributes.Schema(
            "The unique identifier of the tenant owning the ipsec site connection.", type=_STRING
        ),
        VPNSERVICE_ID_ATTR: attributes.Schema(
            "The unique identifier of vpn service associated with the ipsec site connection.",
            type=_STRING,
        ),
    }

    def handle_create(self) -> dict[str, Any]:
        body = self.prepare_properties()
        if body.get(self.DPD):
            # Heat's key is "actions"; Neutron's is "action" and it refuses any other (Heat
            # sends "actions" as it is, and Neutron answers 400): sent under Neutron's name.
            dpd = dict(body[self.DPD])
            dpd["action"] = dpd.pop(self.DPD_ACTIONS, None) or "hold"
            body[self.DPD] = dpd
        return self.rest_create(body)

    def check_create_complete(self, token: Any) -> bool:
        return self.wait_status(("ACTIVE",), waiting=("PENDING_CREATE",))

    def handle_update(self, json_snippet: Any, tmpl_diff: Any, prop_diff: Mapping[str, Any]) -> None:
        self.rest_update(dict(prop_diff))


def resource_mapping() -> dict[str, type[NeutronRestResource]]:
    return {"OS::Neutron::IPsecSiteConnection": IPsecSiteConnection}
