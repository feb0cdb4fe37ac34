"""OS::Octavia::Quota, as Heat has it.

Owns: setting a project's load-balancing quotas (its physical id is the physical resource
name, as in Heat), setting them again on update, and resetting them to the defaults on
delete; Heat's rule that at least one quota is given. Octavia's default policy lets
administrators only manage quotas.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import constraints, properties, support, translation
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource

__all__ = ["OctaviaQuota", "resource_mapping"]


def _limit(description: str) -> properties.Schema:
    return properties.Schema(
        properties.Schema.INTEGER,
        f"{description} Setting the value to -1 removes the limit.",
        constraints=[constraints.Range(min=-1)],
        update_allowed=True,
    )


class OctaviaQuota(Resource):
    """A resource for creating Octavia quotas.

    Ocatavia Quota is used to manage operational limits for Octavia. Currently,
    this resource can manage Octavia's quotas for:

        - healthmonitor
        - listener
        - loadbalancer
        - pool
        - member

    Note that default octavia security policy usage of this resource
    is limited to being used by administrators only. Administrators should be
    careful to create only one Octavia Quota resource per project, otherwise
    it will be hard for them to manage the quota properly.
    """

    support_status = support.SupportStatus(version="14.0.0")
    default_client_name = "octavia"
    entity = "quotas"

    PROPERTIES = (PROJECT, HEALTHMONITOR, LISTENER, LOADBALANCER, POOL, MEMBER) = (
        "project", "healthmonitor", "listener", "loadbalancer", "pool", "member",
    )  # fmt: skip

    # Heat's quota names -> openstacksdk's (Octavia's load_balancer, health_monitor...).
    SDK_NAMES = {
        HEALTHMONITOR: "health_monitors", LISTENER: "listeners", LOADBALANCER: "load_balancers",
        POOL: "pools", MEMBER: "members",
    }  # fmt: skip

    properties_schema = {
        PROJECT: properties.Schema(
            properties.Schema.STRING,
            "Name or id of the project to set the quota for.",
            required=True,
            constraints=[constraints.CustomConstraint("keystone.project")],
        ),
        HEALTHMONITOR: _limit("Quota for the number of healthmonitors."),
        LISTENER: _limit("Quota for the number of listeners."),
        LOADBALANCER: _limit("Quota for the number of load balancers."),
        POOL: _limit("Quota for the number of pools."),
        MEMBER: _limit("Quota for the number of m."),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props,
                translation.TranslationRule.RESOLVE,
                [self.PROJECT],
                client_plugin="keystone",
                finder="get_project_id",
            )
        ]

    def given(self, key: str) -> Any:
        return self.properties.resolved().get(key)

    def validate(self) -> None:
        super().validate()
        if all(self.given(key) is None for key in self.SDK_NAMES):
            raise ValidationError(
                "At least one of the following properties must be specified: "
                + ", ".join(sorted(self.SDK_NAMES))
                + ".",
                path=f"resources.{self.name}.properties",
                hint="give the quota (or -1 for no limit) of what the project may have",
            )

    def _set_quota(self, values: Mapping[str, Any]) -> None:
        limits = {
            self.SDK_NAMES[key]: value
            for key, value in values.items()
            if key in self.SDK_NAMES and value is not None
        }
        self.client().update_quota(values[self.PROJECT], **limits)

    def handle_create(self) -> None:
        self._set_quota(self.properties.resolved())
        self.resource_id_set(self.physical_resource_name())

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        # The whole quota set again, as Heat does: the project (never updated in place,
        # already resolved to its id) and every limit as it now is.
        self._set_quota({**self.properties.resolved(), **prop_diff})

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            self.client().delete_quota(self.properties[self.PROJECT], ignore_missing=False)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client().get_quota(self.properties[self.PROJECT])

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        found = self.client().get_quota(self.properties[self.PROJECT])
        return found.to_dict(original_names=True, headers=False, computed=False)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Octavia::Quota": OctaviaQuota}
