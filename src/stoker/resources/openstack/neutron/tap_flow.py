"""OS::Neutron::TaaS::TapFlow, as Heat has it (tap-as-a-service): the port whose traffic a
tap service receives (both by name or id), the direction and the VLANs mirrored; name and
description updated in place. Created (and updated) when ACTIVE, as Heat waits."""

from __future__ import annotations

from typing import Any

from stoker.resources.openstack.neutron.extension_resource import ExtensionResource
from stoker.sdk import constraints, properties, support, translation

__all__ = ["TapFlow", "resource_mapping"]

# VLAN ids and ranges, "1,5-9" (Heat's pattern).
COMMA_SEPARATED_LIST_REGEX = r"^([0-9]+(-[0-9]+)?)(,([0-9]+(-[0-9]+)?))*$"


class TapFlow(ExtensionResource):
    """A resource for neutron tap-as-a-service tap-flow.

    This plug-in requires neutron-taas. So to enable this plug-in, install this library and
    restart the heat-engine.

    A Tap-Flow represents the port from which the traffic needs to be mirrored.
    """

    support_status = support.SupportStatus(version="12.0.0")
    extension_entity = "tap_flow"
    waits_for_active = True

    PROPERTIES = (NAME, DESCRIPTION, PORT, TAP_SERVICE, DIRECTION, VLAN_FILTER) = (
        "name", "description", "port", "tap_service", "direction", "vlan_filter",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name for the Tap-Flow.", default="", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING,
            "Description for the Tap-Flow.",
            default="",
            update_allowed=True,
        ),
        PORT: properties.Schema(
            properties.Schema.STRING,
            "ID or name of the tap-flow neutron port.",
            constraints=[constraints.CustomConstraint("neutron.port")],
            required=True,
        ),
        TAP_SERVICE: properties.Schema(
            properties.Schema.STRING,
            "ID or name of the neutron tap-service.",
            constraints=[constraints.CustomConstraint("neutron.taas.tap_service")],
            required=True,
        ),
        DIRECTION: properties.Schema(
            properties.Schema.STRING,
            "The Direction to capture the traffic on.",
            default="BOTH",
            constraints=[constraints.AllowedValues(["IN", "OUT", "BOTH"])],
        ),
        VLAN_FILTER: properties.Schema(
            properties.Schema.STRING,
            "Comma separated list of VLANs, data for which needs to be captured on probe VM.",
            constraints=[constraints.AllowedPattern(COMMA_SEPARATED_LIST_REGEX)],
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.PORT], client_plugin="neutron",
                finder="find_resourceid_by_name_or_id", entity="port",
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.TAP_SERVICE], client_plugin="neutron",
                finder="resolve_ext_resource", entity="tap_service",
            ),
        ]  # fmt: skip

    def request_body(self) -> dict[str, Any]:
        body = self.prepare_properties()
        body["source_port"] = body.pop(self.PORT)
        body["tap_service_id"] = body.pop(self.TAP_SERVICE)
        return body


def resource_mapping() -> dict[str, type[ExtensionResource]]:
    return {"OS::Neutron::TaaS::TapFlow": TapFlow}
