"""The Aodh alarm types against the real Aodh of the test cloud (``aodh_service``: Aodh
2026.2 and Gnocchi 4.7 from PyPI, on MariaDB): create, update in place (same alarm, new
rule), suspend and resume (the alarm disabled, then enabled), check (failing when the
alarm is deleted behind the stack's back), delete tolerating an alarm already gone, the
deprecated threshold alarm refused by Aodh with its message, and a create killed after
each store commit leaving no alarm behind. Aodh's API read with the demo user's token is
the witness.

Not tested here: the evaluation of OS::Aodh::LBMemberHealthAlarm (the loadbalancer member
health evaluator; the alarm itself is made on a real Octavia pool, abandoned and imported
in test_import_round_trip_addons.py) and of OS::Aodh::PrometheusAlarm (no Prometheus here;
Aodh stores the alarm, imported there too).
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from tests.cloud import identity
from tests.cloud.addons.aodh import ARCHIVE_POLICY
from tests.support.stacks import from_data, states

STOKER = str(Path(sys.executable).with_name("stoker"))


@pytest.fixture
def aodh_cloud(openstack_cloud, aodh_service):
    # As a project member (demo), as a template author is.
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("demo")))
    yield openstack_cloud
    set_cloud_source(None)


@pytest.fixture
def stacks(make_service, aodh_cloud):
    service = make_service()
    names: list[str] = []
    yield service, names
    for name in names:
        if service.store.find_stack(name) is not None:
            service.delete_stack(name)


class Witness:
    """Aodh and Gnocchi read and written with the demo user's token."""

    def __init__(self, cloud, aodh_service):
        self.token = cloud.connect("demo").auth_token
        self.aodh = aodh_service.aodh_endpoint
        self.gnocchi = aodh_service.gnocchi_endpoint

    def call(self, method: str, url: str, body=None) -> identity.Response:
        return identity.request(method, url, token=self.token, body=body)

    def alarm(self, alarm_id: str) -> dict | None:
        answer = self.call("GET", f"{self.aodh}/v2/alarms/{alarm_id}")
        if answer.status == 404:
            return None
        assert answer.status == 200, answer.body
        return answer.body

    def alarms_named(self, prefix: str) -> list[dict]:
        answer = self.call("GET", f"{self.aodh}/v2/alarms")
        assert answer.status == 200, answer.body
        return [alarm for alarm in answer.body if alarm["name"].startswith(prefix)]

    def resource_with_metric(self) -> tuple[str, str]:
        """A Gnocchi ``generic`` resource with a ``cpu`` metric: (resource id, metric id)."""
        resource_id = str(uuid.uuid4())
        answer = self.call(
            "POST", f"{self.gnocchi}/v1/resource/generic",
            body={"id": resource_id, "metrics": {"cpu": {"archive_policy_name": ARCHIVE_POLICY}}},
        )  # fmt: skip
        assert answer.status == 201, answer.body
        return resource_id, answer.body["metrics"]["cpu"]


@pytest.fixture
def witness(aodh_cloud, aodh_service):
    return Witness(aodh_cloud, aodh_service)


def physical_ids(service, stack_name: str) -> dict[str, str]:
    return {
        record.name: record.physical_resource_id for record in service.list_resources(stack_name)
    }


def gnocchi_rule(**extra) -> dict:
    return {
        "threshold": 50,
        "comparison_operator": "gt",
        "aggregation_method": "mean",
        "granularity": 5,
        "evaluation_periods": 1,
        **extra,
    }


def alarms_template(
    resource_id: str, metric_id: str, threshold: float = 50, description: str = "cpu"
) -> dict:
    by_resource = {"metric": "cpu", "resource_id": resource_id, "resource_type": "generic"}
    return {
        "heat_template_version": "2021-04-16",
        "resources": {
            "resource": {
                "type": "OS::Aodh::GnocchiResourcesAlarm",
                "properties": {
                    **gnocchi_rule(threshold=threshold), **by_resource, "description": description,
                    "time_constraints": [{"name": "always", "start": "* * * * *", "duration": 86400, "timezone": "Europe/Amsterdam"}],
                },
            },
            "metrics": {"type": "OS::Aodh::GnocchiAggregationByMetricsAlarm", "properties": {**gnocchi_rule(), "metrics": [metric_id]}},
            "resources": {
                "type": "OS::Ceilometer::GnocchiAggregationByResourcesAlarm",
                "properties": {**gnocchi_rule(), "metric": "cpu", "resource_type": "generic", "query": json.dumps({"=": {"id": resource_id}})},
            },
            "event": {
                "type": "OS::Aodh::EventAlarm",
                "properties": {"event_type": "compute.instance.update", "query": [{"field": "traits.instance_id", "op": "eq", "value": resource_id}]},
            },
            "composite": {
                "type": "OS::Aodh::CompositeAlarm",
                "properties": {
                    "composite_rule": {
                        "operator": "or",
                        "rules": [
                            {"type": "gnocchi_resources_threshold", **gnocchi_rule(), **by_resource},
                            {"type": "gnocchi_resources_threshold", **gnocchi_rule(threshold=90), **by_resource},
                        ],
                    }
                },
            },
        },
    }  # fmt: skip


