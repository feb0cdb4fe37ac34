"""OS::Neutron::VPNService, as Heat has it: a VPNaaS service on a router and subnet (name,
description and admin state change in place). Complete while Neutron still says
PENDING_CREATE, as in Heat: the service goes ACTIVE only once a site connection uses it,
and the connection can only be made after the service."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.rest_resource import NeutronRestResource
from stoker.sdk import attributes, constraints, properties, support, translation

__all__ = ["VPNService", "resource_mapping"]


class VPNService(NeutronRestResource):
    """A resource for VPN service in Neutron.

    VPN service is a high level object that associates VPN with a specific subnet and
    router.
    """

    entity = "vpnservice"
    collection = "/vpn/vpnservices"
    required_service_extension = "vpnaas"

    PROPERTIES = (NAME, DESCRIPTION, ADMIN_STATE_UP, SUBNET_ID, SUBNET, ROUTER_ID, ROUTER) = (
        "name", "description", "admin_state_up", "subnet_id", "subnet", "router_id", "router",
    )  # fmt: skip
    ATTRIBUTES = (
        ADMIN_STATE_UP_ATTR, DESCRIPTION_ATTR, NAME_ATTR, ROUTER_ID_ATTR, STATUS, SUBNET_ID_ATTR, TENANT_ID,
    ) = (
        "admin_state_up", "description", "name", "router_id", "status", "subnet_id", "tenant_id",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name for the vpn service.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description for the vpn service.", update_allowed=True
        ),
        ADMIN_STATE_UP: properties.Schema(
            properties.Schema.BOOLEAN,
            "Administrative state for the vpn service.",
            default=True,
            update_allowed=True,
        ),
        SUBNET_ID: properties.Schema(
            properties.Schema.STRING,
            "Subnet in which the vpn service will be created.",
            support_status=support.SupportStatus(
                status=support.HIDDEN,
                message="Use property subnet.",
                version="5.0.0",
                previous_status=support.SupportStatus(status=support.DEPRECATED, version="2014.2"),
            ),
            constraints=[constraints.CustomConstraint("neutron.subnet")],
        ),
        SUBNET: properties.Schema(
            properties.Schema.STRING,
            "Subnet in which the vpn service will be created.",
            support_status=support.SupportStatus(version="2014.2"),
            required=True,
            constraints=[constraints.CustomConstraint("neutron.subnet")],
        ),
        ROUTER_ID: properties.Schema(
            properties.Schema.STRING,
            "Unique identifier for the router to which the vpn service will be inserted.",
            support_status=support.SupportStatus(
                status=support.HIDDEN,
                version="6.0.0",
                previous_status=support.SupportStatus(
                    status=support.DEPRECATED,
                    message="Use property router",
                    version="2015.1",
                    previous_status=support.SupportStatus(version="2013.2"),
                ),
            ),
            constraints=[constraints.CustomConstraint("neutron.router")],
        ),
        ROUTER: properties.Schema(
            properties.Schema.STRING,
            "The router to which the vpn service will be inserted.",
            support_status=support.SupportStatus(version="2015.1"),
            required=True,
            constraints=[constraints.CustomConstraint("neutron.router")],
        ),
    }

    attributes_schema = {
        ADMIN_STATE_UP_ATTR: attributes.Schema(
            "The administrative state of the vpn service.", type=attributes.Schema.STRING
        ),
        DESCRIPTION_ATTR: attributes.Schema(
            "The description of the vpn service.", type=attributes.Schema.STRING
        ),
        NAME_ATTR: attributes.Schema("The name of the vpn service.", type=attributes.Schema.STRING),
        ROUTER_ID_ATTR: attributes.Schema(
            "The unique identifier of the router to which the vpn service was inserted.",
            type=attributes.Schema.STRING,
        ),
        STATUS: attributes.Schema("The status of the vpn service.", type=attributes.Schema.STRING),
        SUBNET_ID_ATTR: attributes.Schema(
            "The unique identifier of the subnet in which the vpn service was created.",
            type=attributes.Schema.STRING,
        ),
        TENANT_ID: attributes.Schema(
            "The unique identifier of the tenant owning the vpn service.",
            type=attributes.Schema.STRING,
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        rules = []
        for key, hidden, entity in (
            (self.SUBNET, self.SUBNET_ID, "subnet"),
            (self.ROUTER, self.ROUTER_ID, "router"),
        ):
            rules += [
                translation.TranslationRule(props, translation.TranslationRule.REPLACE, [key], value_path=[hidden]),
                translation.TranslationRule(
                    props, translation.TranslationRule.RESOLVE, [key], client_plugin="neutron",
                    finder="find_resourceid_by_name_or_id", entity=entity,
                ),
            ]  # fmt: skip
        return rules

    def handle_create(self) -> dict[str, Any]:
        body = self.prepare_properties()
        body["subnet_id"] = body.pop(self.SUBNET)
        body["router_id"] = body.pop(self.ROUTER)
        return self.rest_create(body)

    def check_create_complete(self, token: Any) -> bool:
        return self.wait_status(("PENDING_CREATE", "ACTIVE"))

    def handle_update(self, json_snippet: Any, tmpl_diff: Any, prop_diff: Mapping[str, Any]) -> None:
        changes = dict(prop_diff)
        self.prepare_update_properties(changes)
        self.rest_update(changes)


def resource_mapping() -> dict[str, type[NeutronRestResource]]:
    return {"OS::Neutron::VPNService": VPNService}
