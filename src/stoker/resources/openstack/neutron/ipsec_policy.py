"""OS::Neutron::IPsecPolicy, as Heat has it: a VPNaaS IPsec policy. Name and description
change in place; anything else replaces it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.ike_policy import (
    AUTH_ALGORITHMS,
    ENCRYPTION_ALGORITHMS,
    PFS_GROUPS,
    lifetime_schema,
)
from stoker.resources.openstack.neutron.rest_resource import NeutronRestResource
from stoker.sdk import attributes, constraints, properties

__all__ = ["IPsecPolicy", "resource_mapping"]

_STRING = attributes.Schema.STRING


class IPsecPolicy(NeutronRestResource):
    """A resource for IPsec policy in Neutron.

    The IP security policy specifying the authentication and encryption algorithm, and
    encapsulation mode used for the established VPN connection.
    """

    entity = "ipsecpolicy"
    collection = "/vpn/ipsecpolicies"
    plural = "ipsecpolicies"
    required_service_extension = "vpnaas"

    PROPERTIES = (
        NAME, DESCRIPTION, TRANSFORM_PROTOCOL, ENCAPSULATION_MODE, AUTH_ALGORITHM, ENCRYPTION_ALGORITHM, LIFETIME, PFS,
    ) = (
        "name", "description", "transform_protocol", "encapsulation_mode", "auth_algorithm",
        "encryption_algorithm", "lifetime", "pfs",
    )  # fmt: skip
    ATTRIBUTES = (
        AUTH_ALGORITHM_ATTR, DESCRIPTION_ATTR, ENCAPSULATION_MODE_ATTR, ENCRYPTION_ALGORITHM_ATTR, LIFETIME_ATTR,
        NAME_ATTR, PFS_ATTR, TENANT_ID, TRANSFORM_PROTOCOL_ATTR,
    ) = (
        "auth_algorithm", "description", "encapsulation_mode", "encryption_algorithm", "lifetime",
        "name", "pfs", "tenant_id", "transform_protocol",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name for the ipsec policy.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description for the ipsec policy.", update_allowed=True
        ),
        TRANSFORM_PROTOCOL: properties.Schema(
            properties.Schema.STRING,
            "Transform protocol for the ipsec policy.",
            default="esp",
            constraints=[constraints.AllowedValues(["esp", "ah", "ah-esp"])],
        ),
        ENCAPSULATION_MODE: properties.Schema(
            properties.Schema.STRING,
            "Encapsulation mode for the ipsec policy.",
            default="tunnel",
            constraints=[constraints.AllowedValues(["tunnel", "transport"])],
        ),
        AUTH_ALGORITHM: properties.Schema(
            properties.Schema.STRING,
            "Authentication hash algorithm for the ipsec policy.",
            default="sha1",
            constraints=[constraints.AllowedValues(AUTH_ALGORITHMS)],
        ),
        ENCRYPTION_ALGORITHM: properties.Schema(
            properties.Schema.STRING,
            "Encryption algorithm for the ipsec policy.",
            default="aes-128",
            constraints=[constraints.AllowedValues(ENCRYPTION_ALGORITHMS)],
        ),
        LIFETIME: lifetime_schema(
            "Safety assessment lifetime configuration for the ipsec policy.", update_allowed=False
        ),
        PFS: properties.Schema(
            properties.Schema.STRING,
            "Perfect forward secrecy for the ipsec policy.",
            default="group5",
            constraints=[constraints.AllowedValues(PFS_GROUPS)],
        ),
    }

    attributes_schema = {
        AUTH_ALGORITHM_ATTR: attributes.Schema(
            "The authentication hash algorithm of the ipsec policy.", type=_STRING
        ),
        DESCRIPTION_ATTR: attributes.Schema("The description of the ipsec policy.", type=_STRING),
        ENCAPSULATION_MODE_ATTR: attributes.Schema(
            "The encapsulation mode of the ipsec policy.", type=_STRING
        ),
        ENCRYPTION_ALGORITHM_ATTR: attributes.Schema(
            "The encryption algorithm of the ipsec policy.", type=_STRING
        ),
        LIFETIME_ATTR: attributes.Schema(
            "The safety assessment lifetime configuration of the ipsec policy.",
            type=attributes.Schema.MAP,
        ),
        NAME_ATTR: attributes.Schema("The name of the ipsec policy.", type=_STRING),
        PFS_ATTR: attributes.Schema(
            "The perfect forward secrecy of the ipsec policy.", type=_STRING
        ),
        TENANT_ID: attributes.Schema(
            "The unique identifier of the tenant owning the ipsec policy.", type=_STRING
        ),
        TRANSFORM_PROTOCOL_ATTR: attributes.Schema(
            "The transform protocol of the ipsec policy.", type=_STRING
        ),
    }

    def handle_create(self) -> dict[str, Any]:
        return self.rest_create(self.prepare_properties())

    def handle_update(self, json_snippet: Any, tmpl_diff: Any, prop_diff: Mapping[str, Any]) -> None:
        self.rest_update(dict(prop_diff))


def resource_mapping() -> dict[str, type[NeutronRestResource]]:
    return {"OS::Neutron::IPsecPolicy": IPsecPolicy}
