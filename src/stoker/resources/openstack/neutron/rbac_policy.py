"""OS::Neutron::RBACPolicy, as Heat has it: shares a network, QoS policy, security group,
address scope or subnet pool with a project; only the target project is updated in place.
The object is named by name or id (resolved as Heat's translation rule does), and an
action the object type does not have is refused at validation with Heat's message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.neutron.neutron import NeutronResource
from stoker.sdk import constraints, properties, support, translation
from stoker.sdk.exceptions import ValidationError

__all__ = ["RBACPolicy", "resource_mapping"]


class RBACPolicy(NeutronResource):
    """A Resource for managing RBAC policy in Neutron.

    This resource creates and manages Neutron RBAC policy, which allows to share Neutron
    networks, qos-policies, security-groups, address-scopes, subnetpools to subsets of
    tenants.
    """

    support_status = support.SupportStatus(version="6.0.0")
    entity = "rbac_policy"

    PROPERTIES = (OBJECT_TYPE, TARGET_TENANT, ACTION, OBJECT_ID, TENANT_ID) = (
        "object_type", "target_tenant", "action", "object_id", "tenant_id",
    )  # fmt: skip
    OBJECT_TYPE_KEYS = (
        OBJECT_NETWORK, OBJECT_QOS_POLICY, OBJECT_SECURITY_GROUP, OBJECT_ADDRESS_SCOPE, OBJECT_SUBNETPOOL,
    ) = ("network", "qos_policy", "security_group", "address_scope", "subnetpool")  # fmt: skip
    ACTION_KEYS = (ACCESS_AS_SHARED, ACCESS_AS_EXTERNAL) = (
        "access_as_shared",
        "access_as_external",
    )
    SUPPORTED_TYPES_ACTIONS = {
        OBJECT_NETWORK: [ACCESS_AS_SHARED, ACCESS_AS_EXTERNAL],
        OBJECT_QOS_POLICY: [ACCESS_AS_SHARED],
        OBJECT_SECURITY_GROUP: [ACCESS_AS_SHARED],
        OBJECT_ADDRESS_SCOPE: [ACCESS_AS_SHARED],
        OBJECT_SUBNETPOOL: [ACCESS_AS_SHARED],
    }
    # Heat's object types -> the neutron client plugin's entity names.
    _ENTITIES = {OBJECT_QOS_POLICY: "policy"}

    properties_schema = {
        OBJECT_TYPE: properties.Schema(
            properties.Schema.STRING,
            "Type of the object that RBAC policy affects.",
            required=True,
            constraints=[constraints.AllowedValues(list(OBJECT_TYPE_KEYS))],
        ),
        TARGET_TENANT: properties.Schema(
            properties.Schema.STRING,
            "ID of the tenant to which the RBAC policy will be enforced.",
            required=True,
            update_allowed=True,
        ),
        ACTION: properties.Schema(
            properties.Schema.STRING,
            "Action for the RBAC policy. The allowed actions differ for different object types - "
            "only network objects can have an access_as_external action.",
            required=True,
            constraints=[constraints.AllowedValues(list(ACTION_KEYS))],
        ),
        OBJECT_ID: properties.Schema(
            properties.Schema.STRING, "ID or name of the RBAC object.", required=True
        ),
        TENANT_ID: properties.Schema(
            properties.Schema.STRING,
            "The owner tenant ID. Only required if the caller has an administrative role and wants "
            "to create a RBAC for another tenant.",
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        object_type = props.get(self.OBJECT_TYPE)
        return [
            translation.TranslationRule(
                props,
                translation.TranslationRule.RESOLVE,
                [self.OBJECT_ID],
                client_plugin="neutron",
                finder="find_resourceid_by_name_or_id",
                entity=self._ENTITIES.get(object_type, object_type),
            )
        ]

    def validate(self) -> None:
        super().validate()
        action, object_type = self.properties[self.ACTION], self.properties[self.OBJECT_TYPE]
        valid = self.SUPPORTED_TYPES_ACTIONS.get(object_type, [])
        if action not in valid:
            raise ValidationError(
                f'Invalid action "{action}" for object type {object_type}. Valid actions: {", ".join(valid)}',
                path=f"resources.{self.name}.properties.action",
            )

    def handle_create(self) -> None:
        body = self.prepare_properties()
        if "tenant_id" in body:
            body["project_id"] = body.pop("tenant_id")
        self.created(self.client().create_rbac_policy(**body))

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if prop_diff:
            self.client().update_rbac_policy(self.resource_id, **dict(prop_diff))


def resource_mapping() -> dict[str, type[NeutronResource]]:
    return {"OS::Neutron::RBACPolicy": RBACPolicy}
