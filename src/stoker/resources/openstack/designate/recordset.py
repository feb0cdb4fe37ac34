"""OS::Designate::RecordSet, as Heat has it.

Owns: the recordset's create request in its zone (given by id or name: the ``designate.zone``
constraint checks it, and the zone's id is kept in the resource's data, so a recordset whose
zone was deleted with everything in it is simply gone), the wait for the worker (PENDING ->
ACTIVE, ERROR a failure), updating ``ttl``, ``description`` and ``records`` in place (any
other change replaces it), delete, check, ``show``, and finding a recordset an interrupted
create made (by its name and type in the zone).

A recordset without a ``name`` is named ``<stack>-<resource>-<id>`` as Heat names it, made
absolute in its zone (``<that>.<zone name>``): Designate refuses a name outside the zone,
and Heat's bare physical name is one.

A create hands the engine the recordset's id as its token, so an engine that restarts while
Designate's worker propagates polls on; a recordset left FAILED that Designate still has in
order (ACTIVE or PENDING) is updated on the next stack update, not replaced (Designate
would refuse a second recordset of the same name).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.designate.client_plugin import CHECKED, settled
from stoker.sdk import constraints, properties, support
from stoker.sdk.exceptions import ResourceFailure
from stoker.sdk.resource import Resource

__all__ = ["DesignateRecordSet", "resource_mapping"]

ZONE_ID = "zone_id"


class DesignateRecordSet(Resource):
    """Heat Template Resource for Designate RecordSet.

    Designate provides DNS-as-a-Service services for OpenStack. RecordSet helps to add more
    than one records.
    """

    support_status = support.SupportStatus(version="8.0.0")
    default_client_name = "designate"
    entity = "recordset"

    PROPERTIES: tuple[str, ...]
    PROPERTIES = (NAME, TTL, DESCRIPTION, TYPE, RECORDS, ZONE) = (
        "name",
        "ttl",
        "description",
        "type",
        "records",
        "zone",
    )
    _ALLOWED_TYPES: tuple[str, ...]
    _ALLOWED_TYPES = (
        "A",
        "AAAA",
        "CNAME",
        "MX",
        "SRV",
        "TXT",
        "SPF",
        "NS",
        "PTR",
        "SSHFP",
        "SOA",
        "CAA",
        "CERT",
        "NAPTR",
    )
    # What an update sends, as Heat: the changed values that are set.
    UPDATED = (TTL, DESCRIPTION, RECORDS)

    properties_schema = {
        # RFC 1035: a name is at most 255 octets.
        NAME: properties.Schema(
            properties.Schema.STRING, "RecordSet name.", constraints=[constraints.Length(max=255)]
        ),
        # RFC 1035: a TTL is a signed 32-bit number.
        TTL: properties.Schema(
            properties.Schema.INTEGER,
            "Time To Live (Seconds).",
            update_allowed=True,
            constraints=[constraints.Range(min=1, max=2147483647)],
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING,
            "Description of RecordSet.",
            update_allowed=True,
            constraints=[constraints.Length(max=160)],
        ),
        TYPE: properties.Schema(
            properties.Schema.STRING,
            "DNS RecordSet type.",
            required=True,
            constraints=[constraints.AllowedValues(_ALLOWED_TYPES)],
        ),
        RECORDS: properties.Schema(
            properties.Schema.LIST,
            "A list of data for this RecordSet. Each item will be a separate record in Designate These items should "
            "conform to the DNS spec for the record type - e.g. A records must be IPv4 addresses, CNAME records must be "
            "a hostname. DNS record data varies based on the type of record. For more details, please refer rfc 1035.",
            update_allowed=True,
            required=True,
        ),
        ZONE: properties.Schema(
            properties.Schema.STRING,
            "DNS Zone id or name.",
            required=True,
            constraints=[constraints.CustomConstraint("designate.zone")],
        ),
    }

    # -- the zone and the name ----------------------------------------------------------

    def zone_id(self) -> str:
        """The zone's id: recorded at create, else looked up from the property."""
        recorded = self.data().get(ZONE_ID)
        if recorded:
            return str(recorded)
        return self.client_plugin().get_zone_id(self.properties[self.ZONE])

    def recordset_name(self, zone_name: str) -> str:
        name = self.properties[self.NAME]
        if name:
            return name
        return f"{self.physical_resource_name()}.{zone_name}"

    def create_arguments(self, zone_name: str) -> dict[str, Any]:
        """openstacksdk's ``create_recordset`` arguments: the properties that are set
        (Heat leaves out empty ones), the name made if none is given."""
        arguments = {
            key: value
            for key, value in self.properties.resolved().items()
            if value and key != self.ZONE
        }
        arguments[self.NAME] = self.recordset_name(zone_name)
        return arguments

    # -- create, update, delete -------------------------------------------------------

    def handle_create(self) -> str:
        zone = self.client_plugin().find("zone", self.properties[self.ZONE])
        # Recorded before the create: a recordset the cloud made is always found again.
        self.data_set(ZONE_ID, str(zone.id))
        recordset = self.client().create_recordset(zone.id, **self.create_arguments(zone.name))
        self.resource_id_set(recordset.id)
        # A token, so an engine that restarts while the worker propagates polls on.
        return str(recordset.id)

    def check_create_complete(self, token: Any) -> bool:
        return settled(
            self.client_plugin().get_recordset(self.resource_id, self.zone_id()), "RecordSet"
        )

    def find_created(self) -> str | None:
        zone_id = self.data().get(ZONE_ID)
        if not zone_id:
            return None  # the create was never sent
        client = self.client()
        zone = client.get_zone(zone_id)
        name = self.recordset_name(zone.name)
        for found in client.recordsets(zone_id, name=name, type=self.properties[self.TYPE]):
            return str(found.id)
        return None

    def needs_replace_failed(self) -> bool:
        # Kept (and updated) while Designate still has it in order: a replacement of a
        # named recordset would be refused, the name and type being the old one's.
        if self.resource_id is None:
            return True
        try:
            found = self.client_plugin().get_recordset(self.resource_id, self.zone_id())
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return True
        return found.status not in CHECKED

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> bool:
        changes = {key: prop_diff[key] for key in self.UPDATED if prop_diff.get(key)}
        if not changes:
            return False
        recordset = self.client_plugin().get_recordset(self.resource_id, self.zone_id())
        self.client().update_recordset(recordset, **changes)
        return True

    def check_update_complete(self, token: Any) -> bool:
        if not token:
            return True
        return settled(
            self.client_plugin().get_recordset(self.resource_id, self.zone_id()), "RecordSet"
        )

    def handle_delete(self) -> str | None:
        if self.resource_id is None:
            return None
        plugin = self.client_plugin()
        try:
            recordset = plugin.get_recordset(self.resource_id, self.zone_id())
            self.client().delete_recordset(recordset, ignore_missing=False)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types; a zone gone takes its recordsets
            plugin.ignore_not_found(error)
            return None
        return self.resource_id

    def check_delete_complete(self, token: Any) -> bool:
        if not token:
            return True
        try:
            recordset = self.client_plugin().get_recordset(self.resource_id, self.zone_id())
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
            return True
        if recordset.status == "ERROR":
            raise ResourceFailure('Went to status ERROR due to "Error in RecordSet"')
        return False

    # -- check, attributes --------------------------------------------------------------

    def handle_check(self) -> None:
        """The live recordset must exist and not be in ERROR (PENDING is a change Designate
        is still propagating)."""
        found = self.client_plugin().get_recordset(self.resource_id, self.zone_id())
        if found.status not in CHECKED:
            raise ResourceFailure(f"'status': expected '{list(CHECKED)}', got '{found.status}'")

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        recordset = self.client_plugin().get_recordset(self.resource_id, self.zone_id())
        return recordset.to_dict(original_names=True, headers=False, computed=False)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Designate::RecordSet": DesignateRecordSet}
