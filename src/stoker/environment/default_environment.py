"""The global environment stoker ships, as Heat ships ``etc/heat/environment.d/default.yaml``:
its ``resource_registry`` aliases of types Heat renamed, beneath every stack's environment
and beneath the operator's ``environment_dir`` (which may map them elsewhere, or remove
them with ``null``).

Owns: the entries of Heat's default.yaml whose targets are built-in types. The file's
template-backed entries (AWS::CloudWatch::Alarm, AWS::RDS::DBInstance) and the
``OS::Quantum*`` alias are not here yet.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULT_RESOURCE_REGISTRY"]

DEFAULT_RESOURCE_REGISTRY: dict[str, Any] = {
    "OS::Metering::Alarm": "OS::Aodh::Alarm",
    "OS::Ceilometer::Alarm": "OS::Aodh::Alarm",
    "OS::Ceilometer::GnocchiResourcesAlarm": "OS::Aodh::GnocchiResourcesAlarm",
    "OS::Ceilometer::GnocchiAggregationByMetricsAlarm": "OS::Aodh::GnocchiAggregationByMetricsAlarm",
    "OS::Ceilometer::GnocchiAggregationByResourcesAlarm": "OS::Aodh::GnocchiAggregationByResourcesAlarm",
    "OS::Ceilometer::CombinationAlarm": "OS::Aodh::CombinationAlarm",
}
