"""OS::Neutron::TaaS::TapService, as Heat has it (tap-as-a-service): the port mirrored
traffic is delivered to; name and description updated in place. Created (and updated) when
ACTIVE, as Heat waits: the TaaS agent programs it."""

from __future__ import annotations

from typing import Any

from stoker.resources.openstack.neutron.extension_resource import ExtensionResource
from stoker.sdk import constraints, properties, support, translation

__all__ = ["TapService", "resource_mapping"]


class TapService(ExtensionResource):
    """A resource for neutron tap-as-a-service tap-service.

    This plug-in requires neutron-taas. So to enable this plug-in, install this library and
    restart the heat-engine.

    A Tap-Service represents the port on which the mirrored traffic is delivered. Any VM that
    uses the mirrored data is attached to this port.
    """

    support_status = support.SupportStatus(version="12.0.0")
    extension_entity = "tap_service"
    waits_for_active = True

    PROPERTIES = (NAME, DESCRIPTION, PORT) = ("name", "description", "port")

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name for the Tap-Service.", default="", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING,
            "Description for the Tap-Service.",
            default="",
            update_allowed=True,
        ),
        PORT: properties.Schema(
            properties.Schema.STRING,
            "ID or name of the tap-service neutron port.",
            constraints=[constraints.CustomConstraint("neutron.port")],
            required=True,
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.PORT], client_plugin="neutron",
                finder="find_resourceid_by_name_or_id", entity="port",
            )
        ]  # fmt: skip

    def request_body(self) -> dict[str, Any]:
        body = self.prepare_properties()
        body["port_id"] = body.pop(self.PORT)
        return body


def resource_mapping() -> dict[str, type[ExtensionResource]]:
    return {"OS::Neutron::TaaS::TapService": TapService}
