"""The ``magnum`` client plugin (Magnum's v1 API through openstacksdk's
container-infrastructure-management proxy) and Heat's ``magnum.cluster_template`` constraint.

Owns: finding a cluster template by UUID or name (Heat's ``get_cluster_template``: Magnum's
GET takes either), the refusal when the cloud has no Magnum, and the wait rule Magnum's
objects share (``<ACTION>_IN_PROGRESS`` -> ``<ACTION>_COMPLETE`` or ``_FAILED``, in Heat's words).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from stoker.resources.openstack.constraints import CACHE, LookupConstraint
from stoker.resources.openstack.service_catalog import CatalogCheckedClientPlugin
from stoker.sdk.exceptions import EntityNotFound, ResourceFailure

__all__ = ["MagnumClientPlugin", "client_mapping", "constraint_mapping", "settled"]


class MagnumClientPlugin(CatalogCheckedClientPlugin):
    """Magnum through openstacksdk's ``connection.container_infrastructure_management``."""

    name = "magnum"
    project = "Magnum"
    service_type = "container-infrastructure-management"
    proxy_name = "container_infrastructure_management"

    def get_cluster_template(self, value: str) -> str:
        """The UUID of the cluster template ``value`` names (its UUID or its name)."""

        def ask() -> str:
            try:
                return str(
                    self.read(lambda: self.call("GET", f"/clustertemplates/{quote(value)}"))["uuid"]
                )
            except Exception as error:  # noqa: BLE001 - openstacksdk's types, classified here
                if self.is_not_found(error):
                    raise EntityNotFound("ClusterTemplate", value) from None
                raise

        return CACHE.answer(self.context, (self.name, "uuid", "clustertemplate", value), ask)

    def show(self, collection: str, uuid: str) -> dict[str, Any]:
        return self.read(lambda: self.call("GET", f"/{collection}/{uuid}"))

    def gone(self, collection: str, uuid: str) -> bool:
        try:
            self.show(collection, uuid)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.ignore_not_found(error)
            return True
        return False


def settled(found: dict[str, Any], action: str, what: str, name: str) -> bool:
    """Whether Magnum finished ``action`` (CREATE, UPDATE) on ``found``: False while
    ``<ACTION>_IN_PROGRESS``, True at ``<ACTION>_COMPLETE``; ``_FAILED`` and any other
    status fail the action in Heat's words."""
    status, reason = found.get("status"), found.get("status_reason")
    verb = {"CREATE": "create", "UPDATE": "update"}[action]
    if status == f"{action}_IN_PROGRESS":
        return False
    if status == f"{action}_COMPLETE":
        return True
    if status == f"{action}_FAILED":
        detail = f"Failed to {verb} {what} '{name}' - {reason}"
    else:
        detail = f"Unknown status {verb.rstrip('e')}ing {what} '{name}' - {reason}"
    raise ResourceFailure(f'Went to status {status} due to "{detail}"')


class ClusterTemplateConstraint(LookupConstraint):
    name, client_plugin_name, finder = "magnum.cluster_template", "magnum", "get_cluster_template"


def client_mapping() -> dict[str, type[CatalogCheckedClientPlugin]]:
    return {"magnum": MagnumClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {ClusterTemplateConstraint.name: ClusterTemplateConstraint}
