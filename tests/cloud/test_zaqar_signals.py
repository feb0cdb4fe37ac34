"""Signals and metadata over the real Zaqar of the test cloud (``zaqar_service``), as Heat
does them: a DeployedServer with ``software_config_transport: ZAQAR_MESSAGE`` has its
metadata posted to its queue, read here as its agent's ``zaqar`` collector would (the
stack user's credentials from ``os-collect-config``); the deployment it carries, with
``signal_transport: ZAQAR_SIGNAL``, is signalled by posting its outputs to
``deploy_queue_id`` with the ``deploy_*`` credentials, and a wait condition handle's
ZAQAR_SIGNAL by posting to the ``signal`` attribute's queue. Delete removes the queues
and the stack users. openstacksdk, as the stack users and as the cloud's admin, is the
witness."""

from __future__ import annotations

import json
import secrets
import threading
import time
from typing import Any

import openstack
import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from tests.support.stacks import from_data

WAIT_S = 180
CLIENT_ID = {"Client-ID": "8c3f0f6e-5a7e-4d8e-9b1c-2e9a4f0d7c21"}

TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "server": {
            "type": "OS::Heat::DeployedServer",
            "properties": {"software_config_transport": "ZAQAR_MESSAGE"},
        },
        "config": {
            "type": "OS::Heat::SoftwareConfig",
            "properties": {
                "group": "script",
                "outputs": [{"name": "result"}],
                "config": "#!/bin/sh\necho zaqar\n",
            },
        },
        "deployment": {
            "type": "OS::Heat::SoftwareDeployment",
            "properties": {
                "config": {"get_resource": "config"},
                "server": {"get_resource": "server"},
                "signal_transport": "ZAQAR_SIGNAL",
            },
        },
        "handle": {
            "type": "OS::Heat::WaitConditionHandle",
            "properties": {"signal_transport": "ZAQAR_SIGNAL"},
        },
        "wait": {
            "type": "OS::Heat::WaitCondition",
            "properties": {"handle": {"get_resource": "handle"}, "timeout": 600},
        },
    },
    "outputs": {
        "result": {"value": {"get_attr": ["deployment", "result"]}},
        "data": {"value": {"get_attr": ["wait", "data"]}},
    },
}


@pytest.fixture
def admin_zaqar(openstack_cloud, zaqar_service):
    # Stack users take Keystone's admin to make (stack_user.py): the stack is an admin's.
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    yield openstack_cloud
    set_cloud_source(None)


def as_user(credentials: dict[str, Any]) -> Any:
    """An openstacksdk connection as a stack user, from what the agent is given."""
    return openstack.connect(
        auth_url=credentials["auth_url"],
        user_id=credentials["user_id"],
        password=credentials["password"],
        project_id=credentials["project_id"],
        region_name=credentials.get("region_name"),
        identity_interface="public",
    )


def zaqar(connection: Any, method: str, path: str, body: Any = None) -> Any:
    answer = connection.message.request(path, method, json=body, headers=CLIENT_ID, raise_exc=False)
    assert answer.status_code < 300, (method, path, answer.status_code, answer.text)
    return answer.json() if answer.content else None


def post(connection: Any, queue: str, body: Any) -> None:
    """What an agent does to signal: post one message to the queue."""
    zaqar(
        connection, "POST", f"/queues/{queue}/messages", {"messages": [{"body": body, "ttl": 600}]}
    )


def queue_names(connection: Any) -> set[str]:
    names: set[str] = set()
    path = "/queues?limit=20"
    while path:
        page = zaqar(connection, "GET", path) or {}
        names |= {queue["name"] for queue in page.get("queues", [])}
        following = [link["href"] for link in page.get("links", []) if link.get("rel") == "next"]
        path = following[0].removeprefix("/v2") if following and page.get("queues") else ""
    return names


def until(read, what: str) -> Any:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            found = read()
        except Exception:  # noqa: BLE001 - not there yet
            found = None
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"never found: {what}")


