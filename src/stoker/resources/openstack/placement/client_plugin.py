"""The ``placement`` client plugin (openstacksdk's placement proxy). Placement has
microversions; openstacksdk picks one per call (seed 004). Heat registers no custom
constraint for it."""

from __future__ import annotations

from typing import Any

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin

__all__ = ["PlacementClientPlugin", "client_mapping", "constraint_mapping"]


class PlacementClientPlugin(OpenStackClientPlugin):
    """Placement through openstacksdk's ``connection.placement``."""

    name = "placement"
    service_type = "placement"
    proxy_name = "placement"
    microversioned = True


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"placement": PlacementClientPlugin}


def constraint_mapping() -> dict[str, Any]:
    return {}
