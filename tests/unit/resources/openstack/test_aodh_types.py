"""The Aodh types without a cloud: Heat's schemas, support statuses, the alarm bodies
their properties make, the schedule constraints, what updates in place, and the default
environment's aliases (tests/cloud/test_aodh_types.py drives the real Aodh)."""

from __future__ import annotations

import pytest

from stoker.resources.openstack import constraint_mapping, resource_mapping
from stoker.resources.openstack.aodh.alarm import (
    AodhAlarm,
    CombinationAlarm,
    EventAlarm,
    LBMemberHealthAlarm,
    PrometheusAlarm,
)
from stoker.resources.openstack.aodh.composite_alarm import CompositeAlarm
from stoker.resources.openstack.aodh.gnocchi_alarm import (
    AodhGnocchiAggregationByMetricsAlarm,
    AodhGnocchiAggregationByResourcesAlarm,
    AodhGnocchiResourcesAlarm,
)
from stoker.resources.openstack.schedules import CronExpression, Timezone
from stoker.sdk import support
from stoker.sdk.exceptions import UpdateReplace, ValidationError
from stoker.sdk.testing import PluginHarness
from stoker.service import build_registry
from stoker.settings import Settings

CONSTRAINTS = {
    "cron_expression": constraint_mapping()["cron_expression"],
    "timezone": constraint_mapping()["timezone"],
    "zaqar.queue": lambda value: isinstance(value, str) and 0 < len(value) <= 64,
}


def alarm(cls, **properties) -> PluginHarness:
    return PluginHarness(cls, properties, name="alarm", constraints=CONSTRAINTS)


def test_aodh_types_are_registered_under_heat_names_with_heat_support_statuses():
    mapping = resource_mapping()
    expected = {
        "OS::Aodh::Alarm": (AodhAlarm, support.DEPRECATED, "10.0.0"),
        "OS::Aodh::CombinationAlarm": (CombinationAlarm, support.HIDDEN, "9.0.0"),
        "OS::Aodh::EventAlarm": (EventAlarm, support.SUPPORTED, "8.0.0"),
        "OS::Aodh::LBMemberHealthAlarm": (LBMemberHealthAlarm, support.SUPPORTED, "13.0.0"),
        "OS::Aodh::PrometheusAlarm": (PrometheusAlarm, support.SUPPORTED, "22.0.0"),
        "OS::Aodh::CompositeAlarm": (CompositeAlarm, support.SUPPORTED, "8.0.0"),
        "OS::Aodh::GnocchiResourcesAlarm": (AodhGnocchiResourcesAlarm, support.SUPPORTED, "2015.1"),
        "OS::Aodh::GnocchiAggregationByMetricsAlarm": (
            AodhGnocchiAggregationByMetricsAlarm,
            support.SUPPORTED,
            "2015.1",
        ),
        "OS::Aodh::GnocchiAggregationByResourcesAlarm": (
            AodhGnocchiAggregationByResourcesAlarm,
            support.SUPPORTED,
            "2015.1",
        ),
    }
    for type_name, (cls, status, version) in expected.items():
        assert mapping[type_name] is cls, type_name
        assert cls.support_status.status == status, type_name
        assert cls.support_status.version == version, type_name


def test_the_default_environment_maps_heats_old_alarm_names_to_aodh():
    registry = build_registry(Settings())
    for old, new in (
        ("OS::Metering::Alarm", "OS::Aodh::Alarm"),
        ("OS::Ceilometer::Alarm", "OS::Aodh::Alarm"),
        ("OS::Ceilometer::GnocchiResourcesAlarm", "OS::Aodh::GnocchiResourcesAlarm"),
        (
            "OS::Ceilometer::GnocchiAggregationByMetricsAlarm",
            "OS::Aodh::GnocchiAggregationByMetricsAlarm",
        ),
        (
            "OS::Ceilometer::GnocchiAggregationByResourcesAlarm",
            "OS::Aodh::GnocchiAggregationByResourcesAlarm",
        ),
        ("OS::Ceilometer::CombinationAlarm", "OS::Aodh::CombinationAlarm"),
    ):
        assert registry.environment[old] == new


def test_gnocchi_alarm_properties_move_into_its_rule_and_queues_become_zaqar_actions():
    harness = alarm(
        AodhGnocchiAggregationByResourcesAlarm,
        metric="cpu",
        query='{"=": {"server_group": "g"}}',
        resource_type="instance",
        threshold=80,
        comparison_operator="gt",
        aggregation_method="mean",
        granularity=60,
        evaluation_periods=1,
        alarm_actions=["http://127.0.0.1/signal"],
        alarm_queues=["alarms"],
    )
    harness.validate()
    body = harness.resource.create_body()
    assert body["type"] == "gnocchi_aggregation_by_resources_threshold"
    assert body["name"] == harness.resource.physical_resource_name()
    assert body["gnocchi_aggregation_by_resources_threshold_rule"] == {
        "metric": "cpu",
        "query": '{"=": {"server_group": "g"}}',
        "resource_type": "instance",
        "threshold": 80,
        "comparison_operator": "gt",
        "aggregation_method": "mean",
        "granularity": 60,
        "evaluation_periods": 1,
    }
    assert body["alarm_actions"] == ["http://127.0.0.1/signal", "trust+zaqar://?queue_name=alarms"]
    assert body["ok_actions"] == [] and "alarm_queues" not in body
    assert body["enabled"] is True and body["repeat_actions"] is True and body["severity"] == "low"


