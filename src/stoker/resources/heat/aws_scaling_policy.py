"""AWS::AutoScaling::ScalingPolicy: OS::Heat::ScalingPolicy with the AWS names.

A signal to it (a POST to its ``AlarmUrl``, e.g. from an AWS::CloudWatch::Alarm)
adjusts an AWS::AutoScaling::AutoScalingGroup as the OS policy adjusts its group. Its
reference is the alarm URL (Heat's signed URL, stoker's capability URL) once created.
"""

from __future__ import annotations

from typing import Any

from stoker.resources.heat import capacity
from stoker.resources.heat.scaling_policy import ALARM_URL_KEY, ScalingPolicy
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource

__all__ = ["AWSScalingPolicy", "resource_mapping"]


class AWSScalingPolicy(ScalingPolicy):
    """A policy that resizes an AWS::AutoScaling::AutoScalingGroup when signalled:
    by ``ScalingAdjustment`` of ``AdjustmentType`` (ChangeInCapacity, ExactCapacity,
    PercentChangeInCapacity, at least ``MinAdjustmentStep`` members), outside the
    cooldown (the policy's ``Cooldown``, else the group's)."""

    support_status = support.SupportStatus()

    PROPERTIES = (
        AUTO_SCALING_GROUP_ID,
        SCALING_ADJUSTMENT,
        ADJUSTMENT_TYPE,
        COOLDOWN,
        MIN_ADJUSTMENT_STEP,
    ) = (
        "AutoScalingGroupName",
        "ScalingAdjustment",
        "AdjustmentType",
        "Cooldown",
        "MinAdjustmentStep",
    )
    ATTRIBUTES = (ALARM_URL,) = ("AlarmUrl",)
    SIGNAL_URL = None  # type: ignore[assignment]

    properties_schema = {
        AUTO_SCALING_GROUP_ID: properties.Schema(
            properties.Schema.STRING, "AutoScaling group name to apply policy to.", required=True
        ),
        SCALING_ADJUSTMENT: properties.Schema(
            properties.Schema.INTEGER, "Size of adjustment.", required=True, update_allowed=True
        ),
        ADJUSTMENT_TYPE: properties.Schema(
            properties.Schema.STRING,
            "Type of adjustment (absolute or percentage).",
            required=True,
            constraints=[
                constraints.AllowedValues(
                    [
                        capacity.CFN_CHANGE_IN_CAPACITY,
                        capacity.CFN_EXACT_CAPACITY,
                        capacity.CFN_PERCENT_CHANGE_IN_CAPACITY,
                    ]
                )
            ],
            update_allowed=True,
        ),
        COOLDOWN: properties.Schema(
            properties.Schema.INTEGER, "Cooldown period, in seconds.", update_allowed=True
        ),
        MIN_ADJUSTMENT_STEP: properties.Schema(
            properties.Schema.INTEGER,
            "Minimum number of resources that are added or removed when the AutoScaling group scales up or down. "
            "This can be used only when specifying PercentChangeInCapacity for the AdjustmentType property.",
            constraints=[constraints.Range(min=0)],
            update_allowed=True,
        ),
    }

    attributes_schema = {
        ALARM_URL: attributes.Schema(
            "A signed url to handle the alarm. (Heat extension).",
            type=attributes.Schema.STRING,
            cache_mode=attributes.Schema.CACHE_NONE,
        ),
    }

    def _check_min_adjustment_step(self) -> None:
        if (
            self.properties[self.ADJUSTMENT_TYPE] != capacity.CFN_PERCENT_CHANGE_IN_CAPACITY
            and self._optional(self.MIN_ADJUSTMENT_STEP) is not None
        ):
            raise ValidationError(
                f"{self.MIN_ADJUSTMENT_STEP} property should only be specified for {self.ADJUSTMENT_TYPE} with value "
                f"{capacity.CFN_PERCENT_CHANGE_IN_CAPACITY}.",
                path=f"resources.{self.name}.properties.{self.MIN_ADJUSTMENT_STEP}",
            )

    def get_reference_id(self) -> str:
        if self.resource_id is not None:
            url = self.data().get(ALARM_URL_KEY)
            if url:
                return str(url)
        return self.name

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        if name == self.ALARM_URL:
            return self.data().get(ALARM_URL_KEY)
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"AWS::AutoScaling::ScalingPolicy": AWSScalingPolicy}
