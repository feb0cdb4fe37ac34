"""The ``designate`` client plugin (openstacksdk's dns proxy) and Heat's ``designate.zone``
constraint, the one custom constraint Heat registers for Designate.

Owns: finding a zone by id or name (Heat's ``get_zone_id``), a recordset by id within its
zone, and the wait rules every Designate object shares (``PENDING`` while the worker
propagates a change, ``ACTIVE`` when done, ``ERROR`` a failure).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin
from stoker.resources.openstack.constraints import LookupConstraint
from stoker.sdk.exceptions import EntityNotFound, ResourceFailure

__all__ = ["CHECKED", "DesignateClientPlugin", "client_mapping", "constraint_mapping", "settled"]

PENDING = "PENDING"
ERROR = "ERROR"
# What a check accepts: done, or a change still propagating.
CHECKED = ("ACTIVE", PENDING)


class DesignateClientPlugin(OpenStackClientPlugin):
    """Designate through openstacksdk's ``connection.dns``."""

    name = "designate"
    service_type = "dns"
    proxy_name = "dns"

    def get_zone_id(self, zone: str) -> str:
        """The id of the zone ``zone`` names (an id, or a name such as ``example.org.``)."""
        return self.find_id("zone", zone)

    def get_zone(self, zone_id: str) -> Any:
        """The zone; one that is gone is ``EntityNotFound`` ("The Zone (...) could not be found.")."""
        return self._get("Zone", lambda: self.client().get_zone(zone_id), zone_id)

    def get_recordset(self, recordset_id: str, zone_id: str) -> Any:
        """The recordset in its zone; gone (or its zone gone) is ``EntityNotFound``."""
        return self._get(
            "RecordSet", lambda: self.client().get_recordset(recordset_id, zone_id), recordset_id
        )

    def _get(self, entity: str, call: Callable[[], Any], identifier: str) -> Any:
        try:
            return self.read(call)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types, classified here
            if self.is_not_found(error):
                raise EntityNotFound(entity, identifier) from None
            raise


def settled(found: Any, what: str) -> bool:
    """Whether a zone or recordset has finished its change: False while ``PENDING``,
    True otherwise; ``ERROR`` fails the action, in Heat's words."""
    if found.status == ERROR:
        raise ResourceFailure(f'Went to status ERROR due to "Error in {what}"')
    return found.status != PENDING


class ZoneConstraint(LookupConstraint):
    name, client_plugin_name, entity = "designate.zone", "designate", "zone"


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"designate": DesignateClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {ZoneConstraint.name: ZoneConstraint}
