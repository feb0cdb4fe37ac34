"""The public autohealing templates of openstack/heat-templates on the test cloud, healed by a
real alarm: ``hot/autohealing/autohealing_group.yaml``, a group of two
``autohealing_server.yaml`` members, copied unchanged into ``heat_templates/hot/autohealing/``.

Each member is a server with three Aodh event alarms (stopped, error, deleted) whose
``alarm_queues`` stoker makes ``trust+zaqar://`` actions, a Zaqar queue, a Mistral workflow and
the OS::Zaqar::MistralTrigger subscription that starts it for each message. The test is the
template's user and the cloud's Ceilometer: it creates the stack through a ``stoker serve`` in
keystone mode (the catalog's ``orchestration`` service, as Mistral's heat actions look it up)
as the demo user, stops one member's server in Nova and publishes the
``compute.instance.update`` event with ``state: stopped`` that Ceilometer's notifier publisher
would send to Aodh's listener. From there nothing is helped along: Aodh's listener fires the
alarm and its notifier posts to the queue with a trust, Zaqar's notifier starts the workflow,
and Mistral's ``heat.resources_mark_unhealthy`` (the server named by its physical id, from the
event's traits) and ``heat.stacks_update existing=true`` (mistral-extra's actions through
python-heatclient) call stoker, which replaces the marked server. Then the stack is deleted
with every server, alarm, queue, workflow and trust it made.

The test runs with stoker in both auth modes. In ``none`` mode stoker acts with the demo
user's cloud credentials (the path's project is the demo's), and the whole chain runs. In
keystone mode (``STOKER_ALLOW_TRUSTS_REDELEGATION`` on: the alarms' ``trust+`` actions and
the subscription's ``trust+`` subscriber are made through the stack's trust, docs/auth.md)
Keystone refuses Zaqar's trust for the subscription (``KEYSTONE_REDELEGATION_REASON``): the
test is an xfail when, and only when, the create fails for that cause.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cloud import identity
from tests.cloud.test_aodh_tempest_scenarios import keystone_stoker
from tests.cloud.test_aodh_types import Witness
from tests.cloud.test_zaqar_types import listing
from tests.support.server import Server

TEMPLATES = Path(__file__).with_name("heat_templates") / "hot" / "autohealing"
# Seconds to create or delete the stack: the members' TestResource waits 60 s for Aodh's
# event alarm cache (upstream's comment in autohealing_server.yaml).
STACK_TIMEOUT_S = 420
# Seconds from the event to the healed group: Aodh, Zaqar, Mistral, then an update whose
# TestResource waits 60 s again.
HEAL_TIMEOUT_S = 600
POLL_S = 3

# Keystone 2026.2 (keystone/trust/core.py, _validate_redelegation) compares a requested
# expiry with the redelegated trust's, and a trust without one (a stack's trust never
# expires, as Heat's) has None there: the comparison raises, Keystone answers 400 and Zaqar
# 503 to the MistralTrigger's subscription, whose trust+ subscriber gets a trust expiring
# with the subscription's ttl. In keystone mode stoker makes the subscription through the
# stack's trust (Heat with the user's own token at create), so Keystone must redelegate.
KEYSTONE_REDELEGATION_BUG = (
    "'<' not supported between instances of 'NoneType' and 'datetime.datetime'"
)
KEYSTONE_REDELEGATION_REASON = (
    "Keystone cannot redelegate a trust without an expiry into one with an expiry "
    "(TypeError in keystone.trust.core._validate_redelegation, answered 400): Zaqar's trust "
    "for the MistralTrigger subscription, made through the stack's trust, is refused"
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]


class Orchestration:
    """stoker's REST API with the demo user's token, as Heat's users call it."""

    def __init__(self, server, token: str | None, project_id: str):
        self.base = f"{server.url}/v1/{project_id}"
        self.token = token

    def call(self, method: str, path: str, body: Any = None) -> identity.Response:
        return identity.request(method, self.base + path, token=self.token, body=body)

    def stack(self, name: str, stack_id: str) -> dict:
        answer = self.call("GET", f"/stacks/{name}/{stack_id}")
        assert answer.status == 200, answer.body
        return answer.body["stack"]

    def outputs(self, name: str, stack_id: str) -> dict:
        return {
            o["output_key"]: o.get("output_value") for o in self.stack(name, stack_id)["outputs"]
        }

    def nested_resources(self, name: str, stack_id: str) -> list[dict]:
        answer = self.call("GET", f"/stacks/{name}/{stack_id}/resources?nested_depth=2")
        assert answer.status == 200, answer.body
        return answer.body["resources"]

    def wait(self, name: str, stack_id: str, done, timeout_s: float, what: str) -> dict:
        started = time.monotonic()
        while True:
            answer = self.call("GET", f"/stacks?id={stack_id}&show_deleted=true")
            assert answer.status == 200, answer.body
            found = answer.body["stacks"][0] if answer.body["stacks"] else None
            if found is not None and done(found["stack_status"]):
                return found
            assert time.monotonic() - started < timeout_s, f"{what}: {found}"
            time.sleep(POLL_S)


