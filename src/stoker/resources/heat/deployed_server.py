"""OS::Heat::DeployedServer: a server deployed outside the cloud, which software
deployments target; its agent polls the metadata stoker serves (``resources.
server_transport``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources import server_transport
from stoker.resources.unserved import ServedValues
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.resource import Resource


class DeployedServer(Resource):
    """A resource for managing servers that are already deployed.

    A DeployedServer resource manages resources for servers that have been deployed
    externally from OpenStack. These servers can be associated with SoftwareDeployments
    for further orchestration via Heat.

    The server's agent (os-collect-config) reads its configuration from the
    ``os_collect_config`` attribute: with POLL_TEMP_URL (stoker's default) it polls a
    stoker URL that returns the server's metadata, its deployments included; with
    POLL_SERVER_HEAT its ``heat`` collector reads the same metadata from stoker's API as
    the server's Keystone stack user.
    """

    support_status = support.SupportStatus()

    PROPERTIES = (NAME, METADATA, SOFTWARE_CONFIG_TRANSPORT, DEPLOYMENT_SWIFT_DATA) = (
        "name",
        "metadata",
        "software_config_transport",
        "deployment_swift_data",
    )

    _DEPLOYMENT_SWIFT_DATA_KEYS = (CONTAINER, OBJECT) = ("container", "object")

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "Server name.", update_allowed=True),
        METADATA: properties.Schema(
            properties.Schema.MAP,
            "Arbitrary key/value metadata to store for this server. Both keys and values must be "
            "255 characters or less. Non-string values will be serialized to JSON (and the "
            "serialized string must be 255 characters or less).",
            update_allowed=True,
            support_status=support.SupportStatus(
                status=support.DEPRECATED,
                message="This property will be ignored",
                version="9.0.0",
                previous_status=support.SupportStatus(status=support.SUPPORTED, version="8.0.0"),
            ),
        ),
        SOFTWARE_CONFIG_TRANSPORT: properties.Schema(
            properties.Schema.STRING,
            "How the server should receive the metadata required for software configuration. "
            "POLL_TEMP_URL will serve the metadata at a URL (stoker's own) for polling. "
            "POLL_SERVER_HEAT will allow calls to the API resource metadata using the provided "
            "Keystone credentials (a stack user's). POLL_SERVER_CFN will allow calls to the cfn "
            "API action DescribeStackResource (stoker's, at /cfn/v1/) authenticated with the "
            "provided keypair. ZAQAR_MESSAGE will create a dedicated zaqar queue and post the metadata for polling (read with a stack user's credentials).",
            default=server_transport.DEFAULT_TRANSPORT,
            update_allowed=True,
            constraints=[
                constraints.AllowedValues(server_transport.TRANSPORTS),
                ServedValues(server_transport.TRANSPORTS, server_transport.UNSERVED, "software_config_transport"),
            ],
        ),
        DEPLOYMENT_SWIFT_DATA: properties.Schema(
            properties.Schema.MAP,
            "Swift container and object to use for storing deployment data for the server "
            "resource. stoker serves the metadata itself and uses no Swift object: the value is "
            "accepted and not used.",
            support_status=support.SupportStatus(version="9.0.0"),
            default={},
            update_allowed=True,
            schema={
                CONTAINER: properties.Schema(
                    properties.Schema.STRING, "Name of the container.", constraints=[constraints.Length(min=1)]
                ),
                OBJECT: properties.Schema(
                    properties.Schema.STRING, "Name of the object.", constraints=[constraints.Length(min=1)]
                ),
            },
        ),
    }

    ATTRIBUTES = (NAME_ATTR, OS_COLLECT_CONFIG) = ("name", "os_collect_config")

    attributes_schema = {
        NAME_ATTR: attributes.Schema("Name of the server.", type=attributes.Schema.STRING),
        OS_COLLECT_CONFIG: attributes.Schema(
            "The os-collect-config configuration for the server's local agent to be configured "
            "to connect to Heat to retrieve deployment data.",
            type=attributes.Schema.MAP,
            support_status=support.SupportStatus(version="9.0.0"),
            cache_mode=attributes.Schema.CACHE_NONE,
        ),
    }

    def _server_name(self) -> str:
        return self.properties[self.NAME] or self.physical_resource_name()

    def handle_create(self) -> str:
        self.resource_id_set(self.uuid)
        server_transport.issue_metadata_url(self, self.properties[self.SOFTWARE_CONFIG_TRANSPORT])
        return str(self.resource_id)

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> None:
        if self.SOFTWARE_CONFIG_TRANSPORT in prop_diff:
            server_transport.forget_metadata_url(self)
            server_transport.issue_metadata_url(self, prop_diff[self.SOFTWARE_CONFIG_TRANSPORT])

    def handle_delete(self) -> None:
        server_transport.forget_metadata_url(self)

    def live_metadata(self) -> dict[str, Any]:
        """The metadata the server's agent reads (deployments and os-collect-config)."""
        return server_transport.server_metadata(self)

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        if name == self.NAME_ATTR:
            return self._server_name()
        if name == self.OS_COLLECT_CONFIG:
            return server_transport.os_collect_config(self)
        return None

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return {self.NAME_ATTR: self._server_name(), self.OS_COLLECT_CONFIG: server_transport.os_collect_config(self)}


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::DeployedServer": DeployedServer}
