"""Heat's Gnocchi alarms: OS::Aodh::GnocchiResourcesAlarm (one resource's metric),
OS::Aodh::GnocchiAggregationByMetricsAlarm (a list of metric ids) and
OS::Aodh::GnocchiAggregationByResourcesAlarm (a metric aggregated over the resources a
query selects), each a threshold on Gnocchi's measures.

Owns: their schemas; every property moves into the ``<alarm_type>_rule`` (``BaseAlarm``'s
``_reformat_properties``), and every one updates in place.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.aodh.alarm_base import BaseAlarm, common_properties_schema
from stoker.sdk import constraints, properties, support
from stoker.sdk.resource import Resource

__all__ = [
    "AodhGnocchiAggregationByMetricsAlarm",
    "AodhGnocchiAggregationByResourcesAlarm",
    "AodhGnocchiResourcesAlarm",
    "resource_mapping",
]

COMMON_GNOCCHI_PROPERTIES = (
    COMPARISON_OPERATOR, EVALUATION_PERIODS, GRANULARITY, AGGREGATION_METHOD, THRESHOLD,
) = (
    "comparison_operator", "evaluation_periods", "granularity", "aggregation_method", "threshold",
)  # fmt: skip

common_gnocchi_properties_schema = {
    COMPARISON_OPERATOR: properties.Schema(
        properties.Schema.STRING,
        "Operator used to compare specified statistic with threshold.",
        constraints=[constraints.AllowedValues(["le", "ge", "eq", "lt", "gt", "ne"])],
        update_allowed=True,
    ),
    EVALUATION_PERIODS: properties.Schema(
        properties.Schema.INTEGER, "Number of periods to evaluate over.", update_allowed=True
    ),
    AGGREGATION_METHOD: properties.Schema(
        properties.Schema.STRING,
        "The aggregation method to compare to the threshold.",
        update_allowed=True,
    ),
    GRANULARITY: properties.Schema(
        properties.Schema.INTEGER, "The time range in seconds.", update_allowed=True
    ),
    THRESHOLD: properties.Schema(
        properties.Schema.NUMBER,
        "Threshold to evaluate against.",
        required=True,
        update_allowed=True,
    ),
}


class AodhGnocchiResourcesAlarm(BaseAlarm):
    """A resource allowing for the watch of some specified resource.

    An alarm that evaluates threshold based on some metric for the specified resource.
    """

    support_status = support.SupportStatus(version="2015.1")
    alarm_type = "gnocchi_resources_threshold"

    PROPERTIES: tuple[str, ...]
    PROPERTIES = (METRIC, RESOURCE_ID, RESOURCE_TYPE) = ("metric", "resource_id", "resource_type")
    PROPERTIES += COMMON_GNOCCHI_PROPERTIES

    properties_schema = {
        METRIC: properties.Schema(
            properties.Schema.STRING,
            "Metric name watched by the alarm.",
            required=True,
            update_allowed=True,
        ),
        RESOURCE_ID: properties.Schema(
            properties.Schema.STRING, "Id of a resource.", required=True, update_allowed=True
        ),
        RESOURCE_TYPE: properties.Schema(
            properties.Schema.STRING, "Resource type.", required=True, update_allowed=True
        ),
        **common_gnocchi_properties_schema,
        **common_properties_schema,
    }


class AodhGnocchiAggregationByMetricsAlarm(AodhGnocchiResourcesAlarm):
    """A resource that implements alarm with specified metrics.

    A resource that implements alarm which allows to use specified by user metrics in
    metrics list.
    """

    support_status = support.SupportStatus(version="2015.1")
    alarm_type = "gnocchi_aggregation_by_metrics_threshold"

    PROPERTIES: tuple[str, ...]
    PROPERTIES = (METRICS,) = ("metrics",)
    PROPERTIES += COMMON_GNOCCHI_PROPERTIES

    properties_schema = {
        METRICS: properties.Schema(
            properties.Schema.LIST, "A list of metric ids.", required=True, update_allowed=True
        ),
        **common_gnocchi_properties_schema,
        **common_properties_schema,
    }


class AodhGnocchiAggregationByResourcesAlarm(AodhGnocchiResourcesAlarm):
    """A resource that implements alarm as an aggregation of resources alarms.

    A resource that implements alarm which uses aggregation of resources alarms with some
    condition. If state of a system is satisfied alarm condition, alarm is activated.
    """

    support_status = support.SupportStatus(version="2015.1")
    alarm_type = "gnocchi_aggregation_by_resources_threshold"

    PROPERTIES: tuple[str, ...]
    PROPERTIES = (METRIC, QUERY, RESOURCE_TYPE) = ("metric", "query", "resource_type")
    PROPERTIES += COMMON_GNOCCHI_PROPERTIES

    properties_schema = {
        METRIC: properties.Schema(
            properties.Schema.STRING,
            "Metric name watched by the alarm.",
            required=True,
            update_allowed=True,
        ),
        QUERY: properties.Schema(
            properties.Schema.STRING,
            "The query to filter the metrics.",
            required=True,
            update_allowed=True,
        ),
        RESOURCE_TYPE: properties.Schema(
            properties.Schema.STRING, "Resource type.", required=True, update_allowed=True
        ),
        **common_gnocchi_properties_schema,
        **common_properties_schema,
    }

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        """The default, the query as the template gives it: Aodh stores it inside the
        project scope it adds (``{"and": [<scope>, <query>]}``)."""
        live = super().parse_live_resource_data(resource_properties, resource_data)
        live[self.QUERY] = unscoped_query(live.get(self.QUERY))
        return live


def resource_mapping() -> dict[str, type[Resource]]:
    return {
        "OS::Aodh::GnocchiResourcesAlarm": AodhGnocchiResourcesAlarm,
        "OS::Aodh::GnocchiAggregationByMetricsAlarm": AodhGnocchiAggregationByMetricsAlarm,
        "OS::Aodh::GnocchiAggregationByResourcesAlarm": AodhGnocchiAggregationByResourcesAlarm,
    }


def unscoped_query(query: Any) -> Any:
    """A Gnocchi query (JSON text) without the project scope Aodh wraps it in: the
    ``and`` of a clause naming only ``created_by_project_id``/``project_id`` and the
    query; any other query as it is."""
    try:
        parsed = json.loads(query) if isinstance(query, str) else None
    except ValueError:
        return query
    clauses = parsed.get("and") if isinstance(parsed, dict) and len(parsed) == 1 else None
    if not isinstance(clauses, list) or len(clauses) != 2:
        return query
    scope, rest = clauses
    if "created_by_project_id" not in json.dumps(scope) or "created_by_project_id" in json.dumps(rest):
        return query
    return json.dumps(rest)