def test_zaqar_message_metadata_and_zaqar_signals_of_a_deployment_and_a_handle(
    admin_zaqar, make_service
):
    service = make_service()
    admin = admin_zaqar.connect("admin")
    name = f"zq-{secrets.token_hex(3)}"
    result: dict[str, Any] = {}
    thread = threading.Thread(
        target=lambda: result.update(stack=service.create_stack(name, from_data(TEMPLATE))),
        daemon=True,  # a failed test must not keep the run waiting for the stack's timeout
    )
    thread.start()

    # The server's metadata names its queue and the stack user its agent reads it as.
    def zaqar_settings() -> dict | None:
        # Once the server's create has made its queue (before, only the local collector).
        found = service.resource_metadata(service.get_stack(name), "server")["os-collect-config"]
        return found if "zaqar" in found else None

    occ = until(
        zaqar_settings,
        "the server's os-collect-config",
    )
    assert occ["collectors"] == ["zaqar", "local"]
    settings = occ["zaqar"]
    assert set(settings) == {
        "user_id",
        "password",
        "auth_url",
        "project_id",
        "queue_id",
        "region_name",
    }
    assert settings["queue_id"].startswith(f"{name}-server-")
    agent = as_user(settings)

    def deployment_metadata() -> dict | None:
        # The newest message holds the metadata as it is now (Heat posts it whole).
        messages = zaqar(
            agent, "GET", f"/queues/{settings['queue_id']}/messages?echo=true&limit=20"
        )
        newest = (messages or {}).get("messages", [])[-1]["body"]
        return newest if newest["deployments"] else None

    metadata = until(deployment_metadata, "a deployment in the metadata posted to the queue")
    assert metadata["os-collect-config"]["zaqar"] == settings
    inputs = {entry["name"]: entry.get("value") for entry in metadata["deployments"][0]["inputs"]}
    assert inputs["deploy_signal_transport"] == "ZAQAR_SIGNAL"
    assert inputs["deploy_queue_id"].startswith(f"{name}-deployment-")
    assert "deploy_signal_id" not in inputs
    # The deployment's own stack user posts its outputs to its queue, as heat-config-notify does.
    deployer = as_user(
        {
            key: inputs[f"deploy_{key}"]
            for key in ("auth_url", "user_id", "password", "project_id", "region_name")
        }
    )
    assert inputs["deploy_user_id"] != settings["user_id"]
    post(deployer, inputs["deploy_queue_id"], {"deploy_status_code": 0, "result": "over zaqar"})

    # The handle's signal attribute: its stack user's credentials and queue.
    signal = until(
        lambda: json.loads(
            service.resource_attributes(service.get_stack(name), "handle")["signal"]
        ),
        "the handle's signal attribute",
    )
    assert signal["queue_id"].startswith(f"{name}-handle-")
    post(as_user(signal), signal["queue_id"], {"status": "SUCCESS", "data": "handled", "id": "1"})

    thread.join(WAIT_S)
    assert not thread.is_alive()
    stack = result["stack"]
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    outputs = {o["output_key"]: o["output_value"] for o in service.outputs(name)}
    assert outputs["result"] == "over zaqar"
    assert json.loads(outputs["data"]) == {"1": "handled"}
    # The signals were taken off their queues.
    for queue in (inputs["deploy_queue_id"], signal["queue_id"]):
        left = zaqar(admin, "GET", f"/queues/{queue}/messages?echo=true") or {}
        assert not left.get("messages"), left
    queues = {settings["queue_id"], inputs["deploy_queue_id"], signal["queue_id"]}
    assert queues <= queue_names(admin)
    users = {
        user.name for user in admin.identity.users() if (user.name or "").startswith(f"{name}-")
    }
    assert len(users) == 3

    deleted = service.delete_stack(name)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert not queues & queue_names(admin)
    assert [u for u in admin.identity.users() if (u.name or "").startswith(f"{name}-")] == []
