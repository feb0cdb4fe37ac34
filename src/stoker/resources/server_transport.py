"""How a server's agent receives its software deployments (Heat's
``software_config_transport``), shared by OS::Heat::DeployedServer and OS::Nova::Server
with ``user_data_format: SOFTWARE_CONFIG``.

A server's metadata is Heat's: the template's metadata, ``deployments`` (the derived
configs of the deployments that target the server, from the deployment store) and
``os-collect-config`` (where the agent polls). It is computed when asked, never stored,
so it always shows the deployments as they are.

- POLL_TEMP_URL (stoker's default; Heat's default is an operator setting,
  ``default_software_config_transport``): instead of a Swift temp URL, the agent's
  ``request`` collector polls a stoker capability URL (``/v1/server_metadata/<id>?secret=
  ...``), whose credential is valid only for reading this server's metadata and is
  revoked when the server is deleted.
- POLL_SERVER_HEAT: the server gets a Keystone stack user
  (``resources.openstack.keystone.stack_user``) and the agent's ``heat`` collector reads
  the metadata through the orchestration API's resource metadata call with its
  credentials, from stoker's API at Heat's path (found in Keystone's catalog).
- POLL_SERVER_CFN: the server gets an EC2 keypair (``give_stack_user``) and the agent's
  ``cfn`` collector (or heat-cfntools' ``cfn-init``, ``cfn-get-metadata``) calls
  ``DescribeStackResource`` on stoker's CFN API (``api/cfn.py``, at ``/cfn/v1/``), signed
  with it. The keypair is issued by stoker (a credential of purpose ``keypair`` whose id
  is the access key, its secret sealed in the server's data); when the stack has a
  cloud, it is also a Keystone EC2 credential of a stack user, made by that user itself
  (``stack_user.create_own_keypair``), so that in keystone mode Keystone verifies the
  signatures, as for Heat. The keypair, and the user, go with the server.
- ZAQAR_MESSAGE: the server gets a stack user and a Zaqar queue named by its physical
  name (``resources.openstack.zaqar.signal_queue``); its metadata is posted to the queue
  when the transport is issued and whenever a deployment of the stack targeting the
  server changes (``push_metadata``, as Heat's ``_push_metadata_software_deployments``),
  and the agent's ``zaqar`` collector reads it with the stack user's credentials. The
  queue and the user are deleted with the server.

``give_stack_user`` is the seam for other server types (AWS::EC2::Instance): a stack
user with an EC2 keypair and the settings an agent's ``cfn`` collector needs.

Must not: put the metadata URL or a stack user's password (secrets) into a message.
"""

from __future__ import annotations

from typing import Any

from stoker.clouds.source import NoCloudError
from stoker.resources.openstack.keystone import stack_user
from stoker.resources.openstack.zaqar import signal_queue
from stoker.sdk.exceptions import StokerError, ValidationError
from stoker.sdk.resource import Resource
from stoker.sdk.signals import Signals
from stoker.sdk.software_config import software_deployments

TRANSPORTS = (POLL_SERVER_CFN, POLL_SERVER_HEAT, POLL_TEMP_URL, ZAQAR_MESSAGE) = (
    "POLL_SERVER_CFN",
    "POLL_SERVER_HEAT",
    "POLL_TEMP_URL",
    "ZAQAR_MESSAGE",
)
DEFAULT_TRANSPORT = POLL_TEMP_URL
UNSERVED: dict[str, str] = {}

# The server's data: its metadata credential and URL (the URL holds the secret), and
# the transport its stack user serves.
METADATA_CREDENTIAL_ID, METADATA_URL, STACK_USER_TRANSPORT = "metadata_credential_id", "metadata_url", "stack_user_transport"
# What a metadata credential is for (engine.signals.METADATA), and a CFN keypair
# (engine.signals.KEYPAIR).
METADATA_PURPOSE, KEYPAIR_PURPOSE = "metadata", "keypair"


