"""AWS::AutoScaling::AutoScalingGroup: an InstanceGroup whose size an
AWS::AutoScaling::ScalingPolicy adjusts within ``MinSize`` and ``MaxSize``, with a
``Cooldown``.

Scaling (bounds, cooldown, signals under the stack's lock, the crash-safe
membership) is OS::Heat::AutoScalingGroup's; the members' definition (a launch
configuration's, or an existing instance's with ``InstanceId``), the update policy
(``AutoScalingRollingUpdate``) and ``InstanceList`` are OS::Heat::InstanceGroup's. Here
are Heat's property names, its validation messages and the AWS metering tag.
"""

from __future__ import annotations

from typing import Any

from stoker.resources.heat import capacity
from stoker.resources.heat.autoscaling_group import AutoScalingGroup as HeatAutoScalingGroup
from stoker.resources.heat.instance_group import InstanceGroup
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.stack_resource import StackResource

__all__ = ["AWSAutoScalingGroup", "resource_mapping"]


class AWSAutoScalingGroup(InstanceGroup):
    """An autoscaling group of AWS::EC2::Instance members made from a launch
    configuration (or from an existing instance, ``InstanceId``): it starts with
    ``DesiredCapacity`` (or ``MinSize``) members, and an AWS::AutoScaling::ScalingPolicy's
    signal resizes it within ``MinSize`` and ``MaxSize`` outside its ``Cooldown``."""

    support_status = support.SupportStatus(version="2014.1")

    PROPERTIES = (
        AVAILABILITY_ZONES,
        LAUNCH_CONFIGURATION_NAME,
        MAX_SIZE,
        MIN_SIZE,
        COOLDOWN,
        DESIRED_CAPACITY,
        HEALTH_CHECK_GRACE_PERIOD,
        HEALTH_CHECK_TYPE,
        LOAD_BALANCER_NAMES,
        VPCZONE_IDENTIFIER,
        TAGS,
        INSTANCE_ID,
    ) = (
        "AvailabilityZones",
        "LaunchConfigurationName",
        "MaxSize",
        "MinSize",
        "Cooldown",
        "DesiredCapacity",
        "HealthCheckGracePeriod",
        "HealthCheckType",
        "LoadBalancerNames",
        "VPCZoneIdentifier",
        "Tags",
        "InstanceId",
    )
    SIZE = None  # type: ignore[assignment]
    _UPDATE_POLICY_SCHEMA_KEYS = (ROLLING_UPDATE,) = ("AutoScalingRollingUpdate",)

    properties_schema = {
        AVAILABILITY_ZONES: properties.Schema(
            properties.Schema.LIST, "Not Implemented.", required=True
        ),
        LAUNCH_CONFIGURATION_NAME: properties.Schema(
            properties.Schema.STRING,
            "The reference to a LaunchConfiguration resource.",
            update_allowed=True,
        ),
        INSTANCE_ID: properties.Schema(
            properties.Schema.STRING,
            "The ID of an existing instance to use to create the Auto Scaling group. If specify this property, will "
            "create the group use an existing instance instead of a launch configuration.",
            constraints=[constraints.CustomConstraint("nova.server")],
        ),
        MAX_SIZE: properties.Schema(
            properties.Schema.INTEGER,
            "Maximum number of instances in the group.",
            required=True,
            update_allowed=True,
        ),
        MIN_SIZE: properties.Schema(
            properties.Schema.INTEGER,
            "Minimum number of instances in the group.",
            required=True,
            update_allowed=True,
        ),
        COOLDOWN: properties.Schema(
            properties.Schema.INTEGER, "Cooldown period, in seconds.", update_allowed=True
        ),
        DESIRED_CAPACITY: properties.Schema(
            properties.Schema.INTEGER, "Desired initial number of instances.", update_allowed=True
        ),
        HEALTH_CHECK_GRACE_PERIOD: properties.Schema(
            properties.Schema.INTEGER, "Not Implemented.", implemented=False
        ),
        HEALTH_CHECK_TYPE: properties.Schema(
            properties.Schema.STRING,
            "Not Implemented.",
            constraints=[constraints.AllowedValues(["EC2", "ELB"])],
            implemented=False,
        ),
        LOAD_BALANCER_NAMES: properties.Schema(
            properties.Schema.LIST, "List of LoadBalancer resources."
        ),
        VPCZONE_IDENTIFIER: properties.Schema(
            properties.Schema.LIST,
            "Use only with Neutron, to list the internal subnet to which the instance will be attached; needed only "
            "if multiple exist; list length must be exactly 1.",
            schema=properties.Schema(
                properties.Schema.STRING,
                "UUID of the internal subnet to which the instance will be attached.",
            ),
        ),
        TAGS: properties.Schema(
            properties.Schema.LIST,
            "Tags to attach to this group.",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    InstanceGroup.TAG_KEY: properties.Schema(
                        properties.Schema.STRING, required=True
                    ),
                    InstanceGroup.TAG_VALUE: properties.Schema(
                        properties.Schema.STRING, required=True
                    ),
                },
            ),
        ),
    }

    attributes_schema = {
        InstanceGroup.INSTANCE_LIST: attributes.Schema(
            "A comma-delimited list of server ip addresses. (Heat extension).",
            type=attributes.Schema.STRING,
        ),
    }

    update_policy_schema = {
        ROLLING_UPDATE: properties.Schema(
            properties.Schema.MAP, schema=InstanceGroup.rolling_update_schema
        )
    }

    EXACT = capacity.CFN_EXACT_CAPACITY
    # Scaling is the OS group's (InstanceGroup has none).
    adjust = HeatAutoScalingGroup.adjust

    # -- sizes: the OS group's, with bounds ----------------------------------------------------

    def desired_size(self) -> int | None:
        return self._optional(self.DESIRED_CAPACITY)

    def _initial_size(self) -> int:
        return self.desired_size() or self.properties[self.MIN_SIZE]

    def _bounded(self, size: int) -> int:
        return HeatAutoScalingGroup._bounded(self, size)

    def member_count_property(self) -> str | None:
        return self.DESIRED_CAPACITY if self.desired_size() else self.MIN_SIZE

    # -- the members -------------------------------------------------------------------------

    def _tags(self) -> list[dict[str, str]]:
        """The InstanceGroup's tags and the one cfn-push-stats' dimensions name the group by."""
        return super()._tags() + [
            {self.TAG_KEY: "metering.AutoScalingGroupName", self.TAG_VALUE: str(self.get_reference_id())}
        ]

    def conf_properties(self) -> dict[str, Any]:
        instance_id = self.properties[self.INSTANCE_ID]
        if instance_id:
            server = self.client_plugin("nova").get_server(instance_id)
            found: dict[str, Any] = {
                "ImageId": (getattr(server, "image", None) or {}).get("id"),
                "InstanceType": (getattr(server, "flavor", None) or {}).get("id")
                or (getattr(server, "flavor", None) or {}).get("original_name"),
                "KeyName": getattr(server, "key_name", None),
                "SecurityGroups": [
                    group["name"] for group in getattr(server, "security_groups", None) or []
                ],
            }
            found = {key: value for key, value in found.items() if value is not None}
            found["Tags"] = self._tags()
        else:
            found = super().conf_properties()
        subnets = self.properties[self.VPCZONE_IDENTIFIER]
        if subnets:
            found["SubnetId"] = subnets[0]
        return found

    def _needs_launch_configuration(self) -> bool:
        return not self.properties[self.INSTANCE_ID]

    def _launch_configuration(self) -> Any:
        return None if self.properties[self.INSTANCE_ID] else super()._launch_configuration()

    def validate_nested(self) -> None:
        if self.properties[self.INSTANCE_ID]:
            return  # the instance is read at create, and the members validated then
        super().validate_nested()

    # -- validation ------------------------------------------------------------------------

    def validate(self) -> None:
        place = f"resources.{self.name}.properties"
        low, high = self.properties[self.MIN_SIZE], self.properties[self.MAX_SIZE]
        if high < low:
            raise ValidationError("MinSize can not be greater than MaxSize", path=place)
        if low < 0:
            raise ValidationError(
                "The size of AutoScalingGroup can not be less than zero",
                path=f"{place}.{self.MIN_SIZE}",
            )
        desired = self.desired_size()
        if desired is not None and not low <= desired <= high:
            raise ValidationError(
                "DesiredCapacity must be between MinSize and MaxSize",
                path=f"{place}.{self.DESIRED_CAPACITY}",
            )
        subnets = self.properties[self.VPCZONE_IDENTIFIER]
        if subnets and len(subnets) != 1:
            raise ValidationError(
                "Anything other than one VPCZoneIdentifier is not supported.",
                path=f"{place}.{self.VPCZONE_IDENTIFIER}",
            )
        if bool(self.properties[self.INSTANCE_ID]) == bool(
            self.properties[self.LAUNCH_CONFIGURATION_NAME]
        ):
            raise ValidationError(
                "Either 'InstanceId' or 'LaunchConfigurationName' must be provided.",
                path=place,
                hint="give exactly one of them",
            )
        super().validate()


def resource_mapping() -> dict[str, type[StackResource]]:
    return {"AWS::AutoScaling::AutoScalingGroup": AWSAutoScalingGroup}
