"""OS::Heat::StructuredConfig: a software config whose ``config`` is a map."""

from __future__ import annotations

from stoker.resources.heat.software_config import SoftwareConfig
from stoker.sdk import properties, support
from stoker.sdk.resource import Resource


class StructuredConfig(SoftwareConfig):
    """A software config whose config is a map rather than text.

    For tools configured in YAML or JSON: the map is stored, and the software_configs
    API returns it, as structured data. Otherwise as OS::Heat::SoftwareConfig.
    """

    support_status = support.SupportStatus(version="2014.1")

    properties_schema = {
        **SoftwareConfig.properties_schema,
        SoftwareConfig.CONFIG: properties.Schema(
            properties.Schema.MAP,
            "The configuration as a map, stored and delivered as JSON.",
        ),
    }


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::StructuredConfig": StructuredConfig}
