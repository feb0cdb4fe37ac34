"""OS::Neutron::Firewall, as Heat 27 has it: a firewall of Neutron's FWaaS **v1** API
(``/fw/firewalls``), which Heat still talks to. FWaaS v1 left neutron-fwaas in Stein
(2019), so no Neutron today serves it: the type is kept with Heat's schema and validation,
and a create on a Neutron without the ``fwaas`` extension fails with Heat's message.
Name, description, admin state, policy and value_specs change in place."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.rest_resource import NeutronRestResource
from stoker.sdk import attributes, properties, support

__all__ = ["FWAAS_V1_NOTE", "Firewall", "resource_mapping"]

_STRING = attributes.Schema.STRING
FWAAS_V1_NOTE = "There is no such option during 5.0.0, so need to make this property unsupported while it not used."


class Firewall(NeutronRestResource):
    """A resource for the Firewall resource in Neutron FWaaS.

    Resource for using the Neutron firewall implementation. Firewall is a network security
    system that monitors and controls the incoming and outgoing network traffic based on
    predetermined security rules.
    """

    entity = "firewall"
    collection = "/fw/firewalls"
    required_service_extension = "fwaas"

    PROPERTIES = (NAME, DESCRIPTION, ADMIN_STATE_UP, FIREWALL_POLICY_ID, VALUE_SPECS, SHARED) = (
        "name", "description", "admin_state_up", "firewall_policy_id", "value_specs", "shared",
    )  # fmt: skip
    ATTRIBUTES = (
        NAME_ATTR, DESCRIPTION_ATTR, ADMIN_STATE_UP_ATTR, FIREWALL_POLICY_ID_ATTR, SHARED_ATTR, STATUS, TENANT_ID,
    ) = (
        "name", "description", "admin_state_up", "firewall_policy_id", "shared", "status", "tenant_id",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name for the firewall.", update_allowed=True
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Description for the firewall.", update_allowed=True
        ),
        ADMIN_STATE_UP: properties.Schema(
            properties.Schema.BOOLEAN,
            "Administrative state of the firewall. If false (down), firewall does not forward "
            "packets and will drop all traffic to/from VMs behind the firewall.",
            default=True,
            update_allowed=True,
        ),
        FIREWALL_POLICY_ID: properties.Schema(
            properties.Schema.STRING,
            "The ID of the firewall policy that this firewall is associated with.",
            required=True,
            update_allowed=True,
        ),
        VALUE_SPECS: properties.Schema(
            properties.Schema.MAP,
            "Extra parameters to include in the request. Parameters are often specific to "
            "installed hardware or extensions.",
            support_status=support.SupportStatus(version="5.0.0"),
            default={},
            update_allowed=True,
        ),
        SHARED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Whether this firewall should be shared across all tenants. NOTE: The default policy "
            "setting in Neutron restricts usage of this property to administrative users only.",
            update_allowed=True,
            support_status=support.SupportStatus(
                status=support.UNSUPPORTED,
                message=FWAAS_V1_NOTE,
                version="6.0.0",
                previous_status=support.SupportStatus(version="2015.1"),
            ),
        ),
    }

    attributes_schema = {
        NAME_ATTR: attributes.Schema("Name for the firewall.", type=_STRING),
        DESCRIPTION_ATTR: attributes.Schema("Description of the firewall.", type=_STRING),
        ADMIN_STATE_UP_ATTR: attributes.Schema(
            "The administrative state of the firewall.", type=_STRING
        ),
        FIREWALL_POLICY_ID_ATTR: attributes.Schema(
            "Unique identifier of the firewall policy used to create the firewall.", type=_STRING
        ),
        SHARED_ATTR: attributes.Schema(
            "Shared status of this firewall.",
            support_status=support.SupportStatus(
                status=support.UNSUPPORTED,
                message="There is no such option during 5.0.0, so need to make this attribute "
                "unsupported, otherwise error will raised.",
                version="6.0.0",
            ),
            type=_STRING,
        ),
        STATUS: attributes.Schema("The status of the firewall.", type=_STRING),
        TENANT_ID: attributes.Schema("Id of the tenant owning the firewall.", type=_STRING),
    }

    def handle_create(self) -> dict[str, Any]:
        return self.rest_create(self.prepare_properties())

    def check_create_complete(self, token: Any) -> bool:
        return self.wait_status(("ACTIVE", "INACTIVE"), waiting=("PENDING_CREATE",))

    def handle_update(self, json_snippet: Any, tmpl_diff: Any, prop_diff: Mapping[str, Any]) -> None:
        changes = dict(prop_diff)
        self.prepare_update_properties(changes)
        self.rest_update(changes)

    def _resolve_attribute(self, name: str) -> Any:
        if name == self.SHARED_ATTR:
            return "This attribute is currently unsupported in neutron firewall resource."
        return super()._resolve_attribute(name)


def resource_mapping() -> dict[str, type[NeutronRestResource]]:
    return {"OS::Neutron::Firewall": Firewall}
