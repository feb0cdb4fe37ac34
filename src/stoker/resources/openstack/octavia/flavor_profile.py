"""OS::Octavia::FlavorProfile, as Heat has it.

Owns: creating a flavor profile (a provider and its flavor data, a JSON string), updating
all of it in place, delete that tolerates "already gone", check and ``show``. Octavia's
default policy lets administrators only manage flavor profiles.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import constraints, properties, support
from stoker.sdk.resource import Resource

__all__ = ["FlavorProfile", "resource_mapping"]


class FlavorProfile(Resource):
    """A resource for creating octavia Flavor Profiles.

    This resource creates and manages octavia Flavor Profiles,
    which allows to tune Load Balancers' capabilities.
    """

    default_client_name = "octavia"
    support_status = support.SupportStatus(version="14.0.0")

    PROPERTIES = (NAME, FLAVOR_DATA, PROVIDER_NAME) = ("name", "flavor_data", "provider_name")

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of this Flavor Profile.", update_allowed=True
        ),
        FLAVOR_DATA: properties.Schema(
            properties.Schema.STRING,
            "JSON string containing the flavor metadata.",
            update_allowed=True,
            required=True,
            constraints=[constraints.CustomConstraint("json_string")],
        ),
        PROVIDER_NAME: properties.Schema(
            properties.Schema.STRING, "Provider name of this Flavor Profile.", update_allowed=True
        ),
    }

    def handle_create(self) -> None:
        arguments = {
            key: value for key, value in self.properties.resolved().items() if value is not None
        }
        arguments.setdefault(self.NAME, self.physical_resource_name())
        self.resource_id_set(self.client().create_flavor_profile(**arguments).id)

    def find_created(self) -> str | None:
        if self.properties[self.NAME]:
            return None
        name = self.physical_resource_name()
        found = [
            profile for profile in self.client().flavor_profiles(name=name) if profile.name == name
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
        self.client().update_flavor_profile(self.resource_id, **changes)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            self.client().delete_flavor_profile(self.resource_id, ignore_missing=False)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client().get_flavor_profile(self.resource_id)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        found = self.client().get_flavor_profile(self.resource_id)
        return found.to_dict(original_names=True, headers=False, computed=False)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Octavia::FlavorProfile": FlavorProfile}
