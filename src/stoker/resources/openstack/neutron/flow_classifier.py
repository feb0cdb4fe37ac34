"""OS::Neutron::FlowClassifier, as Heat has it (networking-sfc): the traffic that enters a
port chain (protocol, addresses, port ranges, logical ports by name or id); name and
description updated in place, anything else replaces it."""

from __future__ import annotations

from stoker.resources.openstack.neutron.extension_resource import ExtensionResource
from stoker.sdk import constraints, properties, support, translation

__all__ = ["FlowClassifier", "resource_mapping"]


def _port_number(description: str) -> properties.Schema:
    return properties.Schema(
        properties.Schema.INTEGER, description, constraints=[constraints.Range(1, 65535)]
    )


class FlowClassifier(ExtensionResource):
    """Heat Template Resource for networking-sfc flow-classifier.

    This resource used to select the traffic that can access the service chain. Traffic that
    matches any flow classifier will be directed to the first port in the chain.
    """

    support_status = support.SupportStatus(version="8.0.0", status=support.UNSUPPORTED)
    extension_entity = "flow_classifier"

    PROPERTIES = (
        NAME, DESCRIPTION, PROTOCOL, ETHERTYPE, SOURCE_IP_PREFIX, DESTINATION_IP_PREFIX,
        SOURCE_PORT_RANGE_MIN, SOURCE_PORT_RANGE_MAX, DESTINATION_PORT_RANGE_MIN,
        DESTINATION_PORT_RANGE_MAX, LOGICAL_SOURCE_PORT, LOGICAL_DESTINATION_PORT, L7_PARAMETERS,
    ) = (
        "name", "description", "protocol", "ethertype", "source_ip_prefix", "destination_ip_prefix",
        "source_port_range_min", "source_port_range_max", "destination_port_range_min",
        "destination_port_range_max", "logical_source_port", "logical_destination_port", "l7_parameters",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of the Flow Classifier.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description for the Flow Classifier.", update_allowed=True
        ),
        PROTOCOL: properties.Schema(
            properties.Schema.STRING,
            "IP Protocol for the Flow Classifier.",
            constraints=[constraints.AllowedValues(["tcp", "udp", "icmp"])],
        ),
        ETHERTYPE: properties.Schema(
            properties.Schema.STRING,
            "L2 ethertype.",
            default="IPv4",
            constraints=[constraints.AllowedValues(["IPv4", "IPv6"])],
        ),
        SOURCE_IP_PREFIX: properties.Schema(
            properties.Schema.STRING,
            "Source IP prefix or subnet.",
            constraints=[constraints.CustomConstraint("net_cidr")],
        ),
        DESTINATION_IP_PREFIX: properties.Schema(
            properties.Schema.STRING,
            "Destination IP prefix or subnet.",
            constraints=[constraints.CustomConstraint("net_cidr")],
        ),
        SOURCE_PORT_RANGE_MIN: _port_number("Source protocol port Minimum."),
        SOURCE_PORT_RANGE_MAX: _port_number("Source protocol port Maximum."),
        DESTINATION_PORT_RANGE_MIN: _port_number("Destination protocol port minimum."),
        DESTINATION_PORT_RANGE_MAX: _port_number("Destination protocol port maximum."),
        LOGICAL_SOURCE_PORT: properties.Schema(
            properties.Schema.STRING,
            "ID or name of the neutron source port.",
            constraints=[constraints.CustomConstraint("neutron.port")],
        ),
        LOGICAL_DESTINATION_PORT: properties.Schema(
            properties.Schema.STRING,
            "ID or name of the neutron destination port.",
            constraints=[constraints.CustomConstraint("neutron.port")],
        ),
        L7_PARAMETERS: properties.Schema(
            properties.Schema.MAP,
            "Dictionary of L7-parameters.",
            support_status=support.SupportStatus(
                status=support.UNSUPPORTED,
                message="Currently, no value is supported for this option.",
            ),
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [path], client_plugin="neutron",
                finder="find_resourceid_by_name_or_id", entity="port",
            )
            for path in (self.LOGICAL_SOURCE_PORT, self.LOGICAL_DESTINATION_PORT)
        ]  # fmt: skip


def resource_mapping() -> dict[str, type[ExtensionResource]]:
    return {"OS::Neutron::FlowClassifier": FlowClassifier}
