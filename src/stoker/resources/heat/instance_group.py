"""OS::Heat::InstanceGroup: ``Size`` AWS::EC2::Instance members made from an
AWS::AutoScaling::LaunchConfiguration, in a nested stack.

The membership, the child's template for each step and the rolling update are
OS::Heat::AutoScalingGroup's machinery (this type extends it): here are what Heat's
InstanceGroup names differently (``Size``, the ``RollingUpdate`` update policy with an
ISO 8601 ``PauseTime``), the members' definition read from the launch configuration
(its properties and metadata, the group's ``Tags`` with Heat's metering tag), and the
``InstanceList`` attribute. An InstanceGroup does not scale on a policy's signal.

``LoadBalancerNames`` (Heat's ``_lb_reload``): once a create, an update or a scaling
signal has changed the members, each load balancer named (an
AWS::ElasticLoadBalancing::LoadBalancer of the stack) is told the members that did not
fail, and the group's create or update ends when the load balancers' nested stacks
have taken them. Heat also tells them between a rolling update's batches; here they
hear once, after the last.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from stoker.resources.heat.autoscaling_group import AutoScalingGroup
from stoker.sdk import attributes, properties
from stoker.sdk.exceptions import InvalidTemplateAttribute, ResourceFailure, ValidationError
from stoker.sdk.stack_resource import NestedView, StackResource

__all__ = ["InstanceGroup", "parse_isoduration", "resource_mapping"]

# What Heat's groups make their members as (its child environment maps
# OS::Heat::ScaledResource to it; a stack's environment may map this type in turn).
MEMBER_TYPE = "AWS::EC2::Instance"
LAUNCH_CONFIGURATION_TYPE = "AWS::AutoScaling::LaunchConfiguration"
# Heat's longest pause between batches.
MAX_PAUSE_SECONDS = 3600
# A property name of OS::Heat::AutoScalingGroup's this type does not have: None, typed so that
# a subclass may name it again (AWS::AutoScaling::AutoScalingGroup's MinSize, MaxSize...).
_NOT_HERE: str | None = None

_DURATION = re.compile(
    r"^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$"
)


def parse_isoduration(text: str) -> int:
    """Seconds in an ISO 8601 duration such as ``PT1M30S`` (Heat's parse_isoduration)."""
    found = _DURATION.match(str(text))
    if not found or text in ("P", "PT") or str(text).endswith("T"):
        raise ValueError("Only ISO 8601 duration format of the form PT#H#M#S is supported.")
    years, months, weeks, days, hours, minutes, seconds = (
        int(part or 0) for part in found.groups()
    )
    return (
        (((years * 365 + months * 30 + weeks * 7 + days) * 24 + hours) * 60 + minutes) * 60
    ) + seconds


class InstanceGroup(AutoScalingGroup):
    """An instance group that can scale arbitrary instances.

    A resource allowing for the creating number of defined with
    AWS::AutoScaling::LaunchConfiguration instances. Allows to associate scaled
    resources with loadbalancer resources.
    """

    support_status = StackResource.support_status

    PROPERTIES: tuple[str, ...]
    PROPERTIES = (
        AVAILABILITY_ZONES,
        LAUNCH_CONFIGURATION_NAME,
        SIZE,
        LOAD_BALANCER_NAMES,
        TAGS,
    ) = (
        "AvailabilityZones",
        "LaunchConfigurationName",
        "Size",
        "LoadBalancerNames",
        "Tags",
    )
    _TAG_KEYS = (TAG_KEY, TAG_VALUE) = ("Key", "Value")
    _ROLLING_UPDATE_SCHEMA_KEYS = (MIN_INSTANCES_IN_SERVICE, MAX_BATCH_SIZE, PAUSE_TIME) = (
        "MinInstancesInService",
        "MaxBatchSize",
        "PauseTime",
    )
    _UPDATE_POLICY_SCHEMA_KEYS = (ROLLING_UPDATE,) = ("RollingUpdate",)
    ATTRIBUTES = (INSTANCE_LIST,) = ("InstanceList",)

    # The OS group's names this type does not have.
    RESOURCE = MIN_SIZE = MAX_SIZE = COOLDOWN = DESIRED_CAPACITY = ROLLING_UPDATES = _NOT_HERE  # type: ignore[assignment]

    properties_schema = {
        AVAILABILITY_ZONES: properties.Schema(
            properties.Schema.LIST, "Not Implemented.", required=True
        ),
        LAUNCH_CONFIGURATION_NAME: properties.Schema(
            properties.Schema.STRING,
            "The reference to a LaunchConfiguration resource.",
            required=True,
            update_allowed=True,
        ),
        SIZE: properties.Schema(
            properties.Schema.INTEGER,
            "Desired number of instances.",
            required=True,
            update_allowed=True,
        ),
        LOAD_BALANCER_NAMES: properties.Schema(
            properties.Schema.LIST,
            "List of LoadBalancer resources. Currently only the AWS::ElasticLoadBalancing::LoadBalancer resource "
            "type is supported.",
        ),
        TAGS: properties.Schema(
            properties.Schema.LIST,
            "Tags to attach to this group.",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    TAG_KEY: properties.Schema(properties.Schema.STRING, "Tag key.", required=True),
                    TAG_VALUE: properties.Schema(
                        properties.Schema.STRING, "Tag value.", required=True
                    ),
                },
            ),
        ),
    }

    attributes_schema = {
        INSTANCE_LIST: attributes.Schema(
            "A comma-delimited list of server ip addresses. (Heat extension).",
            type=attributes.Schema.STRING,
        ),
    }

    rolling_update_schema = {
        MIN_INSTANCES_IN_SERVICE: properties.Schema(properties.Schema.INTEGER, default=0),
        MAX_BATCH_SIZE: properties.Schema(properties.Schema.INTEGER, default=1),
        PAUSE_TIME: properties.Schema(properties.Schema.STRING, default="PT0S"),
    }
    update_policy_schema = {
        ROLLING_UPDATE: properties.Schema(properties.Schema.MAP, schema=rolling_update_schema)
    }

    # Its members are Nova servers, and its checks ask Nova and Glance: the conformance
    # lifecycle runs it against the test cloud (tests/cloud/test_aws_autoscaling.py).
    default_client_name = "nova"

    # Heat's InstanceGroup has no adjust: a scaling policy cannot find it as a group (an
    # AWS::AutoScaling::AutoScalingGroup has it again).
    adjust: Callable[..., tuple[bool, str, str]] | None = None  # type: ignore[assignment]

    # -- sizes ----------------------------------------------------------------------------

    def desired_size(self) -> int | None:
        return self.properties[self.SIZE]

    def _initial_size(self) -> int:
        return int(self.properties[self.SIZE])

    def _bounded(self, size: int) -> int:
        return max(int(size), 0)

    def member_count_property(self) -> str | None:
        return self.SIZE

    # -- the rolling update policy ---------------------------------------------------------

    def _update_policy(self, definition: Any = None) -> Mapping[str, Any] | None:
        policy = (definition or self.t).update_policy_properties(
            self.update_policy_schema, self.context
        )
        return policy[self.ROLLING_UPDATE]

    def rolling_policy(self) -> dict[str, Any]:
        policy = self._update_policy() or {}
        return {
            "min_in_service": policy.get(self.MIN_INSTANCES_IN_SERVICE) or 0,
            "max_batch_size": policy.get(self.MAX_BATCH_SIZE) or 1,
            "pause_time": float(parse_isoduration(policy.get(self.PAUSE_TIME) or "PT0S")),
        }

    def rollout_wanted(self, prop_diff: Mapping[str, Any]) -> bool:
        """Heat rolls the members out only with a RollingUpdate policy, when the launch
        configuration changed; otherwise the members keep their definition."""
        return bool(self._update_policy()) and self.LAUNCH_CONFIGURATION_NAME in prop_diff

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> Any:
        # The update policy the rollout follows is the new definition's.
        self.t = json_snippet
        return super().handle_update(json_snippet, tmpl_diff, prop_diff)

    # -- the load balancers (LoadBalancerNames) -----------------------------------------

    # Resource data: the load balancers have been told the members and are taking them.
    LOAD_BALANCERS_KEY = "load_balancers_told"

    def _load_balancers(self) -> list[Any]:
        found = []
        for name in self.properties[self.LOAD_BALANCER_NAMES] or []:
            # A load balancer's reference is its name (Heat's group looks it up by name).
            balancer = self.stack.resource_by_refid(name)  # type: ignore[attr-defined]
            if balancer is None or getattr(balancer, "reconfigure", None) is None:
                raise ResourceFailure(
                    f"Unsupported resource '{name}' in LoadBalancerNames",
                    path=f"resources.{self.name}.properties.{self.LOAD_BALANCER_NAMES}",
                )
            found.append(balancer)
        return found

    def member_references(self) -> list[str]:
        """The references (server ids) of the members that have not failed, oldest first."""
        view = self._view()
        if view is None:
            return []
        present, failed = set(view.resource_names()), self._failed(view)
        return [str(view.reference(name)) for name in self.member_names() if name in present and name not in failed]

    def tell_load_balancers(self) -> bool:
        """Start giving each load balancer the members; False when there are none to tell."""
        balancers = self._load_balancers()
        if not balancers:
            return False
        members = self.member_references()
        for balancer in balancers:
            balancer.reconfigure(members)
        return True

    def _then_load_balancers(self, members_done: Any) -> bool:
        """A check that ends once ``members_done()`` has and the load balancers, told
        then, have taken the members."""
        if not self.data().get(self.LOAD_BALANCERS_KEY):
            if not members_done():
                return False
            if not self.tell_load_balancers():
                return True
            self.data_set(self.LOAD_BALANCERS_KEY, True)
            return False
        if not all(balancer.reconfigured() for balancer in self._load_balancers()):
            return False
        self.data_delete(self.LOAD_BALANCERS_KEY)
        return True

    def check_create_complete(self, token: Any) -> bool:
        return self._then_load_balancers(lambda: super(InstanceGroup, self).check_create_complete(token))

    def check_update_complete(self, token: Any) -> bool:
        return self._then_load_balancers(lambda: super(InstanceGroup, self).check_update_complete(token))

    def finish_adjust(self, cooldown: float | None, reason: str) -> None:
        # The engine waits for the load balancers' nested stacks before the signal ends.
        super().finish_adjust(cooldown, reason)
        self.tell_load_balancers()

    # -- the members ----------------------------------------------------------------------

    def _launch_configuration(self) -> Any:
        reference = self.properties[self.LAUNCH_CONFIGURATION_NAME]
        if not reference:
            return None
        finder = getattr(self.stack, "resource_by_refid", None)
        return finder(reference) if finder is not None else None

    def _needs_launch_configuration(self) -> bool:
        return True

    def _tags(self) -> list[dict[str, str]]:
        """The group's tags, with one Ceilometer picks up (``metering.`` prefixed)."""
        tags = list(self.properties[self.TAGS] or [])
        if any(tag[self.TAG_KEY].startswith("metering.") for tag in tags):
            return tags
        return tags + [
            {self.TAG_KEY: "metering.groupname", self.TAG_VALUE: self.get_reference_id()}
        ]

    def conf_properties(self) -> dict[str, Any]:
        """The members' properties: the launch configuration's, with the group's tags."""
        conf = self._launch_configuration()
        found = conf.member_properties() if conf is not None else {}
        found["Tags"] = self._tags()
        return found

    def _member_definition(self) -> dict[str, Any]:
        conf = self._launch_configuration()
        if conf is None and self._needs_launch_configuration():
            reference = self.properties[self.LAUNCH_CONFIGURATION_NAME]
            raise ValidationError(
                f"{self.LAUNCH_CONFIGURATION_NAME} ({reference}) reference can not be found.",
                path=f"resources.{self.name}.properties.{self.LAUNCH_CONFIGURATION_NAME}",
            )
        if conf is not None and not hasattr(conf, "member_properties"):
            raise ValidationError(
                f"{self.LAUNCH_CONFIGURATION_NAME} ({self.properties[self.LAUNCH_CONFIGURATION_NAME]}) is not an "
                f"{LAUNCH_CONFIGURATION_TYPE}",
                path=f"resources.{self.name}.properties.{self.LAUNCH_CONFIGURATION_NAME}",
            )
        definition: dict[str, Any] = {"type": MEMBER_TYPE, "properties": self.conf_properties()}
        metadata = conf.member_metadata() if conf is not None else None
        if metadata:
            definition["metadata"] = metadata
        return json.loads(json.dumps(definition, default=str))

    # -- validation -------------------------------------------------------------------------

    def validate_launchconfig(self) -> None:
        """The launch configuration must be found, and referenced (not only named), so
        that it exists before the group (Heat's messages)."""
        reference = self.properties[self.LAUNCH_CONFIGURATION_NAME]
        if not reference or not isinstance(reference, str):
            return
        place = f"resources.{self.name}.properties.{self.LAUNCH_CONFIGURATION_NAME}"
        template = getattr(self.stack, "template", None) or getattr(self.context, "template", None)
        resources = getattr(template, "resources", None) or {}
        if reference in resources and reference not in self.t.required_resource_names():
            raise ValidationError(
                f"{self.LAUNCH_CONFIGURATION_NAME} ({reference}) requires a reference to the configuration not just the "
                "name of the resource.",
                path=place,
                hint=f"write {{Ref: {reference}}} (or get_resource)",
            )
        finder = getattr(self.stack, "resource_by_refid", None)
        if finder is not None and self.resource_id is not None and finder(reference) is None:
            raise ValidationError(
                f"{self.LAUNCH_CONFIGURATION_NAME} ({reference}) reference can not be found.",
                path=place,
            )

    def _validate_update_policy(self) -> None:
        policy = self.t.update_policy_properties(self.update_policy_schema, self.context)
        policy.validate()
        rolling = policy[self.ROLLING_UPDATE]
        if not rolling:
            return
        place = f"resources.{self.name}.update_policy.{self.ROLLING_UPDATE}.{self.PAUSE_TIME}"
        try:
            pause = parse_isoduration(rolling[self.PAUSE_TIME])
        except ValueError as error:
            raise ValidationError(str(error), path=place) from None
        if pause > MAX_PAUSE_SECONDS:
            raise ValidationError(f"Maximum {self.PAUSE_TIME} is 1 hour.", path=place)

    def validate(self) -> None:
        self.validate_launchconfig()
        StackResource.validate(self)
        self._validate_update_policy()

    def validate_nested(self) -> None:
        if self._launch_configuration() is None:
            return  # its reference resolves at create; the members are validated then
        super().validate_nested()

    # -- attributes -----------------------------------------------------------------------

    def instance_list(self, view: NestedView) -> str | None:
        """The members' PublicIp, comma-separated (0.0.0.0 for one without), oldest first."""
        present = set(view.resource_names())
        addresses = []
        for name in self.member_names():
            if name in present:
                try:
                    address = view.attribute(name, "PublicIp", ())
                except InvalidTemplateAttribute:
                    address = None
                addresses.append(address or "0.0.0.0")
        return ",".join(addresses) or None

    def get_attribute(self, key: str) -> Any:
        return self.attribute_with_path(key, ())

    def attribute_with_path(self, key: str, path: tuple[Any, ...]) -> Any:
        if key != self.INSTANCE_LIST:
            raise InvalidTemplateAttribute(self.name, key)
        view = self._view()
        return attributes.select_path(self.instance_list(view), path) if view is not None else None

    def FnGetAtt(self, key: str, *path: Any) -> Any:  # noqa: N802 - Heat's name (seed 001)
        return self.attribute_with_path(key, tuple(path))


def resource_mapping() -> dict[str, type[StackResource]]:
    return {"OS::Heat::InstanceGroup": InstanceGroup}
