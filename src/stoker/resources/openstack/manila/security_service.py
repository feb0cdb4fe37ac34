"""OS::Manila::SecurityService, as Heat has it.

Owns: creating a security service with the properties that are set (openstacksdk has no
proxy for security services: Manila's REST API through the client plugin), updating
everything but its type in place, delete, check, and finding a security service an
interrupted create made. A security service the template does not name is given the
resource's physical name (Heat sends none), which ``find_created`` looks for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.sdk import constraints, properties, support
from stoker.sdk.resource import Resource

__all__ = ["SecurityService", "resource_mapping"]


class SecurityService(Resource):
    """A resource that implements security service of Manila.

    A security_service is a set of options that defines a security domain for a particular
    shared filesystem protocol, such as an Active Directory domain or a Kerberos domain.
    """

    support_status = support.SupportStatus(version="5.0.0")
    default_client_name = "manila"
    entity = "security_services"

    PROPERTIES = (NAME, TYPE, DNS_IP, SERVER, DOMAIN, USER, PASSWORD, DESCRIPTION) = (
        "name", "type", "dns_ip", "server", "domain", "user", "password", "description",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Security service name.", update_allowed=True
        ),
        TYPE: properties.Schema(
            properties.Schema.STRING,
            "Security service type.",
            required=True,
            constraints=[constraints.AllowedValues(["ldap", "kerberos", "active_directory"])],
        ),
        DNS_IP: properties.Schema(
            properties.Schema.STRING,
            "DNS IP address used inside tenant's network.",
            update_allowed=True,
        ),
        SERVER: properties.Schema(
            properties.Schema.STRING,
            "Security service IP address or hostname.",
            update_allowed=True,
        ),
        DOMAIN: properties.Schema(
            properties.Schema.STRING, "Security service domain.", update_allowed=True
        ),
        USER: properties.Schema(
            properties.Schema.STRING,
            "Security service user or group used by tenant.",
            update_allowed=True,
        ),
        PASSWORD: properties.Schema(
            properties.Schema.STRING, "Password used by user.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Security service description.", update_allowed=True
        ),
    }

    def handle_create(self) -> None:
        body = {
            key: value for key, value in self.properties.resolved().items() if value is not None
        }
        body[self.NAME] = body.get(self.NAME) or self.physical_resource_name()
        created = self.client_plugin().create_security_service(**body)
        self.resource_id_set(created["id"])

    def find_created(self) -> str | None:
        if self.properties[self.NAME]:
            return None
        name = self.physical_resource_name()
        for found in self.client_plugin().security_services(name=name):
            if found.get("name") == name:
                return str(found["id"])
        return None

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if not prop_diff:
            return
        changes = dict(prop_diff)
        if self.NAME in changes and not changes[self.NAME]:
            changes[self.NAME] = self.physical_resource_name()
        self.client_plugin().update_security_service(self.resource_id, **changes)

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            self.client_plugin().delete_security_service(self.resource_id)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client_plugin().get_security_service_by_id(self.resource_id)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return self.client_plugin().get_security_service_by_id(self.resource_id)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Manila::SecurityService": SecurityService}
