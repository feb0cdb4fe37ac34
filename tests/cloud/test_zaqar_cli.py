"""The Zaqar types through the ``stoker`` command, as a user runs it: the types listed and
their schemas shown, and crash safety against the real Zaqar of the test cloud (the
command SIGKILLed in the middle of creating queues and subscriptions; the next command
finishes the create, and Zaqar is left with exactly what the stack knows, then nothing)."""

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
from tests.cloud.test_zaqar_types import CLIENT_ID, listing, queue_names

STOKER = str(Path(sys.executable).with_name("stoker"))
WAIT_S = 300
ZAQAR_TYPES = {
    "OS::Zaqar::Queue",
    "OS::Zaqar::SignedQueueURL",
    "OS::Zaqar::Subscription",
    "OS::Zaqar::MistralTrigger",
}
# Queues (each with a subscription) the crash test's stack makes.
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


def test_zaqar_types_are_listed_and_show_heat_schemas():
    listed = stoker("resource", "type", "list", "-f", "json")
    assert listed.returncode == 0, listed.stderr
    assert {row["Resource Type"] for row in json.loads(listed.stdout)} >= ZAQAR_TYPES

    shown = stoker("resource", "type", "show", "OS::Zaqar::Subscription", "-f", "json")
    assert shown.returncode == 0, shown.stderr
    schema = json.loads(shown.stdout)
    assert set(schema["properties"]) == {"queue_name", "subscriber", "ttl", "options"}
    assert schema["properties"]["ttl"]["default"] == 220367260800
    assert schema["properties"]["ttl"]["update_allowed"] is True
    assert schema["properties"]["queue_name"]["update_allowed"] is False
    assert {"custom_constraint": "zaqar.queue", "description": None} in schema["properties"][
        "queue_name"
    ]["constraints"]

    queue = json.loads(stoker("resource", "type", "show", "OS::Zaqar::Queue", "-f", "json").stdout)
    assert set(queue["properties"]) == {"name", "metadata"}
    assert queue["properties"]["metadata"]["update_allowed"] is True
    # queue_id is HIDDEN in Heat: not shown, still resolvable.
    assert set(queue["attributes"]) >= {"href", "show"} and "queue_id" not in queue["attributes"]

    signed = json.loads(
        stoker("resource", "type", "show", "OS::Zaqar::SignedQueueURL", "-f", "json").stdout
    )
    assert set(signed["attributes"]) >= {
        "signature",
        "expires",
        "paths",
        "methods",
        "project",
        "query_str",
    }

    trigger = json.loads(
        stoker("resource", "type", "show", "OS::Zaqar::MistralTrigger", "-f", "json").stdout
    )
    assert set(trigger["properties"]) == {"queue_name", "ttl", "workflow_id", "params", "input"}


def crash_template(hook: str) -> dict:
    resources: dict = {}
    for index in range(PAIRS):
        resources[f"q{index}"] = {
            "type": "OS::Zaqar::Queue",
            "properties": {"metadata": {"n": index}},
        }
        resources[f"s{index}"] = {
            "type": "OS::Zaqar::Subscription",
            "properties": {
                "queue_name": {"get_resource": f"q{index}"},
                "subscriber": hook,
                "ttl": 3600,
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


def test_zaqar_crash_mid_create_then_retry_leaves_nothing_orphaned(
    openstack_cloud, zaqar_service, tmp_path
):
    suffix = secrets.token_hex(3)
    stack_name = f"zcrash-{suffix}"
    url = f"sqlite:///{tmp_path / 'stoker.sqlite'}"
    template = tmp_path / "queues.yaml"
    template.write_text(yaml.safe_dump(crash_template(f"http://127.0.0.1:9/{suffix}")))
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("OS_", "STOKER_"))
    }
    environment.update(
        OS_CLIENT_CONFIG_FILE=str(openstack_cloud.clouds_yaml), STOKER_DATABASE_URL=url
    )
    cloud = ["--os-cloud", openstack_cloud.cloud("admin")]
    connection = openstack_cloud.connect("admin")

    creating = subprocess.Popen(
        [STOKER, *cloud, "stack", "create", stack_name, "-t", str(template), "--wait"],
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Killed once the first objects exist in Zaqar, while others are still being made.
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
    queues = {recorded[f"q{index}"].physical_resource_id for index in range(PAIRS)}
    assert queue_names(connection, stack_name) == queues
    for index in range(PAIRS):
        queue = recorded[f"q{index}"].physical_resource_id
        live = listing(connection, f"/queues/{queue}/subscriptions?limit=20", "subscriptions")
        # One subscription per queue, the recorded one: none made twice, none orphaned.
        assert [subscription["id"] for subscription in live] == [
            recorded[f"s{index}"].physical_resource_id
        ]
        metadata = connection.message.get(f"/queues/{queue}", headers=CLIENT_ID).json()
        assert metadata["n"] == index

    deleted = stoker(
        *cloud, "stack", "delete", stack_name, "--yes", "--wait", environment=environment
    )
    assert deleted.returncode == 0, deleted.stderr
    assert queue_names(connection, stack_name) == set()
