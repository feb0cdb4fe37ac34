"""OS::Octavia::Listener, as Heat has it.

Owns: the listener's schema, the request Heat makes (``loadbalancer_id``,
``default_pool_id``), Heat's rule that TERMINATED_HTTPS needs a default TLS container, and
update in place of what Heat allows (default pool, name, admin state, description, TLS
containers, connection limit, allowed CIDRs); protocol, port and load balancer are
replacement. Waits, retries, delete and check are ``OctaviaBase``'s.
"""

from __future__ import annotations

from stoker.resources.openstack.octavia.octavia_base import OctaviaBase
from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource

__all__ = ["Listener", "resource_mapping"]

SUPPORTED_PROTOCOLS = ("TCP", "HTTP", "HTTPS", "TERMINATED_HTTPS", "PROXY", "UDP")


class Listener(OctaviaBase):
    """A resource for managing octavia Listeners.

    This resource creates and manages Neutron octavia Listeners,
    which represent a listening endpoint for the vip.
    """

    sdk_name, noun = "listener", "listener"

    PROPERTIES = (
        PROTOCOL_PORT, PROTOCOL, LOADBALANCER, DEFAULT_POOL, NAME,
        ADMIN_STATE_UP, DESCRIPTION, DEFAULT_TLS_CONTAINER_REF,
        SNI_CONTAINER_REFS, CONNECTION_LIMIT, TENANT_ID, ALLOWED_CIDRS,
    ) = (
        "protocol_port", "protocol", "loadbalancer", "default_pool", "name",
        "admin_state_up", "description", "default_tls_container_ref",
        "sni_container_refs", "connection_limit", "tenant_id", "allowed_cidrs",
    )  # fmt: skip

    ATTRIBUTES = (LOADBALANCERS_ATTR, DEFAULT_POOL_ID_ATTR) = ("loadbalancers", "default_pool_id")

    FIELDS = {
        LOADBALANCER: "loadbalancer_id",
        DEFAULT_POOL: "default_pool_id",
        TENANT_ID: "project_id",
    }

    properties_schema = {
        PROTOCOL_PORT: properties.Schema(
            properties.Schema.INTEGER,
            "TCP or UDP port on which to listen for client traffic.",
            required=True,
            constraints=[constraints.Range(1, 65535)],
        ),
        PROTOCOL: properties.Schema(
            properties.Schema.STRING,
            "Protocol on which to listen for the client traffic.",
            required=True,
            constraints=[constraints.AllowedValues(list(SUPPORTED_PROTOCOLS))],
        ),
        LOADBALANCER: properties.Schema(
            properties.Schema.STRING,
            "ID or name of the load balancer with which listener is associated.",
            required=True,
            constraints=[constraints.CustomConstraint("octavia.loadbalancer")],
        ),
        DEFAULT_POOL: properties.Schema(
            properties.Schema.STRING,
            "ID or name of the default pool for the listener.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("octavia.pool")],
        ),
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of this listener.", update_allowed=True
        ),
        ADMIN_STATE_UP: properties.Schema(
            properties.Schema.BOOLEAN,
            "The administrative state of this listener.",
            update_allowed=True,
            default=True,
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING,
            "Description of this listener.",
            update_allowed=True,
            default="",
        ),
        DEFAULT_TLS_CONTAINER_REF: properties.Schema(
            properties.Schema.STRING,
            "Default TLS container reference to retrieve TLS information.",
            update_allowed=True,
        ),
        SNI_CONTAINER_REFS: properties.Schema(
            properties.Schema.LIST, "List of TLS container references for SNI.", update_allowed=True
        ),
        CONNECTION_LIMIT: properties.Schema(
            properties.Schema.INTEGER,
            "The maximum number of connections permitted for this load balancer. Defaults to -1, "
            "which is infinite.",
            update_allowed=True,
            default=-1,
            constraints=[constraints.Range(min=-1)],
        ),
        TENANT_ID: properties.Schema(
            properties.Schema.STRING, "The ID of the tenant who owns the listener."
        ),
        ALLOWED_CIDRS: properties.Schema(
            properties.Schema.LIST,
            "A list of IPv4, IPv6 or mix of both CIDRs. The default is all allowed. When a list of "
            "CIDRs is provided, the default switches to deny all.",
            update_allowed=True,
            schema=properties.Schema(
                properties.Schema.STRING, constraints=[constraints.CustomConstraint("net_cidr")]
            ),
            support_status=support.SupportStatus(version="14.0.0"),
        ),
    }

    attributes_schema = {
        LOADBALANCERS_ATTR: attributes.Schema(
            "ID of the load balancer this listener is associated to.", type=attributes.Schema.LIST
        ),
        DEFAULT_POOL_ID_ATTR: attributes.Schema(
            "ID of the default pool this listener is associated to.", type=attributes.Schema.STRING
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.LOADBALANCER],
                client_plugin="octavia", finder="get_loadbalancer",
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.DEFAULT_POOL], client_plugin="octavia", finder="get_pool"
            ),
        ]  # fmt: skip

    def validate(self) -> None:
        super().validate()
        if (
            self.properties[self.PROTOCOL] == "TERMINATED_HTTPS"
            and self.given(self.DEFAULT_TLS_CONTAINER_REF) is None
        ):
            raise ValidationError(
                "Property default_tls_container_ref required when protocol is TERMINATED_HTTPS.",
                path=self.place(self.DEFAULT_TLS_CONTAINER_REF),
                hint="give the reference of the TLS container (a Barbican secret container) to terminate with",
            )


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Octavia::Listener": Listener}
