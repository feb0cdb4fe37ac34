"""The rules of a Neutron QoS policy, as Heat has them: OS::Neutron::QoSBandwidthLimitRule,
QoSDscpMarkingRule, QoSMinimumBandwidthRule and QoSMinimumPacketRateRule. Each names its
policy by name or id (a new policy replaces the rule), updates its values in place, and is
read, updated and deleted under its policy (``/qos/policies/<policy>/<kind>s/<rule>``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from stoker.resources.openstack.neutron.client_plugin import as_dict
from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import constraints, properties, support

__all__ = [
    "QoSBandwidthLimitRule",
    "QoSDscpMarkingRule",
    "QoSMinimumBandwidthRule",
    "QoSMinimumPacketRateRule",
    "resource_mapping",
]

POLICY, TENANT_ID = "policy", "tenant_id"
_COMMON = {
    POLICY: properties.Schema(
        properties.Schema.STRING,
        "ID or name of the QoS policy.",
        required=True,
        constraints=[constraints.CustomConstraint("neutron.qos_policy")],
    ),
    TENANT_ID: properties.Schema(properties.Schema.STRING, "The owner tenant ID of this rule."),
}


def _direction(allowed: list[str], **keywords: Any) -> properties.Schema:
    return properties.Schema(
        properties.Schema.STRING,
        "Traffic direction from the point of view of the port.",
        update_allowed=True,
        constraints=[constraints.AllowedValues(allowed)],
        default="egress",
        **keywords,
    )


def _rate(description: str, **keywords: Any) -> properties.Schema:
    return properties.Schema(
        properties.Schema.INTEGER,
        description,
        update_allowed=True,
        constraints=[constraints.Range(min=0)],
        **keywords,
    )


class _QoSRule(NeutronResource):
    """What the rule types share (not a type itself)."""

    support_status = support.SupportStatus(version="6.0.0")
    # openstacksdk's proxy methods: <verb>_qos_<kind>_rule(rule, policy).
    kind: ClassVar[str] = ""

    def policy_id(self) -> str:
        return self.client_plugin().get_qos_policy_id(self.properties[POLICY])

    def _call(self, verb: str, *arguments: Any, **keywords: Any) -> Any:
        return getattr(self.client(), f"{verb}_qos_{self.kind}_rule")(*arguments, **keywords)

    def handle_create(self) -> None:
        body = {
            key: value
            for key, value in self.properties.resolved().items()
            if value is not None and key != POLICY
        }
        if TENANT_ID in body:
            body["project_id"] = body.pop(TENANT_ID)
        rule = self._call("create", self.policy_id(), **body)
        self.resource_id_set(rule.id)

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if prop_diff:
            self._call("update", self.resource_id, self.policy_id(), **dict(prop_diff))

    def _delete(self) -> None:
        self._call("delete", self.resource_id, self.policy_id(), ignore_missing=True)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return as_dict(self._call("get", self.resource_id, self.policy_id()))

    def handle_delete(self) -> Any:
        if self.resource_id is None:
            return None
        try:
            self._delete()
        except Exception as error:  # noqa: BLE001 - openstacksdk's types: the policy is gone
            self.client_plugin().ignore_not_found(error)
        return None

    def find_created(self) -> str | None:
        return None


class QoSBandwidthLimitRule(_QoSRule):
    """A resource for Neutron QoS bandwidth limit rule.

    This rule can be associated with QoS policy, and then the policy can be used by neutron
    port and network, to provide bandwidth limit QoS capabilities. The default policy usage
    of this resource is limited to administrators only.
    """

    entity = "bandwidth_limit_rule"
    kind = "bandwidth_limit"
    PROPERTIES = (MAX_BANDWIDTH, MAX_BURST_BANDWIDTH, DIRECTION) = (
        "max_kbps",
        "max_burst_kbps",
        "direction",
    )
    properties_schema = {
        MAX_BANDWIDTH: _rate("Max bandwidth in kbps.", required=True),
        MAX_BURST_BANDWIDTH: _rate("Max burst bandwidth in kbps.", default=0),
        DIRECTION: _direction(
            ["egress", "ingress"], support_status=support.SupportStatus(version="13.0.0")
        ),
        **_COMMON,
    }


class QoSDscpMarkingRule(_QoSRule):
    """A resource for Neutron QoS DSCP marking rule.

    This rule can be associated with QoS policy, and then the policy can be used by neutron
    port and network, to provide DSCP marking QoS capabilities. The default policy usage of
    this resource is limited to administrators only.
    """

    support_status = support.SupportStatus(version="7.0.0")
    entity = "dscp_marking_rule"
    kind = "dscp_marking"
    PROPERTIES = (DSCP_MARK,) = ("dscp_mark",)
    properties_schema = {
        DSCP_MARK: properties.Schema(
            properties.Schema.INTEGER,
            "DSCP mark between 0 and 56, except 2-6, 42, 44, and 50-54.",
            required=True,
            update_allowed=True,
            constraints=[
                constraints.AllowedValues(
                    [
                        0,
                        8,
                        10,
                        12,
                        14,
                        16,
                        18,
                        20,
                        22,
                        24,
                        26,
                        28,
                        30,
                        32,
                        34,
                        36,
                        38,
                        40,
                        46,
                        48,
                        56,
                    ]
                )
            ],
        ),
        **_COMMON,
    }


class QoSMinimumBandwidthRule(_QoSRule):
    """A resource for guaranteeing bandwidth.

    This rule can be associated with a QoS policy, and then the policy can be used by a
    neutron port to provide guaranteed bandwidth QoS capabilities. Depending on drivers the
    guarantee may be enforced when a server is placed and/or in the data plane of the
    hypervisor. The default policy usage of this resource is limited to administrators only.
    """

    support_status = support.SupportStatus(status=support.SUPPORTED, version="14.0.0")
    entity = "minimum_bandwidth_rule"
    kind = "minimum_bandwidth"
    PROPERTIES = (MIN_BANDWIDTH, DIRECTION) = ("min_kbps", "direction")
    properties_schema = {
        MIN_BANDWIDTH: _rate("Min bandwidth in kbps.", required=True),
        DIRECTION: _direction(["egress", "ingress"]),
        **_COMMON,
    }


class QoSMinimumPacketRateRule(_QoSRule):
    """A resource for guaranteeing packet rate.

    This rule can be associated with a QoS policy, and then the policy can be used by a
    neutron port to provide guaranteed packet rate QoS capabilities. The default policy
    usage of this resource is limited to administrators only.
    """

    support_status = support.SupportStatus(status=support.SUPPORTED, version="19.0.0")
    entity = "minimum_packet_rate_rule"
    kind = "minimum_packet_rate"
    PROPERTIES = (MIN_PACKET_RATE, DIRECTION) = ("min_kpps", "direction")
    properties_schema = {
        MIN_PACKET_RATE: _rate("Min packet rate in kpps.", required=True),
        DIRECTION: _direction(["any", "egress", "ingress"]),
        **_COMMON,
    }


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {
        "OS::Neutron::QoSBandwidthLimitRule": QoSBandwidthLimitRule,
        "OS::Neutron::QoSDscpMarkingRule": QoSDscpMarkingRule,
        "OS::Neutron::QoSMinimumBandwidthRule": QoSMinimumBandwidthRule,
        "OS::Neutron::QoSMinimumPacketRateRule": QoSMinimumPacketRateRule,
    }
