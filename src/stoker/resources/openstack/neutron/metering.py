"""OS::Neutron::MeteringLabel and OS::Neutron::MeteringRule, as Heat has them: a label
and the IP ranges it meters at the routers (neither is updated in place: any change
replaces it). Neutron's default policy lets administrators only manage them."""

from __future__ import annotations

from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import attributes, constraints, properties, support

__all__ = ["MeteringLabel", "MeteringRule", "resource_mapping"]


class MeteringLabel(NeutronResource):
    """A resource for creating neutron metering label.

    The idea is to meter this at the L3 routers levels. The point is to allow operators to
    configure IP ranges and to assign a label to them. Each label will measure the traffic
    for a specific set of IP range; bandwidth measurements are sent for each label to the
    notification system and could be collected by Ceilometer.
    """

    support_status = support.SupportStatus(version="2014.1")
    entity = "metering_label"

    PROPERTIES = (NAME, DESCRIPTION, SHARED) = ("name", "description", "shared")
    ATTRIBUTES = (NAME_ATTR, DESCRIPTION_ATTR, SHARED_ATTR) = ("name", "description", "shared")

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "Name of the metering label."),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description of the metering label."
        ),
        SHARED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether the metering label should be shared across all tenants.",
            default=False,
            support_status=support.SupportStatus(version="2015.1"),
        ),
    }
    attributes_schema = {
        NAME_ATTR: attributes.Schema("Name of the metering label.", type=attributes.Schema.STRING),
        DESCRIPTION_ATTR: attributes.Schema(
            "Description of the metering label.", type=attributes.Schema.STRING
        ),
        SHARED_ATTR: attributes.Schema(
            "Shared status of the metering label.", type=attributes.Schema.STRING
        ),
    }

    def handle_create(self) -> None:
        body = self.prepare_properties()
        if "shared" in body:
            body["is_shared"] = body.pop("shared")
        self.created(self.client().create_metering_label(**body))


class MeteringRule(NeutronResource):
    """A resource to create rule for some label.

    Resource for allowing specified label to measure the traffic for a specific set of ip
    range.
    """

    support_status = support.SupportStatus(version="2014.1")
    entity = "metering_label_rule"

    PROPERTIES = (METERING_LABEL_ID, REMOTE_IP_PREFIX, DIRECTION, EXCLUDED) = (
        "metering_label_id", "remote_ip_prefix", "direction", "excluded",
    )  # fmt: skip
    ATTRIBUTES = (DIRECTION_ATTR, EXCLUDED_ATTR, METERING_LABEL_ID_ATTR, REMOTE_IP_PREFIX_ATTR) = (
        "direction", "excluded", "metering_label_id", "remote_ip_prefix",
    )  # fmt: skip

    properties_schema = {
        METERING_LABEL_ID: properties.Schema(
            properties.Schema.STRING,
            "The metering label ID to associate with this metering rule.",
            required=True,
        ),
        REMOTE_IP_PREFIX: properties.Schema(
            properties.Schema.STRING,
            "Indicates remote IP prefix to be associated with this metering rule.",
            required=True,
        ),
        DIRECTION: properties.Schema(
            properties.Schema.STRING,
            "The direction in which metering rule is applied, either ingress or egress.",
            default="ingress",
            constraints=[constraints.AllowedValues(["ingress", "egress"])],
        ),
        EXCLUDED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Specify whether the remote_ip_prefix will be excluded or not from traffic counters of "
            "the metering label. For example to not count the traffic of a specific IP address of a range.",
            default="False",
        ),
    }
    attributes_schema = {
        DIRECTION_ATTR: attributes.Schema(
            "The direction in which metering rule is applied.", type=attributes.Schema.STRING
        ),
        EXCLUDED_ATTR: attributes.Schema("Exclude state for cidr.", type=attributes.Schema.STRING),
        METERING_LABEL_ID_ATTR: attributes.Schema(
            "The metering label ID to associate with this metering rule.",
            type=attributes.Schema.STRING,
        ),
        REMOTE_IP_PREFIX_ATTR: attributes.Schema(
            "CIDR to be associated with this metering rule.", type=attributes.Schema.STRING
        ),
    }

    def handle_create(self) -> None:
        body = self.prepare_properties()
        if "excluded" in body:
            body["is_excluded"] = body.pop("excluded")
        self.created(self.client().create_metering_label_rule(**body))


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::MeteringLabel": MeteringLabel, "OS::Neutron::MeteringRule": MeteringRule}
