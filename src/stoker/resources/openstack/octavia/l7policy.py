"""OS::Octavia::L7Policy, as Heat has it.

Owns: the policy's schema, the request Heat makes (``listener_id``, ``redirect_pool_id``),
Heat's rules on which redirect goes with which action, and update in place of everything
but the listener. Waits, retries, delete and check are ``OctaviaBase``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.octavia.octavia_base import OctaviaBase
from stoker.sdk import attributes, constraints, properties, translation
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource

__all__ = ["L7Policy", "resource_mapping"]


class L7Policy(OctaviaBase):
    """A resource for managing octavia L7Policies.

    This resource manages L7Policies, which represent a collection of L7Rules.
    L7Policy holds the action that should be performed when the rules are
    matched (Redirect to Pool, Redirect to URL, Reject). L7Policy holds a
    Listener id, so a Listener can evaluate a collection of L7Policies.
    L7Policy will return True when all of the L7Rules that belong
    to this L7Policy are matched. L7Policies under a specific Listener are
    ordered and the first l7Policy that returns a match will be executed.
    When none of the policies match the request gets forwarded to
    listener.default_pool_id.
    """

    sdk_name, sdk_plural, noun = "l7_policy", "l7_policies", "L7 policy"

    PROPERTIES = (
        NAME, DESCRIPTION, ADMIN_STATE_UP, ACTION, REDIRECT_POOL, REDIRECT_URL, POSITION, LISTENER,
    ) = (
        "name", "description", "admin_state_up", "action", "redirect_pool", "redirect_url", "position", "listener",
    )  # fmt: skip

    L7ACTIONS = (REJECT, REDIRECT_TO_POOL, REDIRECT_TO_URL) = (
        "REJECT",
        "REDIRECT_TO_POOL",
        "REDIRECT_TO_URL",
    )

    ATTRIBUTES = (RULES_ATTR,) = ("rules",)

    FIELDS = {LISTENER: "listener_id", REDIRECT_POOL: "redirect_pool_id"}

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of the policy.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description of the policy.", update_allowed=True
        ),
        ADMIN_STATE_UP: properties.Schema(
            properties.Schema.BOOLEAN,
            "The administrative state of the policy.",
            default=True,
            update_allowed=True,
        ),
        ACTION: properties.Schema(
            properties.Schema.STRING,
            "Action type of the policy.",
            required=True,
            constraints=[constraints.AllowedValues(list(L7ACTIONS))],
            update_allowed=True,
        ),
        REDIRECT_POOL: properties.Schema(
            properties.Schema.STRING,
            "ID or name of the pool for REDIRECT_TO_POOL action type.",
            constraints=[constraints.CustomConstraint("octavia.pool")],
            update_allowed=True,
        ),
        REDIRECT_URL: properties.Schema(
            properties.Schema.STRING,
            "URL for REDIRECT_TO_URL action type. This should be a valid URL string.",
            update_allowed=True,
        ),
        POSITION: properties.Schema(
            properties.Schema.NUMBER,
            "L7 policy position in ordered policies list. This must be an integer starting from 1. "
            "If not specified, policy will be placed at the tail of existing policies list.",
            constraints=[constraints.Range(min=1)],
            update_allowed=True,
        ),
        LISTENER: properties.Schema(
            properties.Schema.STRING,
            "ID or name of the listener this policy belongs to.",
            required=True,
            constraints=[constraints.CustomConstraint("octavia.listener")],
        ),
    }

    attributes_schema = {
        RULES_ATTR: attributes.Schema(
            "L7Rules associated with this policy.", type=attributes.Schema.LIST
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.LISTENER], client_plugin="octavia", finder="get_listener"
            ),
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.REDIRECT_POOL],
                client_plugin="octavia", finder="get_pool",
            ),
        ]  # fmt: skip

    def validate(self) -> None:
        super().validate()
        action = self.properties[self.ACTION]
        pool, url = self.given(self.REDIRECT_POOL), self.given(self.REDIRECT_URL)
        if action == self.REJECT and (pool is not None or url is not None):
            raise ValidationError(
                "Properties redirect_pool and redirect_url are not required when action type is set to REJECT.",
                path=self.place(self.REDIRECT_POOL if pool is not None else self.REDIRECT_URL),
                hint="a policy that rejects redirects nowhere: leave both out",
            )
        for wanted, needed, other in (
            (self.REDIRECT_TO_POOL, self.REDIRECT_POOL, self.REDIRECT_URL),
            (self.REDIRECT_TO_URL, self.REDIRECT_URL, self.REDIRECT_POOL),
        ):
            if action != wanted:
                continue
            if self.given(other) is not None:
                allowed = (
                    self.REDIRECT_TO_URL if other == self.REDIRECT_URL else self.REDIRECT_TO_POOL
                )
                raise ValidationError(
                    f"{other} property should only be specified for action with value {allowed}.",
                    path=self.place(other),
                    hint=f"leave {other} out of a {wanted} policy",
                )
            if self.given(needed) is None:
                raise ValidationError(
                    f"Property {needed} is required when action type is set to {wanted}.",
                    path=self.place(needed),
                    hint=f"give {needed}",
                )

    def create_arguments(self) -> dict[str, Any]:
        arguments = super().create_arguments()
        if "position" in arguments:
            arguments["position"] = int(arguments["position"])
        return arguments

    def update_arguments(self, prop_diff: Mapping[str, Any]) -> dict[str, Any]:
        changes = super().update_arguments(prop_diff)
        if changes.get("position") is not None:
            changes["position"] = int(changes["position"])
        return changes


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Octavia::L7Policy": L7Policy}
