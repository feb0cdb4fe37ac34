"""OS::Octavia::AvailabilityZoneProfile, as Heat 27 has it (Heat 24.0.0 added it).

Owns: creating an availability zone profile (a provider and its availability zone data, a
JSON string the provider validates), updating all of it in place, delete that tolerates
"already gone", check and ``show``. Octavia's default policy lets administrators only
manage availability zone profiles. Heat declares the ``availability_zone_profile_id``
attribute name without a schema, so the type has no attribute beyond the common ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import constraints, properties, support
from stoker.sdk.resource import Resource

__all__ = ["AvailabilityZoneProfile", "resource_mapping"]


class AvailabilityZoneProfile(Resource):
    """A resource for creating octavia Availability Zone Profiles.

    This resource creates and manages octavia Availability Zone Profiles,
    which allows to tune Load Balancers' capabilities.
    """

    default_client_name = "octavia"
    support_status = support.SupportStatus(version="24.0.0")

    PROPERTIES = (NAME, AVAILABILITY_ZONE_DATA, PROVIDER_NAME) = (
        "name",
        "availability_zone_data",
        "provider_name",
    )

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING,
            "Name of this Availability Zone Profile.",
            update_allowed=True,
        ),
        AVAILABILITY_ZONE_DATA: properties.Schema(
            properties.Schema.STRING,
            "JSON string containing the availability zone metadata.",
            update_allowed=True,
            required=True,
            constraints=[constraints.CustomConstraint("json_string")],
        ),
        PROVIDER_NAME: properties.Schema(
            properties.Schema.STRING,
            "Provider name of this Availability Zone.",
            update_allowed=True,
        ),
    }

    def handle_create(self) -> None:
        arguments = {
            key: value for key, value in self.properties.resolved().items() if value is not None
        }
        arguments.setdefault(self.NAME, self.physical_resource_name())
        self.resource_id_set(self.client().create_availability_zone_profile(**arguments).id)

    def find_created(self) -> str | None:
        """After a crash between Octavia's answer and the id being stored: the profile
        carrying this resource's generated name (a name given in the template may be
        anyone's, so it is never adopted)."""
        if self.properties[self.NAME]:
            return None
        name = self.physical_resource_name()
        found = [
            profile
            for profile in self.client().availability_zone_profiles(name=name)
            if profile.name == name
        ]
        return str(found[0].id) if len(found) == 1 else None

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if not prop_diff:
            return
        changes = dict(prop_diff)
        if self.NAME in changes and changes[self.NAME] is None:
            changes[self.NAME] = self.physical_resource_name()
        self.client().update_availability_zone_profile(self.resource_id, **changes)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            self.client().delete_availability_zone_profile(self.resource_id, ignore_missing=False)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client().get_availability_zone_profile(self.resource_id)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        found = self.client().get_availability_zone_profile(self.resource_id)
        return found.to_dict(original_names=True, headers=False, computed=False)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Octavia::AvailabilityZoneProfile": AvailabilityZoneProfile}
