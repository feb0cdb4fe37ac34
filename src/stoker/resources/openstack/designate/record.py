"""OS::Designate::Record: Designate's v1 record, HIDDEN in Heat since 10.0.0, working here as
a v2 recordset.

As with OS::Designate::Domain (see ``domain.py``): stoker keeps the type's last schema (Heat
9) and makes the record a recordset of one record in the domain's zone. ``data`` is the
record; for MX and SRV records the ``priority`` goes before it (v2 has no priority field:
``10 mail.example.org.``), and is ignored for other types, as Heat ignored it. ``ttl``,
``description``, ``data`` and ``priority`` update in place; a new ``type`` (which v1 changed
in place) replaces the record, since a v2 recordset's type is fixed. Two records of one name
and type, which v1 allowed, are one recordset in v2: the second is refused by Designate.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.designate.recordset import DesignateRecordSet
from stoker.sdk import constraints, properties, support
from stoker.sdk.resource import Resource

__all__ = ["DesignateRecord", "resource_mapping"]


class DesignateRecord(DesignateRecordSet):
    """Heat Template Resource for Designate Record.

    Designate provides DNS-as-a-Service services for OpenStack. Record is storage unit in
    DNS. So, DNS name server is a server that stores the DNS records for a domain. Each
    record has a type and type-specific data.
    """

    support_status = support.SupportStatus(
        status=support.HIDDEN,
        version="10.0.0",
        message="This resource has been removed, use OS::Designate::RecordSet instead.",
        previous_status=support.SupportStatus(
            status=support.DEPRECATED,
            version="8.0.0",
            previous_status=support.SupportStatus(version="5.0.0"),
        ),
    )

    PROPERTIES = (NAME, TTL, DESCRIPTION, TYPE, DATA, PRIORITY, DOMAIN) = (
        "name",
        "ttl",
        "description",
        "type",
        "data",
        "priority",
        "domain",
    )
    # The recordset's code reads the zone from this property.
    ZONE = DOMAIN
    _ALLOWED_TYPES = ("A", "AAAA", "CNAME", "MX", "SRV", "TXT", "SPF", "NS", "PTR", "SSHFP", "SOA")
    PRIORITISED = ("MX", "SRV")

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING,
            "Record name.",
            required=True,
            constraints=[constraints.Length(max=255)],
        ),
        TTL: properties.Schema(
            properties.Schema.INTEGER,
            "Time To Live (Seconds).",
            update_allowed=True,
            constraints=[constraints.Range(min=1, max=2147483647)],
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING,
            "Description of record.",
            update_allowed=True,
            constraints=[constraints.Length(max=160)],
        ),
        TYPE: properties.Schema(
            properties.Schema.STRING,
            "DNS Record type.",
            update_allowed=True,
            required=True,
            constraints=[constraints.AllowedValues(_ALLOWED_TYPES)],
        ),
        DATA: properties.Schema(
            properties.Schema.STRING,
            "DNS record data, varies based on the type of record. For more details, please refer rfc 1035.",
            update_allowed=True,
            required=True,
        ),
        # RFC 1035: a priority is a 16-bit number (Heat's range, kept).
        PRIORITY: properties.Schema(
            properties.Schema.INTEGER,
            "DNS record priority. It is considered only for MX and SRV types, otherwise, it is ignored.",
            update_allowed=True,
            constraints=[constraints.Range(min=0, max=65536)],
        ),
        # Heat's designate.domain constraint spoke v1; a v2 domain is a zone.
        DOMAIN: properties.Schema(
            properties.Schema.STRING,
            "DNS Domain id or name.",
            required=True,
            constraints=[constraints.CustomConstraint("designate.zone")],
        ),
    }

    def record(self, values: Mapping[str, Any]) -> str:
        """The v2 record for ``data``: the priority first for MX and SRV records."""
        data, priority = values.get(self.DATA), values.get(self.PRIORITY)
        if values.get(self.TYPE) in self.PRIORITISED and priority is not None:
            return f"{priority} {data}"
        return str(data)

    def create_arguments(self, zone_name: str) -> dict[str, Any]:
        values = self.properties.resolved()
        arguments = {
            "name": values[self.NAME],
            "type": values[self.TYPE],
            "records": [self.record(values)],
        }
        for key in (self.TTL, self.DESCRIPTION):
            if values.get(key):
                arguments[key] = values[key]
        return arguments

    def needs_replace_with_prop_diff(
        self,
        changed_properties_set: set[str],
        after_props: Mapping[str, Any],
        before_props: Mapping[str, Any],
    ) -> bool:
        return self.TYPE in changed_properties_set

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> bool:
        changes = {
            key: prop_diff[key] for key in (self.TTL, self.DESCRIPTION) if prop_diff.get(key)
        }
        if self.DATA in prop_diff or self.PRIORITY in prop_diff:
            changes["records"] = [self.record({**self.properties.resolved(), **prop_diff})]
        if not changes:
            return False
        recordset = self.client_plugin().get_recordset(self.resource_id, self.zone_id())
        self.client().update_recordset(recordset, **changes)
        return True


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Designate::Record": DesignateRecord}
