"""The public autoscaling templates of openstack/heat-templates on the test cloud, scaled by a
real alarm: ``hot/asg_of_servers.yaml`` (a group of OS::Nova::Server) and
``hot/asg_of_stacks.yaml`` (a group of ``vm_with_cinder.yaml`` nested stacks, each a server
with a volume attached), copied unchanged into ``heat_templates/hot/``.

Both templates end with a ``scale_up_url`` and a ``scale_dn_url`` output (the policies'
``alarm_url``) and say how to use them: a POST scales the group. So the test does what their
user would with Aodh: it makes a Gnocchi alarm whose ``alarm_actions`` is ``scale_up_url``,
pushes high measures, and Aodh's evaluator and notifier POST the URL to a real ``stoker
serve`` on 127.0.0.1; then a low alarm on ``scale_dn_url`` brings the group back down once
the policy's 60 s cooldown has passed (``repeat_actions``: Aodh notifies again at each
evaluation while the alarm holds, as a user would set it for a policy with a cooldown). The
stack is deleted, with every server and volume it made.

The other public autoscaling and autohealing templates are in tests/cloud/README.md's table
("Public autoscaling and autohealing templates"), with what keeps each from running here.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import pytest

from tests.cloud.test_aodh_types import Witness
from tests.support.server import Server

PUBLIC = Path(__file__).with_name("heat_templates") / "hot"
# Seconds to create or delete a stack of three servers (and volumes).
STACK_TIMEOUT_S = 300
# Seconds for Aodh to fire and stoker to resize, a 60 s cooldown included.
SCALE_TIMEOUT_S = 300

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]


@pytest.fixture
def server(openstack_cloud, aodh_service, tmp_path):
    serving = Server(
        f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        tmp_path / "serve.log",
        **openstack_cloud.cloud_environ("demo"),
    )
    # The alarm URLs must lead Aodh's notifier back to this server.
    serving.environment["STOKER_PUBLIC_URL"] = serving.url
    serving.start()
    yield serving
    log = serving.stop()
    assert "Traceback" not in log, log


def gnocchi_alarm(name: str, metric_id: str, operator: str, threshold: float, url: str) -> dict:
    return {
        "name": name,
        "type": "gnocchi_aggregation_by_metrics_threshold",
        "gnocchi_aggregation_by_metrics_threshold_rule": {
            "metrics": [metric_id], "aggregation_method": "mean", "granularity": 5,
            "evaluation_periods": 1, "threshold": threshold, "comparison_operator": operator,
        },
        "alarm_actions": [url],
        "repeat_actions": operator == "lt",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("template", "files"),
    [("asg_of_servers.yaml", ()), ("asg_of_stacks.yaml", ("vm_with_cinder.yaml",))],
)
def test_public_autoscaling_template_scales_on_a_real_alarm(
    openstack_cloud, aodh_service, server, template, files
):
    suffix = secrets.token_hex(3)
    demo = openstack_cloud.connect("demo")
    witness = Witness(openstack_cloud, aodh_service)
    _, metric_id = witness.resource_with_metric()
    keypair = demo.compute.create_keypair(name=f"asg-key-{suffix}")
    network = demo.network.create_network(name=f"asg-net-{suffix}")
    demo.network.create_subnet(network_id=network.id, ip_version=4, cidr="10.9.0.0/24")
    name = f"asg-{suffix}"
    alarms: list[str] = []
    stack_id = None
    try:
        status, body = server.request(
            "POST",
            "/stacks",
            {
                "stack_name": name,
                "template": (PUBLIC / template).read_text(),
                "files": {file: (PUBLIC / file).read_text() for file in files},
                "parameters": {
                    "key_name": keypair.name, "flavor": "m1.tiny",
                    "image": openstack_cloud.image_id, "network": network.name,
                },
            },
        )  # fmt: skip
        assert status == 201, body
        stack_id = body["stack"]["id"]
        created = server.wait_for(stack_id, timeout=STACK_TIMEOUT_S)
        assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]

        def outputs() -> dict:
            status, shown = server.request("GET", f"/stacks/{name}/{stack_id}")
            assert status == 200, shown
            return {o["output_key"]: o.get("output_value") for o in shown["stack"]["outputs"]}

        def servers() -> list:
            return [s for s in demo.compute.servers() if s.name.startswith(name)]

        def members() -> int:
            status, body = server.request(
                "GET", f"/stacks/{name}/{stack_id}/resources?nested_depth=1"
            )
            assert status == 200, body
            return sum(1 for r in body["resources"] if r.get("parent_resource") == "asg")

        def alarm(operator: str, threshold: float, url: str) -> None:
            answer = witness.call(
                "POST", f"{witness.aodh}/v2/alarms",
                gnocchi_alarm(f"{name}-{operator}", metric_id, operator, threshold, url),
            )  # fmt: skip
            assert answer.status == 201, answer.body
            alarms.append(answer.body["alarm_id"])

        def feed_until(value: float, wanted: int) -> None:
            started = time.monotonic()
            while members() != wanted:
                assert time.monotonic() - started < SCALE_TIMEOUT_S, (
                    f"the group never reached {wanted} members; logs: {aodh_service.logs}"
                )
                aodh_service.push_measures(witness.token, metric_id, [value])
                time.sleep(2)

        urls = outputs()
        assert members() == 3 and len(servers()) == 3
        alarm("gt", 50, urls["scale_up_url"])
        feed_until(90.0, 4)
        # The fourth member is listed while its server builds: the scale-up ends when it is ACTIVE.
        started = time.monotonic()
        while sorted(s.status for s in servers()) != ["ACTIVE"] * 4:
            assert time.monotonic() - started < STACK_TIMEOUT_S, [s.status for s in servers()]
            time.sleep(2)
        witness.call("DELETE", f"{witness.aodh}/v2/alarms/{alarms.pop()}")
        alarm("lt", 20, urls["scale_dn_url"])
        feed_until(5.0, 3)
        witness.call("DELETE", f"{witness.aodh}/v2/alarms/{alarms.pop()}")
        if template == "asg_of_servers.yaml":
            assert len(outputs()["server_list"]) == 3

        server_ids = {s.id for s in servers()}
        volume_ids = [
            v.id
            for v in demo.block_storage.volumes()
            if any(a["server_id"] in server_ids for a in v.attachments)
        ]
        assert len(volume_ids) == (3 if files else 0)

        status, body = server.request("DELETE", f"/stacks/{name}/{stack_id}")
        assert status == 204, body
        deleted = server.wait_for(stack_id, timeout=STACK_TIMEOUT_S)
        assert deleted["stack_status"] == "DELETE_COMPLETE", deleted["stack_status_reason"]
        stack_id = None
        assert servers() == []
        remaining = {v.id for v in demo.block_storage.volumes()}
        assert [v for v in volume_ids if v in remaining] == []
    finally:
        for alarm_id in alarms:
            witness.call("DELETE", f"{witness.aodh}/v2/alarms/{alarm_id}")
        if stack_id is not None:
            server.request("DELETE", f"/stacks/{name}/{stack_id}")
            server.wait_for(stack_id, timeout=STACK_TIMEOUT_S)
        demo.network.delete_network(network.id, ignore_missing=True)
        demo.compute.delete_keypair(keypair, ignore_missing=True)
