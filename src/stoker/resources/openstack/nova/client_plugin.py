"""The ``nova`` client plugin (openstacksdk's compute proxy) and the custom constraints
Heat registers for Nova.

Compute has microversions: openstacksdk picks one per call from the version document it
discovers; ``negotiated_version()`` is the cloud's maximum, which ``require_version``
compares a feature's microversion with (seed 004).
"""

from __future__ import annotations

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin
from stoker.resources.openstack.constraints import LookupConstraint

__all__ = ["NovaClientPlugin", "client_mapping", "constraint_mapping"]


class NovaClientPlugin(OpenStackClientPlugin):
    """Nova through openstacksdk's ``connection.compute``."""

    name = "nova"
    service_type = "compute"
    proxy_name = "compute"
    microversioned = True

    def find_flavor_by_name_or_id(self, flavor: str) -> str:
        return self.find_id("flavor", flavor)

    def get_keypair(self, key_name: str) -> object:
        return self.find("keypair", key_name)

    def get_server(self, server: str) -> object:
        return self.find("server", server)


class _NovaConstraint(LookupConstraint):
    client_plugin_name = "nova"


class FlavorConstraint(_NovaConstraint):
    name, entity = "nova.flavor", "flavor"


class KeypairConstraint(_NovaConstraint):
    name, entity = "nova.keypair", "keypair"


class ServerConstraint(_NovaConstraint):
    name, entity = "nova.server", "server"


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"nova": NovaClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {c.name: c for c in (FlavorConstraint, KeypairConstraint, ServerConstraint)}
