"""OS::Neutron::NetworkGateway, as Heat has it: a network gateway of the VMware NSX plugin's
``network-gateway`` extension (``/network-gateways``), with the networks connected to it.
Only NSX's Neutron plugin serves it (not ML2), so no Neutron here can run it: the type is
kept with Heat's schema and validation. The name and connections change in place; new
devices make a new gateway in place (Heat deletes the old one and creates another)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.rest_resource import NeutronRestResource
from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.exceptions import ValidationError

__all__ = ["NetworkGateway", "resource_mapping"]


class NetworkGateway(NeutronRestResource):
    """Network Gateway resource in Neutron Network Gateway.

    Resource for connecting internal networks with specified devices.
    """

    support_status = support.SupportStatus(version="2014.1")
    entity = "network_gateway"
    collection = "/network-gateways"

    PROPERTIES = (NAME, DEVICES, CONNECTIONS) = ("name", "devices", "connections")
    ATTRIBUTES = (DEFAULT,) = ("default",)
    _DEVICES_KEYS = (ID, INTERFACE_NAME) = ("id", "interface_name")
    _CONNECTIONS_KEYS = (NETWORK_ID, NETWORK, SEGMENTATION_TYPE, SEGMENTATION_ID) = (
        "network_id", "network", "segmentation_type", "segmentation_id",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING,
            description="The name of the network gateway.",
            update_allowed=True,
        ),
        DEVICES: properties.Schema(
            properties.Schema.LIST,
            description="Device info for this network gateway.",
            required=True,
            constraints=[constraints.Length(min=1)],
            update_allowed=True,
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    ID: properties.Schema(
                        properties.Schema.STRING,
                        description="The device id for the network gateway.",
                        required=True,
                    ),
                    INTERFACE_NAME: properties.Schema(
                        properties.Schema.STRING,
                        description="The interface name for the network gateway.",
                        required=True,
                    ),
                },
            ),
        ),
        CONNECTIONS: properties.Schema(
            properties.Schema.LIST,
            description="Connection info for this network gateway.",
            # Heat declares {} (falsy, so its list property reads []); a list's default here
            # must be a list.
            default=[],
            update_allowed=True,
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    NETWORK_ID: properties.Schema(
                        properties.Schema.STRING,
                        description="The internal network to connect on the network gateway.",
                        support_status=support.SupportStatus(
                            status=support.HIDDEN,
                            message="Use property network.",
                            version="5.0.0",
                            previous_status=support.SupportStatus(
                                status=support.DEPRECATED, version="2014.2"
                            ),
                        ),
                        constraints=[constraints.CustomConstraint("neutron.network")],
                    ),
                    NETWORK: properties.Schema(
                        properties.Schema.STRING,
                        description="The internal network to connect on the network gateway.",
                        support_status=support.SupportStatus(version="2014.2"),
                        required=True,
                        constraints=[constraints.CustomConstraint("neutron.network")],
                    ),
                    SEGMENTATION_TYPE: properties.Schema(
                        properties.Schema.STRING,
                        description="L2 segmentation strategy on the external side of the network gateway.",
                        default="flat",
                        constraints=[constraints.AllowedValues(("flat", "vlan"))],
                    ),
                    SEGMENTATION_ID: properties.Schema(
                        properties.Schema.INTEGER,
                        description="The id for L2 segment on the external side of the network gateway. "
                        "Must be specified when using vlan.",
                        constraints=[constraints.Range(0, 4094)],
                    ),
                },
            ),
        ),
    }

    attributes_schema = {
        DEFAULT: attributes.Schema(
            "A boolean value of default flag.", type=attributes.Schema.STRING
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.REPLACE, [self.CONNECTIONS, self.NETWORK],
                value_name=self.NETWORK_ID,
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.CONNECTIONS, self.NETWORK],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="network",
            ),
        ]  # fmt: skip

    def validate(self) -> None:
        super().validate()
        for index, connection in enumerate(self.properties[self.CONNECTIONS] or []):
            path = f"resources.{self.name}.properties.connections[{index}].segmentation_id"
            segmentation_type = connection.get(self.SEGMENTATION_TYPE)
            segmentation_id = connection.get(self.SEGMENTATION_ID)
            if segmentation_type == "vlan" and segmentation_id is None:
                raise ValidationError(
                    "segmentation_id must be specified for using vlan",
                    path=path,
                    hint="give the VLAN id (0-4094)",
                )
            if segmentation_type == "flat" and segmentation_id:
                raise ValidationError(
                    "segmentation_id cannot be specified except 0 for using flat",
                    path=path,
                    hint="remove segmentation_id, or use segmentation_type vlan",
                )

    @classmethod
    def _connection_body(cls, connection: Mapping[str, Any]) -> dict[str, Any]:
        body = {
            key: value
            for key, value in connection.items()
            if value is not None and key != cls.NETWORK
        }
        body["network_id"] = connection.get(cls.NETWORK) or connection.get(cls.NETWORK_ID)
        return body

    def _connect(self, connections: list[Mapping[str, Any]], verb: str) -> None:
        for connection in connections:
            url = f"{self._url(self.resource_id)}/{verb}_network"
            try:
                self.client_plugin().rest("PUT", url, json=self._connection_body(connection))
            except Exception as error:  # noqa: BLE001 - the client's own types
                if verb == "connect":
                    raise
                self.client_plugin().ignore_not_found(error)

    def _create(
        self, devices: list[Any], name: str | None, connections: list[Mapping[str, Any]]
    ) -> dict[str, Any]:
        made = self.rest_create({"name": name or self.physical_resource_name(), "devices": devices})
        self._connect(connections, "connect")
        return made

    def handle_create(self) -> dict[str, Any]:
        return self._create(
            self.properties[self.DEVICES],
            self.given(self.NAME),
            list(self.properties[self.CONNECTIONS] or []),
        )

    def handle_delete(self) -> Any:
        if self.resource_id is None:
            return None
        self._connect(list(self.properties[self.CONNECTIONS] or []), "disconnect")
        return super().handle_delete()

    def handle_update(self, json_snippet: Any, tmpl_diff: Any, prop_diff: Mapping[str, Any]) -> None:
        changes = dict(prop_diff)
        connections = changes.pop(self.CONNECTIONS, None)
        if self.DEVICES in changes:
            # Heat's way: the old gateway goes and a new one is made in place.
            self.handle_delete()
            name = changes.get(self.NAME, self.given(self.NAME))
            new_connections = (
                connections if connections is not None else self.properties[self.CONNECTIONS]
            )
            self._create(changes[self.DEVICES], name, list(new_connections or []))
            return
        if changes:
            self.prepare_update_properties(changes)
            self.rest_update(changes)
        if connections:
            self._connect(list(self.properties[self.CONNECTIONS] or []), "disconnect")
            self._connect(list(connections), "connect")


def resource_mapping() -> dict[str, type[NeutronRestResource]]:
    return {"OS::Neutron::NetworkGateway": NetworkGateway}
