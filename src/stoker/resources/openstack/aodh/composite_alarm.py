"""OS::Aodh::CompositeAlarm, as Heat has it: several threshold or Gnocchi rules combined
by ``and``/``or`` (nested combinations allowed), given as ``composite_rule``
``{operator, rules}`` and sent to Aodh as ``{<operator>: rules}``.

Owns: that reshaping. The lifecycle is ``BaseAlarm``'s. An update sends the whole alarm as
the new properties make it (Heat sends only the changed properties, and with them empty
action lists for the actions not changed, which clears them: not copied).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.aodh.alarm_base import BaseAlarm, common_properties_schema
from stoker.sdk import constraints, properties, support
from stoker.sdk.resource import Resource

__all__ = ["CompositeAlarm", "resource_mapping"]


class CompositeAlarm(BaseAlarm):
    """A resource that implements Aodh composite alarm.

    Allows to specify multiple rules when creating a composite alarm, and the rules
    combined with logical operators: and, or.
    """

    alarm_type = "composite"
    support_status = support.SupportStatus(version="8.0.0")

    PROPERTIES = (COMPOSITE_RULE, COMPOSITE_OPERATOR, RULES) = (
        "composite_rule",
        "operator",
        "rules",
    )

    composite_rule_schema = {
        COMPOSITE_OPERATOR: properties.Schema(
            properties.Schema.STRING,
            "The operator indicates how to combine the rules.",
            required=True,
            update_allowed=True,
            constraints=[constraints.AllowedValues(["or", "and"])],
        ),
        RULES: properties.Schema(
            properties.Schema.LIST,
            "Rules list. Basic threshold/gnocchi rules and nested dict which combine "
            'threshold/gnocchi rules by "and" or "or" are allowed. For example, the form is '
            'like: [RULE1, RULE2, {"and": [RULE3, RULE4]}], the basic threshold/gnocchi rules '
            'must include a "type" field.',
            required=True,
            update_allowed=True,
            constraints=[constraints.Length(min=2)],
        ),
    }

    properties_schema = {
        COMPOSITE_RULE: properties.Schema(
            properties.Schema.MAP,
            "Composite threshold rules in JSON format.",
            required=True,
            update_allowed=True,
            schema=composite_rule_schema,
        ),
        **common_properties_schema,
    }

    def get_alarm_props(self, given: Mapping[str, Any]) -> dict[str, Any]:
        alarm = self.actions_to_urls(given)
        alarm["type"] = self.alarm_type
        rule = alarm.get(self.COMPOSITE_RULE)
        if rule:
            alarm[self.COMPOSITE_RULE] = {rule[self.COMPOSITE_OPERATOR]: list(rule[self.RULES])}
        return alarm


    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        """The default, the rule as the template gives it: Aodh's ``{<operator>: rules}``
        (at the top; nested ones stay as Aodh and the template both write them) as
        ``{operator, rules}``."""
        live = super().parse_live_resource_data(resource_properties, resource_data)
        rule = live.get(self.COMPOSITE_RULE)
        if isinstance(rule, Mapping) and len(rule) == 1 and self.COMPOSITE_OPERATOR not in rule:
            ((operator, rules),) = rule.items()
            live[self.COMPOSITE_RULE] = {self.COMPOSITE_OPERATOR: operator, self.RULES: rules}
        return live


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Aodh::CompositeAlarm": CompositeAlarm}
