"""OS::Nova::Quota, as Heat has it.

Owns: the compute limits of one project: set on create and update (every limit given,
each update in place), the project's quotas reverted to the defaults on delete. Limits
Nova removed from its newer microversions (``fixed_ips``, ``floating_ips``,
``security_groups``, ``security_group_rules`` after 2.35; the ``injected_*`` ones after
2.56) are set at the newest microversion that still has them, as seed 004 asks. Nova's
default policy lets administrators only set quotas.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack import quotas
from stoker.sdk import properties, support, translation
from stoker.sdk.resource import Resource

__all__ = ["NovaQuota", "resource_mapping"]

_INJECTION_DEPRECATED = support.SupportStatus(
    status=support.DEPRECATED,
    version="14.0.0",
    message="File injection is deprecated from compute REST API OS::Nova::Quota resource will not support it in the future.",
)
# Limits and the last microversion of Nova's quota API that still has them.
_REMOVED_AFTER = {
    "fixed_ips": "2.35",
    "floating_ips": "2.35",
    "security_groups": "2.35",
    "security_group_rules": "2.35",
    "injected_files": "2.56",
    "injected_file_content_bytes": "2.56",
    "injected_file_path_bytes": "2.56",
}


class NovaQuota(Resource):
    """A resource for creating nova quotas.

    Nova Quota is used to manage operational limits for projects. Currently, this resource
    can manage Nova's quotas for: cores, fixed_ips, floating_ips, instances, injected_files,
    injected_file_content_bytes, injected_file_path_bytes, key_pairs, metadata_items, ram,
    security_groups, security_group_rules, server_groups, server_group_members.

    Note that default nova security policy usage of this resource is limited to being used
    by administrators only. Administrators should be careful to create only one Nova Quota
    resource per project, otherwise it will be hard for them to manage the quota properly.
    """

    support_status = support.SupportStatus(version="8.0.0")
    default_client_name = "nova"
    entity = "quota_set"

    PROPERTIES = (
        PROJECT,
        CORES,
        FIXED_IPS,
        FLOATING_IPS,
        INSTANCES,
        INJECTED_FILES,
        INJECTED_FILE_CONTENT_BYTES,
        INJECTED_FILE_PATH_BYTES,
        KEYPAIRS,
        METADATA_ITEMS,
        RAM,
        SECURITY_GROUPS,
        SECURITY_GROUP_RULES,
        SERVER_GROUPS,
        SERVER_GROUP_MEMBERS,
    ) = (
        "project",
        "cores",
        "fixed_ips",
        "floating_ips",
        "instances",
        "injected_files",
        "injected_file_content_bytes",
        "injected_file_path_bytes",
        "key_pairs",
        "metadata_items",
        "ram",
        "security_groups",
        "security_group_rules",
        "server_groups",
        "server_group_members",
    )

    properties_schema = {
        PROJECT: quotas.project_schema("Name or id of the project to set the quota for."),
        CORES: quotas.limit_schema("Quota for the number of cores."),
        FIXED_IPS: quotas.limit_schema("Quota for the number of fixed IPs."),
        FLOATING_IPS: quotas.limit_schema("Quota for the number of floating IPs."),
        INSTANCES: quotas.limit_schema("Quota for the number of instances."),
        INJECTED_FILES: quotas.limit_schema(
            "Quota for the number of injected files.", support_status=_INJECTION_DEPRECATED
        ),
        INJECTED_FILE_CONTENT_BYTES: quotas.limit_schema(
            "Quota for the number of injected file content bytes.",
            support_status=_INJECTION_DEPRECATED,
        ),
        INJECTED_FILE_PATH_BYTES: quotas.limit_schema(
            "Quota for the number of injected file path bytes.",
            support_status=_INJECTION_DEPRECATED,
        ),
        KEYPAIRS: quotas.limit_schema("Quota for the number of key pairs."),
        METADATA_ITEMS: quotas.limit_schema("Quota for the number of metadata items."),
        RAM: quotas.limit_schema("Quota for the amount of ram (in megabytes)."),
        SECURITY_GROUPS: quotas.limit_schema("Quota for the number of security groups."),
        SECURITY_GROUP_RULES: quotas.limit_schema("Quota for the number of security group rules."),
        SERVER_GROUPS: quotas.limit_schema("Quota for the number of server groups."),
        SERVER_GROUP_MEMBERS: quotas.limit_schema("Quota for the number of server group members."),
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

    def validate(self) -> None:
        super().validate()
        quotas.require_a_limit(
            self.name,
            self.properties.resolved(),
            self.PROJECT,
            sorted(set(self.PROPERTIES) - {self.PROJECT}),
        )

    def _microversion(self, limits: Mapping[str, int]) -> str:
        """The newest microversion (up to openstacksdk's 2.56 for quota sets) that still
        has every limit given; the cloud's newest when it offers nothing that old."""
        wanted = min(
            (_REMOVED_AFTER[key] for key in limits if key in _REMOVED_AFTER),
            default="2.56",
            key=lambda version: tuple(int(part) for part in version.split(".")),
        )
        return wanted if self.client_plugin().offers_version(wanted) else "latest"

    def _set_quota(self, values: Mapping[str, Any]) -> None:
        limits = quotas.given_limits(values, self.PROJECT)
        self.client_plugin().rest(
            "PUT",
            f"/os-quota-sets/{values[self.PROJECT]}",
            json={"quota_set": limits},
            microversion=self._microversion(limits),
        )

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
        try:
            self.client().revert_quota_set(self.properties[self.PROJECT])
        except Exception as error:  # noqa: BLE001 - openstacksdk's types: the project is gone
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client().get_quota_set(self.properties[self.PROJECT])

    def _show_resource(self) -> dict[str, Any] | None:
        """The project's quota set (the physical id is a name of the stack's, Heat's):
        read at the microversion the limits the template sets are still in."""
        if self.resource_id is None:
            return None
        limits = quotas.given_limits(self.properties.resolved(), self.PROJECT)
        answer = self.client_plugin().rest(
            "GET", f"/os-quota-sets/{self.properties[self.PROJECT]}", microversion=self._microversion(limits)
        )
        return dict(answer.json()["quota_set"])


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Nova::Quota": NovaQuota}
