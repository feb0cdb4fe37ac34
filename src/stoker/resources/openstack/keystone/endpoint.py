"""OS::Keystone::Endpoint, as Heat has it.

Owns: the endpoint's create (a service's URL on one interface, in a region; its name,
which Keystone keeps as an extra field, defaulting to the physical resource name), every
property updated in place, delete, and finding what an interrupted create made by its
service and physical name. openstacksdk's model has no endpoint name: the requests are
sent as Heat's client sends them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.keystone.keystone import KeystoneResource, keystone_v3
from stoker.sdk import constraints, properties, support, translation

__all__ = ["KeystoneEndpoint", "resource_mapping"]


class KeystoneEndpoint(KeystoneResource):
    """Heat Template Resource for Keystone Service Endpoint.

    Keystone endpoint is just the URL that can be used for accessing a service within
    OpenStack. Endpoint can be accessed by admin, by services or public, i.e. everyone can
    use this endpoint.
    """

    support_status = keystone_v3("5.0.0")
    entity, collection = "endpoint", "endpoints"

    PROPERTIES = (NAME, REGION, SERVICE, INTERFACE, SERVICE_URL, ENABLED) = (
        "name", "region", "service", "interface", "url", "enabled",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of keystone endpoint.", update_allowed=True
        ),
        REGION: properties.Schema(
            properties.Schema.STRING,
            "Name or Id of keystone region.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("keystone.region")],
        ),
        SERVICE: properties.Schema(
            properties.Schema.STRING,
            "Name or Id of keystone service.",
            update_allowed=True,
            required=True,
            constraints=[constraints.CustomConstraint("keystone.service")],
        ),
        INTERFACE: properties.Schema(
            properties.Schema.STRING,
            "Interface type of keystone service endpoint.",
            update_allowed=True,
            required=True,
            constraints=[constraints.AllowedValues(["public", "internal", "admin"])],
        ),
        SERVICE_URL: properties.Schema(
            properties.Schema.STRING,
            "URL of keystone service endpoint.",
            update_allowed=True,
            required=True,
        ),
        ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "This endpoint is enabled or disabled.",
            default=True,
            update_allowed=True,
            support_status=support.SupportStatus(version="6.0.0"),
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        resolve = translation.TranslationRule.RESOLVE
        return [
            translation.TranslationRule(
                props, resolve, [self.SERVICE], client_plugin="keystone", finder="get_service_id"
            ),
            translation.TranslationRule(
                props, resolve, [self.REGION], client_plugin="keystone", finder="get_region_id"
            ),
        ]

    def create_body(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "name": self.object_name(),
            "service_id": self.properties[self.SERVICE],
            "interface": self.properties[self.INTERFACE],
            "url": self.properties[self.SERVICE_URL],
            "enabled": bool(self.properties[self.ENABLED]),
        }
        if self.given(self.REGION):
            body["region_id"] = self.given(self.REGION)
        return body

    def handle_create(self) -> None:
        body = {"endpoint": self.create_body()}
        self.resource_id_set(
            self.create_object(
                lambda: str(self.client_plugin().send("POST", "/endpoints", body)["endpoint"]["id"])
            )
        )

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        changes: dict[str, Any] = self.changed_name(prop_diff)
        fields = (
            (self.REGION, "region_id"),
            (self.SERVICE, "service_id"),
            (self.INTERFACE, "interface"),
            (self.SERVICE_URL, "url"),
        )
        for key, field in fields:
            if key in prop_diff:
                changes[field] = prop_diff[key]
        if self.ENABLED in prop_diff:
            changes["enabled"] = bool(prop_diff[self.ENABLED])
        if changes:
            self.client_plugin().send(
                "PATCH", f"/endpoints/{self.resource_id}", {"endpoint": changes}
            )

    def find_created(self) -> str | None:
        if self.given(self.NAME):
            return None
        name = self.physical_resource_name()
        service = self.properties[self.SERVICE]
        listed = self.client_plugin().send("GET", f"/endpoints?service_id={service}")["endpoints"]
        found = [endpoint for endpoint in listed if endpoint.get("name") == name]
        return str(found[0]["id"]) if len(found) == 1 else None


def resource_mapping() -> dict[str, type[KeystoneEndpoint]]:
    return {"OS::Keystone::Endpoint": KeystoneEndpoint}
