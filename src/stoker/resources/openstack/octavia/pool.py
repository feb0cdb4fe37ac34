"""OS::Octavia::Pool, as Heat has it.

Owns: the pool's schema, the request Heat makes (``listener_id``, ``loadbalancer_id``,
session persistence without empty fields), Heat's rules (a listener or a load balancer is
needed; APP_COOKIE needs a cookie name, SOURCE_IP refuses one), and update in place of
admin state, description, session persistence, name, algorithm and TLS; listener, load
balancer and protocol are replacement. Waits, retries, delete and check are
``OctaviaBase``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.octavia.octavia_base import OctaviaBase
from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource

__all__ = ["Pool", "resource_mapping"]


class Pool(OctaviaBase):
    """A resource for managing Octavia Pools.

    This resources manages octavia LBaaS Pools, which represent a group
    of nodes. Pools define the subnet where nodes reside, balancing algorithm,
    and the nodes themselves.
    """

    sdk_name, noun = "pool", "pool"

    PROPERTIES = (
        ADMIN_STATE_UP, DESCRIPTION, SESSION_PERSISTENCE, NAME,
        LB_ALGORITHM, LISTENER, LOADBALANCER, PROTOCOL,
        SESSION_PERSISTENCE_TYPE, SESSION_PERSISTENCE_COOKIE_NAME,
        TLS_ENABLED,
    ) = (
        "admin_state_up", "description", "session_persistence", "name",
        "lb_algorithm", "listener", "loadbalancer", "protocol",
        "type", "cookie_name", "tls_enabled",
    )  # fmt: skip

    SESSION_PERSISTENCE_TYPES = (SOURCE_IP, HTTP_COOKIE, APP_COOKIE) = (
        "SOURCE_IP",
        "HTTP_COOKIE",
        "APP_COOKIE",
    )
    SUPPORTED_PROTOCOLS = ("TCP", "HTTP", "HTTPS", "TERMINATED_HTTPS", "PROXY", "UDP")

    ATTRIBUTES = (HEALTHMONITOR_ID_ATTR, LISTENERS_ATTR, MEMBERS_ATTR) = (
        "healthmonitor_id",
        "listeners",
        "members",
    )

    FIELDS = {LISTENER: "listener_id", LOADBALANCER: "loadbalancer_id"}

    properties_schema = {
        ADMIN_STATE_UP: properties.Schema(
            properties.Schema.BOOLEAN,
            "The administrative state of this pool.",
            default=True,
            update_allowed=True,
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description of this pool.", update_allowed=True, default=""
        ),
        SESSION_PERSISTENCE: properties.Schema(
            properties.Schema.MAP,
            "Configuration of session persistence.",
            schema={
                SESSION_PERSISTENCE_TYPE: properties.Schema(
                    properties.Schema.STRING,
                    "Method of implementation of session persistence feature.",
                    required=True,
                    constraints=[constraints.AllowedValues(list(SESSION_PERSISTENCE_TYPES))],
                ),
                SESSION_PERSISTENCE_COOKIE_NAME: properties.Schema(
                    properties.Schema.STRING, "Name of the cookie, required if type is APP_COOKIE."
                ),
            },
            update_allowed=True,
        ),
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of this pool.", update_allowed=True
        ),
        LB_ALGORITHM: properties.Schema(
            properties.Schema.STRING,
            "The algorithm used to distribute load between the members of the pool.",
            required=True,
            constraints=[
                constraints.AllowedValues(
                    ["ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP", "SOURCE_IP_PORT"]
                )
            ],
            update_allowed=True,
        ),
        LISTENER: properties.Schema(
            properties.Schema.STRING,
            "Listener name or ID to be associated with this pool.",
            constraints=[constraints.CustomConstraint("octavia.listener")],
        ),
        LOADBALANCER: properties.Schema(
            properties.Schema.STRING,
            "Loadbalancer name or ID to be associated with this pool.",
            constraints=[constraints.CustomConstraint("octavia.loadbalancer")],
        ),
        PROTOCOL: properties.Schema(
            properties.Schema.STRING,
            "Protocol of the pool.",
            required=True,
            constraints=[constraints.AllowedValues(list(SUPPORTED_PROTOCOLS))],
        ),
        TLS_ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Enable backend member re-encryption.",
            default=False,
            update_allowed=True,
            support_status=support.SupportStatus(version="14.0.0"),
        ),
    }

    attributes_schema = {
        HEALTHMONITOR_ID_ATTR: attributes.Schema(
            "ID of the health monitor associated with this pool.", type=attributes.Schema.STRING
        ),
        LISTENERS_ATTR: attributes.Schema(
            "Listener associated with this pool.", type=attributes.Schema.STRING
        ),
        MEMBERS_ATTR: attributes.Schema(
            "Members associated with this pool.",
            cache_mode=attributes.Schema.CACHE_NONE,
            type=attributes.Schema.LIST,
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.LISTENER], client_plugin="octavia", finder="get_listener"
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.LOADBALANCER],
                client_plugin="octavia", finder="get_loadbalancer",
            ),
        ]  # fmt: skip

    def validate(self) -> None:
        super().validate()
        if self.given(self.LISTENER) is None and self.given(self.LOADBALANCER) is None:
            raise ValidationError(
                "At least one of the following properties must be specified: listener, loadbalancer.",
                path=f"resources.{self.name}.properties",
                hint="give the listener or the load balancer the pool belongs to",
            )
        persistence = self.given(self.SESSION_PERSISTENCE)
        if persistence is None:
            return
        kind, cookie = (
            persistence.get(self.SESSION_PERSISTENCE_TYPE),
            persistence.get(self.SESSION_PERSISTENCE_COOKIE_NAME),
        )
        if kind == self.APP_COOKIE and not cookie:
            raise ValidationError(
                "Property cookie_name is required when session_persistence type is set to APP_COOKIE.",
                path=self.place(
                    f"{self.SESSION_PERSISTENCE}.{self.SESSION_PERSISTENCE_COOKIE_NAME}"
                ),
                hint="name the application's cookie",
            )
        if kind == self.SOURCE_IP and cookie:
            raise ValidationError(
                "Property cookie_name must NOT be specified when session_persistence type is set to SOURCE_IP.",
                path=self.place(
                    f"{self.SESSION_PERSISTENCE}.{self.SESSION_PERSISTENCE_COOKIE_NAME}"
                ),
                hint="leave cookie_name out, or use APP_COOKIE",
            )

    @staticmethod
    def _persistence(values: dict[str, Any]) -> dict[str, Any]:
        persistence = values.get("session_persistence")
        if persistence is not None:
            values["session_persistence"] = {
                key: value for key, value in persistence.items() if value is not None
            }
        return values

    def create_arguments(self) -> dict[str, Any]:
        return self._persistence(super().create_arguments())

    def update_arguments(self, prop_diff: Mapping[str, Any]) -> dict[str, Any]:
        # Heat leaves out what the update unsets (None), as its pool_set does.
        return self._persistence(
            {
                key: value
                for key, value in super().update_arguments(prop_diff).items()
                if value is not None
            }
        )


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Octavia::Pool": Pool}
