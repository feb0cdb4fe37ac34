"""Heat's ``aodh/alarm.py`` types: OS::Aodh::Alarm (the DEPRECATED threshold alarm),
OS::Aodh::CombinationAlarm (HIDDEN, a placeholder: Aodh removed combination alarms),
OS::Aodh::EventAlarm, OS::Aodh::LBMemberHealthAlarm and OS::Aodh::PrometheusAlarm.

Owns: how each type's properties become its Aodh rule. The lifecycle is ``BaseAlarm``'s
(``alarm_base.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.heat.none import NoneResource
from stoker.resources.openstack.aodh.alarm_base import (
    COMMON_PROPERTIES,
    INTERNAL_PROPERTIES,
    QF_OPERATORS,
    TIME_CONSTRAINTS,
    BaseAlarm,
    common_properties_schema,
    query_schema,
)
from stoker.sdk import constraints, properties, support, translation
from stoker.sdk.resource import Resource

__all__ = [
    "AodhAlarm",
    "CombinationAlarm",
    "EventAlarm",
    "LBMemberHealthAlarm",
    "PrometheusAlarm",
    "resource_mapping",
]

# The meters Ceilometer's Nova pollster publishes: their metadata is ``user_metadata.``.
NOVA_METERS = [
    "instance", "memory", "memory.usage", "memory.resident", "cpu", "cpu_util", "vcpus",
    "disk.read.requests", "disk.read.requests.rate", "disk.write.requests",
    "disk.write.requests.rate", "disk.read.bytes", "disk.read.bytes.rate",
    "disk.write.bytes", "disk.write.bytes.rate", "disk.device.read.requests",
    "disk.device.read.requests.rate", "disk.device.write.requests",
    "disk.device.write.requests.rate", "disk.device.read.bytes",
    "disk.device.read.bytes.rate", "disk.device.write.bytes",
    "disk.device.write.bytes.rate", "disk.root.size", "disk.ephemeral.size",
    "network.incoming.bytes", "network.incoming.bytes.rate", "network.outgoing.bytes",
    "network.outgoing.bytes.rate", "network.incoming.packets",
    "network.incoming.packets.rate", "network.outgoing.packets",
    "network.outgoing.packets.rate",
]  # fmt: skip


def _comparison_operator() -> properties.Schema:
    return properties.Schema(
        properties.Schema.STRING,
        "Operator used to compare specified statistic with threshold.",
        constraints=[constraints.AllowedValues(QF_OPERATORS)],
        update_allowed=True,
    )


def _threshold() -> properties.Schema:
    return properties.Schema(
        properties.Schema.NUMBER,
        "Threshold to evaluate against.",
        required=True,
        update_allowed=True,
    )


class AodhAlarm(BaseAlarm):
    """A resource that implements alarming service of Aodh.

    A resource that allows for the setting alarms based on threshold evaluation for a
    collection of samples. Also, you can define actions to take if state of watched
    resource will be satisfied specified conditions. For example, it can watch for the
    memory consumption and when it reaches 70% on a given instance if the instance has been
    up for more than 10 min, some action will be called.
    """

    support_status = support.SupportStatus(
        status=support.DEPRECATED,
        message="Theshold alarm relies on ceilometer-api and has been deprecated in aodh "
        "since Ocata. Use OS::Aodh::GnocchiAggregationByResourcesAlarm instead.",
        version="10.0.0",
        previous_status=support.SupportStatus(version="2014.1"),
    )

    PROPERTIES = (
        COMPARISON_OPERATOR, EVALUATION_PERIODS, METER_NAME, PERIOD,
        STATISTIC, THRESHOLD, MATCHING_METADATA, QUERY,
    ) = (
        "comparison_operator", "evaluation_periods", "meter_name", "period",
        "statistic", "threshold", "matching_metadata", "query",
    )  # fmt: skip

    properties_schema = {
        COMPARISON_OPERATOR: _comparison_operator(),
        EVALUATION_PERIODS: properties.Schema(
            properties.Schema.INTEGER, "Number of periods to evaluate over.", update_allowed=True
        ),
        METER_NAME: properties.Schema(
            properties.Schema.STRING, "Meter name watched by the alarm.", required=True
        ),
        PERIOD: properties.Schema(
            properties.Schema.INTEGER, "Period (seconds) to evaluate over.", update_allowed=True
        ),
        STATISTIC: properties.Schema(
            properties.Schema.STRING,
            "Meter statistic to evaluate.",
            constraints=[constraints.AllowedValues(["count", "avg", "sum", "min", "max"])],
            update_allowed=True,
        ),
        THRESHOLD: _threshold(),
        MATCHING_METADATA: properties.Schema(
            properties.Schema.MAP,
            "Meter should match this resource metadata (key=value) additionally to the meter_name.",
            default={},
            update_allowed=True,
        ),
        QUERY: properties.Schema(
            properties.Schema.LIST,
            "A list of query factors, each comparing a Sample attribute with a value. "
            "Implicitly combined with matching_metadata, if any.",
            update_allowed=True,
            support_status=support.SupportStatus(version="2015.1"),
            schema=properties.Schema(
                properties.Schema.MAP,
                schema=query_schema(
                    "Name of attribute to compare. Names of the form "
                    "metadata.user_metadata.X or metadata.metering.X are equivalent to what "
                    "you can address through matching_metadata; the former for Nova meters, "
                    "the latter for all others. To see the attributes of your Samples, use "
                    "`ceilometer --debug sample-list`.",
                    support.SupportStatus(version="8.0.0"),
                ),
            ),
        ),
        **common_properties_schema,
    }

    def get_alarm_props(self, given: Mapping[str, Any]) -> dict[str, Any]:
        alarm = self.actions_to_urls(given)
        alarm["type"] = self.alarm_type
        prefix = "user_metadata." if alarm.get(self.METER_NAME) in NOVA_METERS else "metering."
        rule: dict[str, Any] = {
            field: alarm.pop(field)
            for field in (
                "period",
                "evaluation_periods",
                "threshold",
                "statistic",
                "comparison_operator",
                "meter_name",
            )  # fmt: skip
            if field in alarm
        }
        query = [dict(factor) for factor in given.get(self.QUERY) or []]
        # The matching metadata as query factors on metadata.<prefix><key>, Heat's way.
        for key, value in (given.get(self.MATCHING_METADATA) or {}).items():
            key = key.removeprefix("metadata.")
            if key.startswith(("metering.", "user_metadata.")):
                key = key.split(".", 1)[-1]
            query.append({"field": f"metadata.{prefix}{key}", "op": "eq", "value": str(value)})
        alarm.pop(self.MATCHING_METADATA, None)
        alarm.pop(self.QUERY, None)
        if query:
            rule["query"] = query
        alarm["threshold_rule"] = rule
        return alarm

    def parse_live_resource_data(
        self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]
    ) -> dict[str, Any]:
        data = dict(resource_data.get("threshold_rule") or {})
        data.update(resource_data)
        names = (
            set(self.PROPERTIES + COMMON_PROPERTIES)
            - {self.METER_NAME, TIME_CONSTRAINTS}
            - set(INTERNAL_PROPERTIES)
        )
        return {name: data.get(name) for name in names}


class CombinationAlarm(NoneResource):
    """A resource that implements combination of Aodh alarms.

    This resource is now deleted from Aodh, so will directly inherit from NoneResource
    (placeholder resource). Any newly created resources will be considered as placeholder
    resources like none resource.
    """

    support_status = support.SupportStatus(
        status=support.HIDDEN,
        message="OS::Aodh::CombinationAlarm is deprecated and has been removed from Aodh, "
        "use OS::Aodh::CompositeAlarm instead.",
        version="9.0.0",
        previous_status=support.SupportStatus(
            status=support.DEPRECATED,
            version="7.0.0",
            previous_status=support.SupportStatus(version="2014.1"),
        ),
    )


class EventAlarm(BaseAlarm):
    """A resource that implements event alarms.

    Allows users to define alarms which can be evaluated based on events passed from other
    OpenStack services. The events can be emitted when the resources from other OpenStack
    services have been updated, created or deleted, such as 'compute.instance.reboot.end',
    'scheduler.select_destinations.end'.
    """

    alarm_type = "event"
    support_status = support.SupportStatus(version="8.0.0")

    PROPERTIES = (EVENT_TYPE, QUERY) = ("event_type", "query")

    properties_schema = {
        EVENT_TYPE: properties.Schema(
            properties.Schema.STRING,
            "Event type to evaluate against. If not specified will match all events.",
            update_allowed=True,
            default="*",
        ),
        QUERY: properties.Schema(
            properties.Schema.LIST,
            "A list for filtering events. Query conditions used to filter specific events "
            "when evaluating the alarm.",
            update_allowed=True,
            schema=properties.Schema(
                properties.Schema.MAP, schema=query_schema("Name of attribute to compare.")
            ),
        ),
        **common_properties_schema,
    }

    def get_alarm_props(self, given: Mapping[str, Any]) -> dict[str, Any]:
        alarm = self.actions_to_urls(given)
        alarm["type"] = self.alarm_type
        alarm.pop(self.EVENT_TYPE, None)
        alarm.pop(self.QUERY, None)
        rule: dict[str, Any] = {}
        if given.get(self.QUERY):
            rule[self.QUERY] = [dict(factor) for factor in given[self.QUERY]]
        if given.get(self.EVENT_TYPE):
            rule[self.EVENT_TYPE] = given[self.EVENT_TYPE]
        alarm["event_rule"] = rule
        return alarm


class LBMemberHealthAlarm(BaseAlarm):
    """A resource that implements a Loadbalancer Member Health Alarm.

    Allows setting alarms based on the health of load balancer pool members, where the
    health of a member is determined by the member reporting an operating_status of ERROR
    beyond an initial grace period after creation (120 seconds by default).
    """

    alarm_type = "loadbalancer_member_health"
    support_status = support.SupportStatus(version="13.0.0")

    PROPERTIES = (POOL, STACK, AUTOSCALING_GROUP_ID) = ("pool", "stack", "autoscaling_group_id")
    RULE_PROPERTIES = (POOL_ID, STACK_ID) = ("pool_id", "stack_id")

    properties_schema = {
        POOL: properties.Schema(
            properties.Schema.STRING,
            "Name or ID of the loadbalancer pool for which the health of each member will be "
            "evaluated.",
            update_allowed=True,
            required=True,
        ),
        STACK: properties.Schema(
            properties.Schema.STRING,
            "Name or ID of the root / top level Heat stack containing the loadbalancer pool "
            "and members. An update will be triggered on the root Stack if an unhealthy "
            "member is detected in the loadbalancer pool.",
            update_allowed=False,
            required=True,
        ),
        AUTOSCALING_GROUP_ID: properties.Schema(
            properties.Schema.STRING,
            "ID of the Heat autoscaling group that contains the loadbalancer members. "
            "Unhealthy members will be marked as such before an update is triggered on the "
            "root stack.",
            update_allowed=True,
            required=True,
        ),
        **common_properties_schema,
    }

    def get_alarm_props(self, given: Mapping[str, Any]) -> dict[str, Any]:
        alarm = self.actions_to_urls(given)
        alarm["type"] = self.alarm_type
        for name in self.PROPERTIES:
            alarm.pop(name, None)
        alarm["loadbalancer_member_health_rule"] = {
            self.POOL_ID: given[self.POOL],
            self.STACK_ID: given[self.STACK],
            self.AUTOSCALING_GROUP_ID: given[self.AUTOSCALING_GROUP_ID],
        }
        return alarm

    def parse_live_resource_data(
        self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]
    ) -> dict[str, Any]:
        # The rule names the pool ``pool_id`` (the property holds the pool's id too).
        live = super().parse_live_resource_data(resource_properties, resource_data)
        live[self.POOL] = (resource_data.get(f"{self.alarm_type}_rule") or {}).get(self.POOL_ID)
        return live

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props,
                translation.TranslationRule.RESOLVE,
                [self.POOL],
                client_plugin="octavia",
                finder="get_pool",
            ),
        ]


class PrometheusAlarm(BaseAlarm):
    """A resource that implements Aodh alarm of type prometheus.

    An alarm that evaluates threshold based on metric data fetched from Prometheus.
    """

    alarm_type = "prometheus"
    support_status = support.SupportStatus(version="22.0.0")

    PROPERTIES = (COMPARISON_OPERATOR, QUERY, THRESHOLD) = (
        "comparison_operator",
        "query",
        "threshold",
    )

    properties_schema = {
        COMPARISON_OPERATOR: _comparison_operator(),
        QUERY: properties.Schema(
            properties.Schema.STRING,
            "The PromQL query string to fetch metrics data from Prometheus.",
            required=True,
            update_allowed=True,
        ),
        THRESHOLD: _threshold(),
        **common_properties_schema,
    }


def resource_mapping() -> dict[str, type[Resource]]:
    return {
        "OS::Aodh::Alarm": AodhAlarm,
        "OS::Aodh::CombinationAlarm": CombinationAlarm,
        "OS::Aodh::EventAlarm": EventAlarm,
        "OS::Aodh::LBMemberHealthAlarm": LBMemberHealthAlarm,
        "OS::Aodh::PrometheusAlarm": PrometheusAlarm,
    }
