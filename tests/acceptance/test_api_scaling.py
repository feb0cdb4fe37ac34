"""Scaling as an alarm does it: a real ``stoker serve`` on 127.0.0.1, and the real
``curl`` POSTing to an OS::Heat::ScalingPolicy's ``signal_url``: the group scales out,
and a second signal within the policy's cooldown leaves it as it is."""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from tests.support import server as server_process

SCALED = """
heat_template_version: "2021-04-16"
resources:
  group:
    type: OS::Heat::AutoScalingGroup
    properties:
      min_size: 1
      max_size: 3
      resource:
        type: OS::Heat::RandomString
        properties: {length: 6}
  out:
    type: OS::Heat::ScalingPolicy
    properties:
      auto_scaling_group_id: {get_resource: group}
      adjustment_type: change_in_capacity
      scaling_adjustment: 1
      cooldown: 3600
outputs:
  size: {value: {get_attr: [group, current_size]}}
  url: {value: {get_attr: [out, signal_url]}}
  alarm_url: {value: {get_attr: [out, alarm_url]}}
"""


@pytest.fixture
def server(tmp_path: Path) -> Iterator[server_process.Server]:
    database = tmp_path / "scaling.sqlite"
    running = server_process.Server(f"sqlite:///{database}", tmp_path / f"scaling.{time.monotonic_ns()}.log")
    # The signal URLs a stack hands out point at this server.
    running.environment["STOKER_PUBLIC_URL"] = running.url
    running.start()
    yield running
    assert "Traceback" not in running.stop()


def outputs(server: server_process.Server, stack: str) -> dict:
    status, body = server.request("GET", f"/stacks/{stack}")
    assert status == 200, body
    return {o["output_key"]: o["output_value"] for o in body["stack"]["outputs"]}


def curl_post(url: str) -> str:
    """POST an alarm-like body with the real curl; returns the HTTP status it got."""
    done = subprocess.run(
        [shutil.which("curl") or "curl", "-sS", "-o", "/dev/null", "-w", "%{http_code}", "-X", "POST",
         "-H", "Content-Type: application/json", "-d", '{"current": "alarm"}', url],
        capture_output=True, text=True, timeout=60, check=True,
    )
    return done.stdout


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs the curl command")
def test_curl_to_signal_url_scales_out_once_within_cooldown(server):
    status, body = server.request("POST", "/stacks", {"stack_name": "scaled", "template": yaml.safe_load(SCALED)})
    assert status == 201, body
    stack = server.wait_for(body["stack"]["id"])
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    result = outputs(server, "scaled")
    assert result["size"] == 1
    # The stack's project names the URL's tenant (the API takes any tenant in the path).
    assert result["url"].startswith(f"{server.url}/v1/")
    assert result["url"].endswith(f"/stacks/scaled/{stack['id']}/resources/out/signal")

    assert curl_post(result["url"]) in ("200", "204")
    assert outputs(server, "scaled")["size"] == 2
    assert curl_post(result["url"]) in ("200", "204")  # within the policy's cooldown: ignored
    assert outputs(server, "scaled")["size"] == 2
    status, body = server.request("GET", f"/stacks/scaled/{stack['id']}/resources/out/events")
    assert status == 200, body
    reasons = [e["resource_status_reason"] for e in body["events"] if e["resource_status"] == "SIGNAL_COMPLETE"]
    assert reasons == [
        "Signal: Resized the group group from 1 to 2 (change_in_capacity : 1)",
        "Signal: The resource group could not perform scaling action: due to cooldown, cooldown 3600",
    ]


@pytest.mark.skipif(shutil.which("curl") is None, reason="needs the curl command")
def test_curl_to_alarm_url_scales_out_without_a_token(server):
    """An alarm service POSTs to the policy's alarm_url with no credentials: the URL's
    secret is the capability, and it never appears in the server's log."""
    status, body = server.request("POST", "/stacks", {"stack_name": "alarmed", "template": yaml.safe_load(SCALED)})
    assert status == 201, body
    stack = server.wait_for(body["stack"]["id"])
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    alarm_url = outputs(server, "alarmed")["alarm_url"]
    assert alarm_url.startswith(f"{server.url}/v1/waitcondition/")
    assert curl_post(alarm_url) == "200"
    assert outputs(server, "alarmed")["size"] == 2
    assert curl_post(alarm_url.replace("secret=", "secret=x")) == "403"
    assert outputs(server, "alarmed")["size"] == 2
    secret = alarm_url.split("secret=", 1)[1]
    log_text = server.log_path.read_text()
    assert secret not in log_text
