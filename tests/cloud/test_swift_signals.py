"""Signals over the real Swift of the test cloud: OS::Heat::SwiftSignalHandle's temp URL,
signalled with curl as Heat's documentation shows (count, data, a FAILURE with its
reason, the timeout), OS::Heat::SwiftSignal's wait surviving a SIGKILLed ``stoker``
command, and a software deployment's ``TEMP_URL_SIGNAL`` signalled through a Swift temp
URL. openstacksdk, as the project's member, is the witness; nothing may be left in Swift."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.service import Service
from stoker.settings import Settings
from tests.support.stacks import from_data
from tests.support.waiting import finished, in_background

STOKER = str(Path(sys.executable).with_name("stoker"))
WAIT_S = 120


@pytest.fixture
def demo_cloud(openstack_cloud, swift_service):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("demo")))
    yield openstack_cloud
    set_cloud_source(None)


def signal_template(count: int = 1, timeout: int = 120) -> dict:
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "handle": {"type": "OS::Heat::SwiftSignalHandle"},
            "wait": {
                "type": "OS::Heat::SwiftSignal",
                "properties": {
                    "handle": {"get_resource": "handle"},
                    "count": count,
                    "timeout": timeout,
                },
            },
        },
        "outputs": {
            "data": {"value": {"get_attr": ["wait", "data"]}},
            "curl": {"value": {"get_attr": ["handle", "curl_cli"]}},
            "token": {"value": {"get_attr": ["handle", "token"]}},
        },
    }


def curl(curl_cli: str, body: dict) -> None:
    """What an agent runs: the handle's curl_cli with its signal as the PUT's body."""
    assert shutil.which("curl"), "curl is needed to signal as Heat's documentation shows"
    completed = subprocess.run(
        f"{curl_cli} --fail --silent --data-binary '{json.dumps(body)}'",
        shell=True, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout + completed.stderr


def handle_curl(service, stack_name: str) -> str:
    """The handle's curl_cli, once the handle exists (the wait is then in progress)."""
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            value = service.resource_attributes(service.get_stack(stack_name), "handle").get(
                "curl_cli"
            )
        except Exception:  # noqa: BLE001 - not created yet
            value = None
        if value and "temp_url_sig" in value:
            return value
        time.sleep(0.2)
    raise AssertionError("the handle never had a temp URL")


def stack_objects(store, stack_id: str) -> list[str] | None:
    try:
        return [entry.name for entry in store.objects(stack_id)]
    except Exception:  # noqa: BLE001 - the container is gone
        return None


def test_swift_signal_waits_for_count_and_keeps_data(demo_cloud, make_service):
    service = make_service()
    store = demo_cloud.connect("demo").object_store
    stack_name = f"signal-{secrets.token_hex(3)}"
    thread, result = in_background(
        lambda: service.create_stack(stack_name, from_data(signal_template(count=2)))
    )
    curl_cli = handle_curl(service, stack_name)
    assert curl_cli.startswith("curl -i -X PUT 'http://127.0.0.1:")
    stack_id = service.get_stack(stack_name).id
    url = urlsplit(curl_cli.split("'")[1])
    assert url.path.split("/")[3] == stack_id
    # The handle's object and its container are in Swift; versions keep every PUT.
    assert store.get_container_metadata(stack_id).versions_location == stack_id

    curl(curl_cli, {"status": "SUCCESS", "reason": "first", "data": "one", "id": "a"})
    time.sleep(1)
    assert service.get_stack(stack_name).state == "CREATE_IN_PROGRESS"
    curl(curl_cli, {"status": "SUCCESS", "data": "two"})
    stack = finished(thread, result)
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    shown = {o["output_key"]: o.get("output_value") for o in service.outputs(stack_name)}
    assert json.loads(shown["data"]) == {"a": "one", "2": "two"}
    assert shown["token"] == ""
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # Gone behind the stack's back (every version, then the container): the handle's
    # check reads the live object and fails; the delete tolerates it all gone.
    for name in stack_objects(store, stack_id):
        store.delete_object(name, container=stack_id)
    while stack_objects(store, stack_id):  # a deleted version brings back an older one
        for name in stack_objects(store, stack_id):
            store.delete_object(name, container=stack_id)
    store.delete_container(stack_id)
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_FAILED"
    deleted = service.delete_stack(stack_name)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert stack_objects(store, stack_id) is None


