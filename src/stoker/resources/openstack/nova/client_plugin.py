"""The ``nova`` client plugin (openstacksdk's compute proxy) and the custom constraints
Heat registers for Nova.

Compute has microversions: openstacksdk picks one per call from the version document it
discovers; ``negotiated_version()`` is the cloud's maximum, which ``require_version``
compares a feature's microversion with (seed 004).
"""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin, http_status
from stoker.resources.openstack.constraints import LookupConstraint
from stoker.sdk.exceptions import EntityNotFound

__all__ = ["NovaClientPlugin", "client_mapping", "constraint_mapping"]

# Seconds a listing of the servers answers the polls of a stack action.
BOARD_TTL_S = 1.0


class NovaClientPlugin(OpenStackClientPlugin):
    """Nova through openstacksdk's ``connection.compute``."""

    name = "nova"
    service_type = "compute"
    proxy_name = "compute"
    microversioned = True
    # Compute 2.88 removes a hypervisor's vcpus, memory_mb, local_gb, their *_used and
    # free_* counts, running_vms, current_workload, disk_available_least and cpu_info.
    keeps_fields_until = {"openstack.compute.v2.hypervisor.Hypervisor": "2.87"}

    def __init__(self, *arguments: Any, **keywords: Any):
        super().__init__(*arguments, **keywords)
        self._board_lock = threading.Lock()

    def find_flavor_by_name_or_id(self, flavor: str) -> str:
        return self.find_id("flavor", flavor)

    def _find(self, entity: str, name_or_id: str, find: Any) -> Any:
        if entity == "flavor" and find is None:
            find = self._find_flavor
        return super()._find(entity, name_or_id, find)

    def _find_flavor(self, name_or_id: str, ignore_missing: bool = False) -> Any:
        """openstacksdk's find_flavor asks for the value as an id, then lists the flavors
        (Nova cannot filter them by name). Templates name flavors, so the list comes first
        and matches ids and names alike: one request per flavor, not two. A flavor the
        listing lacks is asked for by id."""
        compute = self.client()
        found = self.one_match("flavor", name_or_id, compute.flavors(details=True))
        return found if found is not None else compute.get_flavor(name_or_id)

    def get_host(self, host: str) -> str:
        """The compute host named ``host`` (a hypervisor's host name, as Heat's
        ``nova.host`` constraint looks it up)."""
        try:
            # Nova answers 404 when the pattern matches no hypervisor.
            hosts = [
                hypervisor
                for hypervisor in self.client().hypervisors(hypervisor_hostname_pattern=host)
                if host in (hypervisor.name, (hypervisor.service_details or {}).get("host"))
            ]
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.ignore_not_found(error)
            hosts = []
        if not hosts:
            raise EntityNotFound("host", host)
        return host

    def get_keypair(self, key_name: str) -> object:
        return self.find("keypair", key_name)

    def get_server(self, server: str) -> object:
        return self.find("server", server)

    def attach_volume(self, server_id: str, volume_id: str, device: str | None) -> str | None:
        """Attach through Nova (Heat's rule): the attachment's id, or None when Nova
        answers 409 (the volume or server is busy: try again later)."""
        try:
            attachment = self.client().create_volume_attachment(server_id, volume=volume_id, device=device)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            if self.is_conflict(error):
                return None
            raise
        return str(attachment.id)

    def detach_volume(self, server_id: str, attachment_id: str) -> bool:
        """Ask Nova to detach; False when Nova answers 409 (try again later). An
        attachment or server already gone, or a 400 (not attached), counts as detached."""
        try:
            self.client().delete_volume_attachment(server_id, attachment_id, ignore_missing=True)
        except Exception as error:  # noqa: BLE001
            if self.is_conflict(error):
                return False
            if not (self.is_not_found(error) or http_status(error) == 400):
                raise
        return True

    def check_detach_volume_complete(self, server_id: str, attachment_id: str) -> bool:
        """Whether Nova, too, no longer lists the attachment (Cinder says 'available' a
        moment before Nova forgets it; attaching again before then fails)."""
        try:
            self.client().get_volume_attachment(server_id, attachment_id)
        except Exception as error:  # noqa: BLE001
            self.ignore_not_found(error)
            return True
        return False

    def listed_server(self, server_id: str) -> Any:
        """The server as the latest listing of the servers changed during this context
        (a stack action) shows it, listed at most ``BOARD_TTL_S`` ago and shared by every
        poll: 20 servers polled while they build or go cost one ``GET /servers/detail``
        a second, not 20 GETs (the floor's own way). A server the listing lacks (made
        after it) is asked for alone. A deleted one is listed with status DELETED. For
        polling only: a listing may be a second old."""
        with self._board_lock:  # not the client lock: a listing must not hold up other calls
            board = getattr(self, "_board", None)
            now = time.monotonic()
            if board is None or now - board[0] > BOARD_TTL_S:
                since = getattr(self, "_board_since", None)
                if since is None:
                    # Servers this action touches change after it started; a minute of
                    # margin for the clocks of the cloud and of this machine.
                    since = self._board_since = (datetime.now(UTC) - timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%SZ")
                listed = self.read(lambda: {str(server.id): server for server in self.client().servers(details=True, changes_since=since)})
                board = self._board = (time.monotonic(), listed)
            found = board[1].get(server_id)
            if found is None:
                # A server made after the listing: None (ask again) until a listing
                # newer than the first that lacked it lacks it too; only then is it asked
                # for alone (gone, or not the action's). 20 servers polled right after
                # their creates cost no GET each.
                misses = self.__dict__.setdefault("_misses", {})
                first = misses.setdefault(server_id, board[0])
                if board[0] == first:
                    return None
                misses.pop(server_id, None)
            else:
                return found
        return self.read(lambda: self.client().get_server(server_id))

    def absolute_limits(self) -> dict[str, int]:
        """Heat's absolute_limits (``maxServerMeta``, what stoker checks), asked once per context: 500
        servers with metadata validate with one request."""
        from stoker.resources.openstack.constraints import CACHE

        def ask() -> dict[str, int]:
            return {"maxServerMeta": self.client().get_limits().absolute.server_meta}

        return dict(CACHE.answer(self.context, (self.name, "absolute_limits"), ask))


class _NovaConstraint(LookupConstraint):
    client_plugin_name = "nova"


class FlavorConstraint(_NovaConstraint):
    name, entity, listing = "nova.flavor", "flavor", "flavors"

    def describe(self, item: Any) -> str:
        return f"{item.name} ({item.vcpus} vCPU, {item.ram} MB RAM, {item.disk} GB disk)"


class KeypairConstraint(_NovaConstraint):
    name, entity, listing = "nova.keypair", "keypair", "keypairs"


class ServerConstraint(_NovaConstraint):
    name, entity, listing = "nova.server", "server", "servers"


class HostConstraint(_NovaConstraint):
    name, finder = "nova.host", "get_host"


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"nova": NovaClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {c.name: c for c in (FlavorConstraint, KeypairConstraint, ServerConstraint, HostConstraint)}
