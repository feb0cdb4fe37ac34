"""The ``blazar`` client plugin (Blazar's v1 API through openstacksdk's reservation proxy)
and Heat's ``blazar.reservation`` constraint.

Owns: hosts and leases as Blazar's API shows them (``os-hosts``, ``leases``), whether Blazar
has any host (Heat's ``has_host``, which a lease's validation needs), finding a lease by id
(Heat's ``get_lease``), and the refusal when the cloud has no Blazar.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from stoker.resources.openstack.constraints import LookupConstraint
from stoker.resources.openstack.service_catalog import CatalogCheckedClientPlugin
from stoker.sdk.exceptions import EntityNotFound

__all__ = ["BlazarClientPlugin", "client_mapping", "constraint_mapping"]


class BlazarClientPlugin(CatalogCheckedClientPlugin):
    """Blazar through openstacksdk's ``connection.reservation``."""

    name = "blazar"
    project = "Blazar"
    service_type = "reservation"
    proxy_name = "reservation"

    def has_host(self) -> bool:
        return bool(self.read(lambda: self.call("GET", "/os-hosts"))["hosts"])

    def create_host(self, **arguments: Any) -> dict[str, Any]:
        return self.call("POST", "/os-hosts", arguments)["host"]

    def get_host(self, host_id: str) -> dict[str, Any]:
        return self.read(lambda: self.call("GET", f"/os-hosts/{quote(str(host_id))}"))["host"]

    def create_lease(self, **arguments: Any) -> dict[str, Any]:
        return self.call("POST", "/leases", arguments)["lease"]

    def get_lease(self, lease_id: str) -> dict[str, Any]:
        try:
            return self.read(lambda: self.call("GET", f"/leases/{quote(str(lease_id))}"))["lease"]
        except Exception as error:  # noqa: BLE001 - openstacksdk's types, classified here
            if self.is_not_found(error):
                raise EntityNotFound("Lease", lease_id) from None
            raise

    def gone(self, path: str) -> bool:
        try:
            self.read(lambda: self.call("GET", path))
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.ignore_not_found(error)
            return True
        return False


class ReservationConstraint(LookupConstraint):
    name, client_plugin_name, finder = "blazar.reservation", "blazar", "get_lease"


def client_mapping() -> dict[str, type[CatalogCheckedClientPlugin]]:
    return {"blazar": BlazarClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {ReservationConstraint.name: ReservationConstraint}
