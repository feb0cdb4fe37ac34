"""OS::Octavia::LoadBalancer, as Heat has it.

Owns: the load balancer's schema (its VIP on a subnet, provider, flavor, availability
zone), the request Heat makes (``vip_subnet_id``, ``flavor_id``, ``project_id`` for Heat's
``tenant_id``), and update in place of name, description and admin state; the rest is
replacement. Waits, retries, delete and check are ``OctaviaBase``'s.
"""

from __future__ import annotations

from stoker.resources.openstack.octavia.octavia_base import OctaviaBase
from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.resource import Resource

__all__ = ["LoadBalancer", "resource_mapping"]


class LoadBalancer(OctaviaBase):
    """A resource for creating octavia Load Balancers.

    This resource creates and manages octavia Load Balancers,
    which allows traffic to be directed between servers.
    """

    sdk_name, noun = "load_balancer", "load balancer"

    PROPERTIES = (
        DESCRIPTION, NAME, PROVIDER, VIP_ADDRESS, VIP_SUBNET,
        ADMIN_STATE_UP, TENANT_ID, FLAVOR, AVAILABILITY_ZONE,
    ) = (
        "description", "name", "provider", "vip_address", "vip_subnet",
        "admin_state_up", "tenant_id", "flavor", "availability_zone",
    )  # fmt: skip

    ATTRIBUTES = (VIP_ADDRESS_ATTR, VIP_PORT_ATTR, VIP_SUBNET_ATTR, POOLS_ATTR, FLAVOR_ID_ATTR) = (
        "vip_address", "vip_port_id", "vip_subnet_id", "pools", "flavor_id",
    )  # fmt: skip

    FIELDS = {VIP_SUBNET: "vip_subnet_id", FLAVOR: "flavor_id", TENANT_ID: "project_id"}

    properties_schema = {
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING,
            "Description of this Load Balancer.",
            update_allowed=True,
            default="",
        ),
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of this Load Balancer.", update_allowed=True
        ),
        PROVIDER: properties.Schema(properties.Schema.STRING, "Provider for this Load Balancer."),
        VIP_ADDRESS: properties.Schema(
            properties.Schema.STRING,
            "IP address for the VIP.",
            constraints=[constraints.CustomConstraint("ip_addr")],
        ),
        VIP_SUBNET: properties.Schema(
            properties.Schema.STRING,
            "The name or ID of the subnet on which to allocate the VIP address.",
            constraints=[constraints.CustomConstraint("neutron.subnet")],
            required=True,
        ),
        ADMIN_STATE_UP: properties.Schema(
            properties.Schema.BOOLEAN,
            "The administrative state of this Load Balancer.",
            default=True,
            update_allowed=True,
        ),
        TENANT_ID: properties.Schema(
            properties.Schema.STRING,
            "The ID of the tenant who owns the Load Balancer. Only administrative users can "
            "specify a tenant ID other than their own.",
            constraints=[constraints.CustomConstraint("keystone.project")],
        ),
        FLAVOR: properties.Schema(
            properties.Schema.STRING,
            "The name or ID of the flavor of the Load Balancer.",
            support_status=support.SupportStatus(version="14.0.0"),
            constraints=[constraints.CustomConstraint("octavia.flavor")],
        ),
        AVAILABILITY_ZONE: properties.Schema(
            properties.Schema.STRING,
            "The availability zone of the Load Balancer.",
            support_status=support.SupportStatus(version="17.0.0"),
            constraints=[constraints.CustomConstraint("octavia.availabilityzone")],
        ),
    }

    attributes_schema = {
        VIP_ADDRESS_ATTR: attributes.Schema(
            "The VIP address of the LoadBalancer.", type=attributes.Schema.STRING
        ),
        VIP_PORT_ATTR: attributes.Schema(
            "The VIP port of the LoadBalancer.", type=attributes.Schema.STRING
        ),
        VIP_SUBNET_ATTR: attributes.Schema(
            "The VIP subnet of the LoadBalancer.", type=attributes.Schema.STRING
        ),
        POOLS_ATTR: attributes.Schema(
            "Pools this LoadBalancer is associated with.", type=attributes.Schema.LIST
        ),
        FLAVOR_ID_ATTR: attributes.Schema(
            "The flavor ID of the LoadBalancer.", type=attributes.Schema.STRING
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.VIP_SUBNET],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="subnet",
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.FLAVOR], client_plugin="octavia", finder="get_flavor"
            ),
        ]  # fmt: skip


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Octavia::LoadBalancer": LoadBalancer}
