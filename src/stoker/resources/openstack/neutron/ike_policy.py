"""OS::Neutron::IKEPolicy, as Heat has it: a VPNaaS IKE policy. Everything but the
negotiation mode changes in place (as Heat allows); the mode replaces it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.rest_resource import NeutronRestResource
from stoker.sdk import attributes, constraints, properties

__all__ = ["IKEPolicy", "lifetime_schema", "resource_mapping"]

_STRING = attributes.Schema.STRING


def lifetime_schema(description: str, *, update_allowed: bool) -> properties.Schema:
    """The ``lifetime`` map of the IKE and IPsec policies."""
    return properties.Schema(
        properties.Schema.MAP,
        description,
        update_allowed=update_allowed,
        schema={
            "units": properties.Schema(
                properties.Schema.STRING,
                "Safety assessment lifetime units.",
                default="seconds",
                constraints=[constraints.AllowedValues(["seconds", "kilobytes"])],
            ),
            "value": properties.Schema(
                properties.Schema.INTEGER,
                "Safety assessment lifetime value in specified units.",
                default=3600,
            ),
        },
    )


# Heat 27's lists (the IKE and IPsec policies share them).
ENCRYPTION_ALGORITHMS = [
    "3des",
    "aes-128",
    "aes-192",
    "aes-256",
    "aes-128-ccm-8",
    "aes-192-ccm-8",
    "aes-256-ccm-8",
    "aes-128-ccm-12",
    "aes-192-ccm-12",
    "aes-256-ccm-12",
    "aes-128-ccm-16",
    "aes-192-ccm-16",
    "aes-256-ccm-16",
    "aes-128-gcm-8",
    "aes-192-gcm-8",
    "aes-256-gcm-8",
    "aes-128-gcm-12",
    "aes-192-gcm-12",
    "aes-256-gcm-12",
    "aes-128-gcm-16",
    "aes-192-gcm-16",
    "aes-256-gcm-16",
    "aes-128-ctr",
    "aes-192-ctr",
    "aes-256-ctr",
]
PFS_GROUPS = [
    "group2",
    "group5",
    "group14",
    "group15",
    "group16",
    "group17",
    "group18",
    "group19",
    "group20",
    "group21",
    "group22",
    "group23",
    "group24",
    "group25",
    "group26",
    "group27",
    "group28",
    "group29",
    "group30",
    "group31",
]
AUTH_ALGORITHMS = ["sha1", "sha256", "sha384", "sha512", "aes-xcbc", "aes-cmac"]


class IKEPolicy(NeutronRestResource):
    """A resource for IKE policy in Neutron.

    The Internet Key Exchange policy identifies the authentication and encryption algorithm
    used during phase one and phase two negotiation of a VPN connection.
    """

    entity = "ikepolicy"
    collection = "/vpn/ikepolicies"
    plural = "ikepolicies"
    required_service_extension = "vpnaas"

    PROPERTIES = (
        NAME, DESCRIPTION, AUTH_ALGORITHM, ENCRYPTION_ALGORITHM, PHASE1_NEGOTIATION_MODE, LIFETIME, PFS, IKE_VERSION,
    ) = (
        "name", "description", "auth_algorithm", "encryption_algorithm", "phase1_negotiation_mode", "lifetime",
        "pfs", "ike_version",
    )  # fmt: skip
    ATTRIBUTES = (
        AUTH_ALGORITHM_ATTR, DESCRIPTION_ATTR, ENCRYPTION_ALGORITHM_ATTR, IKE_VERSION_ATTR, LIFETIME_ATTR,
        NAME_ATTR, PFS_ATTR, PHASE1_NEGOTIATION_MODE_ATTR, TENANT_ID,
    ) = (
        "auth_algorithm", "description", "encryption_algorithm", "ike_version", "lifetime",
        "name", "pfs", "phase1_negotiation_mode", "tenant_id",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name for the ike policy.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description for the ike policy.", update_allowed=True
        ),
        AUTH_ALGORITHM: properties.Schema(
            properties.Schema.STRING,
            "Authentication hash algorithm for the ike policy.",
            default="sha1",
            constraints=[constraints.AllowedValues(AUTH_ALGORITHMS)],
            update_allowed=True,
        ),
        ENCRYPTION_ALGORITHM: properties.Schema(
            properties.Schema.STRING,
            "Encryption algorithm for the ike policy.",
            default="aes-128",
            constraints=[constraints.AllowedValues(ENCRYPTION_ALGORITHMS)],
            update_allowed=True,
        ),
        PHASE1_NEGOTIATION_MODE: properties.Schema(
            properties.Schema.STRING,
            "Negotiation mode for the ike policy.",
            default="main",
            constraints=[constraints.AllowedValues(["main"])],
        ),
        LIFETIME: lifetime_schema(
            "Safety assessment lifetime configuration for the ike policy.", update_allowed=True
        ),
        PFS: properties.Schema(
            properties.Schema.STRING,
            "Perfect forward secrecy in lowercase for the ike policy.",
            default="group5",
            constraints=[constraints.AllowedValues(PFS_GROUPS)],
            update_allowed=True,
        ),
        IKE_VERSION: properties.Schema(
            properties.Schema.STRING,
            "Version for the ike policy.",
            default="v1",
            constraints=[constraints.AllowedValues(["v1", "v2"])],
            update_allowed=True,
        ),
    }

    attributes_schema = {
        AUTH_ALGORITHM_ATTR: attributes.Schema(
            "The authentication hash algorithm used by the ike policy.", type=_STRING
        ),
        DESCRIPTION_ATTR: attributes.Schema("The description of the ike policy.", type=_STRING),
        ENCRYPTION_ALGORITHM_ATTR: attributes.Schema(
            "The encryption algorithm used by the ike policy.", type=_STRING
        ),
        IKE_VERSION_ATTR: attributes.Schema("The version of the ike policy.", type=_STRING),
        LIFETIME_ATTR: attributes.Schema(
            "The safety assessment lifetime configuration for the ike policy.",
            type=attributes.Schema.MAP,
        ),
        NAME_ATTR: attributes.Schema("The name of the ike policy.", type=_STRING),
        PFS_ATTR: attributes.Schema("The perfect forward secrecy of the ike policy.", type=_STRING),
        PHASE1_NEGOTIATION_MODE_ATTR: attributes.Schema(
            "The negotiation mode of the ike policy.", type=_STRING
        ),
        TENANT_ID: attributes.Schema(
            "The unique identifier of the tenant owning the ike policy.", type=_STRING
        ),
    }

    def handle_create(self) -> dict[str, Any]:
        return self.rest_create(self.prepare_properties())

    def handle_update(self, json_snippet: Any, tmpl_diff: Any, prop_diff: Mapping[str, Any]) -> None:
        self.rest_update(dict(prop_diff))


def resource_mapping() -> dict[str, type[NeutronRestResource]]:
    return {"OS::Neutron::IKEPolicy": IKEPolicy}
