"""OS::Keystone::Service, as Heat has it.

Owns: the catalog service's create (name defaulting to the physical resource name), name,
description, type and enabled updated in place, delete (Keystone deletes its endpoints
with it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.keystone.keystone import KeystoneResource, keystone_v3
from stoker.sdk import properties, support

__all__ = ["KeystoneService", "resource_mapping"]


class KeystoneService(KeystoneResource):
    """Heat Template Resource for Keystone Service.

    A resource that allows to create new service and manage it by Keystone.
    """

    support_status = keystone_v3("5.0.0")
    entity, collection = "service", "services"

    PROPERTIES = (NAME, DESCRIPTION, TYPE, ENABLED) = ("name", "description", "type", "enabled")

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of keystone service.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description of keystone service.", update_allowed=True
        ),
        TYPE: properties.Schema(
            properties.Schema.STRING,
            "Type of keystone Service.",
            update_allowed=True,
            required=True,
        ),
        ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "This service is enabled or disabled.",
            default=True,
            update_allowed=True,
            support_status=support.SupportStatus(version="6.0.0"),
        ),
    }

    def handle_create(self) -> None:
        arguments: dict[str, Any] = {
            "name": self.object_name(),
            "type": self.properties[self.TYPE],
            "is_enabled": bool(self.properties[self.ENABLED]),
        }
        if self.given(self.DESCRIPTION) is not None:
            arguments["description"] = self.given(self.DESCRIPTION)
        self.resource_id_set(
            self.create_object(lambda: str(self.client().create_service(**arguments).id))
        )

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        changes: dict[str, Any] = self.changed_name(prop_diff)
        if self.DESCRIPTION in prop_diff:
            changes["description"] = prop_diff[self.DESCRIPTION] or ""
        if self.TYPE in prop_diff:
            changes["type"] = prop_diff[self.TYPE]
        if self.ENABLED in prop_diff:
            changes["is_enabled"] = bool(prop_diff[self.ENABLED])
        if changes:
            self.keystone(lambda: self.client().update_service(self.resource_id, **changes))


def resource_mapping() -> dict[str, type[KeystoneService]]:
    return {"OS::Keystone::Service": KeystoneService}
