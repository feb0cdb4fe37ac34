"""An alarm whose action is ``trust+<url>`` in keystone mode, on the test cloud's real Keystone
and Aodh.

For such an action Aodh creates a Keystone trust with the token it is called with. A stack in
keystone mode acts through its own trust (clouds/trusts.py), and Keystone lets a
trust-scoped token create a trust only from a trust made with ``allow_redelegation``: stoker
makes its trusts so when its operator sets STOKER_ALLOW_TRUSTS_REDELEGATION (Heat's
``allow_trusts_redelegation``). Without it, the alarm fails with what to do; with it, the
alarm is made and Aodh holds the trust it made for the action. That the alarm then fires
through the trust is heat-tempest-plugin's AodhAlarmTest (test_aodh_tempest_scenarios.py).
"""

from __future__ import annotations

import secrets

import pytest

from tests.cloud import identity
from tests.cloud.test_aodh_tempest_scenarios import keystone_stoker
from tests.cloud.test_aodh_types import Witness
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

# Seconds a one-alarm stack may take to settle.
STACK_TIMEOUT_S = 120


def alarm_template(metric_id: str, action: str) -> dict:
    return {
        "heat_template_version": "2018-08-31",
        "resources": {
            "high": {
                "type": "OS::Aodh::GnocchiAggregationByMetricsAlarm",
                "properties": {
                    "metrics": [metric_id], "aggregation_method": "mean", "granularity": 5,
                    "evaluation_periods": 1, "threshold": 50, "comparison_operator": "gt",
                    "alarm_actions": [action],
                },
            }
        },
    }  # fmt: skip


def create_and_wait(server, token: str, project_id: str, name: str, template: dict) -> dict:
    def call(method: str, path: str, body: dict | None = None) -> identity.Response:
        return identity.request(
            method, f"{server.url}/v1/{project_id}{path}", token=token, body=body
        )

    created = call("POST", "/stacks", {"stack_name": name, "template": template})
    assert created.status == 201, created.body

    def settled() -> dict | None:
        stack = call("GET", f"/stacks/{name}").body["stack"]
        return None if stack["stack_status"].endswith("IN_PROGRESS") else stack

    return wait_until(settled, timeout_s=STACK_TIMEOUT_S, what=f"stack {name} to settle")


def resource_reason(server, token: str, project_id: str, stack: dict, resource: str) -> str:
    path = f"/stacks/{stack['stack_name']}/{stack['id']}/resources/{resource}"
    answer = identity.request("GET", f"{server.url}/v1/{project_id}{path}", token=token)
    return answer.body["resource"]["resource_status_reason"]


def redelegated_trusts(openstack_cloud, trustor: str) -> list[dict]:
    """The trusts of ``trustor`` made from another trust (Keystone's admin view)."""
    admin = identity.Keystone(openstack_cloud.keystone_url)
    trusts = admin.call("GET", f"/OS-TRUST/trusts?trustor_user_id={trustor}")["trusts"]
    return [trust for trust in trusts if trust.get("redelegated_trust_id")]


@pytest.mark.parametrize("redelegation", [False, True], ids=["plain-trusts", "redelegation"])
def test_trust_action_alarm_in_keystone_mode(openstack_cloud, aodh_service, tmp_path, redelegation):
    suffix = secrets.token_hex(3)
    demo = openstack_cloud.connect("demo")
    token, project_id = demo.auth_token, demo.current_project_id
    witness = Witness(openstack_cloud, aodh_service)
    _, metric_id = witness.resource_with_metric()
    action = "trust+http://127.0.0.1:9/unused"
    environment = {"STOKER_ALLOW_TRUSTS_REDELEGATION": "true"} if redelegation else {}
    with keystone_stoker(openstack_cloud, tmp_path, suffix, **environment) as server:
        stack = create_and_wait(
            server, token, project_id, f"trust-alarm-{suffix}", alarm_template(metric_id, action)
        )
        if not redelegation:
            assert stack["stack_status"] == "CREATE_FAILED", stack
            reason = resource_reason(server, token, project_id, stack, "high")
            assert "Aodh refused POST /alarms" in reason, reason
            assert "STOKER_ALLOW_TRUSTS_REDELEGATION=true" in reason, reason
            assert not witness.alarms_named(stack["stack_name"])
        else:
            assert stack["stack_status"] == "CREATE_COMPLETE", stack
            [alarm] = witness.alarms_named(stack["stack_name"])
            assert alarm["alarm_actions"] == [action]
            # The trust Aodh made for the action is delegated on from the stack's.
            [aodhs] = redelegated_trusts(openstack_cloud, demo.current_user_id)
            assert aodhs["impersonation"] is True
        path = f"{server.url}/v1/{project_id}/stacks/{stack['stack_name']}/{stack['id']}"
        deleted = identity.request("DELETE", path, token=token)
        assert deleted.status == 204, deleted.body

        def gone() -> bool:
            shown = identity.request("GET", path, token=token)
            return shown.status == 404 or shown.body["stack"]["stack_status"] == "DELETE_COMPLETE"

        wait_until(gone, timeout_s=STACK_TIMEOUT_S, what="the stack's delete")
        assert not witness.alarms_named(stack["stack_name"])
        # Aodh deletes its trust with the alarm.
        assert not redelegated_trusts(openstack_cloud, demo.current_user_id)
