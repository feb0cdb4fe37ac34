"""OS::Octavia::PoolMember, as Heat has it.

Owns: the member's schema, the request Heat makes (under its pool, ``subnet_id``), and
update in place of weight, admin state and tags; everything else is replacement. A member
has no name in Heat: the object an interrupted create made is found by what Octavia keeps
unique in a pool, its address and port (and the
rest of what cannot be updated in place). Waits, retries, delete and check are
``OctaviaBase``'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from stoker.resources.openstack.octavia.octavia_base import OctaviaBase
from stoker.sdk import constraints, properties, support, translation
from stoker.sdk.resource import Resource

__all__ = ["PoolMember", "resource_mapping"]


class PoolMember(OctaviaBase):
    """A resource for managing Octavia Pool Members.

    A pool member represents a single backend node.
    """

    sdk_name, noun, named = "member", "member", False

    PROPERTIES = (
        POOL, ADDRESS, PROTOCOL_PORT, MONITOR_ADDRESS, MONITOR_PORT,
        WEIGHT, ADMIN_STATE_UP, SUBNET, TAGS,
    ) = (
        "pool", "address", "protocol_port", "monitor_address", "monitor_port",
        "weight", "admin_state_up", "subnet", "tags",
    )  # fmt: skip

    # Heat names these but declares no attribute schema: only ``show`` is offered.
    ATTRIBUTES = (ADDRESS_ATTR, POOL_ID_ATTR) = ("address", "pool_id")

    FIELDS = {SUBNET: "subnet_id"}
    NOT_SENT = (POOL,)

    properties_schema = {
        POOL: properties.Schema(
            properties.Schema.STRING,
            "Name or ID of the load balancing pool.",
            required=True,
            constraints=[constraints.CustomConstraint("octavia.pool")],
        ),
        ADDRESS: properties.Schema(
            properties.Schema.STRING,
            "IP address of the pool member on the pool network.",
            required=True,
            constraints=[constraints.CustomConstraint("ip_addr")],
        ),
        PROTOCOL_PORT: properties.Schema(
            properties.Schema.INTEGER,
            "Port on which the pool member listens for requests or connections.",
            required=True,
            constraints=[constraints.Range(1, 65535)],
        ),
        MONITOR_ADDRESS: properties.Schema(
            properties.Schema.STRING,
            "Alternate IP address which health monitor can use for health check.",
            constraints=[constraints.CustomConstraint("ip_addr")],
        ),
        MONITOR_PORT: properties.Schema(
            properties.Schema.INTEGER,
            "Alternate Port which health monitor can use for health check.",
            constraints=[constraints.Range(1, 65535)],
        ),
        WEIGHT: properties.Schema(
            properties.Schema.INTEGER,
            "Weight of pool member in the pool (default to 1).",
            default=1,
            constraints=[constraints.Range(0, 256)],
            update_allowed=True,
        ),
        ADMIN_STATE_UP: properties.Schema(
            properties.Schema.BOOLEAN,
            "The administrative state of the pool member.",
            default=True,
            update_allowed=True,
        ),
        SUBNET: properties.Schema(
            properties.Schema.STRING,
            "Subnet name or ID of this member.",
            constraints=[constraints.CustomConstraint("neutron.subnet")],
        ),
        TAGS: properties.Schema(
            properties.Schema.LIST,
            "A list of simple strings assigned to the member. The property is supported with "
            "Stein Octavia or newer version.",
            update_allowed=True,
            support_status=support.SupportStatus(version="13.0.0"),
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.SUBNET],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="subnet",
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.POOL], client_plugin="octavia", finder="get_pool"
            ),
        ]  # fmt: skip

    def parent(self) -> tuple[Any, ...]:
        return (self.properties[self.POOL],)

    def candidates(self) -> Iterable[Any]:
        return self.client().members(self.properties[self.POOL])


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Octavia::PoolMember": PoolMember}
