"""OS::Octavia::Flavor, as Heat has it.

Owns: creating a load-balancer flavor on a flavor profile, updating its name, description
and enabled state in place (the profile is replacement), delete that tolerates "already
gone", check and ``show``. Octavia's default policy lets administrators only manage flavors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.resource import Resource

__all__ = ["Flavor", "resource_mapping"]


class Flavor(Resource):
    """A resource for creating octavia Flavors.

    This resource creates and manages octavia Flavors,
    which allows to tune Load Balancers' capabilities.
    """

    default_client_name = "octavia"
    support_status = support.SupportStatus(version="14.0.0")

    PROPERTIES = (DESCRIPTION, ENABLED, FLAVOR_PROFILE, NAME) = (
        "description",
        "enabled",
        "flavor_profile",
        "name",
    )
    ATTRIBUTES = (FLAVOR_PROFILE_ID_ATTR,) = ("flavor_profile_id",)

    properties_schema = {
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description of this Flavor.", update_allowed=True, default=""
        ),
        ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "If the resource if available for use.",
            update_allowed=True,
            default=True,
        ),
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of this Flavor.", update_allowed=True
        ),
        FLAVOR_PROFILE: properties.Schema(
            properties.Schema.STRING,
            "The ID or the name of the Flavor Profile.",
            required=True,
            constraints=[constraints.CustomConstraint("octavia.flavorprofile")],
        ),
    }

    attributes_schema = {
        FLAVOR_PROFILE_ID_ATTR: attributes.Schema(
            "The ID of the flavor profile.", type=attributes.Schema.STRING
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.FLAVOR_PROFILE],
                client_plugin="octavia", finder="get_flavorprofile",
            ),
        ]  # fmt: skip

    def handle_create(self) -> None:
        given = self.properties.resolved()
        arguments = {
            key: value
            for key, value in given.items()
            if value is not None and key != self.FLAVOR_PROFILE
        }
        arguments.setdefault(self.NAME, self.physical_resource_name())
        arguments["flavor_profile_id"] = given[self.FLAVOR_PROFILE]
        self.resource_id_set(self.client().create_flavor(**arguments).id)

    def find_created(self) -> str | None:
        if self.properties[self.NAME]:
            return None
        found = [
            f
            for f in self.client().flavors(name=self.physical_resource_name())
            if f.name == self.physical_resource_name()
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
        self.client().update_flavor(self.resource_id, **changes)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            self.client().delete_flavor(self.resource_id, ignore_missing=False)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client().get_flavor(self.resource_id)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return (
            self.client()
            .get_flavor(self.resource_id)
            .to_dict(original_names=True, headers=False, computed=False)
        )

    def _resolve_attribute(self, name: str) -> Any:
        shown = self._show_resource()
        return None if shown is None else shown.get(name)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Octavia::Flavor": Flavor}
