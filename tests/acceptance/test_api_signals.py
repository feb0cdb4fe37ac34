"""Signals from real agents to a real ``stoker serve`` on 127.0.0.1: the real ``curl``
runs a handle's ``curl_cli``, the real ``cfn-signal`` (heat-cfntools) PUTs to a CFN
handle's URL, a wrong token is refused as Heat refuses it, and a signal sent while no
engine runs completes the wait after the next server starts."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from stoker.service import Service
from stoker.settings import Settings
from tests.support.server import Server

CFN_SIGNAL = str(Path(sys.executable).with_name("cfn-signal"))

WAITING = """
heat_template_version: 2021-04-16
parameters:
  count: {type: number, default: 1}
resources:
  handle:
    type: OS::Heat::WaitConditionHandle
  wait:
    type: OS::Heat::WaitCondition
    properties:
      handle: {get_resource: handle}
      count: {get_param: count}
      timeout: 600
outputs:
  curl_cli: {value: {get_attr: [handle, curl_cli]}}
  token: {value: {get_attr: [handle, token]}}
  data: {value: {get_attr: [wait, data]}}
"""

CFN = """
AWSTemplateFormatVersion: 2010-09-09
Resources:
  Handle:
    Type: AWS::CloudFormation::WaitConditionHandle
  Wait:
    Type: AWS::CloudFormation::WaitCondition
    Properties:
      Handle: {Ref: Handle}
      Timeout: 600
Outputs:
  Url:
    Value: {Ref: Handle}
  Data:
    Value: {"Fn::GetAtt": [Wait, Data]}