def test_swift_signal_failure_and_timeout(demo_cloud, make_service):
    service = make_service()
    store = demo_cloud.connect("demo").object_store
    failing = f"failing-{secrets.token_hex(3)}"
    thread, result = in_background(
        lambda: service.create_stack(failing, from_data(signal_template()), disable_rollback=True)
    )
    curl(handle_curl(service, failing), {"status": "FAILURE", "reason": "the disk is full"})
    stack = finished(thread, result)
    assert stack.state == "CREATE_FAILED"
    assert "SwiftSignalFailure: resources.wait: the disk is full" in stack.status_reason
    failing_id = stack.id
    assert service.delete_stack(failing).state == "DELETE_COMPLETE"
    assert stack_objects(store, failing_id) is None

    late = f"late-{secrets.token_hex(3)}"
    stack = service.create_stack(
        late, from_data(signal_template(count=2, timeout=3)), disable_rollback=True
    )
    assert stack.state == "CREATE_FAILED"
    assert "SwiftSignalTimeout" in stack.status_reason and "0 of 2 received" in stack.status_reason
    assert service.delete_stack(late).state == "DELETE_COMPLETE"


def test_swift_signal_handle_refuses_a_url_of_another_stack(demo_cloud, make_service):
    service = make_service()
    name = f"foreign-{secrets.token_hex(3)}"
    template = signal_template()
    template["resources"]["wait"]["properties"]["handle"] = (
        "http://127.0.0.1:1/v1/AUTH_someone/other-stack/handle?temp_url_sig=x&temp_url_expires=1"
    )
    del template["resources"]["handle"]
    template["outputs"] = {}
    stack = service.create_stack(name, from_data(template), disable_rollback=True)
    assert stack.state == "CREATE_FAILED"
    assert (
        "is not a valid SwiftSignalHandle.  The Swift TempURL path is invalid"
        in stack.status_reason
    )
    assert "temp_url_sig" not in stack.status_reason
    assert service.delete_stack(name).state == "DELETE_COMPLETE"


# -- crash safety: the stoker command SIGKILLed while the signal waits -------------------