def settled(status: str) -> bool:
    return not status.endswith("IN_PROGRESS")


def physical_ids(resources: list[dict], resource_type: str) -> list[str]:
    return [r["physical_resource_id"] for r in resources if r["resource_type"] == resource_type]


@contextlib.contextmanager
def serving(mode: str, openstack_cloud, tmp_path: Path, suffix: str) -> Iterator[Server]:
    """``stoker serve`` acting for the demo user: in keystone mode with the demo user's
    token (its trusts redelegatable, for the ``trust+`` actions made through them), or in
    none mode with the demo user's cloud credentials (the path's project is the demo's)."""
    if mode == "keystone":
        with keystone_stoker(
            openstack_cloud, tmp_path, suffix, STOKER_ALLOW_TRUSTS_REDELEGATION="true"
        ) as server:
            yield server
        return
    server = Server(
        f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        tmp_path / "serve.log",
        **openstack_cloud.cloud_environ("demo"),
    )
    server.environment["STOKER_PUBLIC_URL"] = server.url
    server.start()
    try:
        yield server
    finally:
        log = server.stop()
        assert "Traceback" not in log, log


@pytest.fixture(params=["keystone", "none"])
def deployment(request, openstack_cloud, aodh_service, zaqar_service, mistral_service, tmp_path):
    """stoker registered as the catalog's ``orchestration`` service (where Mistral's heat
    actions find it), and a demo network; the auth mode is the parameter."""
    suffix = secrets.token_hex(3)
    admin = identity.Keystone(openstack_cloud.keystone_url)
    demo = openstack_cloud.connect("demo")
    with serving(request.param, openstack_cloud, tmp_path, suffix) as server:
        catalog = admin.call("POST", "/services", body={"service": {"name": f"stoker-heal-{suffix}", "type": "orchestration"}})["service"]  # fmt: skip
        admin.call("POST", "/endpoints", body={"endpoint": {"service_id": catalog["id"], "interface": "public", "region_id": identity.REGION, "url": server.url + "/v1/%(tenant_id)s"}})  # fmt: skip
        network = demo.network.create_network(name=f"heal-net-{suffix}")
        demo.network.create_subnet(network_id=network.id, ip_version=4, cidr="10.11.0.0/24")
        try:
            yield request.param, server, network.name, suffix
        finally:
            admin.call("DELETE", f"/services/{catalog['id']}")
            demo.network.delete_network(network.id, ignore_missing=True)


def all_trusts(admin: identity.Keystone) -> dict[str, dict]:
    return {trust["id"]: trust for trust in admin.call("GET", "/OS-TRUST/trusts")["trusts"]}


def zaqar_queues(demo) -> set[str]:
    """The demo project's queue names."""
    return {queue["name"] for queue in listing(demo, "/queues?limit=20", "queues")}


def diagnosis(
    demo, witness: Witness, alarm_ids: list[str], workflow_names: list[str], logs: list[Path]
) -> str:
    """What each part of the chain did, for a failure's message."""
    lines = []
    for alarm_id in alarm_ids:
        alarm = witness.alarm(alarm_id)
        lines.append(
            f"alarm {alarm_id}: {alarm and (alarm['state'], alarm['state_reason'], alarm['alarm_actions'])}"
        )
    for name in workflow_names:
        answer = demo.workflow.get(f"/executions?workflow_name={name}")
        for execution in answer.json().get("executions", []) if answer.status_code == 200 else []:
            whole = demo.workflow.get(f"/executions/{execution['id']}").json()
            lines.append(f"execution of {name}: {whole.get('state')} {whole.get('state_info')}")
    lines.extend(f"logs: {path}" for path in logs)
    return "\n".join(lines)