def test_aodh_alarms_create_update_suspend_resume_check_delete(stacks, witness):
    service, names = stacks
    stack_name = f"aodh-{secrets.token_hex(3)}"
    names.append(stack_name)
    resource_id, metric_id = witness.resource_with_metric()

    stack = service.create_stack(stack_name, from_data(alarms_template(resource_id, metric_id)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    ids = physical_ids(service, stack_name)
    expected_types = {
        "resource": "gnocchi_resources_threshold",
        "metrics": "gnocchi_aggregation_by_metrics_threshold",
        "resources": "gnocchi_aggregation_by_resources_threshold",
        "event": "event",
        "composite": "composite",
    }
    for name, alarm_type in expected_types.items():
        alarm = witness.alarm(ids[name])
        assert alarm["type"] == alarm_type and alarm["enabled"] is True, alarm
        assert alarm["name"].startswith(f"{stack_name}-{name}-")
    resource_alarm = witness.alarm(ids["resource"])
    rule = resource_alarm["gnocchi_resources_threshold_rule"]
    assert (rule["resource_id"], rule["threshold"], rule["granularity"]) == (resource_id, 50, 5)
    assert resource_alarm["time_constraints"][0]["timezone"] == "Europe/Amsterdam"
    assert witness.alarm(ids["event"])["event_rule"]["event_type"] == "compute.instance.update"
    assert list(witness.alarm(ids["composite"])["composite_rule"]) == ["or"]
    assert witness.alarm(ids["metrics"])["gnocchi_aggregation_by_metrics_threshold_rule"][
        "metrics"
    ] == [metric_id]
    assert service.stack_action(stack_name, "CHECK").state == "CHECK_COMPLETE"

    # In place: the same alarm, its rule and description changed.
    stack = service.update_stack(
        stack_name,
        from_data(alarms_template(resource_id, metric_id, threshold=75, description="hot")),
    )
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert physical_ids(service, stack_name) == ids
    updated = witness.alarm(ids["resource"])
    assert (
        updated["gnocchi_resources_threshold_rule"]["threshold"] == 75
        and updated["description"] == "hot"
    )

    # Suspend disables every alarm, resume enables it again (Heat's way).
    assert service.stack_action(stack_name, "SUSPEND").state == "SUSPEND_COMPLETE"
    assert {witness.alarm(ids[name])["enabled"] for name in expected_types} == {False}
    assert service.stack_action(stack_name, "RESUME").state == "RESUME_COMPLETE"
    assert {witness.alarm(ids[name])["enabled"] for name in expected_types} == {True}

    # Check reads the live alarm: one deleted behind the stack's back fails it...
    assert witness.call("DELETE", f"{witness.aodh}/v2/alarms/{ids['event']}").status == 204
    checked = service.stack_action(stack_name, "CHECK")
    assert checked.state == "CHECK_FAILED"
    assert states(service, stack_name)["event"] == "CHECK_FAILED"

    # ...and the delete tolerates it gone, and leaves nothing in Aodh.
    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"
    assert witness.alarms_named(stack_name) == []


def test_the_deprecated_threshold_alarm_is_refused_by_aodh_with_its_message(stacks, witness):
    """Aodh removed the threshold (Ceilometer API) rule: OS::Aodh::Alarm, and OS::Metering::Alarm
    that the default environment maps to it, fail with Aodh's own answer, as in Heat."""
    service, names = stacks
    stack_name = f"aodh-old-{secrets.token_hex(3)}"
    names.append(stack_name)
    template = {
        "heat_template_version": "2021-04-16",
        "resources": {
            "old": {
                "type": "OS::Metering::Alarm",
                "properties": {"meter_name": "cpu_util", "threshold": 50},
            }
        },
    }
    stack = service.create_stack(stack_name, from_data(template))
    assert stack.state == "CREATE_FAILED"
    assert "Aodh refused POST /alarms: 400" in stack.status_reason
    assert service.delete_stack(stack_name).state == "DELETE_COMPLETE"


def has_stack(url: str, name: str) -> bool:
    from stoker.service import Service
    from stoker.settings import Settings

    service = Service(Settings(database_url=url))
    try:
        return service.store.find_stack(name) is not None
    finally:
        service.close()


def test_aodh_alarm_crash_after_every_commit_of_create_leaves_nothing(
    aodh_cloud, witness, tmp_path
):
    """The ``stoker`` command SIGKILLed after each store commit of an alarm's create in
    turn: an alarm Aodh made before its id was recorded is found again by its name
    (``find_created``) when the next command resumes, so the final delete leaves none."""
    resource_id, metric_id = witness.resource_with_metric()
    template = tmp_path / "alarm.yaml"
    template.write_text(
        json.dumps(
            {
                "heat_template_version": "2021-04-16",
                "resources": {
                    "metrics": {
                        "type": "OS::Aodh::GnocchiAggregationByMetricsAlarm",
                        "properties": {**gnocchi_rule(), "metrics": [metric_id]},
                    }
                },
            }
        )
    )
    url = f"sqlite:///{tmp_path / 'stoker.sqlite'}"
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("OS_", "STOKER_"))
    }
    environment.update(OS_CLIENT_CONFIG_FILE=str(aodh_cloud.clouds_yaml), STOKER_DATABASE_URL=url)

    def run(*arguments: str, fault: int = 0) -> subprocess.CompletedProcess:
        env = (
            dict(environment, STOKER_FAULT_KILL_AFTER_COMMITS=str(fault)) if fault else environment
        )
        return subprocess.run(
            [STOKER, "--os-cloud", aodh_cloud.cloud("demo"), "stack", *arguments],
            env=env, capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip

    prefix = f"crash-alarm-{secrets.token_hex(2)}"
    names, completed = [], False
    for commits in range(1, 15):
        name = f"{prefix}-{commits}"
        completed = (
            run("create", name, "-t", str(template), "--wait", fault=commits).returncode == 0
        )
        if has_stack(url, name):
            names.append(name)
        if completed:
            break
    assert completed, "the create never ran to its end without a crash"
    assert witness.alarms_named(prefix), "no create got as far as Aodh"
    # One command resumes what each crash interrupted and deletes every stack.
    deleted = run("delete", *names, "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr
    assert witness.alarms_named(prefix) == []
