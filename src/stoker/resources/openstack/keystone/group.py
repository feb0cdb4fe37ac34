"""OS::Keystone::Group, as Heat has it.

Owns: the group's create (name defaulting to the physical resource name, in a domain)
with its roles (``roles``, Heat's role-assignment mixin), name, description, domain and
roles updated in place, delete (Keystone removes its memberships and assignments).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.keystone.keystone import KeystoneResource, keystone_v3
from stoker.resources.openstack.keystone.role_assignments import RoleAssignments
from stoker.sdk import constraints, properties, translation

__all__ = ["KeystoneGroup", "resource_mapping"]


class KeystoneGroup(RoleAssignments, KeystoneResource):
    """Heat Template Resource for Keystone Group.

    Groups are a container representing a collection of users. A group itself must be
    owned by a specific domain, and hence all group names are not globally unique, but
    only unique to their domain.
    """

    support_status = keystone_v3("2015.1")
    entity, collection = "group", "groups"

    PROPERTIES = (NAME, DOMAIN, DESCRIPTION) = ("name", "domain", "description")

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of keystone group.", update_allowed=True
        ),
        DOMAIN: properties.Schema(
            properties.Schema.STRING,
            "Name or id of keystone domain.",
            default="default",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("keystone.domain")],
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING,
            "Description of keystone group.",
            default="",
            update_allowed=True,
        ),
        **RoleAssignments.mixin_properties_schema,
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        return [
            translation.TranslationRule(
                props,
                translation.TranslationRule.RESOLVE,
                [self.DOMAIN],
                client_plugin="keystone",
                finder="get_domain_id",
            )
        ]

    def validate(self) -> None:
        super().validate()
        self.validate_assignment_properties()

    def handle_create(self) -> None:
        group = self.keystone(
            lambda: self.client().create_group(
                name=self.object_name(),
                domain_id=self.properties[self.DOMAIN],
                description=self.properties[self.DESCRIPTION],
            )
        )
        self.resource_id_set(group.id)
        self.grant_all(("group", group.id), self.assignments(self.properties[self.ROLES]))

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        changes: dict[str, Any] = self.changed_name(prop_diff)
        if self.DESCRIPTION in prop_diff:
            changes["description"] = prop_diff[self.DESCRIPTION] or ""
        if self.DOMAIN in prop_diff:
            changes["domain_id"] = prop_diff[self.DOMAIN] or "default"
        if changes:
            self.keystone(lambda: self.client().update_group(self.resource_id, **changes))
        self.update_assignments(("group", str(self.resource_id)), prop_diff)

    def handle_check(self) -> None:
        super().handle_check()
        self.check_assignments(("group", str(self.resource_id)))


def resource_mapping() -> dict[str, type[KeystoneGroup]]:
    return {"OS::Keystone::Group": KeystoneGroup}
