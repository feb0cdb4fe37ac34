"""OS::Neutron::FirewallPolicy, as Heat 27 has it: an ordered list of firewall rules of
Neutron's FWaaS **v1** API (``/fw/firewall_policies``), served by no Neutron since Stein
(see ``firewall.py``). Every property changes in place."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.rest_resource import NeutronRestResource
from stoker.sdk import attributes, properties

__all__ = ["FirewallPolicy", "resource_mapping"]

_STRING = attributes.Schema.STRING


class FirewallPolicy(NeutronRestResource):
    """A resource for the FirewallPolicy resource in Neutron FWaaS.

    FirewallPolicy resource is an ordered collection of firewall rules. A firewall policy
    can be shared across tenants.
    """

    entity = "firewall_policy"
    collection = "/fw/firewall_policies"
    plural = "firewall_policies"
    required_service_extension = "fwaas"

    PROPERTIES = (NAME, DESCRIPTION, SHARED, AUDITED, FIREWALL_RULES) = (
        "name", "description", "shared", "audited", "firewall_rules",
    )  # fmt: skip
    ATTRIBUTES = (NAME_ATTR, DESCRIPTION_ATTR, FIREWALL_RULES_ATTR, SHARED_ATTR, AUDITED_ATTR, TENANT_ID) = (
        "name", "description", "firewall_rules", "shared", "audited", "tenant_id",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name for the firewall policy.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description for the firewall policy.", update_allowed=True
        ),
        SHARED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether this policy should be shared across all tenants.",
            default=False,
            update_allowed=True,
        ),
        AUDITED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether this policy should be audited. When set to True, each time the firewall "
            "policy or the associated firewall rules are changed, this attribute will be set to "
            "False and will have to be explicitly set to True through an update operation.",
            default=False,
            update_allowed=True,
        ),
        FIREWALL_RULES: properties.Schema(
            properties.Schema.LIST,
            "An ordered list of firewall rules to apply to the firewall. (Prior to version "
            "14.0.0 this was a required property).",
            update_allowed=True,
        ),
    }

    attributes_schema = {
        NAME_ATTR: attributes.Schema("Name for the firewall policy.", type=_STRING),
        DESCRIPTION_ATTR: attributes.Schema("Description of the firewall policy.", type=_STRING),
        FIREWALL_RULES_ATTR: attributes.Schema(
            "List of firewall rules in this firewall policy.", type=attributes.Schema.LIST
        ),
        SHARED_ATTR: attributes.Schema("Shared status of this firewall policy.", type=_STRING),
        AUDITED_ATTR: attributes.Schema("Audit status of this firewall policy.", type=_STRING),
        TENANT_ID: attributes.Schema("Id of the tenant owning the firewall policy.", type=_STRING),
    }

    def handle_create(self) -> dict[str, Any]:
        return self.rest_create(self.prepare_properties())

    def handle_update(self, json_snippet: Any, tmpl_diff: Any, prop_diff: Mapping[str, Any]) -> None:
        self.rest_update(dict(prop_diff))


def resource_mapping() -> dict[str, type[NeutronRestResource]]:
    return {"OS::Neutron::FirewallPolicy": FirewallPolicy}