def _signals(resource: Resource) -> Signals:
    """The resource's signals and credentials (kept by the engine, which every transport
    needs); a StokerError where there is none (a plugin harness without them)."""
    signals = resource.signals()
    if signals is None:
        raise StokerError(f"{resource.name}: its agent's credentials need an engine that keeps signals, which this one has not")
    return signals


def check_transport(transport: str, path: str) -> None:
    """For a server, whose transport matters only with SOFTWARE_CONFIG user data."""
    missing = UNSERVED.get(transport)
    if missing is not None:
        raise ValidationError(
            f"software_config_transport {transport} is not supported: {missing}",
            path=path,
            hint="use POLL_TEMP_URL (stoker's default: the agent polls a stoker URL for its metadata), POLL_SERVER_HEAT, POLL_SERVER_CFN or ZAQAR_MESSAGE",
        )


def issue_metadata_url(resource: Resource, transport: str) -> None:
    """Give the server what its agent polls with, once: its polling URL (POLL_TEMP_URL),
    its stack user (POLL_SERVER_HEAT), or its stack user and queue, with its metadata
    posted (ZAQAR_MESSAGE)."""
    check_transport(transport, f"resources.{resource.name}.properties.software_config_transport")
    if transport == POLL_SERVER_HEAT:
        stack_user.create_stack_user(resource)
        resource.data_set(STACK_USER_TRANSPORT, transport)
        return
    if transport == ZAQAR_MESSAGE:
        stack_user.create_stack_user(resource)
        resource.data_set(STACK_USER_TRANSPORT, transport)
        signal_queue.queue_id(resource, signal_queue.METADATA_QUEUE_ID)
        push_metadata(resource)
        return
    if transport == POLL_SERVER_CFN:
        give_stack_user(resource)
        return
    if transport != POLL_TEMP_URL or resource.data().get(METADATA_URL):
        return
    signals = _signals(resource)
    credential = signals.issue_credential(METADATA_PURPOSE)
    resource.data_set(METADATA_CREDENTIAL_ID, credential.id)
    resource.data_set(METADATA_URL, signals.server_metadata_url(credential), redact=True)


def give_stack_user(resource: Resource) -> dict[str, str]:
    """Give a server (any type: AWS::EC2::Instance calls this) an EC2 keypair, once, and
    answer what its agent's ``cfn`` collector (or heat-cfntools' ``cfn-init``/
    ``cfn-get-metadata``) needs: the CFN API's URL, the keypair, the stack's name and
    the path of the server's metadata. With a cloud, the keypair is also a Keystone EC2
    credential of the server's stack user. ``forget_metadata_url`` deletes them."""
    data = resource.data()
    if not data.get(stack_user.ACCESS_KEY) or not data.get(stack_user.SECRET_KEY):
        keypair = _signals(resource).issue_credential(KEYPAIR_PURPOSE)
        resource.data_set(stack_user.ACCESS_KEY, keypair.id, redact=True)
        resource.data_set(stack_user.SECRET_KEY, keypair.secret, redact=True)
    resource.data_set(STACK_USER_TRANSPORT, POLL_SERVER_CFN)
    if has_keystone(resource):
        data = resource.data()
        stack_user.create_own_keypair(resource, str(data[stack_user.ACCESS_KEY]), str(data[stack_user.SECRET_KEY]))
    return cfn_settings(resource)


def has_keystone(resource: Resource) -> bool:
    """Whether the stack has a cloud (and so a Keystone for stack users): without one, a
    CFN keypair is stoker's alone."""
    try:
        resource.client_plugin("keystone").connection  # noqa: B018 - made to see if it can be
    except NoCloudError:
        return False
    return True


def forget_keypair(resource: Resource) -> None:
    """Delete the server's CFN keypair: stoker's credential, and with a cloud the
    Keystone keypair (as the stack user) and the stack user."""
    if has_keystone(resource):
        stack_user.delete_own_keypair(resource)
        for key in (stack_user.ACCESS_KEY, stack_user.SECRET_KEY):
            resource.data_delete(key)
        stack_user.delete_stack_user(resource)
    for key in (stack_user.ACCESS_KEY, stack_user.SECRET_KEY):
        resource.data_delete(key)
    _signals(resource).revoke_credentials()


