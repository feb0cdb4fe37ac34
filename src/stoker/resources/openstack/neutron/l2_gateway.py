"""OS::Neutron::L2Gateway, as Heat has it (networking-l2gw): a gateway's devices and their
interfaces (with segmentation ids); name and devices updated in place. None values are
dropped at every level of the request, as Heat drops them."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stoker.resources.openstack.neutron.extension_resource import ExtensionResource
from stoker.sdk import properties, support

__all__ = ["L2Gateway", "resource_mapping"]


def _without_none(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {key: _without_none(item) for key, item in value.items() if item is not None}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_without_none(item) for item in value if item is not None]
    return value


class L2Gateway(ExtensionResource):
    """A resource for managing Neutron L2 Gateways.

    The are a number of use cases that can be addressed by an L2 Gateway API. Most notably in
    cloud computing environments, a typical use case is bridging the virtual with the
    physical. Translate this to Neutron and the OpenStack world, and this means relying on L2
    Gateway capabilities to extend Neutron logical (overlay) networks into physical
    (provider) networks that are outside the OpenStack realm.
    """

    support_status = support.SupportStatus(version="12.0.0")
    extension_entity = "l2_gateway"

    PROPERTIES = (NAME, DEVICES) = ("name", "devices")
    _DEVICE_KEYS = (DEVICE_NAME, INTERFACES) = ("device_name", "interfaces")
    _INTERFACE_KEYS = (INTERFACE_NAME, SEGMENTATION_ID) = ("name", "segmentation_id")

    _interface_schema = {
        INTERFACE_NAME: properties.Schema(
            properties.Schema.STRING,
            "The name of the interface on the gateway device.",
            required=True,
        ),
        SEGMENTATION_ID: properties.Schema(
            properties.Schema.LIST, "A list of segmentation ids of the interface."
        ),
    }
    _device_schema = {
        DEVICE_NAME: properties.Schema(
            properties.Schema.STRING, "The name of the gateway device.", required=True
        ),
        INTERFACES: properties.Schema(
            properties.Schema.LIST,
            "List of gateway device interfaces.",
            schema=properties.Schema(properties.Schema.MAP, schema=_interface_schema),
            required=True,
        ),
    }
    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING,
            "A symbolic name for the l2-gateway, which is not required to be unique.",
            required=True,
            update_allowed=True,
        ),
        DEVICES: properties.Schema(
            properties.Schema.LIST,
            "List of gateway devices.",
            schema=properties.Schema(properties.Schema.MAP, schema=_device_schema),
            required=True,
            update_allowed=True,
        ),
    }

    def request_body(self) -> dict[str, Any]:
        return _without_none(self.prepare_properties())

    def update_body(self, changes: dict[str, Any]) -> dict[str, Any]:
        return _without_none(changes)

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        """The default, each device as the template gives it: without the id the gateway
        gives it, an interface's empty list of segmentation ids as none."""
        live = super().parse_live_resource_data(resource_properties, resource_data)
        devices = live.get(self.DEVICES)
        if isinstance(devices, list):
            live[self.DEVICES] = [
                {
                    self.DEVICE_NAME: device.get(self.DEVICE_NAME),
                    self.INTERFACES: [
                        {self.INTERFACE_NAME: interface.get(self.INTERFACE_NAME), self.SEGMENTATION_ID: interface.get(self.SEGMENTATION_ID) or None}
                        for interface in device.get(self.INTERFACES) or []
                    ],
                }
                for device in devices
                if isinstance(device, Mapping)
            ]
        return live


def resource_mapping() -> dict[str, type[ExtensionResource]]:
    return {"OS::Neutron::L2Gateway": L2Gateway}
