"""OS::Designate::Zone, as Heat has it.

Owns: the zone's create request (PRIMARY zones need ``email``, SECONDARY ones ``primaries``;
Heat's translation moves ``primaries`` into the deprecated ``masters``, the name Designate's
API uses), the wait for the worker (PENDING -> ACTIVE, ERROR a failure) after create, update
and delete, updating ``email``, ``ttl``, ``description`` and ``primaries`` in place (any other
change replaces the zone), check, the ``serial`` attribute, and finding a zone an
interrupted create made (by its name, which Designate keeps unique).

A create hands the engine the zone's id as its token, so an engine that restarts while
Designate's worker propagates polls on; a zone left FAILED that Designate still has in
order (ACTIVE or PENDING) is updated on the next stack update, not replaced (Designate
would refuse a second zone of the same name).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.designate.client_plugin import CHECKED, settled
from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.exceptions import ResourceFailure, ValidationError
from stoker.sdk.resource import Resource

__all__ = ["DesignateZone", "resource_mapping"]


class DesignateZone(Resource):
    """Heat Template Resource for Designate Zone.

    Designate provides DNS-as-a-Service services for OpenStack. So, zone, part of domain is
    a realm with an identification string, unique in DNS.
    """

    support_status = support.SupportStatus(version="8.0.0")
    default_client_name = "designate"
    entity = "zone"

    PROPERTIES: tuple[str, ...]
    PROPERTIES = (NAME, TTL, DESCRIPTION, EMAIL, TYPE, PRIMARIES, MASTERS, ATTRS) = (
        "name",
        "ttl",
        "description",
        "email",
        "type",
        "primaries",
        "masters",
        "attributes",
    )
    ATTRIBUTES = (SERIAL,) = ("serial",)
    TYPES = (PRIMARY, SECONDARY) = ("PRIMARY", "SECONDARY")
    # What an update sends, as Heat: the changed values that are set.
    UPDATED = (EMAIL, TTL, DESCRIPTION, MASTERS)

    properties_schema = {
        # RFC 1035: a name is at most 255 octets.
        NAME: properties.Schema(
            properties.Schema.STRING,
            "DNS Name for the zone.",
            required=True,
            constraints=[constraints.Length(max=255)],
        ),
        # RFC 1035: a TTL is a signed 32-bit number.
        TTL: properties.Schema(
            properties.Schema.INTEGER,
            "Time To Live (Seconds) for the zone.",
            update_allowed=True,
            constraints=[constraints.Range(min=1, max=2147483647)],
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING,
            "Description of zone.",
            update_allowed=True,
            constraints=[constraints.Length(max=160)],
        ),
        EMAIL: properties.Schema(
            properties.Schema.STRING,
            "E-mail for the zone. Used in SOA records for the zone. It is required for PRIMARY Type, otherwise ignored.",
            update_allowed=True,
        ),
        TYPE: properties.Schema(
            properties.Schema.STRING,
            "Type of zone. PRIMARY is controlled by Designate, SECONDARY zones are transferred from another DNS Server.",
            default=PRIMARY,
            constraints=[constraints.AllowedValues(TYPES)],
        ),
        MASTERS: properties.Schema(
            properties.Schema.LIST,
            "The primary servers to transfer DNS zone information from. Mandatory for zone type SECONDARY, otherwise ignored.",
            update_allowed=True,
            support_status=support.SupportStatus(
                status=support.DEPRECATED, version="15.0.0", message="Use ``primaries`` instead."
            ),
        ),
        PRIMARIES: properties.Schema(
            properties.Schema.LIST,
            "The primary servers to transfer DNS zone information from. Mandatory for zone type SECONDARY, otherwise ignored.",
            update_allowed=True,
        ),
        ATTRS: properties.Schema(
            properties.Schema.MAP,
            "Key:Value pairs of information about this zone, and the pool the user would like to place the zone in. "
            "This information can be used by the scheduler to place zones on the correct pool.",
            support_status=support.SupportStatus(version="24.0.0"),
        ),
    }

    attributes_schema = {
        SERIAL: attributes.Schema("DNS zone serial number.", type=attributes.Schema.STRING),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        # Into "masters", the name Designate's API uses, although the property of that
        # name is the deprecated one (as Heat does).
        return [
            translation.TranslationRule(
                props,
                translation.TranslationRule.REPLACE,
                [self.MASTERS],
                value_name=self.PRIMARIES,
            )
        ]

    def validate(self) -> None:
        super().validate()
        for zone_type, key, shown in (
            (self.PRIMARY, self.EMAIL, self.EMAIL),
            (self.SECONDARY, self.MASTERS, self.PRIMARIES),
        ):
            if self.properties[self.TYPE] == zone_type and not self.properties[key]:
                raise ValidationError(
                    f"Property {key} is required for zone type {zone_type}",
                    path=f"resources.{self.name}.properties.{shown}",
                    hint=f"give {shown}"
                    if zone_type == self.PRIMARY
                    else "give primaries: the servers to transfer the zone from",
                )

    def create_arguments(self) -> dict[str, Any]:
        """openstacksdk's ``create_zone`` arguments: the properties that are set (Heat
        leaves out empty ones)."""
        return {
            key: value
            for key, value in self.properties.resolved().items()
            if value and key != self.PRIMARIES
        }

    # -- create, update, delete -------------------------------------------------------

    def handle_create(self) -> str:
        zone = self.client().create_zone(**self.create_arguments())
        self.resource_id_set(zone.id)
        # A token, so an engine that restarts while the worker propagates polls on.
        return str(zone.id)

    def check_create_complete(self, token: Any) -> bool:
        return settled(self.client_plugin().get_zone(self.resource_id), "zone")

    def find_created(self) -> str | None:
        # Designate refuses a second zone of one name, so a zone of this name in the
        # project is the one the interrupted create made.
        found = self.client().find_zone(self.properties[self.NAME], ignore_missing=True)
        return None if found is None else str(found.id)

    def needs_replace_failed(self) -> bool:
        # A zone whose create or update failed is kept (and updated) while Designate still
        # has it in order: a replacement would be refused, the name being the old zone's.
        if self.resource_id is None:
            return True
        try:
            found = self.client_plugin().get_zone(self.resource_id)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return True
        return found.status not in CHECKED

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> bool:
        changes = {key: prop_diff[key] for key in self.UPDATED if prop_diff.get(key)}
        if self.PRIMARIES in prop_diff and prop_diff[self.PRIMARIES]:
            changes[self.MASTERS] = prop_diff[self.PRIMARIES]
        if not changes:
            return False
        self.client().update_zone(self.resource_id, **changes)
        return True

    def check_update_complete(self, token: Any) -> bool:
        if not token:
            return True
        return settled(self.client_plugin().get_zone(self.resource_id), "zone")

    def handle_delete(self) -> str | None:
        if self.resource_id is None:
            return None
        try:
            self.client().delete_zone(self.resource_id, ignore_missing=False)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return None
        return self.resource_id

    def check_delete_complete(self, token: Any) -> bool:
        if not token:
            return True
        try:
            zone = self.client_plugin().get_zone(self.resource_id)
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
            return True
        if zone.status == "ERROR":
            raise ResourceFailure('Went to status ERROR due to "Error in zone"')
        return False

    # -- check, attributes --------------------------------------------------------------

    def handle_check(self) -> None:
        """The live zone must exist and not be in ERROR (PENDING is a change Designate
        is still propagating)."""
        found = self.client_plugin().get_zone(self.resource_id)
        if found.status not in CHECKED:
            raise ResourceFailure(f"'status': expected '{list(CHECKED)}', got '{found.status}'")

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return (
            self.client_plugin()
            .get_zone(self.resource_id)
            .to_dict(original_names=True, headers=False, computed=False)
        )

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        if name == self.SERIAL:
            return self.client_plugin().get_zone(self.resource_id).serial
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Designate::Zone": DesignateZone}
