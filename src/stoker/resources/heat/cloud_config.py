"""OS::Heat::CloudConfig: cloud-init's cloud-config, stored as a software config."""

from __future__ import annotations

from typing import Any

import yaml

from stoker.resources.heat.software_config import SoftwareConfig
from stoker.sdk import properties, support
from stoker.sdk.resource import Resource

# Heat dumps with PyYAML's safe dumper (the C one when there is one), default options.
_DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def render_cloud_config(cloud_config: Any) -> str:
    """The stored config: ``#cloud-config`` and the data as YAML, as Heat writes it
    (block style, keys sorted, non-ASCII escaped). Nothing given is YAML's null."""
    return "#cloud-config\n" + yaml.dump(cloud_config, Dumper=_DUMPER)


class CloudConfig(SoftwareConfig):
    """A cloud-init cloud-config document, stored as a software config.

    The map given (with its intrinsic functions resolved) is written as YAML after a
    ``#cloud-config`` line. Servers take it as user_data, directly or as a part of an
    OS::Heat::MultipartMime; cloud-config runs at boot only, so a change replaces the
    config and, with it, the servers that use it.
    """

    support_status = support.SupportStatus(version="2014.1")

    PROPERTIES = (CLOUD_CONFIG,) = ("cloud_config",)

    properties_schema = {
        CLOUD_CONFIG: properties.Schema(
            properties.Schema.MAP,
            "The cloud-config document as a map, written out as YAML.",
        ),
    }

    def config_fields(self) -> dict[str, Any]:
        return {"group": "Heat::Ungrouped", "config": render_cloud_config(self.given(self.CLOUD_CONFIG))}


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::CloudConfig": CloudConfig}
