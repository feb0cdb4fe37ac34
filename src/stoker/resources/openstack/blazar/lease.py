"""OS::Blazar::Lease, as Heat has it.

Owns: Heat's validation (Blazar must have a host: "Couldn't find any host in Blazar..."), the
lease's create request (``start_date``/``end_date`` sent as Blazar's ``start``/``end``, each
reservation given only the keys of its resource type), delete, and the attributes (the lease
as Blazar shows it). No update: Heat has none, so any change replaces the lease.

Untested against a real Blazar (issue 29): a lease needs Blazar's manager and reservable
Nova hosts. Validation, and the refusal a cloud without Blazar gives, are tested through the
``stoker`` command.
"""

from __future__ import annotations

from typing import Any

from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import InvalidTemplateAttribute, ValidationError
from stoker.sdk.resource import Resource

__all__ = ["BlazarLease", "resource_mapping"]


class BlazarLease(Resource):
    """A resource to manage Blazar leases.

    Lease resource manages the reservations of specific type/amount of cloud resources within
    OpenStack.
    """

    support_status = support.SupportStatus(version="12.0.0")
    default_client_name = "blazar"
    entity = "lease"

    PROPERTIES = (
        NAME, START_DATE, END_DATE, BEFORE_END_DATE, RESERVATIONS, RESOURCE_TYPE, MIN, MAX,
        HYPERVISOR_PROPERTIES, RESOURCE_PROPERTIES, BEFORE_END, AMOUNT, VCPUS, MEMORY_MB,
        DISK_GB, AFFINITY, EVENTS, EVENT_TYPE, TIME,
    ) = (
        "name", "start_date", "end_date", "before_end_date", "reservations", "resource_type",
        "min", "max", "hypervisor_properties", "resource_properties", "before_end", "amount",
        "vcpus", "memory_mb", "disk_gb", "affinity", "events", "event_type", "time",
    )  # fmt: skip
    ATTRIBUTES = (
        NAME_ATTR, START_DATE_ATTR, END_DATE_ATTR, CREATED_AT_ATTR, UPDATED_AT_ATTR, STATUS_ATTR,
        DEGRADED_ATTR, USER_ID_ATTR, PROJECT_ID_ATTR, TRUST_ID_ATTR, RESERVATIONS_ATTR,
        EVENTS_ATTR,
    ) = (
        "name", "start_date", "end_date", "created_at", "updated_at", "status", "degraded",
        "user_id", "project_id", "trust_id", "reservations", "events",
    )  # fmt: skip
    # The keys a reservation of each resource type does not take (Heat's _parse_reservation).
    NOT_FOR = {
        "physical:host": (VCPUS, MEMORY_MB, DISK_GB, AFFINITY, AMOUNT),
        "virtual:instance": (HYPERVISOR_PROPERTIES, MAX, MIN, BEFORE_END),
    }

    properties_schema = {
        BEFORE_END_DATE: properties.Schema(
            properties.Schema.STRING,
            'The date and time for the before-end-action of the lease. The date and time format must be "CCYY-MM-DD hh:mm".',
            constraints=[constraints.AllowedPattern("\\d{4}-\\d{2}-\\d{2}\\s\\d{2}:\\d{2}")],
        ),
        END_DATE: properties.Schema(
            properties.Schema.STRING,
            'The end date and time of the lease The date and time format must be "CCYY-MM-DD hh:mm".',
            required=True,
            constraints=[constraints.AllowedPattern("\\d{4}-\\d{2}-\\d{2}\\s\\d{2}:\\d{2}")],
        ),
        EVENTS: properties.Schema(
            properties.Schema.LIST,
            "A list of event objects.",
            default=[],
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    EVENT_TYPE: properties.Schema(
                        properties.Schema.STRING,
                        "The type of the event (e.g. notification).",
                        required=True,
                    ),
                    TIME: properties.Schema(
                        properties.Schema.STRING,
                        'The date and time of the event. The date and time format must be "CCYY-MM-DD hh:mm".',
                        required=True,
                    ),
                },
            ),
        ),
        NAME: properties.Schema(
            properties.Schema.STRING,
            "The name of the lease.",
            required=True,
        ),
        RESERVATIONS: properties.Schema(
            properties.Schema.LIST,
            "The list of reservations.",
            required=True,
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    AFFINITY: properties.Schema(
                        properties.Schema.BOOLEAN,
                        "The affinity of instances to reserve.",
                        default=False,
                    ),
                    AMOUNT: properties.Schema(
                        properties.Schema.INTEGER,
                        "The amount of instances to reserve.",
                        constraints=[constraints.Range(max=2147483647, min=0)],
                    ),
                    BEFORE_END: properties.Schema(
                        properties.Schema.STRING,
                        "The before-end-action of the reservation.",
                        default="default",
                        constraints=[constraints.AllowedValues(["default", "snapshot"])],
                    ),
                    DISK_GB: properties.Schema(
                        properties.Schema.INTEGER,
                        "Gigabytes of the local disk per the instance.",
                        constraints=[constraints.Range(max=2147483647, min=0)],
                    ),
                    HYPERVISOR_PROPERTIES: properties.Schema(
                        properties.Schema.STRING,
                        "Properties of the hypervisor to reserve.",
                    ),
                    MAX: properties.Schema(
                        properties.Schema.INTEGER,
                        "The maximum number of hosts to reserve.",
                        constraints=[constraints.Range(min=1)],
                    ),
                    MEMORY_MB: properties.Schema(
                        properties.Schema.INTEGER,
                        "Megabytes of memory per the instance.",
                        constraints=[constraints.Range(max=2147483647, min=0)],
                    ),
                    MIN: properties.Schema(
                        properties.Schema.INTEGER,
                        "The minimum number of hosts to reserve.",
                        constraints=[constraints.Range(min=1)],
                    ),
                    RESOURCE_PROPERTIES: properties.Schema(
                        properties.Schema.STRING,
                        "Properties of the resource to reserve.",
                    ),
                    RESOURCE_TYPE: properties.Schema(
                        properties.Schema.STRING,
                        "The type of the resource to reserve.",
                        required=True,
                        constraints=[
                            constraints.AllowedValues(["virtual:instance", "physical:host"])
                        ],
                    ),
                    VCPUS: properties.Schema(
                        properties.Schema.INTEGER,
                        "The number of VCPUs per the instance.",
                        constraints=[constraints.Range(max=2147483647, min=0)],
                    ),
                },
            ),
        ),
        START_DATE: properties.Schema(
            properties.Schema.STRING,
            'The start date and time of the lease. The date and time format must be "CCYY-MM-DD hh:mm".',
            required=True,
            constraints=[constraints.AllowedPattern("\\d{4}-\\d{2}-\\d{2}\\s\\d{2}:\\d{2}")],
        ),
    }

    attributes_schema = {
        CREATED_AT_ATTR: attributes.Schema(
            'The date and time when the lease was created. The date and time format is "CCYY-MM-DD hh:mm".',
            type=attributes.Schema.STRING,
        ),
        DEGRADED_ATTR: attributes.Schema(
            "The flag which represents condition of reserved resources of the lease. If it is true, the amount of reserved resources is less than the request or reserved resources were changed.",
            type=attributes.Schema.BOOLEAN,
        ),
        END_DATE_ATTR: attributes.Schema(
            'The end date and time of the lease. The date and time format is "CCYY-MM-DD hh:mm".',
            type=attributes.Schema.STRING,
        ),
        EVENTS_ATTR: attributes.Schema(
            "Event information of the lease.", type=attributes.Schema.LIST
        ),
        NAME_ATTR: attributes.Schema("The name of the lease.", type=attributes.Schema.STRING),
        PROJECT_ID_ATTR: attributes.Schema(
            "The UUID the project which owns the lease.", type=attributes.Schema.STRING
        ),
        RESERVATIONS_ATTR: attributes.Schema(
            "A list of reservation objects.", type=attributes.Schema.LIST
        ),
        START_DATE_ATTR: attributes.Schema(
            'The start date and time of the lease. The date and time format is "CCYY-MM-DD hh:mm".',
            type=attributes.Schema.STRING,
        ),
        STATUS_ATTR: attributes.Schema("The status of the lease.", type=attributes.Schema.STRING),
        TRUST_ID_ATTR: attributes.Schema(
            "The UUID of the trust of the lease owner.", type=attributes.Schema.STRING
        ),
        UPDATED_AT_ATTR: attributes.Schema(
            'The date and time when the lease was updated. The date and time format is "CCYY-MM-DD hh:mm".',
            type=attributes.Schema.STRING,
        ),
        USER_ID_ATTR: attributes.Schema(
            "The UUID of the lease owner.", type=attributes.Schema.STRING
        ),
    }

    def validate(self) -> None:
        super().validate()
        if not self.client_plugin().has_host():
            raise ValidationError(
                "Couldn't find any host in Blazar. You must create a host before creating a lease.",
                path=f"resources.{self.name}",
                hint="add a host to Blazar (OS::Blazar::Host) first",
            )

    def _reservation(self, reservation: dict[str, Any]) -> dict[str, Any]:
        dropped = self.NOT_FOR.get(reservation[self.RESOURCE_TYPE], ())
        # Keys not given are left out too (Heat sends them as null).
        return {
            key: value
            for key, value in reservation.items()
            if key not in dropped and value is not None
        }

    def handle_create(self) -> str:
        given = {
            key: value for key, value in self.properties.resolved().items() if value is not None
        }
        given["start"] = given.pop(self.START_DATE)
        given["end"] = given.pop(self.END_DATE)
        given[self.RESERVATIONS] = [
            self._reservation(dict(item)) for item in given[self.RESERVATIONS]
        ]
        lease = self.client_plugin().create_lease(**given)
        self.resource_id_set(str(lease["id"]))
        return str(lease["id"])

    def handle_delete(self) -> str | None:
        if self.resource_id is None:
            return None
        try:
            self.client_plugin().call("DELETE", f"/leases/{self.resource_id}")
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return None
        return self.resource_id

    def check_delete_complete(self, token: Any) -> bool:
        return not token or self.client_plugin().gone(f"/leases/{token}")

    def _show_resource(self) -> dict[str, Any] | None:
        return (
            None if self.resource_id is None else self.client_plugin().get_lease(self.resource_id)
        )

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        lease = self.client_plugin().get_lease(self.resource_id)
        if name not in lease:
            raise InvalidTemplateAttribute(self.name, name)
        return lease[name]


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Blazar::Lease": BlazarLease}
