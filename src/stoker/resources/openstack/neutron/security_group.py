"""OS::Neutron::SecurityGroup."""

from __future__ import annotations

from collections.abc import Mapping
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
from stoker.sdk import constraints, properties, support
from stoker.sdk.exceptions import ValidationError


class SecurityGroup(NeutronResource):
    """A resource for managing Neutron security groups.

    Security groups are sets of IP filter rules that are applied to an instance's
    networking. They are project specific, and project members can edit the default
    rules for their group and add new rules sets. All projects have a "default" security
    group, which is applied to instances that have no other security group defined.
    """

    entity = "security_group"
    support_status = support.SupportStatus(version="2014.1")

    PROPERTIES = (NAME, DESCRIPTION, RULES, STATEFUL) = ("name", "description", "rules", "stateful")
    RULE_KEYS = (
        RULE_DIRECTION, RULE_ETHERTYPE, RULE_PORT_RANGE_MIN, RULE_PORT_RANGE_MAX, RULE_PROTOCOL,
        RULE_REMOTE_MODE, RULE_REMOTE_GROUP_ID, RULE_REMOTE_IP_PREFIX, RULE_DESCRIPTION,
    ) = (
        "direction", "ethertype", "port_range_min", "port_range_max", "protocol",
        "remote_mode", "remote_group_id", "remote_ip_prefix", "description",
    )

    _rule_schema = {
        RULE_DIRECTION: RULE_DIRECTION_SCHEMA,
        RULE_ETHERTYPE: RULE_ETHERTYPE_SCHEMA,
        RULE_PORT_RANGE_MIN: RULE_PORT_RANGE_MIN_SCHEMA,
        RULE_PORT_RANGE_MAX: properties.Schema(
            properties.Schema.INTEGER,
            "The maximum port number in the range that is matched by the security group "
            "rule. The port_range_min attribute constrains the port_range_max attribute. If "
            "the protocol is ICMP, this value must be an ICMP type.",
            constraints=[constraints.Range(0, 65535)],
        ),
        RULE_PROTOCOL: properties.Schema(
            properties.Schema.STRING,
            SECURITY_GROUP_PROTOCOL_DESCRIPTION + " If not specified, all protocols will be matched.",
            constraints=[ProtocolValues(ALLOWED_SECURITY_GROUP_PROTOCOLS)],
        ),
        RULE_REMOTE_MODE: properties.Schema(
            properties.Schema.STRING,
            "Whether to specify a remote group or a remote IP prefix.",
            default="remote_ip_prefix",
            constraints=[constraints.AllowedValues(["remote_ip_prefix", "remote_group_id"])],
        ),
        RULE_REMOTE_GROUP_ID: properties.Schema(
            properties.Schema.STRING,
            "The remote group ID to be associated with this security group rule. If no value "
            "is specified then this rule will use this security group for the remote_group_id. "
            'The remote mode parameter must be set to "remote_group_id".',
            constraints=[constraints.CustomConstraint("neutron.security_group")],
        ),
        RULE_REMOTE_IP_PREFIX: properties.Schema(
            properties.Schema.STRING,
            "The remote IP prefix (CIDR) to be associated with this security group rule.",
            constraints=[constraints.CustomConstraint("net_cidr")],
        ),
        RULE_DESCRIPTION: properties.Schema(
            properties.Schema.STRING,
            "Description of the security group rule.",
            support_status=support.SupportStatus(version="27.0.0"),
        ),
    }

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING,
            "A string specifying a symbolic name for the security group, which is not required to be unique.",
            update_allowed=True,
        ),
        DESCRIPTION: properties.Schema(properties.Schema.STRING, "Description of the security group.", update_allowed=True),
        RULES: properties.Schema(
            properties.Schema.LIST,
            "List of security group rules.",
            default=[],
            schema=properties.Schema(properties.Schema.MAP, schema=_rule_schema),
            update_allowed=True,
        ),
        STATEFUL: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether the security group is stateful or stateless. Requires the "
            "stateful-security-group extension.",
            update_allowed=True,
            support_status=support.SupportStatus(version="27.0.0"),
        ),
    }

    default_egress_rules = [{"direction": "egress", "ethertype": "IPv4"}, {"direction": "egress", "ethertype": "IPv6"}]

    _COMPARABLE_RULE_KEYS = (
        "direction", "ethertype", "protocol", "port_range_min", "port_range_max",
        "remote_group_id", "remote_ip_prefix", "security_group_id",
    )

    @classmethod
    def _rule_key(cls, rule: Mapping[str, Any]) -> tuple[str | None, ...]:
        return tuple(str(rule.get(key)) if rule.get(key) is not None else None for key in cls._COMPARABLE_RULE_KEYS)

    def validate(self) -> None:
        super().validate()
        if self.given(self.NAME) == "default":
            raise ValidationError(
                'Security groups cannot be assigned the name "default".',
                path=f"resources.{self.name}.properties.name",
                hint="every project already has a security group named default; choose another name",
            )

    def _format_rule(self, rule: Mapping[str, Any]) -> dict[str, Any]:
        body = {key: value for key, value in rule.items() if value is not None or key in (self.RULE_REMOTE_MODE,)}
        body["security_group_id"] = self.resource_id
        remote_mode = body.pop(self.RULE_REMOTE_MODE, None)
        if remote_mode == self.RULE_REMOTE_GROUP_ID:
            body.pop(self.RULE_REMOTE_IP_PREFIX, None)
            body.setdefault(self.RULE_REMOTE_GROUP_ID, self.resource_id)
        else:
            body.pop(self.RULE_REMOTE_GROUP_ID, None)
        if body.get(self.RULE_PROTOCOL) is not None:
            body[self.RULE_PROTOCOL] = str(body[self.RULE_PROTOCOL])
        return body

    def handle_create(self) -> None:
        body = self.prepare_properties()
        rules = body.pop(self.RULES, None) or []
        if body.get(self.STATEFUL) is None or not self.client_plugin().has_extension("stateful-security-group"):
            body.pop(self.STATEFUL, None)
        group = self.client().create_security_group(**body)
        self.created(group)
        if rules:
            if any(rule.get(self.RULE_DIRECTION) == "egress" for rule in rules):
                self._delete_rules(lambda rule: rule.get("direction") == "egress")
            list(self.client().create_security_group_rules([self._format_rule(rule) for rule in rules]))

    def _current_rules(self) -> list[dict[str, Any]]:
        group = self.client().get_security_group(self.resource_id)
        return [dict(rule) for rule in group.security_group_rules or []]

    def _delete_rules(self, wanted: Any = None) -> None:
        try:
            rules = self._current_rules()
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
            return
        for rule in rules:
            if wanted is None or wanted(rule):
                self.client().delete_security_group_rule(rule["id"], ignore_missing=True)

    def handle_delete(self) -> Any:
        # Neutron deletes a group's rules with the group: no need to list and delete them
        # one by one first (Heat does, at a GET and a DELETE per rule).
        if self.resource_id is None:
            return None
        self.client().delete_security_group(self.resource_id, ignore_missing=True)
        return None

    def _update_rules(self, rules: list[Mapping[str, Any]] | None) -> None:
        desired_rules = list(rules or [])
        if not any(rule.get(self.RULE_DIRECTION) == "egress" for rule in desired_rules):
            desired_rules.extend(self.default_egress_rules)
        desired = [(self._rule_key(rule), rule) for rule in map(self._format_rule, desired_rules)]
        desired_keys = {key for key, _ in desired}
        current = [(self._rule_key(rule), rule) for rule in self._current_rules()]
        current_keys = {key for key, _ in current}
        for key, rule in current:
            if key not in desired_keys:
                self.client().delete_security_group_rule(rule["id"], ignore_missing=True)
        missing = [rule for key, rule in desired if key not in current_keys]
        if missing:
            list(self.client().create_security_group_rules(missing))

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> None:
        changes = dict(prop_diff)
        rules_changed = self.RULES in changes
        rules = changes.pop(self.RULES, None)
        self.prepare_update_properties(changes)
        if changes:
            self.client().update_security_group(self.resource_id, **changes)
        if rules_changed:
            self._update_rules(rules)


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::SecurityGroup": SecurityGroup}
