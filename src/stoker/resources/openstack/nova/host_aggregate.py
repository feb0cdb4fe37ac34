"""OS::Nova::HostAggregate, as Heat has it.

Owns: a host aggregate with its availability zone, hosts and metadata: created, every
property updated in place (hosts added and removed, metadata keys set and cleared, name
and zone changed), emptied of its hosts and deleted on delete. Nova's default policy lets
administrators only manage aggregates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import constraints, properties, support
from stoker.sdk.resource import Resource

__all__ = ["HostAggregate", "resource_mapping"]


class HostAggregate(Resource):
    """A resource for further partition an availability zone with hosts.

    While availability zones are visible to users, host aggregates are only visible to
    administrators. Host aggregates started out as a way to use Xen hypervisor resource
    pools, but has been generalized to provide a mechanism to allow administrators to
    assign key-value pairs to groups of machines. Each node can have multiple aggregates,
    each aggregate can have multiple key-value pairs, and the same key-value pair can be
    assigned to multiple aggregate. This information can be used in the scheduler to enable
    advanced scheduling, to set up xen hypervisor resources pools or to define logical
    groups for migration.
    """

    support_status = support.SupportStatus(version="6.0.0")
    default_client_name = "nova"
    entity = "aggregate"

    PROPERTIES = (NAME, AVAILABILITY_ZONE, HOSTS, METADATA) = (
        "name",
        "availability_zone",
        "hosts",
        "metadata",
    )

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name for the aggregate.", required=True, update_allowed=True
        ),
        AVAILABILITY_ZONE: properties.Schema(
            properties.Schema.STRING, "Name for the availability zone.", update_allowed=True
        ),
        HOSTS: properties.Schema(
            properties.Schema.LIST,
            "List of hosts to join aggregate.",
            update_allowed=True,
            schema=properties.Schema(
                properties.Schema.STRING, constraints=[constraints.CustomConstraint("nova.host")]
            ),
        ),
        METADATA: properties.Schema(
            properties.Schema.MAP,
            "Arbitrary key/value metadata to store information for aggregate.",
            update_allowed=True,
            default={},
        ),
    }

    def handle_create(self) -> None:
        client = self.client()
        arguments = {"name": self.properties[self.NAME]}
        if self.properties[self.AVAILABILITY_ZONE]:
            arguments["availability_zone"] = self.properties[self.AVAILABILITY_ZONE]
        aggregate = client.create_aggregate(**arguments)
        self.resource_id_set(aggregate.id)
        metadata = self._strings(self.properties[self.METADATA])
        if metadata:
            client.set_aggregate_metadata(aggregate.id, **metadata)
        for host in self.properties[self.HOSTS] or []:
            client.add_host_to_aggregate(aggregate.id, host)

    def find_created(self) -> str | None:
        """Aggregate names are unique in Nova: the one named as this resource's."""
        for aggregate in self.client().aggregates():
            if aggregate.name == self.properties[self.NAME]:
                return str(aggregate.id)
        return None

    @staticmethod
    def _strings(values: Mapping[str, Any] | None) -> dict[str, str]:
        return {str(key): str(value) for key, value in (values or {}).items()}

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if not prop_diff:
            return
        client = self.client()
        aggregate = client.get_aggregate(self.resource_id)
        if self.HOSTS in prop_diff:
            current = set(aggregate.hosts or [])
            wanted = set(prop_diff[self.HOSTS] or [])
            for host in sorted(wanted - current):
                client.add_host_to_aggregate(self.resource_id, host)
            for host in sorted(current - wanted):
                client.remove_host_from_aggregate(self.resource_id, host)
        if self.METADATA in prop_diff:
            wanted_metadata = self._strings(prop_diff[self.METADATA])
            # A key set to None is removed (availability_zone is metadata too: kept).
            cleared = {
                key: None
                for key in (aggregate.metadata or {})
                if key not in wanted_metadata and key != "availability_zone"
            }
            if wanted_metadata or cleared:
                client.set_aggregate_metadata(self.resource_id, **cleared, **wanted_metadata)
        changes = {
            key: prop_diff[key] for key in (self.NAME, self.AVAILABILITY_ZONE) if key in prop_diff
        }
        if changes:
            client.update_aggregate(self.resource_id, **changes)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        client = self.client()
        try:
            aggregate = client.get_aggregate(self.resource_id)
            for host in aggregate.hosts or []:
                client.remove_host_from_aggregate(self.resource_id, host)
            client.delete_aggregate(self.resource_id, ignore_missing=True)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client().get_aggregate(self.resource_id)

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        """Heat's reading of every property, ``metadata`` without the availability zone
        Nova keeps in it (a property of its own), as the stack holds it when Nova has the
        same strings."""
        live = {key: resource_data.get(key) for key in self.PROPERTIES}
        metadata = {key: value for key, value in (resource_data.get(self.METADATA) or {}).items() if key != "availability_zone"}
        given = resource_properties.get(self.METADATA)
        live[self.METADATA] = given if given is not None and self._strings(given) == metadata else metadata
        if resource_properties.get(self.NAME) is None:
            live.pop(self.NAME)
        return live

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        found = self.client().get_aggregate(self.resource_id)
        return found.to_dict(original_names=True, headers=False, computed=False)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Nova::HostAggregate": HostAggregate}