def test_threshold_alarm_matching_metadata_becomes_query_factors_with_heats_prefixes():
    nova = alarm(
        AodhAlarm,
        meter_name="cpu_util",
        threshold=50,
        matching_metadata={"metadata.user_metadata.group": "g"},
    )
    rule = nova.resource.create_body()["threshold_rule"]
    assert rule["query"] == [{"field": "metadata.user_metadata.group", "op": "eq", "value": "g"}]
    other = alarm(AodhAlarm, meter_name="image.size", threshold=1, matching_metadata={"stack": 5})
    assert other.resource.create_body()["threshold_rule"]["query"] == [
        {"field": "metadata.metering.stack", "op": "eq", "value": "5"}
    ]
    with pytest.raises(UpdateReplace):
        nova.update({"meter_name": "memory", "threshold": 50})


def test_event_composite_prometheus_and_member_health_bodies_are_heats():
    event = alarm(EventAlarm, query=[{"field": "traits.instance_id", "value": "abc", "op": "eq"}])
    assert event.resource.create_body()["event_rule"] == {
        "event_type": "*",
        "query": [{"field": "traits.instance_id", "value": "abc", "op": "eq", "type": "string"}],
    }
    rules = [
        {"type": "gnocchi_resources_threshold", "metric": "cpu"},
        {"type": "gnocchi_resources_threshold", "metric": "memory"},
    ]
    composite = alarm(CompositeAlarm, composite_rule={"operator": "or", "rules": rules})
    assert composite.resource.create_body()["composite_rule"] == {"or": rules}
    with pytest.raises(ValidationError):
        alarm(CompositeAlarm, composite_rule={"operator": "or", "rules": rules[:1]}).validate()
    prometheus = alarm(PrometheusAlarm, query="up", threshold=1, comparison_operator="lt")
    assert prometheus.resource.create_body()["prometheus_rule"] == {
        "query": "up",
        "threshold": 1,
        "comparison_operator": "lt",
    }
    health = PluginHarness(
        LBMemberHealthAlarm, {"pool": "p", "stack": "s", "autoscaling_group_id": "g"}, name="alarm"
    )
    assert health.resource.get_alarm_props(
        {"pool": "p", "stack": "s", "autoscaling_group_id": "g"}
    )["loadbalancer_member_health_rule"] == {
        "pool_id": "p",
        "stack_id": "s",
        "autoscaling_group_id": "g",
    }
    # The stack replaces the alarm; the pool is resolved through Octavia (tests/cloud).
    assert [
        name
        for name, schema in LBMemberHealthAlarm.properties_schema.items()
        if not schema.update_allowed
    ] == ["stack", "time_constraints"]


def test_time_constraints_check_cron_expressions_and_time_zones_as_heat():
    good = {
        "name": "office",
        "start": "0 9 * * 1-5",
        "duration": 3600,
        "timezone": "Europe/Amsterdam",
    }
    alarm(EventAlarm, time_constraints=[good]).validate()
    with pytest.raises(ValidationError, match="Invalid CRON expression"):
        alarm(EventAlarm, time_constraints=[{**good, "start": "61 * * * *"}]).validate()
    with pytest.raises(ValidationError, match="Invalid timezone: 'Mars/Olympus'"):
        alarm(EventAlarm, time_constraints=[{**good, "timezone": "Mars/Olympus"}]).validate()
    assert CronExpression().validate("") and Timezone().validate(None)


def test_every_rule_property_updates_in_place_and_severity_is_checked():
    harness = alarm(
        AodhGnocchiResourcesAlarm,
        metric="cpu",
        resource_id="r",
        resource_type="instance",
        threshold=1,
    )
    with pytest.raises(ValidationError):
        alarm(
            AodhGnocchiResourcesAlarm,
            metric="cpu",
            resource_id="r",
            resource_type="instance",
            threshold=1,
            severity="dire",
        ).validate()
    schema = AodhGnocchiResourcesAlarm.properties_schema
    assert all(schema[name].update_allowed for name in schema if name != "time_constraints")
    assert (
        harness.resource.parse_live_resource_data(
            {},
            {
                "gnocchi_resources_threshold_rule": {"metric": "cpu", "threshold": 2.0},
                "enabled": False,
            },
        )["threshold"]
        == 2.0
    )
