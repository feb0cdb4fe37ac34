"""AWS::EC2::SecurityGroup, as Heat 27 has it: a Neutron security group whose ingress and
egress rules come from CFN's rule maps.

Owns: turning a CFN rule into Neutron's (a negative port means "any", a rule without ports
has no CIDR, the source group by id or name), creating the group (named by the physical
resource name, so a create cut short finds it), dropping Neutron's default egress rules
when the template gives egress rules, updating the rules in place (only the difference is
deleted and created), deletion ("already gone" is fine) and check.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stoker.sdk import properties
from stoker.sdk.resource import Resource

__all__ = ["SecurityGroup", "resource_mapping"]

RULE_KEYS = (
    RULE_CIDR_IP,
    RULE_FROM_PORT,
    RULE_TO_PORT,
    RULE_IP_PROTOCOL,
    RULE_SOURCE_SECURITY_GROUP_ID,
    RULE_SOURCE_SECURITY_GROUP_NAME,
    RULE_SOURCE_SECURITY_GROUP_OWNER_ID,
) = (
    "CidrIp",
    "FromPort",
    "ToPort",
    "IpProtocol",
    "SourceSecurityGroupId",
    "SourceSecurityGroupName",
    "SourceSecurityGroupOwnerId",
)
DIRECTION = "direction"

_RULE_SCHEMA = {
    RULE_CIDR_IP: properties.Schema(properties.Schema.STRING, "The CIDR the rule admits."),
    RULE_FROM_PORT: properties.Schema(
        properties.Schema.STRING, "The first port of the range (negative: any)."
    ),
    RULE_TO_PORT: properties.Schema(
        properties.Schema.STRING, "The last port of the range (negative: any)."
    ),
    RULE_IP_PROTOCOL: properties.Schema(
        properties.Schema.STRING, "The IP protocol (tcp, udp, icmp or a number)."
    ),
    RULE_SOURCE_SECURITY_GROUP_ID: properties.Schema(
        properties.Schema.STRING, "The id of the security group the rule admits."
    ),
    RULE_SOURCE_SECURITY_GROUP_NAME: properties.Schema(
        properties.Schema.STRING, "The name of the security group the rule admits."
    ),
    RULE_SOURCE_SECURITY_GROUP_OWNER_ID: properties.Schema(
        properties.Schema.STRING, "The owner of the source group.", implemented=False
    ),
}


def _port(value: Any) -> int | None:
    """Neutron only takes ports from 0: a negative one is "any"."""
    if value is None:
        return None
    port = int(value)
    return None if port < 0 else port


def rules_from_properties(
    rules: Sequence[Mapping[str, Any]] | None, direction: str
) -> list[dict[str, Any]]:
    """The template's rules of one direction in the common form (Heat's
    ``_prop_rules_to_common``)."""
    converted = []
    for given in rules or []:
        rule = {
            RULE_IP_PROTOCOL: given.get(RULE_IP_PROTOCOL),
            RULE_FROM_PORT: _port(given.get(RULE_FROM_PORT)),
            RULE_TO_PORT: _port(given.get(RULE_TO_PORT)),
            # A rule with no ports at all has no CIDR either (Heat's rule).
            RULE_CIDR_IP: None
            if given.get(RULE_FROM_PORT) is None and given.get(RULE_TO_PORT) is None
            else given.get(RULE_CIDR_IP),
            # Neutron understands both names and ids.
            RULE_SOURCE_SECURITY_GROUP_ID: given.get(RULE_SOURCE_SECURITY_GROUP_ID)
            or given.get(RULE_SOURCE_SECURITY_GROUP_NAME),
            DIRECTION: direction,
        }
        converted.append(rule)
    return converted


def rules_from_neutron(rules: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The live rules in the common form, by rule id (Heat's ``_res_rules_to_common``)."""
    return {
        rule["id"]: {
            RULE_FROM_PORT: rule.get("port_range_min"),
            RULE_TO_PORT: rule.get("port_range_max"),
            RULE_IP_PROTOCOL: rule.get("protocol"),
            DIRECTION: rule.get("direction"),
            RULE_CIDR_IP: rule.get("remote_ip_prefix"),
            RULE_SOURCE_SECURITY_GROUP_ID: rule.get("remote_group_id"),
        }
        for rule in rules
    }


