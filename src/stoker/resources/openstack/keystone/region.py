"""OS::Keystone::Region, as Heat has it.

Owns: the region's create (the id the template gives, URL-encoded as Heat does, or one
Keystone generates), parent, description and enabled updated in place (a new id replaces
it), delete. Keystone keeps ``enabled`` as an extra field of the region, which
openstacksdk's model leaves out: the requests are sent as Heat's client sends them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib import parse

from stoker.resources.openstack.keystone.keystone import KeystoneResource, keystone_v3
from stoker.sdk import constraints, properties, translation

__all__ = ["KeystoneRegion", "resource_mapping"]


class KeystoneRegion(KeystoneResource):
    """Heat Template Resource for Keystone Region.

    This plug-in helps to create, update and delete a keystone region. Also it can be used
    for enable or disable a given keystone region.
    """

    support_status = keystone_v3("6.0.0")
    entity, collection = "region", "regions"
    name_property = None

    PROPERTIES = (ID, PARENT_REGION, DESCRIPTION, ENABLED) = (
        "id",
        "parent_region",
        "description",
        "enabled",
    )

    properties_schema = {
        ID: properties.Schema(
            properties.Schema.STRING,
            "The user-defined region ID and should unique to the OpenStack deployment. While "
            "creating the region, heat will url encode this ID.",
        ),
        PARENT_REGION: properties.Schema(
            properties.Schema.STRING,
            "If the region is hierarchically a child of another region, set this parameter to "
            "the ID of the parent region.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("keystone.region")],
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description of keystone region.", update_allowed=True
        ),
        ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "This region is enabled or disabled.",
            default=True,
            update_allowed=True,
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props,
                translation.TranslationRule.RESOLVE,
                [self.PARENT_REGION],
                client_plugin="keystone",
                finder="get_region_id",
            )
        ]

    def create_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"enabled": bool(self.properties[self.ENABLED])}
        if self.given(self.ID):
            body["id"] = parse.quote(self.given(self.ID))
        if self.given(self.PARENT_REGION):
            body["parent_region_id"] = self.given(self.PARENT_REGION)
        if self.given(self.DESCRIPTION) is not None:
            body["description"] = self.given(self.DESCRIPTION)
        return body

    def handle_create(self) -> None:
        body = {"region": self.create_body()}
        # With an id, a second POST of a region made is refused (409), not made twice.
        repeat = self.given(self.ID) is not None
        region = self.client_plugin().send("POST", "/regions", body, repeat=repeat)["region"]
        self.resource_id_set(region["id"])

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        changes: dict[str, Any] = {}
        if self.PARENT_REGION in prop_diff:
            changes["parent_region_id"] = prop_diff[self.PARENT_REGION]
        if self.DESCRIPTION in prop_diff:
            changes["description"] = prop_diff[self.DESCRIPTION] or ""
        if self.ENABLED in prop_diff:
            changes["enabled"] = bool(prop_diff[self.ENABLED])
        if changes:
            self.client_plugin().send("PATCH", self.path(), {"region": changes})

    def delete_object(self) -> None:
        # openstacksdk puts the id in the path unquoted, and Heat's ids are URL-encoded.
        self.client_plugin().send("DELETE", self.path())


def resource_mapping() -> dict[str, type[KeystoneRegion]]:
    return {"OS::Keystone::Region": KeystoneRegion}