"""


def start_server(database: Path) -> Server:
    server = Server(f"sqlite:///{database}", database.with_suffix(f".{time.monotonic_ns()}.log"))
    # Agents reach this server where it listens.
    server.environment["STOKER_PUBLIC_URL"] = server.url
    return server.start()


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    running = start_server(tmp_path_factory.mktemp("signals") / "signals.sqlite")
    yield running
    log = running.stop()
    assert "Traceback" not in log


def create(server: Server, name: str, text: str, parameters: dict | None = None) -> str:
    status, body = server.request("POST", "/stacks", {"stack_name": name, "template": text, "parameters": parameters or {}})
    assert status == 201, body
    return body["stack"]["id"]


def resource_state(server: Server, name: str, stack_id: str, resource: str) -> str:
    status, body = server.request("GET", f"/stacks/{name}/{stack_id}/resources/{resource}")
    assert status == 200, body
    return f"{body['resource']['resource_action']}_{body['resource']['resource_status']}" if "resource_action" in body["resource"] else body["resource"]["resource_status"]


def wait_until_waiting(server: Server, name: str, stack_id: str, resource: str = "wait") -> None:
    """Until the resource waits (the create answers 202 before its resources exist)."""
    deadline = time.monotonic() + 30
    while True:
        status, body = server.request("GET", f"/stacks/{name}/{stack_id}/resources/{resource}")
        if status == 200 and body["resource"]["resource_status"] in ("CREATE_IN_PROGRESS", "IN_PROGRESS"):
            return
        assert status in (200, 404), body
        assert time.monotonic() < deadline, body
        time.sleep(0.1)


def outputs(server: Server, name: str, stack_id: str) -> dict:
    status, body = server.request("GET", f"/stacks/{name}/{stack_id}")
    assert status == 200, body
    return {o["output_key"]: o["output_value"] for o in body["stack"]["outputs"]}


def test_curl_cli_of_a_handle_completes_its_wait_condition(server):
    stack_id = create(server, "curl", WAITING, {"count": 2})
    wait_until_waiting(server, "curl", stack_id)
    shown = outputs(server, "curl", stack_id)
    command = shlex.split(shown["curl_cli"])
    assert command[0] == "curl" and shown["token"] in shown["curl_cli"]

    # A wrong token for the handle is refused, as Heat's JSON fault.
    wrong = [part.replace(shown["token"], "wrong-token") for part in command]
    refused = subprocess.run([*wrong, "--data-binary", '{"status": "SUCCESS"}'], capture_output=True, text=True, timeout=30)
    assert refused.returncode == 0, refused.stderr
    head, _, body = refused.stdout.partition("\n\n")
    assert head.startswith("HTTP/1.1 403"), refused.stdout
    fault = json.loads(body)
    assert fault["code"] == 403 and fault["error"]["type"] == "Forbidden"
    assert "wrong-token" not in body

    for data in ('{"status": "SUCCESS", "data": "one"}', '{"status": "SUCCESS", "data": "two", "id": "b"}'):
        ran = subprocess.run([*command, "--data-binary", data], capture_output=True, text=True, timeout=30)
        assert ran.returncode == 0, ran.stderr
        assert ran.stdout.startswith("HTTP/1.1 200"), ran.stdout
    stack = server.wait_for(stack_id)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert json.loads(outputs(server, "curl", stack_id)["data"]) == {"1": "one", "b": "two"}
    # The secret stays out of the events and the server's log.
    status, body = server.request("GET", f"/stacks/curl/{stack_id}/events")
    assert status == 200 and shown["token"] not in json.dumps(body)
    assert shown["token"] not in server.log_path.read_text()


def test_cfn_signal_completes_a_cloudformation_wait_condition(server):
    stack_id = create(server, "cfn", CFN)
    wait_until_waiting(server, "cfn", stack_id, "Wait")
    url = outputs(server, "cfn", stack_id)["Url"]
    assert url.startswith(f"{server.url}/v1/waitcondition/")
    ran = subprocess.run([CFN_SIGNAL, "-i", "server-1", "-d", "configured", "-r", "all done", url], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    stack = server.wait_for(stack_id)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    assert json.loads(outputs(server, "cfn", stack_id)["Data"]) == {"server-1": "configured"}
    status, body = server.request("GET", f"/stacks/cfn/{stack_id}/resources/Handle/events")
    assert status == 200
    assert [e["resource_status_reason"] for e in body["events"] if e["resource_status_reason"].startswith("Signal:")] == [
        "Signal: status:SUCCESS reason:all done"
    ]
    secret = url.split("secret=")[1]
    log = server.log_path.read_text()
    assert "/v1/waitcondition/" in log and "secret=***" in log  # logged, without the secret
    assert secret not in log
    # After the delete, the URL no longer signals anything.
    assert server.request("DELETE", f"/stacks/cfn/{stack_id}")[0] == 204
    server.wait_for(stack_id)
    failed = subprocess.run(["curl", "-s", "-X", "PUT", "--data-binary", '{"Status": "SUCCESS", "Reason": "r", "UniqueId": "2", "Data": "d"}', url], capture_output=True, text=True, timeout=30)
    assert json.loads(failed.stdout)["code"] == 403


def test_a_signal_sent_while_no_engine_runs_completes_the_wait_after_restart(tmp_path):
    database = tmp_path / "restart.sqlite"
    first = start_server(database)
    try:
        stack_id = create(first, "later", WAITING)
        wait_until_waiting(first, "later", stack_id)
        token = outputs(first, "later", stack_id)["token"]
    finally:
        first.stop(kill=True)
    # No engine runs: the signal is only a row.
    offline = Service(Settings(database_url=f"sqlite:///{database}"))
    try:
        offline.signal_resource(stack_id, "handle", {"status": "SUCCESS", "data": "while down"}, credential=token)
        assert {r.name: r.state for r in offline.list_resources(stack_id)}["wait"] == "CREATE_IN_PROGRESS"
    finally:
        offline.close()
    second = start_server(database)
    try:
        stack = second.wait_for(stack_id, timeout=60)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
        assert json.loads(outputs(second, "later", stack_id)["data"]) == {"1": "while down"}
    finally:
        second.stop()


def test_signal_urls_follow_the_port_the_server_serves_on_when_no_public_url_is_set(tmp_path):
    # No STOKER_PUBLIC_URL: the handle's URL is where this server listens, not Heat's 8004.
    server = Server(f"sqlite:///{tmp_path / 'port.sqlite'}", tmp_path / "port.log").start()
    try:
        stack_id = create(server, "port", WAITING)
        wait_until_waiting(server, "port", stack_id)
        command = shlex.split(outputs(server, "port", stack_id)["curl_cli"])
        assert any(part.startswith(f"{server.url}/v1/") for part in command), command
        ran = subprocess.run([*command, "--data-binary", '{"status": "SUCCESS"}'], capture_output=True, text=True, timeout=30)
        assert ran.stdout.startswith("HTTP/1.1 200"), ran.stdout + ran.stderr
        stack = server.wait_for(stack_id)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    finally:
        server.stop()
