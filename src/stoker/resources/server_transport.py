"""How a server's agent receives its software deployments (Heat's
``software_config_transport``), shared by OS::Heat::DeployedServer and OS::Nova::Server
with ``user_data_format: SOFTWARE_CONFIG``.

A server's metadata is Heat's: the template's metadata, ``deployments`` (the derived
configs of the deployments that target the server, from the deployment store) and
``os-collect-config`` (where the agent polls). It is computed when asked, never stored,
so it always shows the deployments as they are.

stoker serves POLL_TEMP_URL itself: instead of a Swift temp URL, the agent's ``request``
collector polls a stoker capability URL (``/v1/server_metadata/<id>?secret=...``), whose
credential is valid only for reading this server's metadata and is revoked when the
server is deleted. POLL_SERVER_CFN (the CFN metadata API with EC2-signed requests),
POLL_SERVER_HEAT and ZAQAR_MESSAGE (Keystone stack users, the latter on Zaqar) need what stoker does
not have and are refused when validating, naming what is missing. POLL_TEMP_URL is
stoker's default (Heat's default is an operator setting, ``default_software_config_
transport``).

Must not: put the metadata URL (it holds a secret) into a message.
"""

from __future__ import annotations

from typing import Any

from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource
from stoker.sdk.software_config import software_deployments

TRANSPORTS = (POLL_SERVER_CFN, POLL_SERVER_HEAT, POLL_TEMP_URL, ZAQAR_MESSAGE) = (
    "POLL_SERVER_CFN",
    "POLL_SERVER_HEAT",
    "POLL_TEMP_URL",
    "ZAQAR_MESSAGE",
)
DEFAULT_TRANSPORT = POLL_TEMP_URL
UNSERVED = {
    POLL_SERVER_CFN: "POLL_SERVER_CFN needs the CloudFormation-compatible metadata API (DescribeStackResource with EC2-signed requests), which stoker does not serve",
    POLL_SERVER_HEAT: "POLL_SERVER_HEAT needs Keystone stack-user credentials, which stoker does not issue yet",
    ZAQAR_MESSAGE: "ZAQAR_MESSAGE needs Keystone stack-user credentials for the agent to read its Zaqar queue, which stoker does not issue yet",
}

# The server's data: its metadata credential and URL (the URL holds the secret).
METADATA_CREDENTIAL_ID, METADATA_URL = "metadata_credential_id", "metadata_url"
# What a metadata credential is for (engine.signals.METADATA).
METADATA_PURPOSE = "metadata"


def check_transport(transport: str, path: str) -> None:
    """For a server, whose transport matters only with SOFTWARE_CONFIG user data."""
    missing = UNSERVED.get(transport)
    if missing is not None:
        raise ValidationError(
            f"software_config_transport {transport} is not supported: {missing}",
            path=path,
            hint="use POLL_TEMP_URL (stoker's default): the agent polls a stoker URL for its metadata",
        )


def issue_metadata_url(resource: Resource, transport: str) -> None:
    """Give the server its polling URL (POLL_TEMP_URL), once; other transports get none."""
    check_transport(transport, f"resources.{resource.name}.properties.software_config_transport")
    if transport != POLL_TEMP_URL or resource.data().get(METADATA_URL):
        return
    signals = resource.signals()
    credential = signals.issue_credential(METADATA_PURPOSE)
    resource.data_set(METADATA_CREDENTIAL_ID, credential.id)
    resource.data_set(METADATA_URL, signals.server_metadata_url(credential), redact=True)


def forget_metadata_url(resource: Resource) -> None:
    """Revoke the polling URL (the server is deleted, or polls another way now)."""
    if resource.data().get(METADATA_CREDENTIAL_ID):
        resource.signals().revoke_credentials()
        resource.data_delete(METADATA_URL)
        resource.data_delete(METADATA_CREDENTIAL_ID)


def os_collect_config(resource: Resource, default_collectors: tuple[str, ...] = ()) -> dict[str, Any]:
    """Heat's ``os-collect-config`` metadata section: the collectors the agent runs and,
    for POLL_TEMP_URL, the URL its ``request`` collector polls."""
    collectors = list(default_collectors)
    section: dict[str, Any] = {}
    url = resource.data().get(METADATA_URL)
    if url:
        collectors.append("request")
        section["request"] = {"metadata_url": url}
    collectors.append("local")
    return {"collectors": collectors, **section}


def deployments(resource: Resource) -> list[dict[str, Any]]:
    """The derived configs deployed to the server (Heat's metadata ``deployments``)."""
    if resource.resource_id is None:
        return []
    store = software_deployments(resource, required=False)
    return store.metadata(resource.resource_id) if store is not None else []


def server_metadata(resource: Resource, default_collectors: tuple[str, ...] = ()) -> dict[str, Any]:
    """The server's metadata as its agent reads it."""
    metadata = resource.metadata_get()
    metadata["deployments"] = deployments(resource)
    metadata["os-collect-config"] = os_collect_config(resource, default_collectors)
    return metadata
