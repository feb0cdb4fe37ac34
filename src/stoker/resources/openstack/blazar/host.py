"""OS::Blazar::Host, as Heat has it.

Owns: the host's create request (``extra_capability``'s keys sent beside the name, a
``name`` among them dropped, as Heat does), delete, and the attributes (the host as Blazar
shows it; one Blazar does not show is Heat's InvalidTemplateAttribute). No update: Heat has
none (Blazar cannot delete an extra capability), so any change replaces the host.

Untested against a real Blazar (issue 29): a host must be a Nova compute host Blazar's
manager takes over. Validation, and the refusal a cloud without Blazar gives, are tested
through the ``stoker`` command.
"""

from __future__ import annotations

from typing import Any

from stoker.sdk import attributes, properties, support
from stoker.sdk.exceptions import InvalidTemplateAttribute
from stoker.sdk.resource import Resource

__all__ = ["BlazarHost", "resource_mapping"]


class BlazarHost(Resource):
    """A resource to manage Blazar hosts.

    Host resource manages the physical hosts for the lease/reservation within OpenStack.
    """

    support_status = support.SupportStatus(version="12.0.0")
    default_client_name = "blazar"
    entity = "host"

    PROPERTIES = (NAME, EXTRA_CAPABILITY) = ("name", "extra_capability")
    ATTRIBUTES = (
        HYPERVISOR_HOSTNAME_ATTR, HYPERVISOR_TYPE_ATTR, HYPERVISOR_VERSION_ATTR, VCPUS_ATTR,
        CPU_INFO_ATTR, MEMORY_MB_ATTR, LOCAL_GB_ATTR, SERVICE_NAME_ATTR, RESERVABLE_ATTR,
        STATUS_ATTR, TRUST_ID_ATTR, EXTRA_CAPABILITY_ATTR, CREATED_AT_ATTR, UPDATED_AT_ATTR,
    ) = (
        "hypervisor_hostname", "hypervisor_type", "hypervisor_version", "vcpus", "cpu_info",
        "memory_mb", "local_gb", "service_name", "reservable", "status", "trust_id",
        "extra_capability", "created_at", "updated_at",
    )  # fmt: skip

    properties_schema = {
        EXTRA_CAPABILITY: properties.Schema(
            properties.Schema.MAP,
            "The extra capability of the host.",
        ),
        NAME: properties.Schema(
            properties.Schema.STRING,
            "The name of the host.",
            required=True,
        ),
    }

    attributes_schema = {
        CPU_INFO_ATTR: attributes.Schema(
            "Information of the CPU of the host.", type=attributes.Schema.MAP
        ),
        CREATED_AT_ATTR: attributes.Schema(
            'The date and time when the host was created. The date and time format must be "CCYY-MM-DD hh:mm".',
            type=attributes.Schema.STRING,
        ),
        EXTRA_CAPABILITY_ATTR: attributes.Schema(
            "The extra capability of the host.", type=attributes.Schema.MAP
        ),
        HYPERVISOR_HOSTNAME_ATTR: attributes.Schema(
            "The hypervisor name of the host.", type=attributes.Schema.STRING
        ),
        HYPERVISOR_TYPE_ATTR: attributes.Schema(
            "The hypervisor type the host.", type=attributes.Schema.STRING
        ),
        HYPERVISOR_VERSION_ATTR: attributes.Schema(
            "The hypervisor version of the host.", type=attributes.Schema.INTEGER
        ),
        LOCAL_GB_ATTR: attributes.Schema(
            "Gigabytes of the disk of the host.", type=attributes.Schema.INTEGER
        ),
        MEMORY_MB_ATTR: attributes.Schema(
            "Megabytes of the memory of the host.", type=attributes.Schema.INTEGER
        ),
        RESERVABLE_ATTR: attributes.Schema(
            "The flag which represents whether the host is reservable or not.",
            type=attributes.Schema.BOOLEAN,
        ),
        SERVICE_NAME_ATTR: attributes.Schema(
            "The compute service name of the host.", type=attributes.Schema.STRING
        ),
        STATUS_ATTR: attributes.Schema("The status of the host.", type=attributes.Schema.STRING),
        TRUST_ID_ATTR: attributes.Schema(
            "The UUID of the trust of the host operator.", type=attributes.Schema.STRING
        ),
        UPDATED_AT_ATTR: attributes.Schema(
            'The date and time when the host was updated. The date and time format must be "CCYY-MM-DD hh:mm".',
            type=attributes.Schema.STRING,
        ),
        VCPUS_ATTR: attributes.Schema(
            "The number of the VCPUs of the host.", type=attributes.Schema.INTEGER
        ),
    }

    def handle_create(self) -> str:
        body: dict[str, Any] = {self.NAME: self.properties[self.NAME]}
        extra = dict(self.properties[self.EXTRA_CAPABILITY] or {})
        extra.pop(self.NAME, None)
        body.update(extra)
        host = self.client_plugin().create_host(**body)
        self.resource_id_set(str(host["id"]))
        return str(host["id"])

    def handle_delete(self) -> str | None:
        if self.resource_id is None:
            return None
        try:
            self.client_plugin().call("DELETE", f"/os-hosts/{self.resource_id}")
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)
            return None
        return self.resource_id

    def check_delete_complete(self, token: Any) -> bool:
        return not token or self.client_plugin().gone(f"/os-hosts/{token}")

    def _show_resource(self) -> dict[str, Any] | None:
        return None if self.resource_id is None else self.client_plugin().get_host(self.resource_id)

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        host = self.client_plugin().get_host(self.resource_id)
        if name not in host:
            raise InvalidTemplateAttribute(self.name, name)
        return host[name]


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Blazar::Host": BlazarHost}
