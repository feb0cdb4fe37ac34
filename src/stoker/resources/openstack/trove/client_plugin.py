"""The ``trove`` client plugin (Trove's v1.0 API through openstacksdk's database proxy) and
Heat's ``trove.flavor`` constraint.

Owns: finding a flavor by id or name (Heat's ``find_flavor_by_name_or_id``), Heat's
datastore check (a version must be one of the type's, and needs a type), the refusal when the
cloud has no Trove, and the status rule Trove's instances share (ACTIVE done; ERROR and
FAILED failures, in Heat's words).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from stoker.resources.openstack.constraints import CACHE, LookupConstraint
from stoker.resources.openstack.service_catalog import CatalogCheckedClientPlugin
from stoker.sdk.exceptions import EntityNotFound, ResourceFailure, ValidationError

__all__ = ["TroveClientPlugin", "client_mapping", "constraint_mapping", "failed"]

# Heat's TROVE_STATUS_REASON.
STATUS_REASONS = {
    "FAILED": "The database instance was created, but heat failed to set up the datastore. "
    "If a database instance is in the FAILED state, it should be deleted and a new one "
    "should be created.",
    "ERROR": "The last operation for the database instance failed due to an error.",
}


class TroveClientPlugin(CatalogCheckedClientPlugin):
    """Trove through openstacksdk's ``connection.database``."""

    name = "trove"
    project = "Trove"
    service_type = "database"
    proxy_name = "database"

    def find_flavor_by_name_or_id(self, flavor: str) -> str:
        """The id of Trove's flavor ``flavor`` (an id, else a name)."""

        def ask() -> str:
            try:
                return str(
                    self.read(lambda: self.call("GET", f"/flavors/{quote(flavor)}"))["flavor"]["id"]
                )
            except Exception as error:  # noqa: BLE001 - openstacksdk's types, classified here
                if not self.is_not_found(error):
                    raise
            listed = self.read(lambda: self.call("GET", "/flavors"))["flavors"]
            named = [item for item in listed if item.get("name") == flavor]
            if len(named) != 1:
                raise EntityNotFound("Flavor", flavor)
            return str(named[0]["id"])

        return CACHE.answer(self.context, (self.name, "flavor", flavor), ask)

    def validate_datastore(
        self,
        datastore_type: str | None,
        datastore_version: str | None,
        type_key: str,
        version_key: str,
        path: str,
    ) -> None:
        """Heat's check: a version is one of the type's active versions, and needs a type."""
        if datastore_type:
            if not datastore_version:
                return
            listed = self.read(
                lambda: self.call("GET", f"/datastores/{quote(datastore_type)}/versions")
            )
            allowed = [version["name"] for version in listed["versions"]]
            if datastore_version not in allowed:
                raise ValidationError(
                    f"Datastore version {datastore_version} for datastore type {datastore_type} is not "
                    f"valid. Allowed versions are {', '.join(allowed)}.",
                    path=f"{path}.{version_key}",
                    hint="give one of the allowed versions",
                )
        elif datastore_version:
            raise ValidationError(
                f"Not allowed - {version_key} without {type_key}.",
                path=f"{path}.{version_key}",
                hint=f"give {type_key} too",
            )

    def show(self, path: str) -> dict[str, Any]:
        return self.read(lambda: self.call("GET", path))

    def gone(self, path: str) -> bool:
        try:
            self.show(path)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.ignore_not_found(error)
            return True
        return False


def failed(status: str) -> ResourceFailure:
    """Heat's ResourceInError for an instance in ``status``."""
    reason = STATUS_REASONS.get(status, "Unknown")
    return ResourceFailure(f'Went to status {status} due to "{reason}"')


class FlavorConstraint(LookupConstraint):
    name, client_plugin_name, finder = "trove.flavor", "trove", "find_flavor_by_name_or_id"


def client_mapping() -> dict[str, type[CatalogCheckedClientPlugin]]:
    return {"trove": TroveClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {FlavorConstraint.name: FlavorConstraint}
