"""The Mistral types through the ``stoker`` command, as a user runs it: the types listed
and their schemas shown, and crash safety against the real Mistral of the test cloud (the
command SIGKILLed in the middle of creating workflows and cron triggers; the next command
finishes the create, and Mistral is left with exactly what the stack knows, then nothing)."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml

from stoker.service import Service
from stoker.settings import Settings

STOKER = str(Path(sys.executable).with_name("stoker"))
WAIT_S = 300
MISTRAL_TYPES = {
    "OS::Mistral::Workflow",
    "OS::Mistral::CronTrigger",
    "OS::Mistral::ExternalResource",
}
# Workflows (each with a cron trigger) the crash test's stack makes.
PAIRS = 6


def stoker(*arguments: str, environment: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [STOKER, *arguments],
        env=environment,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )


def test_mistral_types_are_listed_and_show_heat_schemas():
    listed = stoker("resource", "type", "list", "-f", "json")
    assert listed.returncode == 0, listed.stderr
    assert {row["Resource Type"] for row in json.loads(listed.stdout)} >= MISTRAL_TYPES

    workflow = json.loads(
        stoker("resource", "type", "show", "OS::Mistral::Workflow", "-f", "json").stdout
    )
    assert set(workflow["attributes"]) >= {"data", "alarm_url", "executions"}
    assert workflow["properties"]["tasks"]["update_allowed"] is True
    assert workflow["properties"]["name"]["update_allowed"] is False

    trigger = json.loads(
        stoker("resource", "type", "show", "OS::Mistral::CronTrigger", "-f", "json").stdout
    )
    assert set(trigger["properties"]) == {"name", "pattern", "workflow", "first_time", "count"}
    assert {"custom_constraint": "cron_expression", "description": None} in trigger["properties"][
        "pattern"
    ]["constraints"]

    external = json.loads(
        stoker("resource", "type", "show", "OS::Mistral::ExternalResource", "-f", "json").stdout
    )
    assert set(external["properties"]["actions"]["schema"]) == {
        "CREATE",
        "UPDATE",
        "SUSPEND",
        "RESUME",
        "DELETE",
    }
    assert external["properties"]["description"]["default"] == "Heat managed"


def crash_template() -> dict:
    resources: dict = {}
    for index in range(PAIRS):
        resources[f"w{index}"] = {
            "type": "OS::Mistral::Workflow",
            "properties": {"type": "direct", "tasks": [{"name": "noop", "action": "std.noop"}]},
        }
        resources[f"t{index}"] = {
            "type": "OS::Mistral::CronTrigger",
            "properties": {
                # Far in the future: the triggers must not fire during the test.
                "first_time": "2099-01-01 00:00",
                "workflow": {"name": {"get_resource": f"w{index}"}},
            },
        }
    return {"heat_template_version": "2021-04-16", "resources": resources}


def rows(url: str, stack_name: str) -> dict:
    service = Service(Settings(database_url=url))
    try:
        return {row.name: row for row in service.list_resources(stack_name)}
    except Exception:  # noqa: BLE001 - the stack row may not be written yet
        return {}
    finally:
        service.close()


def listed(connection, collection: str, prefix: str) -> set[str]:
    answer = connection.workflow.request(f"/{collection}?limit=1000", "GET")
    assert answer.status_code == 200, answer.text
    return {item["name"] for item in answer.json()[collection] if item["name"].startswith(prefix)}


def test_mistral_crash_mid_create_then_retry_leaves_nothing_orphaned(
    openstack_cloud, mistral_service, tmp_path
):
    suffix = secrets.token_hex(3)
    stack_name = f"mcrash-{suffix}"
    url = f"sqlite:///{tmp_path / 'stoker.sqlite'}"
    template = tmp_path / "workflows.yaml"
    template.write_text(yaml.safe_dump(crash_template()))
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("OS_", "STOKER_"))
    }
    environment.update(
        OS_CLIENT_CONFIG_FILE=str(openstack_cloud.clouds_yaml), STOKER_DATABASE_URL=url
    )
    cloud = ["--os-cloud", openstack_cloud.cloud("demo")]
    connection = openstack_cloud.connect("demo")

    creating = subprocess.Popen(
        [STOKER, *cloud, "stack", "create", stack_name, "-t", str(template), "--wait"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Killed once the first workflows exist in Mistral, while others are still being made.
    deadline = time.monotonic() + WAIT_S
    while True:
        found = rows(url, stack_name)
        if any(row.physical_resource_id for row in found.values()):
            creating.send_signal(signal.SIGKILL)
            creating.wait()
            break
        assert creating.poll() is None, (
            f"stoker ended before the crash point: {creating.communicate()}"
        )
        assert time.monotonic() < deadline, "the crash point was never reached"
        time.sleep(0.02)
    interrupted = rows(url, stack_name)
    assert not all(row.state == "CREATE_COMPLETE" for row in interrupted.values())

    # The next command that changes stacks resumes the create, then does its own update.
    retried = stoker(
        *cloud,
        "stack",
        "update",
        stack_name,
        "-t",
        str(template),
        "--wait",
        environment=environment,
    )
    assert retried.returncode == 0, retried.stderr
    assert "Resuming actions interrupted by an engine restart" in retried.stderr
    recorded = rows(url, stack_name)
    assert {row.status for row in recorded.values()} == {"COMPLETE"}
    # Each workflow and trigger once, the recorded one: none made twice, none orphaned.
    assert listed(connection, "workflows", stack_name) == {
        recorded[f"w{index}"].physical_resource_id for index in range(PAIRS)
    }
    assert listed(connection, "cron_triggers", stack_name) == {
        recorded[f"t{index}"].physical_resource_id for index in range(PAIRS)
    }

    deleted = stoker(
        *cloud, "stack", "delete", stack_name, "--yes", "--wait", environment=environment
    )
    assert deleted.returncode == 0, deleted.stderr
    assert listed(connection, "workflows", stack_name) == set()
    assert listed(connection, "cron_triggers", stack_name) == set()
