"""Barbican's types as users meet them, against the real Barbican of the test cloud:
the ``stoker`` command in a subprocess (the public templates of openstack/heat-templates'
``hot/barbican/``, a create SIGKILLed while its order is pending, the resource type
listing), and a real ``stoker serve`` whose answers, events and log must never carry a
secret's payload."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import yaml

from stoker.service import Service
from stoker.settings import Settings
from tests.cloud.test_barbican_types import exists, reference_id
from tests.support.server import Server

STOKER = str(Path(sys.executable).with_name("stoker"))
TEMPLATES = Path(__file__).with_name("heat_templates") / "barbican"
WAIT_S = 300


def future(days: int = 30) -> str:
    return (datetime.now(UTC) + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%S")


class Cli:
    """The stoker command as the demo user runs it, on a store of its own."""

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

    def run(self, *command: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(
            [STOKER, *self.arguments, *command],
            env=self.environment, capture_output=True, text=True, timeout=WAIT_S, check=False, cwd=cwd,
        )  # fmt: skip

    def start(self, *command: str) -> subprocess.Popen:
        return subprocess.Popen(
            [STOKER, *self.arguments, *command],
            env=self.environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip

    def row(self, stack: str, resource: str):
        service = Service(Settings(database_url=self.url))
        try:
            rows = [row for row in service.list_resources(stack) if row.name == resource]
            return rows[0] if rows else None
        except Exception:  # noqa: BLE001 - the stack row may not be written yet
            return None
        finally:
            service.close()


@pytest.fixture
def cli(openstack_cloud, barbican_service, tmp_path):
    return Cli(openstack_cloud, tmp_path)


def test_barbican_types_listed_and_shown_by_the_cli(tmp_path):
    environment = {**os.environ, "STOKER_DATABASE_URL": f"sqlite:///{tmp_path / 's.sqlite'}"}
    listed = subprocess.run(
        [STOKER, "resource", "type", "list", "-f", "json", "--filter", "name=OS::Barbican"],
        env=environment, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert sorted(row["Resource Type"] for row in json.loads(listed.stdout)) == [
        "OS::Barbican::CertificateContainer",
        "OS::Barbican::GenericContainer",
        "OS::Barbican::Order",
        "OS::Barbican::RSAContainer",
        "OS::Barbican::Secret",
    ]
    shown = subprocess.run(
        [STOKER, "resource", "type", "show", "OS::Barbican::Secret", "-f", "json"],
        env=environment, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    schema = json.loads(shown.stdout)
    assert schema["resource_type"] == "OS::Barbican::Secret"
    assert schema["properties"]["secret_type"]["default"] == "opaque"
    assert schema["properties"]["payload_content_type"]["constraints"][0]["allowed_values"] == [
        "text/plain",
        "application/octet-stream",
    ]
    assert schema["properties"]["payload"]["update_allowed"] is False
    assert schema["support_status"]["version"] == "2014.2"
    assert set(schema["attributes"]) == {"status", "decrypted_payload", "show"}


def test_heat_templates_barbican_create_and_delete_from_their_folder(
    cli, openstack_cloud, tmp_path
):
    """hot/barbican/container_generic.yaml (a generic container of the nested
    ./secret.yaml's secret) and hot/barbican/order.yaml. Their expiration default
    (2017) is past, which Heat's constraint refuses too: a user gives a later one, for the
    nested template through parameter_defaults."""
    suffix = secrets.token_hex(3)
    key_manager = openstack_cloud.connect("demo").key_manager
    environment = tmp_path / "later.yaml"
    environment.write_text(
        yaml.safe_dump({"parameter_defaults": {"expiration": future(), "name": f"tpl-{suffix}"}})
    )

    box = f"box-{suffix}"
    created = cli.run(
        "stack",
        "create",
        box,
        "-t",
        "container_generic.yaml",
        "-e",
        str(environment),
        "--wait",
        cwd=TEMPLATES,
    )
    assert created.returncode == 0, created.stderr
    shown = cli.run("stack", "output", "show", box, "--all", "-f", "json", cwd=TEMPLATES)
    assert shown.returncode == 0, shown.stderr
    values = {key: item["output_value"] for key, item in json.loads(shown.stdout).items()}
    assert values["container_status"] == "ACTIVE"
    assert list(values["secret_refs"]) == ["test_secret"]
    assert exists(key_manager, "containers", values["container_ref"])
    assert [s.name for s in key_manager.secrets(name=f"tpl-{suffix}")] == [f"tpl-{suffix}"]

    order = f"order-{suffix}"
    ordered = cli.run(
        "stack", "create", order, "-t", "order.yaml",
        "--parameter", f"expiration={future()}", "--parameter", f"name=key-{suffix}", "--wait", cwd=TEMPLATES,
    )  # fmt: skip
    assert ordered.returncode == 0, ordered.stderr
    shown = cli.run("stack", "output", "show", order, "--all", "-f", "json")
    values = {key: item["output_value"] for key, item in json.loads(shown.stdout).items()}
    assert values["order_status"] == "ACTIVE"
    assert key_manager.get_order(reference_id(values["order_ref"])).meta["algorithm"] == "aes"
    assert exists(key_manager, "secrets", values["secret_ref"])

    for stack in (box, order):
        deleted = cli.run("stack", "delete", stack, "--yes", "--wait")
        assert deleted.returncode == 0, deleted.stderr
    assert list(key_manager.secrets(name=f"tpl-{suffix}")) == []
    assert not exists(
        key_manager, "containers", values["secret_ref"].replace("secrets", "containers")
    )
    assert not exists(key_manager, "secrets", values["secret_ref"])
    assert not exists(key_manager, "orders", values["order_ref"])


def test_barbican_order_create_killed_while_pending_is_finished_by_the_next_command(
    cli, openstack_cloud, barbican_service, tmp_path
):
    suffix = secrets.token_hex(3)
    key_manager = openstack_cloud.connect("demo").key_manager
    name = f"crash-{suffix}"
    template = tmp_path / "order.yaml"
    template.write_text(
        yaml.safe_dump(
            {
                "heat_template_version": "2021-04-16",
                "resources": {
                    "order": {
                        "type": "OS::Barbican::Order",
                        "properties": {
                            "type": "key",
                            "name": name,
                            "algorithm": "aes",
                            "bit_length": 128,
                        },
                    }
                },
            }
        )
    )

    def orders() -> list:
        return [order for order in key_manager.orders() if (order.meta or {}).get("name") == name]

    with barbican_service.worker_paused():
        creating = cli.start("stack", "create", name, "-t", str(template), "--wait")
        deadline = time.monotonic() + WAIT_S
        while True:
            row = cli.row(name, "order")
            if row is not None and row.status == "IN_PROGRESS" and row.physical_resource_id:
                creating.send_signal(signal.SIGKILL)
                creating.wait()
                break
            assert creating.poll() is None, (
                f"stoker ended before the crash point: {creating.communicate()}"
            )
            assert time.monotonic() < deadline, "the order was never recorded"
            time.sleep(0.05)
        # The order was recorded the moment Barbican answered; it waits for the worker.
        assert [order.order_ref for order in orders()] == [row.physical_resource_id]
        assert orders()[0].status == "PENDING"

    retried = cli.run("stack", "update", name, "-t", str(template), "--wait")
    assert retried.returncode == 0, retried.stderr
    assert "Resuming actions interrupted by an engine restart" in retried.stderr
    row = cli.row(name, "order")
    assert (row.action, row.status) in (("CREATE", "COMPLETE"), ("UPDATE", "COMPLETE"))
    assert [(order.order_ref, order.status) for order in orders()] == [
        (row.physical_resource_id, "ACTIVE")
    ]
    secret_ref = orders()[0].secret_ref

    deleted = cli.run("stack", "delete", name, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    assert orders() == []
    assert not exists(key_manager, "secrets", secret_ref)


def test_barbican_secret_payload_never_in_api_answers_events_or_log(
    openstack_cloud, barbican_service, tmp_path
):
    payload = f"hush-{secrets.token_hex(8)}"
    suffix = secrets.token_hex(3)
    url = f"sqlite:///{tmp_path / 'serve.sqlite'}"
    server = Server(
        url,
        tmp_path / "serve.log",
        OS_CLIENT_CONFIG_FILE=str(openstack_cloud.clouds_yaml),
        OS_CLOUD=openstack_cloud.cloud("demo"),
    ).start()
    name = f"hush-{suffix}"
    template = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "secret": {
                "type": "OS::Barbican::Secret",
                "properties": {"name": name, "payload": payload},
            },
            "box": {
                "type": "OS::Barbican::GenericContainer",
                "properties": {"secrets": [{"name": "s", "ref": {"get_resource": "secret"}}]},
            },
        },
        "outputs": {"ref": {"value": {"get_resource": "secret"}}},
    }
    try:
        status, body = server.request("POST", "/stacks", {"stack_name": name, "template": template})
        assert status == 201, body
        stack_id = body["stack"]["id"]
        done = server.wait_for(stack_id, timeout=WAIT_S)
        assert done["stack_status"] == "CREATE_COMPLETE", done
        base = f"/stacks/{name}/{stack_id}"
        answers = {}
        for path in (
            "",
            "/resources",
            "/resources/secret",
            "/resources/box",
            "/events",
            "/outputs",
            "/resources/secret/events",
        ):
            status, body = server.request("GET", base + path)
            assert status == 200, (path, body)
            answers[path] = body
        assert (
            answers["/resources/secret"]["resource"]["attributes"]["decrypted_payload"] == "******"
        )
        assert answers["/resources/secret"]["resource"]["attributes"]["status"] == "ACTIVE"
        # The embedded CLI's reads of the same store: resource show and events.
        environment = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("OS_", "STOKER_"))
        }
        environment.update(
            STOKER_DATABASE_URL=url, OS_CLIENT_CONFIG_FILE=str(openstack_cloud.clouds_yaml)
        )
        for command in (["resource", "show", name, "secret"], ["event", "list", name]):
            read = subprocess.run(
                [STOKER, "--os-cloud", openstack_cloud.cloud("demo"), "--project", "demo", "stack", *command, "-f", "json"],
                env=environment, capture_output=True, text=True, check=False, timeout=WAIT_S,
            )  # fmt: skip
            assert read.returncode == 0, read.stderr
            answers[" ".join(command)] = read.stdout + read.stderr
        assert '"decrypted_payload": "******"' in answers[f"resource show {name} secret"]
        # The check and delete go through the same server.
        status, body = server.request("POST", f"{base}/actions", {"check": None})
        assert status == 200, body
        assert server.wait_for(stack_id, timeout=WAIT_S)["stack_status"] == "CHECK_COMPLETE"
        status, body = server.request("DELETE", base)
        assert status == 204, body
        assert server.wait_for(stack_id, timeout=WAIT_S)["stack_status"] == "DELETE_COMPLETE"
        status, body = server.request("GET", f"{base}/events")
        answers["events after delete"] = body
    finally:
        log = server.stop()
    for where, body in answers.items():
        assert payload not in json.dumps(body), where
    assert payload not in log
