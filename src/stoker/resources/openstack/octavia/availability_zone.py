"""OS::Octavia::AvailabilityZone, as Heat 27 has it (Heat 24.0.0 added it).

Owns: creating a load-balancer availability zone on an availability zone profile (its
physical id is its name: Octavia addresses availability zones by name), updating its
description and enabled state in place (the profile is replacement), delete that tolerates
"already gone", check and ``show``. Octavia's default policy lets administrators only
manage availability zones.

Heat's schema lets ``name`` change in place, and Heat sends it to Octavia, whose
availability zone update takes only ``description`` and ``enabled``: the update fails with
Octavia's refusal, as in Heat.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.resource import Resource

__all__ = ["AvailabilityZone", "resource_mapping"]


class AvailabilityZone(Resource):
    """A resource for creating octavia Availability Zones.

    This resource creates and manages octavia Availability Zones,
    which allows to tune Load Balancers' capabilities.
    """

    default_client_name = "octavia"
    support_status = support.SupportStatus(version="24.0.0")

    PROPERTIES = (DESCRIPTION, ENABLED, NAME, AVAILABILITY_ZONE_PROFILE) = (
        "description",
        "enabled",
        "name",
        "availability_zone_profile",
    )
    ATTRIBUTES = (AVAILABILITY_ZONE_PROFILE_ID_ATTR,) = ("availability_zone_profile_id",)

    properties_schema = {
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING,
            "Description of this Availability Zone.",
            update_allowed=True,
            default="",
        ),
        ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "If the resource if available for use.",
            update_allowed=True,
            default=True,
        ),
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of this Availability Zone.", update_allowed=True
        ),
        AVAILABILITY_ZONE_PROFILE: properties.Schema(
            properties.Schema.STRING,
            "The ID or the name of the Availability Zone Profile.",
            required=True,
            constraints=[constraints.CustomConstraint("octavia.availabilityzoneprofile")],
        ),
    }

    attributes_schema = {
        AVAILABILITY_ZONE_PROFILE_ID_ATTR: attributes.Schema(
            "The ID of the availability zone profile.", type=attributes.Schema.STRING
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props, translation.TranslationRule.RESOLVE, [self.AVAILABILITY_ZONE_PROFILE],
                client_plugin="octavia", finder="get_availabilityzoneprofile",
            ),
        ]  # fmt: skip

    def handle_create(self) -> None:
        given = self.properties.resolved()
        arguments = {
            key: value
            for key, value in given.items()
            if value is not None and key != self.AVAILABILITY_ZONE_PROFILE
        }
        arguments.setdefault(self.NAME, self.physical_resource_name())
        arguments["availability_zone_profile_id"] = given[self.AVAILABILITY_ZONE_PROFILE]
        self.resource_id_set(self.client().create_availability_zone(**arguments).name)

    def find_created(self) -> str | None:
        """After a crash between Octavia's answer and the id being stored: the zone of
        this resource's generated name (a name given in the template may be anyone's)."""
        if self.properties[self.NAME]:
            return None
        name = self.physical_resource_name()
        found = [zone for zone in self.client().availability_zones(name=name) if zone.name == name]
        return str(found[0].name) if len(found) == 1 else None

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if not prop_diff:
            return
        changes = dict(prop_diff)
        if self.NAME in changes and changes[self.NAME] is None:
            changes[self.NAME] = self.physical_resource_name()
        self.client().update_availability_zone(self.resource_id, **changes)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            self.client().delete_availability_zone(self.resource_id, ignore_missing=False)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client().get_availability_zone(self.resource_id)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return (
            self.client()
            .get_availability_zone(self.resource_id)
            .to_dict(original_names=True, headers=False, computed=False)
        )

    def _resolve_attribute(self, name: str) -> Any:
        shown = self._show_resource()
        return None if shown is None else shown.get(name)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Octavia::AvailabilityZone": AvailabilityZone}
