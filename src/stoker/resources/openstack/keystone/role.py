"""OS::Keystone::Role, as Heat has it.

Owns: the role's create (name defaulting to the physical resource name; global, or a
domain's own role), its name updated in place (a new domain replaces it), delete (with
it, Keystone removes every assignment of the role).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.keystone.keystone import KeystoneResource, keystone_v3
from stoker.sdk import constraints, properties, support, translation

__all__ = ["KeystoneRole", "resource_mapping"]


class KeystoneRole(KeystoneResource):
    """Heat Template Resource for Keystone Role.

    Roles dictate the level of authorization the end user can obtain. Roles can be granted
    at either the domain or project level. Role can be assigned to the individual user or
    at the group level. Role name is unique within the owning domain.
    """

    support_status = keystone_v3("2015.1")
    entity, collection = "role", "roles"

    PROPERTIES = (NAME, DOMAIN) = ("name", "domain")

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of keystone role.", update_allowed=True
        ),
        DOMAIN: properties.Schema(
            properties.Schema.STRING,
            "Name or id of keystone domain.",
            constraints=[constraints.CustomConstraint("keystone.domain")],
            support_status=support.SupportStatus(version="16.0.0"),
        ),
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

    def handle_create(self) -> None:
        arguments: dict[str, Any] = {"name": self.object_name()}
        if self.given(self.DOMAIN):
            arguments["domain_id"] = self.given(self.DOMAIN)
        role = self.keystone(lambda: self.client().create_role(**arguments))
        self.resource_id_set(role.id)

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        changes = self.changed_name(prop_diff)
        if changes:
            self.keystone(lambda: self.client().update_role(self.resource_id, **changes))

    def find_created(self) -> str | None:
        if self.given(self.NAME):
            return None
        name = self.physical_resource_name()
        query: dict[str, Any] = {"name": name}
        if self.given(self.DOMAIN):
            query["domain_id"] = self.given(self.DOMAIN)
        found = [role for role in self.client().roles(**query) if role.name == name]
        return str(found[0].id) if len(found) == 1 else None


def resource_mapping() -> dict[str, type[KeystoneRole]]:
    return {"OS::Keystone::Role": KeystoneRole}