class Command:
    """The stoker command on one store, as a user runs it."""

    def __init__(self, cloud, tmp_path: Path):
        self.url = f"sqlite:///{tmp_path / 'stoker.sqlite'}"
        self.environment = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("OS_", "STOKER_"))
        }
        self.environment.update(
            OS_CLIENT_CONFIG_FILE=str(cloud.clouds_yaml), STOKER_DATABASE_URL=self.url
        )
        self.arguments = ["--os-cloud", cloud.cloud("demo")]

    def start(self, *command: str) -> subprocess.Popen:
        return subprocess.Popen(
            [STOKER, *self.arguments, *command],
            env=self.environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def run(self, *command: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [STOKER, *self.arguments, *command],
            env=self.environment, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip

    def rows(self, stack_name: str) -> dict:
        service = Service(Settings(database_url=self.url))
        try:
            return {row.name: row for row in service.list_resources(stack_name)}
        except Exception:  # noqa: BLE001 - the stack row may not be written yet
            return {}
        finally:
            service.close()


def test_crash_while_swift_signal_waits_then_the_next_command_finishes(demo_cloud, tmp_path):
    command = Command(demo_cloud, tmp_path)
    store = demo_cloud.connect("demo").object_store
    stack_name = f"crash-signal-{secrets.token_hex(3)}"
    template = tmp_path / "signal.yaml"
    template.write_text(yaml.safe_dump(signal_template(timeout=600)))
    creating = command.start("stack", "create", stack_name, "-t", str(template), "--wait")

    deadline = time.monotonic() + WAIT_S
    while True:
        rows = command.rows(stack_name)
        if (
            rows.get("handle")
            and rows["handle"].status == "COMPLETE"
            and rows.get("wait")
            and rows["wait"].status == "IN_PROGRESS"
        ):
            break
        assert creating.poll() is None, creating.communicate()
        assert time.monotonic() < deadline, "the wait never started"
        time.sleep(0.05)
    creating.send_signal(signal.SIGKILL)
    creating.wait()

    # The agent signals while no engine runs: the signal waits in Swift.
    shown = command.run("stack", "resource", "show", stack_name, "handle", "-f", "json")
    assert shown.returncode == 0, shown.stderr
    curl_cli = json.loads(shown.stdout)["attributes"]["curl_cli"]
    curl(curl_cli, {"status": "SUCCESS", "data": "after the crash"})

    # The next command resumes the wait from its saved token and finds the signal.
    resumed = command.run("stack", "update", stack_name, "-t", str(template), "--wait")
    assert resumed.returncode == 0, resumed.stderr
    assert "Resuming actions interrupted by an engine restart" in resumed.stderr
    rows = command.rows(stack_name)
    assert {rows["handle"].status, rows["wait"].status} == {"COMPLETE"}
    stack_id = json.loads(command.run("stack", "show", stack_name, "-f", "json").stdout)["id"]
    assert stack_objects(store, stack_id)

    deleted = command.run("stack", "delete", stack_name, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    assert stack_objects(store, stack_id) is None


# -- software deployments' TEMP_URL_SIGNAL on Swift --------------------------------------

DEPLOYMENT = {
    "heat_template_version": "2016-10-14",
    "parameters": {"foo": {"type": "string", "default": "one"}},
    "resources": {
        "server": {"type": "OS::Heat::DeployedServer"},
        "config": {
            "type": "OS::Heat::SoftwareConfig",
            "properties": {
                "group": "script",
                "inputs": [{"name": "foo"}],
                "outputs": [{"name": "result"}],
                "config": "#!/bin/sh\necho $foo\n",
            },
        },
        "deployment": {
            "type": "OS::Heat::SoftwareDeployment",
            "properties": {
                "config": {"get_resource": "config"},
                "server": {"get_resource": "server"},
                "signal_transport": "TEMP_URL_SIGNAL",
                "input_values": {"foo": {"get_param": "foo"}},
            },
        },
    },
    "outputs": {"result": {"value": {"get_attr": ["deployment", "result"]}}},
}


def deployed_inputs(service, stack_name: str, action: str) -> dict:
    """What the server's agent finds in its metadata: the derived config's inputs, once
    the deployment for ``action`` is there."""
    from urllib.parse import parse_qs

    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        try:
            shown = service.resource_metadata(service.get_stack(stack_name), "server")
            url = urlsplit(shown["os-collect-config"]["request"]["metadata_url"])
            metadata = service.metadata_by_capability(
                url.path.rsplit("/", 1)[1], parse_qs(url.query)["secret"][0]
            )
            deployments = metadata["deployments"]
        except Exception:  # noqa: BLE001 - not created yet
            deployments = []
        if deployments:
            inputs = {entry["name"]: entry.get("value") for entry in deployments[0]["inputs"]}
            if inputs["deploy_action"] == action:
                return inputs
        time.sleep(0.2)
    raise AssertionError(f"no deployment for {action} in the server's metadata")


def put(url: str, body: dict) -> None:
    """heat-config-notify's PUT of the outputs to deploy_signal_id."""
    completed = subprocess.run(
        ["curl", "--fail", "--silent", "-X", "PUT", "--data-binary", json.dumps(body), url],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert completed.returncode == 0, completed.stdout + completed.stderr


def test_deployment_temp_url_signal_goes_through_swift(demo_cloud, make_service):
    service = make_service()
    store = demo_cloud.connect("demo").object_store
    stack_name = f"deploy-{secrets.token_hex(3)}"
    thread, result = in_background(lambda: service.create_stack(stack_name, from_data(DEPLOYMENT)))
    inputs = deployed_inputs(service, stack_name, "CREATE")
    stack_id = service.get_stack(stack_name).id
    # A Swift temp URL of this project, in the stack's container, and a PUT.
    url = urlsplit(inputs["deploy_signal_id"])
    assert url.path.split("/")[3] == stack_id and "temp_url_sig=" in url.query
    assert inputs["deploy_signal_verb"] == "PUT"
    assert inputs["deploy_signal_transport"] == "TEMP_URL_SIGNAL"
    assert stack_objects(store, stack_id)

    put(inputs["deploy_signal_id"], {"deploy_status_code": 0, "result": "first"})
    stack = finished(thread, result)
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert {o["output_key"]: o["output_value"] for o in service.outputs(stack_name)}[
        "result"
    ] == "first"

    # An update deploys again and waits for a new PUT: the create's signal, still the
    # object's body, does not complete it.
    thread, result = in_background(
        lambda: service.update_stack(stack_name, from_data(DEPLOYMENT), parameters={"foo": "two"})
    )
    updated = deployed_inputs(service, stack_name, "UPDATE")
    assert updated["deploy_signal_id"] == inputs["deploy_signal_id"]
    time.sleep(2)
    assert service.get_stack(stack_name).state == "UPDATE_IN_PROGRESS"
    put(updated["deploy_signal_id"], {"deploy_status_code": 0, "result": "second"})
    stack = finished(thread, result)
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert {o["output_key"]: o["output_value"] for o in service.outputs(stack_name)}[
        "result"
    ] == "second"

    deleted = service.delete_stack(stack_name)
    assert deleted.state == "DELETE_COMPLETE", deleted.status_reason
    assert stack_objects(store, stack_id) is None
