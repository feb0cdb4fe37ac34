"""OS::Neutron::Quota, as Heat has it.

Owns: the networking limits of one project (Neutron's own names: ``network``,
``floatingip``...), set on create and update, reverted to the defaults on delete (by the
project: Heat deletes the quota of its resource's id, which names no project). Neutron's
default policy lets administrators only set quotas.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack import quotas
from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import properties, support, translation

__all__ = ["NeutronQuota", "resource_mapping"]


class NeutronQuota(NeutronResource):
    """A resource for managing neutron quotas.

    Neutron Quota is used to manage operational limits for projects. Currently, this
    resource can manage Neutron's quotas for: subnet, network, floatingip,
    security_group_rule, security_group, router, port, subnetpool, rbac_policy.

    Note that default neutron security policy usage of this resource is limited to being
    used by administrators only. Administrators should be careful to create only one Neutron
    Quota resource per project, otherwise it will be hard for them to manage the quota
    properly.
    """

    support_status = support.SupportStatus(version="8.0.0")
    entity = "quota"

    PROPERTIES = (
        PROJECT, SUBNET, NETWORK, FLOATINGIP, SECURITY_GROUP_RULE, SECURITY_GROUP, ROUTER, PORT, SUBNETPOOL,
        RBAC_POLICY,
    ) = (
        "project", "subnet", "network", "floatingip", "security_group_rule", "security_group", "router", "port",
        "subnetpool", "rbac_policy",
    )  # fmt: skip

    properties_schema = {
        PROJECT: quotas.project_schema("Name or id of the project to set the quota for."),
        SUBNET: quotas.limit_schema("Quota for the number of subnets."),
        NETWORK: quotas.limit_schema("Quota for the number of networks."),
        FLOATINGIP: quotas.limit_schema("Quota for the number of floating IPs."),
        SECURITY_GROUP_RULE: quotas.limit_schema("Quota for the number of security group rules."),
        SECURITY_GROUP: quotas.limit_schema("Quota for the number of security groups."),
        ROUTER: quotas.limit_schema("Quota for the number of routers."),
        PORT: quotas.limit_schema("Quota for the number of ports."),
        SUBNETPOOL: quotas.limit_schema(
            "Quota for the number of subnet pools.",
            support_status=support.SupportStatus(version="12.0.0"),
        ),
        RBAC_POLICY: quotas.limit_schema(
            "Quota for the number of rbac policies.",
            support_status=support.SupportStatus(version="12.0.0"),
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.PROJECT], client_plugin="keystone",
                finder="get_project_id",
            )
        ]  # fmt: skip

    def validate(self) -> None:
        super().validate()
        quotas.require_a_limit(
            self.name,
            self.properties.resolved(),
            self.PROJECT,
            sorted(set(self.PROPERTIES) - {self.PROJECT}),
        )

    def _set_quota(self, values: Mapping[str, Any]) -> None:
        limits = quotas.given_limits(values, self.PROJECT)
        self.client_plugin().rest("PUT", f"/quotas/{values[self.PROJECT]}", json={"quota": limits})

    def handle_create(self) -> None:
        self._set_quota(self.properties.resolved())
        self.resource_id_set(self.physical_resource_name())

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        values = self.properties.resolved()
        values.update(prop_diff)
        self._set_quota(values)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            self.client().delete_quota(self.properties[self.PROJECT])
        except Exception as error:  # noqa: BLE001 - openstacksdk's types: the project is gone
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client().get_quota(self.properties[self.PROJECT])

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return (
            self.client_plugin()
            .rest("GET", f"/quotas/{self.properties[self.PROJECT]}")
            .json()["quota"]
        )

    def find_created(self) -> str | None:
        return None


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::Quota": NeutronQuota}
