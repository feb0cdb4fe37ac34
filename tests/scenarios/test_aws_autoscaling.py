"""AWS::AutoScaling::AutoScalingGroup, LaunchConfiguration, ScalingPolicy and
OS::Heat::InstanceGroup as validation sees them, with no cloud: Heat's messages for
the sizes, the launch configuration's reference, the update policy and the policy's
adjustment step, each placed at its property. What they make is tested against the
test cloud (tests/cloud/test_aws_autoscaling.py): a launch configuration's image and
flavor are checked there."""

from __future__ import annotations

import pytest

from stoker.resources.heat.instance_group import parse_isoduration
from stoker.template.errors import TemplateErrors
from tests.support.stacks import template

GROUP = """
HeatTemplateFormatVersion: '2012-12-12'
Resources:
  group:
    Type: AWS::AutoScaling::AutoScalingGroup
    Properties:
      AvailabilityZones: []
      LaunchConfigurationName: config
      MinSize: {low}
      MaxSize: {high}
{extra}
"""


def refused(service, text: str) -> str:
    with pytest.raises(TemplateErrors) as raised:
        service.create_stack("bad", template(text))
    return str(raised.value)


@pytest.mark.parametrize(
    ("low", "high", "extra", "message"),
    [
        (3, 2, "", "MinSize can not be greater than MaxSize"),
        (-1, 2, "", "The size of AutoScalingGroup can not be less than zero"),
        (1, 2, "      DesiredCapacity: 5", "DesiredCapacity must be between MinSize and MaxSize"),
        (
            1,
            2,
            "      VPCZoneIdentifier: [a, b]",
            "Anything other than one VPCZoneIdentifier is not supported.",
        ),
    ],
)
def test_group_validation_has_heats_messages(service, low, high, extra, message):
    assert message in refused(service, GROUP.format(low=low, high=high, extra=extra))


def test_a_group_needs_an_instance_or_a_launch_configuration(service):
    text = GROUP.format(low=1, high=2, extra="").replace(
        "      LaunchConfigurationName: config\n", ""
    )
    assert "Either 'InstanceId' or 'LaunchConfigurationName' must be provided." in refused(
        service, text
    )


def test_a_launch_configuration_named_not_referenced_is_refused(service):
    text = (
        GROUP.format(low=1, high=2, extra="")
        + """
  config:
    Type: AWS::AutoScaling::LaunchConfiguration
    Properties: {ImageId: image, InstanceType: flavor}
"""
    )
    message = refused(service, text)
    assert (
        "LaunchConfigurationName (config) requires a reference to the configuration not just the name of the resource."
        in message
    )
    assert (
        "resources.group.properties.LaunchConfigurationName" in message
        or "Resources.group.Properties.LaunchConfigurationName" in message
    )


def test_launch_configuration_validation(service):
    base = """
HeatTemplateFormatVersion: '2012-12-12'
Resources:
  config:
    Type: AWS::AutoScaling::LaunchConfiguration
    Properties: {properties}
"""
    assert "If without InstanceId, ImageId and InstanceType are required." in refused(
        service, base.format(properties="{UserData: x}")
    )


def test_instance_group_update_policy_pause_is_at_most_an_hour(service):
    text = """
HeatTemplateFormatVersion: '2012-12-12'
Resources:
  group:
    Type: OS::Heat::InstanceGroup
    UpdatePolicy:
      RollingUpdate: {MaxBatchSize: 1, PauseTime: PT2H}
    Properties:
      AvailabilityZones: []
      LaunchConfigurationName: config
      Size: 1
"""
    assert "Maximum PauseTime is 1 hour." in refused(service, text)
    assert "Only ISO 8601 duration format" in refused(service, text.replace("PT2H", "two hours"))


def test_aws_policy_names_its_adjustment_types(service):
    text = """
HeatTemplateFormatVersion: '2012-12-12'
Resources:
  up:
    Type: AWS::AutoScaling::ScalingPolicy
    Properties:
      AutoScalingGroupName: group
      AdjustmentType: {kind}
      ScalingAdjustment: 1
"""
    assert "AdjustmentType" in refused(service, text.format(kind="change_in_capacity"))
    message = refused(
        service, text.format(kind="ChangeInCapacity") + "      MinAdjustmentStep: 2\n"
    )
    assert (
        "MinAdjustmentStep property should only be specified for AdjustmentType with value PercentChangeInCapacity."
        in message
    )


@pytest.mark.parametrize(
    ("text", "seconds"), [("PT0S", 0), ("PT1M30S", 90), ("PT1H", 3600), ("P1DT1S", 86401)]
)
def test_pause_times_are_iso_8601_durations(text, seconds):
    assert parse_isoduration(text) == seconds


def test_the_types_schemas_are_heats(service):
    group = service.resource_type_schema("AWS::AutoScaling::AutoScalingGroup")
    assert set(group["properties"]) == {
        "AvailabilityZones", "LaunchConfigurationName", "MaxSize", "MinSize", "Cooldown", "DesiredCapacity",
        "LoadBalancerNames", "VPCZoneIdentifier", "Tags", "InstanceId",
    }  # fmt: skip (Heat's schema leaves out the two not implemented HealthCheck* properties)
    assert set(group["attributes"]) >= {"InstanceList"}
    assert group["support_status"]["version"] == "2014.1"
    instances = service.resource_type_schema("OS::Heat::InstanceGroup")
    assert set(instances["properties"]) == {
        "AvailabilityZones",
        "LaunchConfigurationName",
        "Size",
        "LoadBalancerNames",
        "Tags",
    }
    policy = service.resource_type_schema("AWS::AutoScaling::ScalingPolicy")
    assert set(policy["attributes"]) >= {"AlarmUrl"} and "signal_url" not in policy["attributes"]
    config = service.resource_type_schema("AWS::AutoScaling::LaunchConfiguration")
    assert len(config["properties"]) == 8  # Heat 27 lists 8: KernelId and RamDiskId are not implemented
