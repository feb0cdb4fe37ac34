"""The ``manila`` client plugin (openstacksdk's shared-file-system proxy, service type
``sharev2``) and the custom constraints Heat registers for Manila: ``manila.share_network``,
``manila.share_type`` and ``manila.share_snapshot``.

Owns: Heat's finders (an id first, then the one object of that name: two of one name are
Heat's "Ambiguous ..." error, none is "The share type (x) could not be found."), and the
calls openstacksdk has no proxy method for, made on the raw REST path (seed 004): security
services, and adding a security service to (or removing one from) a share network.

Manila has microversions; openstacksdk picks one per call. The raw calls send none (the
user's default when set): what they use is in Manila's first microversion, 2.0.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin
from stoker.resources.openstack.constraints import CACHE, LookupConstraint
from stoker.sdk.exceptions import ClientPluginError, EntityNotFound

__all__ = ["ManilaClientPlugin", "client_mapping", "constraint_mapping"]


class ManilaClientPlugin(OpenStackClientPlugin):
    """Manila through openstacksdk's ``connection.shared_file_system``."""

    name = "manila"
    service_type = "sharev2"
    proxy_name = "shared_file_system"
    microversioned = True

    # -- finders (Heat's get_share_type, get_share_network, get_share_snapshot,
    #    get_security_service) --------------------------------------------------------

    def get_share_type(self, share_type: str) -> Any:
        # Heat's client lists every type the user may see, private ones included.
        return self._find_in(
            "share type", share_type, lambda: self.client().share_types(is_public="all")
        )

    def get_share_network(self, share_network: str) -> Any:
        return self._find_in("share network", share_network, lambda: self.client().share_networks())

    def get_share_snapshot(self, snapshot: str) -> Any:
        return self._find_in("share snapshot", snapshot, lambda: self.client().share_snapshots())

    def get_security_service(self, security_service: str) -> dict[str, Any]:
        return self._find_in(
            "security service",
            security_service,
            lambda: [_Named(found) for found in self.security_services()],
        ).document

    def _find_in(self, entity: str, name_or_id: str, listing: Callable[[], Iterable[Any]]) -> Any:
        return CACHE.answer(
            self.context,
            (self.name, "find", entity, name_or_id),
            lambda: self._match(entity, name_or_id, self.read(lambda: list(listing()))),
        )

    @staticmethod
    def _match(entity: str, name_or_id: str, candidates: list[Any]) -> Any:
        for candidate in candidates:
            if str(getattr(candidate, "id", "")) == name_or_id:
                return candidate
        named = [
            candidate for candidate in candidates if getattr(candidate, "name", None) == name_or_id
        ]
        if len(named) > 1:
            raise ClientPluginError(
                f"Ambiguous {entity} name '{name_or_id}'. Found more than one {entity} for this name in Manila.",
                hint=f"give the {entity}'s id instead",
            )
        if not named:
            raise EntityNotFound(entity, name_or_id)
        return named[0]

    # -- security services (no proxy in openstacksdk) ---------------------------------

    def security_services(self, **query: str) -> list[dict[str, Any]]:
        """The project's security services (``GET /security-services/detail``)."""
        return self.read(
            lambda: list(
                self.rest("GET", "/security-services/detail", params=query).json()[
                    "security_services"
                ]
            )
        )

    def get_security_service_by_id(self, security_service_id: str) -> dict[str, Any]:
        """One security service; gone is openstacksdk's NotFoundException."""
        return self.read(
            lambda: dict(
                self.rest("GET", f"/security-services/{security_service_id}").json()[
                    "security_service"
                ]
            )
        )

    def create_security_service(self, **body: Any) -> dict[str, Any]:
        return dict(
            self.rest("POST", "/security-services", json={"security_service": body}).json()[
                "security_service"
            ]
        )

    def update_security_service(self, security_service_id: str, **body: Any) -> None:
        self.rest(
            "PUT", f"/security-services/{security_service_id}", json={"security_service": body}
        )

    def delete_security_service(self, security_service_id: str) -> None:
        self.rest("DELETE", f"/security-services/{security_service_id}")

    def share_network_action(
        self, share_network_id: str, action: str, security_service_id: str
    ) -> None:
        """``add_security_service`` or ``remove_security_service`` on a share network."""
        self.rest(
            "POST",
            f"/share-networks/{share_network_id}/action",
            json={action: {"security_service_id": security_service_id}},
        )

    def share_network_document(self, share_network_id: str) -> dict[str, Any]:
        """A share network as Manila answers it without a microversion (2.0): the
        segmentation id, CIDR, IP version and network type on the network itself."""
        return self.read(
            lambda: dict(
                self.rest("GET", f"/share-networks/{share_network_id}").json()["share_network"]
            )
        )


class _Named:
    """A security service document with the ``id`` and ``name`` the finder matches on."""

    def __init__(self, document: dict[str, Any]):
        self.document = document
        self.id = document.get("id")
        self.name = document.get("name")


class _ManilaConstraint(LookupConstraint):
    client_plugin_name = "manila"


class ShareNetworkConstraint(_ManilaConstraint):
    name, finder = "manila.share_network", "get_share_network"


class ShareTypeConstraint(_ManilaConstraint):
    name, finder = "manila.share_type", "get_share_type"


class ShareSnapshotConstraint(_ManilaConstraint):
    name, finder = "manila.share_snapshot", "get_share_snapshot"


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"manila": ManilaClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {
        constraint.name: constraint
        for constraint in (ShareNetworkConstraint, ShareTypeConstraint, ShareSnapshotConstraint)
    }
