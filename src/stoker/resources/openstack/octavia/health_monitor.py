"""OS::Octavia::HealthMonitor, as Heat has it.

Owns: the monitor's schema, the request Heat makes (``pool_id``), and update in place of
everything but pool, type and tenant. A monitor has no name in Heat, and Octavia allows
one per pool: the object an interrupted create made is the pool's monitor, when its type
is the one asked. Waits, retries, delete and check are ``OctaviaBase``'s.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from stoker.resources.openstack.octavia.octavia_base import OctaviaBase
from stoker.sdk import attributes, constraints, properties, translation
from stoker.sdk.resource import Resource

__all__ = ["HealthMonitor", "resource_mapping"]


class HealthMonitor(OctaviaBase):
    """A resource to handle load balancer health monitors.

    This resource creates and manages octavia healthmonitors,
    which watches status of the load balanced servers.
    """

    sdk_name, noun, named = "health_monitor", "health monitor", False

    PROPERTIES = (
        ADMIN_STATE_UP, DELAY, EXPECTED_CODES, HTTP_METHOD,
        MAX_RETRIES, POOL, TIMEOUT, TYPE, URL_PATH, TENANT_ID,
    ) = (
        "admin_state_up", "delay", "expected_codes", "http_method",
        "max_retries", "pool", "timeout", "type", "url_path", "tenant_id",
    )  # fmt: skip

    HTTP_METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "TRACE", "OPTIONS", "CONNECT", "PATCH")

    ATTRIBUTES = (POOLS_ATTR,) = ("pools",)

    FIELDS = {POOL: "pool_id", TENANT_ID: "project_id"}

    properties_schema = {
        ADMIN_STATE_UP: properties.Schema(
            properties.Schema.BOOLEAN,
            "The administrative state of the health monitor.",
            default=True,
            update_allowed=True,
        ),
        DELAY: properties.Schema(
            properties.Schema.INTEGER,
            "The minimum time in seconds between regular connections of the member.",
            required=True,
            update_allowed=True,
            constraints=[constraints.Range(min=0)],
        ),
        EXPECTED_CODES: properties.Schema(
            properties.Schema.STRING,
            "The HTTP status codes expected in response from the member to declare it healthy. "
            "Specify one of the following values: a single value, such as 200. a list, such as "
            "200, 202. a range, such as 200-204.",
            update_allowed=True,
        ),
        HTTP_METHOD: properties.Schema(
            properties.Schema.STRING,
            "The HTTP method used for requests by the monitor of type HTTP.",
            update_allowed=True,
            constraints=[constraints.AllowedValues(list(HTTP_METHODS))],
        ),
        MAX_RETRIES: properties.Schema(
            properties.Schema.INTEGER,
            "Number of permissible connection failures before changing the member status to INACTIVE.",
            required=True,
            update_allowed=True,
            constraints=[constraints.Range(min=1, max=10)],
        ),
        POOL: properties.Schema(
            properties.Schema.STRING,
            "ID or name of the load balancing pool.",
            required=True,
            constraints=[constraints.CustomConstraint("octavia.pool")],
        ),
        TIMEOUT: properties.Schema(
            properties.Schema.INTEGER,
            "Maximum number of seconds for a monitor to wait for a connection to be established "
            "before it times out.",
            required=True,
            update_allowed=True,
            constraints=[constraints.Range(min=0)],
        ),
        TYPE: properties.Schema(
            properties.Schema.STRING,
            "One of predefined health monitor types.",
            required=True,
            constraints=[
                constraints.AllowedValues(["PING", "TCP", "HTTP", "HTTPS", "UDP-CONNECT"])
            ],
        ),
        URL_PATH: properties.Schema(
            properties.Schema.STRING,
            "The HTTP path used in the HTTP request used by the monitor to test a member health. A "
            "valid value is a string the begins with a forward slash (/).",
            update_allowed=True,
        ),
        TENANT_ID: properties.Schema(
            properties.Schema.STRING, "ID of the tenant who owns the health monitor."
        ),
    }

    attributes_schema = {
        POOLS_ATTR: attributes.Schema(
            "The list of Pools related to this monitor.", type=attributes.Schema.LIST
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props,
                translation.TranslationRule.RESOLVE,
                [self.POOL],
                client_plugin="octavia",
                finder="get_pool",
            ),
        ]

    def candidates(self) -> Iterable[Any]:
        pool = self.client().get_pool(self.properties[self.POOL])
        return (
            [self.client().get_health_monitor(pool.health_monitor_id)]
            if pool.health_monitor_id
            else []
        )

    def is_mine(self, candidate: Any) -> bool:
        return candidate.type == self.properties[self.TYPE]


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Octavia::HealthMonitor": HealthMonitor}
