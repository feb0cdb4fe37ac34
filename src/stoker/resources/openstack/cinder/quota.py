"""OS::Cinder::Quota, as Heat has it.

Owns: the block-storage limits of one project: checked against what the project already
uses (Heat refuses a limit below the current usage, naming both), set on create and
update, reverted to the defaults on delete. Cinder's default policy lets administrators
only set quotas.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack import quotas
from stoker.sdk import properties, support, translation
from stoker.sdk.exceptions import ResourceFailure
from stoker.sdk.resource import Resource

__all__ = ["CinderQuota", "resource_mapping"]


class CinderQuota(Resource):
    """A resource for creating cinder quotas.

    Cinder Quota is used to manage operational limits for projects. Currently, this
    resource can manage Cinder's gigabytes, snapshots, and volumes quotas.

    Note that default cinder security policy usage of this resource is limited to being
    used by administrators only. Administrators should be careful to create only one Cinder
    Quota resource per project, otherwise it will be hard for them to manage the quota
    properly.
    """

    support_status = support.SupportStatus(version="7.0.0")
    default_client_name = "cinder"
    entity = "quota_set"

    PROPERTIES = (PROJECT, GIGABYTES, VOLUMES, BACKUPS, BACKUPS_GIGABYTES, SNAPSHOTS) = (
        "project",
        "gigabytes",
        "volumes",
        "backups",
        "backup_gigabytes",
        "snapshots",
    )

    properties_schema = {
        PROJECT: quotas.project_schema("OpenStack Keystone Project."),
        GIGABYTES: quotas.limit_schema("Quota for the amount of disk space (in Gigabytes)."),
        VOLUMES: quotas.limit_schema("Quota for the number of volumes."),
        BACKUPS: quotas.limit_schema(
            "Quota for the number of backups.",
            support_status=support.SupportStatus(version="16.0.0"),
        ),
        BACKUPS_GIGABYTES: quotas.limit_schema(
            "Quota for the amount of backups disk space (in Gigabytes).",
            support_status=support.SupportStatus(version="16.0.0"),
        ),
        SNAPSHOTS: quotas.limit_schema("Quota for the number of snapshots."),
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
            [self.GIGABYTES, self.SNAPSHOTS, self.VOLUMES, self.BACKUPS, self.BACKUPS_GIGABYTES],
        )

    def _usage(self, project: str) -> dict[str, int]:
        """What ``project`` uses now, per limit (every project's objects: admin only)."""
        client = self.client()
        query = {"all_projects": True, "project_id": project}
        volumes = list(client.volumes(details=True, **query))
        snapshots = list(client.snapshots(details=True, **query))
        backups = list(client.backups(details=True, **query))
        return {
            self.GIGABYTES: sum(int(item.size or 0) for item in volumes + snapshots),
            self.VOLUMES: len(volumes),
            self.SNAPSHOTS: len(snapshots),
            self.BACKUPS: len(backups),
            self.BACKUPS_GIGABYTES: sum(int(item.size or 0) for item in backups),
        }

    def _set_quota(self, values: Mapping[str, Any]) -> None:
        project = values[self.PROJECT]
        limits = quotas.given_limits(values, self.PROJECT)
        bounded = {key: value for key, value in limits.items() if value != -1}
        if bounded:
            usage = self._usage(project)
            for key, value in bounded.items():
                if value < usage[key]:
                    raise ResourceFailure(
                        f"Invalid quota {key} value(s): {value}. Can not be less than the current usage "
                        f"value(s): {usage[key]}."
                    )
        self.client().update_quota_set(project, **limits)

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
        """The project's quota set (the physical id is a name of the stack's, Heat's)."""
        if self.resource_id is None:
            return None
        answer = self.client_plugin().rest("GET", f"/os-quota-sets/{self.properties[self.PROJECT]}")
        return dict(answer.json()["quota_set"])


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Cinder::Quota": CinderQuota}
