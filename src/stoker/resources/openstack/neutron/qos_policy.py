"""OS::Neutron::QoSPolicy, as Heat has it: name, description and sharing updated in place;
its ``rules`` attribute lists the rules Neutron has for it (OS::Neutron::QoS*Rule)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import attributes, properties, support

__all__ = ["QoSPolicy", "resource_mapping"]


class QoSPolicy(NeutronResource):
    """A resource for Neutron QoS Policy.

    This QoS policy can be associated with neutron resources, such as port and network, to
    provide QoS capabilities. The default policy usage of this resource is limited to
    administrators only.
    """

    support_status = support.SupportStatus(version="6.0.0")
    entity = "qos_policy"

    PROPERTIES = (NAME, DESCRIPTION, SHARED, TENANT_ID) = (
        "name",
        "description",
        "shared",
        "tenant_id",
    )
    ATTRIBUTES = (RULES_ATTR,) = ("rules",)

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "The name for the QoS policy.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "The description for the QoS policy.", update_allowed=True
        ),
        SHARED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether this QoS policy should be shared to other tenants.",
            default=False,
            update_allowed=True,
        ),
        TENANT_ID: properties.Schema(
            properties.Schema.STRING, "The owner tenant ID of this QoS policy."
        ),
    }

    attributes_schema = {
        RULES_ATTR: attributes.Schema(
            "A list of all rules for the QoS policy.", type=attributes.Schema.LIST
        ),
    }

    def handle_create(self) -> None:
        body = self.prepare_properties()
        if "tenant_id" in body:
            body["project_id"] = body.pop("tenant_id")
        self.created(self.client().create_qos_policy(**body))

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        changes = dict(prop_diff)
        self.prepare_update_properties(changes)
        if changes:
            self.client().update_qos_policy(self.resource_id, **changes)


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::QoSPolicy": QoSPolicy}
