"""Alarm-driven scaling end to end on the test cloud: a real ``stoker serve`` on 127.0.0.1
runs a stack of an OS::Heat::AutoScalingGroup, two OS::Heat::ScalingPolicy resources and two
Gnocchi alarms whose ``alarm_actions`` are the policies' ``alarm_url``. The test pushes
high measures into Gnocchi: Aodh's evaluator (every 5 s here) moves the high alarm to
``alarm`` and its notifier POSTs the policy's URL, and the group grows; low measures then
fire the low alarm and the group shrinks. Nothing is faked between the measures and the
group: Gnocchi's metricd aggregates, Aodh evaluates and notifies over RabbitMQ, and stoker
receives the POST on its own HTTP API.
"""

from __future__ import annotations

import secrets
import time

import pytest

from tests.cloud.test_aodh_types import Witness
from tests.support.server import Server

# Seconds for Aodh to notice measures and stoker to resize (evaluation every 5 s, metricd
# every second; the machine is shared, so generously).
SCALE_TIMEOUT_S = 240

TEMPLATE = {
    "heat_template_version": "2016-10-14",
    "parameters": {"metric": {"type": "string"}},
    "resources": {
        "group": {
            "type": "OS::Heat::AutoScalingGroup",
            "properties": {"min_size": 1, "max_size": 3, "resource": {"type": "OS::Heat::RandomString"}},
        },
        "up": {
            "type": "OS::Heat::ScalingPolicy",
            "properties": {"auto_scaling_group_id": {"get_resource": "group"}, "adjustment_type": "change_in_capacity", "scaling_adjustment": 1, "cooldown": 0},
        },
        "down": {
            "type": "OS::Heat::ScalingPolicy",
            "properties": {"auto_scaling_group_id": {"get_resource": "group"}, "adjustment_type": "change_in_capacity", "scaling_adjustment": -1, "cooldown": 0},
        },
        "high": {
            "type": "OS::Aodh::GnocchiAggregationByMetricsAlarm",
            "properties": {
                "metrics": [{"get_param": "metric"}], "aggregation_method": "mean", "granularity": 5, "evaluation_periods": 1,
                "threshold": 50, "comparison_operator": "gt", "repeat_actions": False,
                "alarm_actions": [{"get_attr": ["up", "alarm_url"]}],
            },
        },
        "low": {
            "type": "OS::Aodh::GnocchiAggregationByMetricsAlarm",
            "properties": {
                "metrics": [{"get_param": "metric"}], "aggregation_method": "mean", "granularity": 5, "evaluation_periods": 1,
                "threshold": 20, "comparison_operator": "lt", "repeat_actions": False,
                "alarm_actions": [{"get_attr": ["down", "alarm_url"]}],
            },
        },
    },
    "outputs": {"size": {"value": {"get_attr": ["group", "current_size"]}}},
}  # fmt: skip


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


def test_gnocchi_alarms_scale_the_group_up_then_down(openstack_cloud, aodh_service, server):
    witness = Witness(openstack_cloud, aodh_service)
    _, metric_id = witness.resource_with_metric()
    name = f"scaling-{secrets.token_hex(3)}"
    status, body = server.request(
        "POST",
        "/stacks",
        {"stack_name": name, "template": TEMPLATE, "parameters": {"metric": metric_id}},
    )
    assert status == 201, body
    stack_id = body["stack"]["id"]
    created = server.wait_for(stack_id, timeout=120)
    assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]

    def size() -> int:
        status, shown = server.request("GET", f"/stacks/{name}/{stack_id}")
        assert status == 200, shown
        outputs = {
            output["output_key"]: output.get("output_value") for output in shown["stack"]["outputs"]
        }
        return int(outputs["size"])

    def feed_until(value: float, wanted: int) -> float:
        """Push ``value`` every 2 s until the group has ``wanted`` members; the seconds it took."""
        started = time.monotonic()
        while size() != wanted:
            assert time.monotonic() - started < SCALE_TIMEOUT_S, (
                f"the group never reached {wanted} members; logs: {aodh_service.logs}"
            )
            aodh_service.push_measures(witness.token, metric_id, [value])
            time.sleep(2)
        return time.monotonic() - started

    assert size() == 1
    feed_until(90.0, 2)
    feed_until(5.0, 1)

    status, body = server.request("DELETE", f"/stacks/{name}/{stack_id}")
    assert status == 204, body
    deleted = server.wait_for(stack_id, timeout=120)
    assert deleted["stack_status"] == "DELETE_COMPLETE", deleted["stack_status_reason"]
    assert witness.alarms_named(name) == []
