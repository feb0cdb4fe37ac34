"""OS::Manila::ShareType, as Heat has it.

Owns: creating a share type with its two required extra specs
(``driver_handles_share_servers``, ``snapshot_support``) and the template's extra specs,
updating the extra specs in place (any other change replaces the type), delete, check,
and finding a type an interrupted create made (by its name, which Manila keeps unique).
Manila's default policy lets administrators only manage share types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import properties, support
from stoker.sdk.resource import Resource

__all__ = ["ManilaShareType", "resource_mapping"]


class ManilaShareType(Resource):
    """A resource for creating manila share type.

    A share_type is an administrator-defined "type of service", comprised of a tenant
    visible description, and a list of non-tenant-visible key/value pairs (extra_specs)
    which the Manila scheduler uses to make scheduling decisions for shared filesystem
    tasks.

    Please note that share type is intended to use mostly by administrators. So it is very
    likely that Manila will prohibit creation of the resource without administration grants.
    """

    support_status = support.SupportStatus(version="5.0.0")
    default_client_name = "manila"
    entity = "share_types"

    PROPERTIES = (NAME, IS_PUBLIC, DRIVER_HANDLES_SHARE_SERVERS, EXTRA_SPECS, SNAPSHOT_SUPPORT) = (
        "name", "is_public", "driver_handles_share_servers", "extra_specs", "snapshot_support",
    )  # fmt: skip
    # The extra specs the type's own properties set: never removed by an update.
    REQUIRED_SPECS = (DRIVER_HANDLES_SHARE_SERVERS, SNAPSHOT_SUPPORT)

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "Name of the share type.", required=True),
        IS_PUBLIC: properties.Schema(
            properties.Schema.BOOLEAN,
            "Defines if share type is accessible to the public.",
            default=True,
        ),
        DRIVER_HANDLES_SHARE_SERVERS: properties.Schema(
            properties.Schema.BOOLEAN,
            "Required extra specification. Defines if share drivers handles share servers.",
            required=True,
        ),
        EXTRA_SPECS: properties.Schema(
            properties.Schema.MAP,
            "Extra specs key-value pairs defined for share type.",
            update_allowed=True,
        ),
        SNAPSHOT_SUPPORT: properties.Schema(
            properties.Schema.BOOLEAN,
            "Boolean extra spec that used for filtering of backends by their capability to create share snapshots.",
            support_status=support.SupportStatus(version="6.0.0"),
            default=True,
        ),
    }

    def extra_specs(self) -> dict[str, str]:
        """What the create sends: the template's extra specs, then the two the
        properties set (Manila takes extra spec values as strings)."""
        specs = {
            str(key): str(value) for key, value in (self.properties[self.EXTRA_SPECS] or {}).items()
        }
        specs[self.DRIVER_HANDLES_SHARE_SERVERS] = str(
            bool(self.properties[self.DRIVER_HANDLES_SHARE_SERVERS])
        )
        specs[self.SNAPSHOT_SUPPORT] = str(bool(self.properties[self.SNAPSHOT_SUPPORT]))
        return specs

    def handle_create(self) -> None:
        created = self.client().create_share_type(
            self.properties[self.NAME],
            extra_specs=self.extra_specs(),
            is_public=bool(self.properties[self.IS_PUBLIC]),
        )
        self.resource_id_set(created.id)

    def find_created(self) -> str | None:
        # Manila refuses a second type of one name: a type of this name is this resource's.
        name = self.properties[self.NAME]
        for found in self.client().share_types(is_public="all"):
            if found.name == name:
                return str(found.id)
        return None

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if self.EXTRA_SPECS not in prop_diff:
            return
        wanted = {
            str(key): str(value) for key, value in (prop_diff[self.EXTRA_SPECS] or {}).items()
        }
        current = self.client().get_share_type(self.resource_id).extra_specs or {}
        for key in sorted(current):
            if key not in wanted and key not in self.REQUIRED_SPECS:
                self.client().delete_share_type_extra_spec_property(
                    self.resource_id, key, ignore_missing=True
                )
        if wanted:
            self.client().update_share_type_extra_specs(self.resource_id, **wanted)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            self.client().delete_share_type(self.resource_id, ignore_missing=False)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client_plugin().read(lambda: self.client().get_share_type(self.resource_id))

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        found = self.client_plugin().read(lambda: self.client().get_share_type(self.resource_id))
        return found.to_dict(original_names=True, headers=False, computed=False)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Manila::ShareType": ManilaShareType}
