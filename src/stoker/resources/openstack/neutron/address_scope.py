"""OS::Neutron::AddressScope, as Heat has it: name and sharing updated in place."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import constraints, properties, support

__all__ = ["AddressScope", "resource_mapping"]


class AddressScope(NeutronResource):
    """A resource for Neutron address scope.

    This resource can be associated with multiple subnet pools in a one-to-many
    relationship. The subnet pools under an address scope must not overlap.
    """

    support_status = support.SupportStatus(version="6.0.0")
    entity = "address_scope"

    PROPERTIES = (NAME, SHARED, TENANT_ID, IP_VERSION) = (
        "name",
        "shared",
        "tenant_id",
        "ip_version",
    )

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "The name for the address scope.", update_allowed=True
        ),
        SHARED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether the address scope should be shared to other tenants. Note that the default "
            "policy setting restricts usage of this attribute to administrative users only, and "
            "restricts changing of shared address scope to unshared with update.",
            default=False,
            update_allowed=True,
        ),
        TENANT_ID: properties.Schema(
            properties.Schema.STRING,
            "The owner tenant ID of the address scope. Only administrative users can specify a "
            "tenant ID other than their own.",
            constraints=[constraints.CustomConstraint("keystone.project")],
        ),
        IP_VERSION: properties.Schema(
            properties.Schema.INTEGER,
            "Address family of the address scope, which is 4 or 6.",
            default=4,
            constraints=[constraints.AllowedValues([4, 6])],
        ),
    }

    def handle_create(self) -> None:
        body = self.prepare_properties()
        if "tenant_id" in body:
            body["project_id"] = body.pop("tenant_id")
        self.created(self.client().create_address_scope(**body))

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        changes = dict(prop_diff)
        self.prepare_update_properties(changes)
        if changes:
            self.client().update_address_scope(self.resource_id, **changes)


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::AddressScope": AddressScope}
