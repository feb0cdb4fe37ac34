"""OS::Nova::Server with software configs against the test cloud: user_data that is a
stored config, and the deployments a server gets. Fixtures and template builders:
test_nova_server.py."""

from __future__ import annotations

import base64
import email
import secrets
import time

import pytest

from tests.cloud.test_nova_server import (  # noqa: F401 - admin_cloud and service are fixtures
    admin_cloud,
    ids_of,
    network_resources,
    server,
    service,
    template,
)
from tests.support.stacks import from_data
from tests.support.waiting import in_background


def test_nova_server_user_data_from_a_software_config(admin_cloud, service):  # noqa: F811
    """RAW user_data that is a stored config's id (get_resource of an OS::Heat::CloudConfig
    or MultipartMime) boots the server with that config, as in Heat."""
    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    resources = {
        **network_resources(suffix, "10.38.0.0/24"),
        "boot": {"type": "OS::Heat::CloudConfig", "properties": {"cloud_config": {"runcmd": ["echo booted"]}}},
        "parts": {"type": "OS::Heat::MultipartMime", "properties": {"parts": [{"config": {"get_resource": "boot"}}]}},
        "vm": server([{"network": {"get_resource": "net"}}], user_data={"get_resource": "boot"}),
        "vm2": server([{"network": {"get_resource": "net"}}], user_data={"get_resource": "parts"}, user_data_format="SOFTWARE_CONFIG"),
    }
    stack = service.create_stack(f"ud-{suffix}", from_data(template(resources)))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = ids_of(service, stack.name)
    assert base64.b64decode(connection.compute.get_server(ids["vm"]).user_data).decode() == "#cloud-config\nruncmd:\n- echo booted\n"
    message = email.message_from_string(base64.b64decode(connection.compute.get_server(ids["vm2"]).user_data).decode())
    payloads = [part.get_payload(decode=True).decode() for part in message.walk() if not part.is_multipart()]
    assert "#cloud-config\nruncmd:\n- echo booted\n" in payloads
    assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"


def test_nova_server_with_software_config_gets_its_deployments(admin_cloud, service):  # noqa: F811
    """user_data_format SOFTWARE_CONFIG: the server boots with its agent's configuration
    (the metadata in cfn-init-data names the URL to poll), the deployments that target
    it are served there, and its signal completes them, as with Heat's POLL_TEMP_URL."""
    import json
    from urllib.parse import parse_qs, urlsplit

    suffix = secrets.token_hex(3)
    connection = admin_cloud.connect("admin")
    resources = {
        **network_resources(suffix, "10.39.0.0/24"),
        "config": {"type": "OS::Heat::SoftwareConfig", "properties": {"group": "script", "config": "#!/bin/sh\necho hi", "outputs": [{"name": "result"}]}},
        "vm": server([{"network": {"get_resource": "net"}}], user_data_format="SOFTWARE_CONFIG"),
        "deployment": {"type": "OS::Heat::SoftwareDeployment", "properties": {"config": {"get_resource": "config"}, "server": {"get_resource": "vm"}}},
    }
    thread, result = in_background(lambda: service.create_stack(f"sc-{suffix}", from_data(template(resources))))

    def capability(url: str) -> tuple[str, str]:
        parts = urlsplit(url)
        return parts.path.rsplit("/", 1)[1], parse_qs(parts.query)["secret"][0]

    deadline = time.monotonic() + 300
    deployments: list = []
    metadata_url = None
    while not deployments:
        assert time.monotonic() < deadline and thread.is_alive(), result
        time.sleep(0.5)
        try:
            ids = ids_of(service, f"sc-{suffix}")
            metadata = service.resource_metadata(service.get_stack(f"sc-{suffix}"), "vm")
        except Exception:  # noqa: BLE001 - not created yet
            continue
        if "vm" not in ids or "request" not in metadata.get("os-collect-config", {}):
            continue
        metadata_url = metadata["os-collect-config"]["request"]["metadata_url"]
        deployments = service.metadata_by_capability(*capability(metadata_url))["deployments"]
    # The server booted knowing where to poll.
    message = email.message_from_string(base64.b64decode(connection.compute.get_server(ids["vm"]).user_data).decode())
    parts = {part.get_filename(): part.get_payload(decode=True).decode() for part in message.walk() if not part.is_multipart()}
    booted_with = json.loads(parts["cfn-init-data"])
    assert booted_with["os-collect-config"]["request"]["metadata_url"] == metadata_url
    assert booted_with["os-collect-config"]["collectors"] == ["ec2", "request", "local"]
    [deployed] = deployments
    values = {entry["name"]: entry.get("value") for entry in deployed["inputs"]}
    assert values["deploy_server_id"] == ids["vm"]
    service.signal_by_capability(*capability(values["deploy_signal_id"]), {"deploy_status_code": 0, "result": "ok"})
    thread.join(120)
    stack = result["stack"]
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"
    with pytest.raises(Exception, match="not valid"):
        service.metadata_by_capability(*capability(metadata_url))
