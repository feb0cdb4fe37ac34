"""OS::Octavia::L7Rule, as Heat has it.

Owns: the rule's schema, the request Heat makes (under its policy), Heat's rule that
HEADER and COOKIE rules need a key, and update in place of everything but the policy.
A rule has no name: the object an interrupted create made is the policy's rule with the
same type, comparison, key, value and inversion. Waits, retries, delete and check are
``OctaviaBase``'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from stoker.resources.openstack.octavia.octavia_base import OctaviaBase
from stoker.sdk import constraints, properties, translation
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource

__all__ = ["L7Rule", "resource_mapping"]


class L7Rule(OctaviaBase):
    """A resource for managing octavia L7Rules.

    This resource manages L7Rules, which represent a set of attributes
    that defines which part of the request should be matched and how
    it should be matched.
    """

    sdk_name, noun, named = "l7_rule", "L7 rule", False

    PROPERTIES = (ADMIN_STATE_UP, L7POLICY, TYPE, COMPARE_TYPE, INVERT, KEY, VALUE) = (
        "admin_state_up", "l7policy", "type", "compare_type", "invert", "key", "value",
    )  # fmt: skip

    L7RULE_TYPES = (HOST_NAME, PATH, FILE_TYPE, HEADER, COOKIE) = (
        "HOST_NAME",
        "PATH",
        "FILE_TYPE",
        "HEADER",
        "COOKIE",
    )
    L7COMPARE_TYPES = ("REGEX", "STARTS_WITH", "ENDS_WITH", "CONTAINS", "EQUAL_TO")

    NOT_SENT = (L7POLICY,)

    properties_schema = {
        ADMIN_STATE_UP: properties.Schema(
            properties.Schema.BOOLEAN,
            "The administrative state of the rule.",
            default=True,
            update_allowed=True,
        ),
        L7POLICY: properties.Schema(
            properties.Schema.STRING,
            "ID or name of L7 policy this rule belongs to.",
            constraints=[constraints.CustomConstraint("octavia.l7policy")],
            required=True,
        ),
        TYPE: properties.Schema(
            properties.Schema.STRING,
            "Rule type.",
            constraints=[constraints.AllowedValues(list(L7RULE_TYPES))],
            update_allowed=True,
            required=True,
        ),
        COMPARE_TYPE: properties.Schema(
            properties.Schema.STRING,
            "Rule compare type.",
            constraints=[constraints.AllowedValues(list(L7COMPARE_TYPES))],
            update_allowed=True,
            required=True,
        ),
        INVERT: properties.Schema(
            properties.Schema.BOOLEAN,
            "Invert the compare type.",
            default=False,
            update_allowed=True,
        ),
        KEY: properties.Schema(
            properties.Schema.STRING,
            "Key to compare. Relevant for HEADER and COOKIE types only.",
            update_allowed=True,
        ),
        VALUE: properties.Schema(
            properties.Schema.STRING, "Value to compare.", update_allowed=True, required=True
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props,
                translation.TranslationRule.RESOLVE,
                [self.L7POLICY],
                client_plugin="octavia",
                finder="get_l7policy",
            ),
        ]

    def validate(self) -> None:
        super().validate()
        if (
            self.properties[self.TYPE] in (self.HEADER, self.COOKIE)
            and self.given(self.KEY) is None
        ):
            raise ValidationError(
                "Property key is missing. This property should be specified for rules of HEADER and COOKIE types.",
                path=self.place(self.KEY),
                hint="name the header or cookie to compare",
            )

    def parent(self) -> tuple[Any, ...]:
        return (self.properties[self.L7POLICY],)

    def _update(self, changes: Mapping[str, Any]) -> Any:
        # openstacksdk's update takes the object as ``value``: the rule's value goes by
        # its attribute name instead.
        fields = {
            ("rule_value" if key == self.VALUE else key): value for key, value in changes.items()
        }
        return super()._update(fields)

    def candidates(self) -> Iterable[Any]:
        return self.client().l7_rules(self.properties[self.L7POLICY])

    def is_mine(self, candidate: Any) -> bool:
        live = candidate.to_dict(original_names=True, headers=False, computed=False)
        wanted = self.fields(self.properties.resolved())
        return all(
            live.get(key) == value for key, value in wanted.items() if key != "admin_state_up"
        )


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Octavia::L7Rule": L7Rule}
