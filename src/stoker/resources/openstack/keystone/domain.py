"""OS::Keystone::Domain, as Heat has it.

Owns: the domain's create (name defaulting to the physical resource name), name,
description and enabled updated in place, and delete: Keystone deletes only a disabled
domain, so an enabled one is disabled first (with it, Keystone deletes its projects,
users and groups).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.keystone.keystone import KeystoneResource, keystone_v3
from stoker.sdk import properties

__all__ = ["KeystoneDomain", "resource_mapping"]


class KeystoneDomain(KeystoneResource):
    """Heat Template Resource for Keystone Domain.

    This plug-in helps to create, update and delete a keystone domain. Also it can be used
    for enable or disable a given keystone domain.
    """

    support_status = keystone_v3("8.0.0")
    entity, collection = "domain", "domains"

    PROPERTIES = (NAME, DESCRIPTION, ENABLED) = ("name", "description", "enabled")

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "The name of the domain.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description of keystone domain.", update_allowed=True
        ),
        ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "This domain is enabled or disabled.",
            default=True,
            update_allowed=True,
        ),
    }

    def handle_create(self) -> None:
        arguments: dict[str, Any] = {
            "name": self.object_name(),
            "is_enabled": bool(self.properties[self.ENABLED]),
        }
        if self.given(self.DESCRIPTION) is not None:
            arguments["description"] = self.given(self.DESCRIPTION)
        domain = self.keystone(lambda: self.client().create_domain(**arguments))
        self.resource_id_set(domain.id)

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        changes: dict[str, Any] = self.changed_name(prop_diff)
        if self.DESCRIPTION in prop_diff:
            changes["description"] = prop_diff[self.DESCRIPTION] or ""
        if self.ENABLED in prop_diff:
            changes["is_enabled"] = bool(prop_diff[self.ENABLED])
        if changes:
            self.keystone(lambda: self.client().update_domain(self.resource_id, **changes))

    def delete_object(self) -> None:
        self.client().update_domain(self.resource_id, is_enabled=False)
        self.client().delete_domain(self.resource_id, ignore_missing=False)


def resource_mapping() -> dict[str, type[KeystoneDomain]]:
    return {"OS::Keystone::Domain": KeystoneDomain}