class SecurityGroup(Resource):
    """A security group with CFN's ingress and egress rules, on Neutron."""

    default_client_name = "neutron"

    PROPERTIES = (GROUP_DESCRIPTION, VPC_ID, SECURITY_GROUP_INGRESS, SECURITY_GROUP_EGRESS) = (
        "GroupDescription",
        "VpcId",
        "SecurityGroupIngress",
        "SecurityGroupEgress",
    )

    properties_schema = {
        GROUP_DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description of the security group.", required=True
        ),
        VPC_ID: properties.Schema(
            properties.Schema.STRING, "Physical ID of the VPC. Not implemented."
        ),
        SECURITY_GROUP_INGRESS: properties.Schema(
            properties.Schema.LIST,
            "List of security group ingress rules.",
            schema=properties.Schema(
                properties.Schema.MAP, "List of security group ingress rules.", schema=_RULE_SCHEMA
            ),
            update_allowed=True,
        ),
        SECURITY_GROUP_EGRESS: properties.Schema(
            properties.Schema.LIST,
            "List of security group egress rules.",
            schema=properties.Schema(
                properties.Schema.MAP, "List of security group egress rules.", schema=_RULE_SCHEMA
            ),
            update_allowed=True,
        ),
    }

    def _neutron_rule(self, rule: Mapping[str, Any]) -> dict[str, Any]:
        request = {
            "direction": rule[DIRECTION],
            "ethertype": "IPv4",
            "remote_ip_prefix": rule.get(RULE_CIDR_IP),
            "port_range_min": rule.get(RULE_FROM_PORT),
            "port_range_max": rule.get(RULE_TO_PORT),
            "protocol": rule.get(RULE_IP_PROTOCOL),
            "remote_group_id": rule.get(RULE_SOURCE_SECURITY_GROUP_ID),
            "security_group_id": self.resource_id,
        }
        return {key: value for key, value in request.items() if value is not None}

    def _create_rule(self, rule: Mapping[str, Any]) -> None:
        try:
            self.client().create_security_group_rule(**self._neutron_rule(rule))
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            # A rule the group has already (a create resumed, a duplicate) is fine.
            if not self.client_plugin().is_conflict(error):
                raise

    def _delete_rule(self, rule_id: str) -> None:
        with self.client_plugin().ignore_not_found:
            self.client().delete_security_group_rule(rule_id)

    def _wanted_rules(self, values: Mapping[str, Any]) -> list[dict[str, Any]]:
        return rules_from_properties(
            values.get(self.SECURITY_GROUP_EGRESS), "egress"
        ) + rules_from_properties(values.get(self.SECURITY_GROUP_INGRESS), "ingress")

    def handle_create(self) -> str:
        group = self.client().create_security_group(
            name=self.physical_resource_name(), description=self.properties[self.GROUP_DESCRIPTION]
        )
        self.resource_id_set(group.id)
        if self.properties[self.SECURITY_GROUP_EGRESS]:
            # The template's egress rules replace Neutron's allow-all ones.
            for rule in group.security_group_rules or []:
                if rule["direction"] == "egress":
                    self._delete_rule(rule["id"])
        for rule in self._wanted_rules(self.properties):
            self._create_rule(rule)
        return str(group.id)

    def find_created(self) -> str | None:
        name = self.physical_resource_name()
        found = [group for group in self.client().security_groups(name=name) if group.name == name]
        return str(found[0].id) if len(found) == 1 else None

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if (
            self.SECURITY_GROUP_INGRESS not in prop_diff
            and self.SECURITY_GROUP_EGRESS not in prop_diff
        ):
            return
        after = {
            key: prop_diff.get(key, self.properties[key])
            for key in (self.SECURITY_GROUP_INGRESS, self.SECURITY_GROUP_EGRESS)
        }
        existing = rules_from_neutron(
            self.client().get_security_group(self.resource_id).security_group_rules or []
        )
        wanted = self._wanted_rules(after)
        for rule_id, rule in existing.items():
            if rule not in wanted:
                self._delete_rule(rule_id)
        for rule in wanted:
            if rule not in existing.values():
                self._create_rule(rule)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        plugin = self.client_plugin()
        try:
            group = self.client().get_security_group(self.resource_id)
        except Exception as error:  # noqa: BLE001
            plugin.ignore_not_found(error)
            return
        for rule in group.security_group_rules or []:
            self._delete_rule(rule["id"])
        with plugin.ignore_not_found:
            self.client().delete_security_group(self.resource_id)

    def handle_check(self) -> None:
        self.client().get_security_group(self.resource_id)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"AWS::EC2::SecurityGroup": SecurityGroup}