def cfn_metadata_url(resource: Resource) -> str:
    """The CFN API's URL: ``/cfn/v1/`` under the URL agents reach stoker at."""
    signal_url = _signals(resource).resource_signal_url(resource.name)
    return signal_url.split("/v1/", 1)[0] + "/cfn/v1/"


def cfn_settings(resource: Resource) -> dict[str, str]:
    data = resource.data()
    return {
        "metadata_url": cfn_metadata_url(resource),
        "access_key_id": str(data[stack_user.ACCESS_KEY]),
        "secret_access_key": str(data[stack_user.SECRET_KEY]),
        "stack_name": resource.stack.name,
        "path": f"{resource.name}.Metadata",
    }


def push_metadata(resource: Resource) -> None:
    """Post the server's metadata, as its agent reads it, to its ZAQAR_MESSAGE queue (Heat
    posts it whole, each time it changes; the agent keeps the newest)."""
    if resource.data().get(STACK_USER_TRANSPORT) != ZAQAR_MESSAGE:
        return
    live_metadata = getattr(resource, "live_metadata", None)
    metadata = live_metadata() if live_metadata is not None else server_metadata(resource)
    signal_queue.post(resource, metadata, signal_queue.METADATA_QUEUE_ID)


def forget_metadata_url(resource: Resource) -> None:
    """Revoke the polling URL, delete the queue and the stack user (the server is
    deleted, or polls another way now), tolerating what is already gone."""
    signal_queue.forget(resource, signal_queue.METADATA_QUEUE_ID)
    transport = resource.data().get(STACK_USER_TRANSPORT)
    if transport == POLL_SERVER_CFN:
        forget_keypair(resource)
    elif transport:
        stack_user.delete_stack_user(resource)
    if transport:
        resource.data_delete(STACK_USER_TRANSPORT)
    if resource.data().get(METADATA_CREDENTIAL_ID):
        _signals(resource).revoke_credentials()
        resource.data_delete(METADATA_URL)
        resource.data_delete(METADATA_CREDENTIAL_ID)


def os_collect_config(resource: Resource, default_collectors: tuple[str, ...] = ()) -> dict[str, Any]:
    """Heat's ``os-collect-config`` metadata section: the collectors the agent runs and,
    for POLL_TEMP_URL, the URL its ``request`` collector polls; for POLL_SERVER_HEAT,
    the stack user's credentials and the resource its ``heat`` collector reads; for
    ZAQAR_MESSAGE, the credentials and the queue its ``zaqar`` collector reads."""
    collectors = list(default_collectors)
    section: dict[str, Any] = {}
    data = resource.data()
    url = data.get(METADATA_URL)
    if url:
        collectors.append("request")
        section["request"] = {"metadata_url": url}
    if data.get(STACK_USER_TRANSPORT) == POLL_SERVER_HEAT and data.get(stack_user.USER_ID):
        collectors.append("heat")
        section["heat"] = {
            **stack_user.stack_user_credentials(resource),
            "stack_id": f"{resource.stack.name}/{resource.stack.id}",
            "resource_name": resource.name,
            "region_name": stack_user.region_name(resource),
        }
    if data.get(STACK_USER_TRANSPORT) == ZAQAR_MESSAGE and data.get(signal_queue.METADATA_QUEUE_ID):
        collectors.append("zaqar")
        section["zaqar"] = {
            **signal_queue.credentials(resource),
            "queue_id": str(data[signal_queue.METADATA_QUEUE_ID]),
        }
    if data.get(STACK_USER_TRANSPORT) == POLL_SERVER_CFN and data.get(stack_user.ACCESS_KEY):
        collectors.append("cfn")
        section["cfn"] = cfn_settings(resource)
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
