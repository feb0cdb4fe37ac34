"""OS::Neutron::SecurityGroupRule."""

from __future__ import annotations

from typing import Any

from stoker.resources.openstack.neutron.neutron import (
    ALLOWED_SECURITY_GROUP_PROTOCOLS,
    RULE_DIRECTION_SCHEMA,
    RULE_ETHERTYPE_SCHEMA,
    RULE_PORT_RANGE_MIN_SCHEMA,
    SECURITY_GROUP_PROTOCOL_DESCRIPTION,
    NeutronResource,
    ProtocolValues,
)
from stoker.sdk import constraints, properties, support, translation
from stoker.sdk.exceptions import ValidationError


class SecurityGroupRule(NeutronResource):
    """A resource for managing Neutron security group rules.

    Rules to use in security group resource.
    """

    entity = "security_group_rule"
    support_status = support.SupportStatus(version="7.0.0")

    PROPERTIES = (
        SECURITY_GROUP, DESCRIPTION, DIRECTION, ETHERTYPE, PORT_RANGE_MIN, PORT_RANGE_MAX,
        PROTOCOL, REMOTE_GROUP, REMOTE_IP_PREFIX,
    ) = (
        "security_group", "description", "direction", "ethertype", "port_range_min", "port_range_max",
        "protocol", "remote_group", "remote_ip_prefix",
    )

    properties_schema = {
        SECURITY_GROUP: properties.Schema(
            properties.Schema.STRING,
            "Security group name or ID to add rule.",
            required=True,
            constraints=[constraints.CustomConstraint("neutron.security_group")],
        ),
        DESCRIPTION: properties.Schema(properties.Schema.STRING, "Description of the security group rule."),
        DIRECTION: RULE_DIRECTION_SCHEMA,
        ETHERTYPE: RULE_ETHERTYPE_SCHEMA,
        PORT_RANGE_MIN: RULE_PORT_RANGE_MIN_SCHEMA,
        PORT_RANGE_MAX: properties.Schema(
            properties.Schema.INTEGER,
            "The maximum port number in the range that is matched by the security group "
            "rule. The port_range_min attribute constrains the port_range_max attribute. If "
            "the protocol is ICMP, this value must be an ICMP code.",
            constraints=[constraints.Range(0, 65535)],
        ),
        PROTOCOL: properties.Schema(
            properties.Schema.STRING,
            SECURITY_GROUP_PROTOCOL_DESCRIPTION,
            default="tcp",
            constraints=[ProtocolValues(ALLOWED_SECURITY_GROUP_PROTOCOLS)],
        ),
        REMOTE_GROUP: properties.Schema(
            properties.Schema.STRING,
            "The remote group name or ID to be associated with this security group rule.",
            constraints=[constraints.CustomConstraint("neutron.security_group")],
        ),
        REMOTE_IP_PREFIX: properties.Schema(
            properties.Schema.STRING,
            "The remote IP prefix (CIDR) to be associated with this security group rule.",
            constraints=[constraints.CustomConstraint("net_cidr")],
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [key],
                client_plugin="neutron", finder="find_resourceid_by_name_or_id", entity="security_group",
            )
            for key in (self.SECURITY_GROUP, self.REMOTE_GROUP)
        ]

    def validate(self) -> None:
        super().validate()
        where = f"resources.{self.name}.properties"
        if self.given(self.REMOTE_GROUP) is not None and self.given(self.REMOTE_IP_PREFIX) is not None:
            raise ValidationError(
                "Cannot define the following properties at the same time: remote_group, remote_ip_prefix", path=where
            )
        port_max, port_min = self.given(self.PORT_RANGE_MAX), self.given(self.PORT_RANGE_MIN)
        protocol = self.given(self.PROTOCOL)
        if (
            port_max is not None
            and port_min is not None
            and protocol not in ("icmp", "icmpv6", "ipv6-icmp")
            and port_max < port_min
        ):
            raise ValidationError(
                "The minimum port number must be less than or equal to the maximum port number.",
                path=f"{where}.port_range_min",
            )

    def handle_create(self) -> None:
        body = self.prepare_properties()
        body["security_group_id"] = body.pop(self.SECURITY_GROUP)
        if self.REMOTE_GROUP in body:
            body["remote_group_id"] = body.pop(self.REMOTE_GROUP)
        if body.get(self.PROTOCOL) is not None:
            body[self.PROTOCOL] = str(body[self.PROTOCOL])
        self.created(self.client().create_security_group_rule(**body))

    def handle_delete(self) -> Any:
        if self.resource_id is None:
            return None
        self.client().delete_security_group_rule(self.resource_id, ignore_missing=True)
        return None


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::SecurityGroupRule": SecurityGroupRule}
