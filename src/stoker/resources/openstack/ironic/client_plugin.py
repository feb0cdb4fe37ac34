"""The ``ironic`` client plugin (openstacksdk's baremetal proxy) and Heat's two Ironic
constraints, ``ironic.node`` and ``ironic.portgroup``.

Owns: finding a node or a port group by UUID or name (Heat's ``get_node`` and
``get_portgroup``, which answer the UUID, and fail with Heat's "The Node (x) could not be
found."), and whether the cloud's Ironic offers the microversion a port property needs.
"""

from __future__ import annotations

from typing import Any

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin
from stoker.resources.openstack.constraints import CACHE, LookupConstraint
from stoker.sdk.exceptions import EntityNotFound

__all__ = ["IronicClientPlugin", "client_mapping", "constraint_mapping"]


class IronicClientPlugin(OpenStackClientPlugin):
    """Ironic through openstacksdk's ``connection.baremetal``."""

    name = "ironic"
    service_type = "baremetal"
    proxy_name = "baremetal"
    microversioned = True

    def get_node(self, value: str) -> str:
        """The UUID of the node ``value`` names (its UUID or its name)."""
        return self._uuid("node", "Node", value, lambda: self.client().get_node(value))

    def get_portgroup(self, value: str) -> str:
        """The UUID of the port group ``value`` names (its UUID or its name)."""
        return self._uuid(
            "portgroup", "PortGroup", value, lambda: self.client().get_port_group(value)
        )

    def _uuid(self, entity: str, shown: str, value: str, get: Any) -> str:
        # Ironic's GET /v1/<entity>s/<ident> takes a UUID or a name (as Heat relies on),
        # so one request answers; remembered for the context like the other finders.
        def ask() -> str:
            try:
                return str(self.read(get).id)
            except Exception as error:  # noqa: BLE001 - openstacksdk's types, classified here
                if self.is_not_found(error):
                    raise EntityNotFound(shown, value) from None
                raise

        return CACHE.answer(self.context, (self.name, "uuid", entity, value), ask)


class NodeConstraint(LookupConstraint):
    name, client_plugin_name, finder = "ironic.node", "ironic", "get_node"


class PortGroupConstraint(LookupConstraint):
    name, client_plugin_name, finder = "ironic.portgroup", "ironic", "get_portgroup"


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"ironic": IronicClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {constraint.name: constraint for constraint in (NodeConstraint, PortGroupConstraint)}