def test_autohealing_group_replaces_a_stopped_server(
    openstack_cloud, aodh_service, zaqar_service, mistral_service, deployment
):
    mode, server, network, suffix = deployment
    demo = openstack_cloud.connect("demo")
    admin = identity.Keystone(openstack_cloud.keystone_url)
    token = demo.auth_token if mode == "keystone" else None
    api = Orchestration(server, token, demo.current_project_id)
    witness = Witness(openstack_cloud, aodh_service)
    trusts_before = set(all_trusts(admin))
    queues_before = zaqar_queues(demo)
    name = f"heal-{suffix}"
    stack_id = None
    try:
        answer = api.call(
            "POST",
            "/stacks",
            {
                "stack_name": name,
                "template": (TEMPLATES / "autohealing_group.yaml").read_text(),
                "files": {
                    "autohealing_server.yaml": (TEMPLATES / "autohealing_server.yaml").read_text()
                },
                "parameters": {
                    "flavor": "m1.tiny",
                    "image": openstack_cloud.image_id,
                    "network": network,
                },
            },
        )
        assert answer.status == 201, answer.body
        stack_id = answer.body["stack"]["id"]
        created = api.wait(name, stack_id, settled, STACK_TIMEOUT_S, "the stack's create")
        if mode == "keystone" and created["stack_status"] == "CREATE_FAILED":
            zaqar_log = (zaqar_service.directory / "logs" / "zaqar-api.log").read_text()
            if (
                "alarm_subscription" in created["stack_status_reason"]
                and KEYSTONE_REDELEGATION_BUG in zaqar_log
            ):
                pytest.xfail(KEYSTONE_REDELEGATION_REASON)
        assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]

        resources = api.nested_resources(name, stack_id)
        alarm_ids = physical_ids(resources, "OS::Aodh::EventAlarm")
        workflows = physical_ids(resources, "OS::Mistral::Workflow")
        queues = physical_ids(resources, "OS::Zaqar::Queue")
        assert (len(alarm_ids), len(workflows), len(queues)) == (6, 2, 2)
        for alarm_id in alarm_ids:
            alarm = witness.alarm(alarm_id)
            assert alarm is not None and alarm["type"] == "event"
            # Aodh shows a trust+ action without the trust it made: trust+zaqar:?queue_name=...
            assert [a.split("?")[0] for a in alarm["alarm_actions"]] == ["trust+zaqar:"], alarm
        server_ids = api.outputs(name, stack_id)["server_ids"]
        assert len(server_ids) == 2 and {
            s.status for s in map(demo.compute.get_server, server_ids)
        } == {"ACTIVE"}

        # Ceilometer's part: the server stops, Nova's notification becomes this event.
        stopped = server_ids[0]
        demo.compute.stop_server(stopped)
        demo.compute.wait_for_server(demo.compute.get_server(stopped), status="SHUTOFF", wait=120)
        aodh_service.publish_event(
            "compute.instance.update",
            {
                "instance_id": stopped,
                "state": "stopped",
                "tenant_id": demo.current_project_id,
                "user_id": demo.current_user_id,
            },
        )

        def healed() -> list[str] | None:
            found = api.call("GET", f"/stacks?id={stack_id}").body["stacks"][0]
            if found["stack_status"] != "UPDATE_COMPLETE":
                return None
            now = api.outputs(name, stack_id)["server_ids"]
            return now if stopped not in now and len(now) == 2 else None

        started = time.monotonic()
        while (now := healed()) is None:
            assert time.monotonic() - started < HEAL_TIMEOUT_S, "the group was not healed:\n" + diagnosis(
                demo, witness, alarm_ids, workflows,
                [aodh_service.logs, zaqar_service.directory / "logs", mistral_service.logs, server.log_path],
            )  # fmt: skip
            time.sleep(POLL_S)
        assert server_ids[1] in now
        assert demo.compute.find_server(stopped) is None, "the stopped server is still there"
        assert (
            demo.compute.get_server(next(s for s in now if s not in server_ids)).status == "ACTIVE"
        )
        fired = witness.alarm(
            next(a for a in alarm_ids if witness.alarm(a) and witness.alarm(a)["state"] == "alarm")
        )
        assert fired is not None and fired["state_reason"].startswith("Event <id=")

        resources = api.nested_resources(name, stack_id)
        alarm_ids = sorted(set(alarm_ids) | set(physical_ids(resources, "OS::Aodh::EventAlarm")))
        workflows = sorted(set(workflows) | set(physical_ids(resources, "OS::Mistral::Workflow")))
        queues = sorted(set(queues) | set(physical_ids(resources, "OS::Zaqar::Queue")))
        all_servers = set(server_ids) | set(now)

        answer = api.call("DELETE", f"/stacks/{name}/{stack_id}")
        assert answer.status == 204, answer.body
        deleted = api.wait(name, stack_id, settled, STACK_TIMEOUT_S, "the stack's delete")
        assert deleted["stack_status"] == "DELETE_COMPLETE", deleted["stack_status_reason"]
        stack_id = None

        assert [s for s in all_servers if demo.compute.find_server(s) is not None] == []
        assert [a for a in alarm_ids if witness.alarm(a) is not None] == []
        assert [q for q in queues if q in zaqar_queues(demo) - queues_before] == []
        assert [
            w for w in workflows if demo.workflow.get(f"/workflows/{w}").status_code != 404
        ] == []
        # Zaqar never deletes the trust it made for a trust+ subscriber (its
        # notification/tasks/trust.py makes one at register; nothing deletes it), behind
        # Heat as behind stoker: one per MistralTrigger, the member's, whose trustee is the
        # zaqar service user. Every other trust (the stack's, Aodh's) is gone; Aodh deletes
        # an alarm's trust after the alarm, so a moment after the stack's delete.
        zaqar = admin.call("GET", "/users?name=zaqar")["users"][0]["id"]
        deadline = time.monotonic() + 60
        while True:
            left = {i: t for i, t in all_trusts(admin).items() if i not in trusts_before}
            subscribers = {i for i, t in left.items() if t["trustee_user_id"] == zaqar}
            if set(left) == subscribers or time.monotonic() > deadline:
                break
            time.sleep(1)
        for trust_id in subscribers:
            admin.call("DELETE", f"/OS-TRUST/trusts/{trust_id}")
        assert set(left) == subscribers and len(subscribers) == 2, left
    finally:
        if stack_id is not None:
            api.call("DELETE", f"/stacks/{name}/{stack_id}")
            api.wait(name, stack_id, settled, STACK_TIMEOUT_S, "the stack's delete")
