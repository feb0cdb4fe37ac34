"""The ``octavia`` client plugin (openstacksdk's load-balancer proxy) and the custom
constraints Heat registers for Octavia: ``octavia.loadbalancer``, ``octavia.listener``,
``octavia.pool``, ``octavia.l7policy``, ``octavia.flavor``, ``octavia.flavorprofile``,
``octavia.availabilityzone`` and ``octavia.availabilityzoneprofile``; and Heat's common
``json_string`` (a flavor profile's data), which no other family registered yet.

Owns: the finders Heat's Octavia types resolve names with (``get_loadbalancer``,
``get_listener``, ``get_pool``, ``get_l7policy``, ``get_flavor``, ``get_flavorprofile``,
``get_availabilityzoneprofile``), each answered once per context like every lookup, and
Octavia's errors classified (``is_not_found``, ``is_conflict``, ``is_over_limit`` from the
base). Octavia has no microversions.
"""

from __future__ import annotations

import json
from typing import Any

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin
from stoker.resources.openstack.constraints import LookupConstraint

__all__ = ["OctaviaClientPlugin", "client_mapping", "constraint_mapping"]


class OctaviaClientPlugin(OpenStackClientPlugin):
    """Octavia through openstacksdk's ``connection.load_balancer``."""

    name = "octavia"
    service_type = "load-balancer"
    proxy_name = "load_balancer"

    def get_loadbalancer(self, value: str) -> str:
        return self.find_id("load_balancer", value)

    def get_listener(self, value: str) -> str:
        return self.find_id("listener", value)

    def get_pool(self, value: str) -> str:
        return self.find_id("pool", value)

    def get_l7policy(self, value: str) -> str:
        return self.find_id("l7_policy", value)

    def get_flavor(self, value: str) -> str:
        return self.find_id("flavor", value)

    def get_flavorprofile(self, value: str) -> str:
        return self.find_id("flavor_profile", value)

    def get_availabilityzoneprofile(self, value: str) -> str:
        return self.find_id("availability_zone_profile", value)


class _OctaviaConstraint(LookupConstraint):
    client_plugin_name = "octavia"


class LoadBalancerConstraint(_OctaviaConstraint):
    name, entity = "octavia.loadbalancer", "load_balancer"


class ListenerConstraint(_OctaviaConstraint):
    name, entity = "octavia.listener", "listener"


class PoolConstraint(_OctaviaConstraint):
    name, entity = "octavia.pool", "pool"


class L7PolicyConstraint(_OctaviaConstraint):
    name, entity = "octavia.l7policy", "l7_policy"


class FlavorConstraint(_OctaviaConstraint):
    name, entity = "octavia.flavor", "flavor"


class FlavorProfileConstraint(_OctaviaConstraint):
    name, entity = "octavia.flavorprofile", "flavor_profile"


class AvailabilityZoneConstraint(_OctaviaConstraint):
    name, entity = "octavia.availabilityzone", "availability_zone"


class AvailabilityZoneProfileConstraint(_OctaviaConstraint):
    name, entity = "octavia.availabilityzoneprofile", "availability_zone_profile"


class JsonStringConstraint:
    """Heat's ``json_string``: an empty value, or text that parses as JSON."""

    name = "json_string"

    def __init__(self) -> None:
        self._error_message = ""

    def validate(self, value: Any, context: Any = None, template: Any = None) -> bool:
        if not value:
            return True
        try:
            json.loads(value)
        except (TypeError, ValueError) as error:
            self._error_message = f"{value!r} is not a JSON string: {error}"
            return False
        return True

    def error(self, value: Any) -> str:
        return self._error_message


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"octavia": OctaviaClientPlugin}


def constraint_mapping() -> dict[str, Any]:
    return {
        JsonStringConstraint.name: JsonStringConstraint,
        **{
            c.name: c
            for c in (
                LoadBalancerConstraint,
                ListenerConstraint,
                PoolConstraint,
                L7PolicyConstraint,
                FlavorConstraint,
                FlavorProfileConstraint,
                AvailabilityZoneConstraint,
                AvailabilityZoneProfileConstraint,
            )
        },
    }
