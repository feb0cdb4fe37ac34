"""OS::Keystone::Project, as Heat has it.

Owns: the project's create (name defaulting to the physical resource name, in a domain,
under a parent), name, description, enabled, domain and tags updated in place (a new
parent replaces it), and delete, which first deletes the "default" security group
Neutron made for the project (Heat does, so that the group is not orphaned).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.keystone.keystone import KeystoneResource, keystone_v3
from stoker.sdk import attributes, constraints, properties, support, translation

__all__ = ["KeystoneProject", "resource_mapping"]


class KeystoneProject(KeystoneResource):
    """Heat Template Resource for Keystone Project.

    Projects represent the base unit of ownership in OpenStack, in that all resources in
    OpenStack should be owned by a specific project. A project itself must be owned by a
    specific domain, and hence all project names are not globally unique, but unique to
    their domain. If the domain for a project is not specified, then it is added to the
    default domain.
    """

    support_status = keystone_v3("2015.1")
    entity, collection = "project", "projects"

    PROPERTIES = (NAME, DOMAIN, DESCRIPTION, ENABLED, PARENT, TAGS) = (
        "name", "domain", "description", "enabled", "parent", "tags",
    )  # fmt: skip
    ATTRIBUTES = (NAME_ATTR, PARENT_ATTR, DOMAIN_ATTR, ENABLED_ATTR, IS_DOMAIN_ATTR) = (
        "name", "parent_id", "domain_id", "enabled", "is_domain",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of keystone project.", update_allowed=True
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
            "Description of keystone project.",
            default="",
            update_allowed=True,
        ),
        ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "This project is enabled or disabled.",
            default=True,
            update_allowed=True,
        ),
        PARENT: properties.Schema(
            properties.Schema.STRING,
            "The name or ID of parent of this keystone project in hierarchy.",
            support_status=support.SupportStatus(version="6.0.0"),
            constraints=[constraints.CustomConstraint("keystone.project")],
        ),
        TAGS: properties.Schema(
            properties.Schema.LIST,
            "A list of tags for labeling and sorting projects.",
            support_status=support.SupportStatus(version="10.0.0"),
            default=[],
            update_allowed=True,
        ),
    }

    attributes_schema = {
        NAME_ATTR: attributes.Schema(
            "Project name.",
            support_status=support.SupportStatus(version="10.0.0"),
            type=attributes.Schema.STRING,
        ),
        PARENT_ATTR: attributes.Schema(
            "Parent project id.",
            support_status=support.SupportStatus(version="10.0.0"),
            type=attributes.Schema.STRING,
        ),
        DOMAIN_ATTR: attributes.Schema(
            "Domain id for project.",
            support_status=support.SupportStatus(version="10.0.0"),
            type=attributes.Schema.STRING,
        ),
        ENABLED_ATTR: attributes.Schema(
            "Flag of enable project.",
            support_status=support.SupportStatus(version="10.0.0"),
            type=attributes.Schema.BOOLEAN,
        ),
        IS_DOMAIN_ATTR: attributes.Schema(
            "Indicates whether the project also acts as a domain.",
            support_status=support.SupportStatus(version="10.0.0"),
            type=attributes.Schema.BOOLEAN,
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        resolve = translation.TranslationRule.RESOLVE
        return [
            translation.TranslationRule(
                props, resolve, [self.DOMAIN], client_plugin="keystone", finder="get_domain_id"
            ),
            translation.TranslationRule(
                props, resolve, [self.PARENT], client_plugin="keystone", finder="get_project_id"
            ),
        ]

    def create_arguments(self) -> dict[str, Any]:
        """openstacksdk's ``create_project`` arguments."""
        arguments: dict[str, Any] = {
            "name": self.object_name(),
            "domain_id": self.properties[self.DOMAIN],
            "description": self.properties[self.DESCRIPTION],
            "is_enabled": bool(self.properties[self.ENABLED]),
            "tags": list(self.properties[self.TAGS] or []),
        }
        if self.given(self.PARENT):
            arguments["parent_id"] = self.given(self.PARENT)
        return arguments

    def handle_create(self) -> None:
        project = self.keystone(lambda: self.client().create_project(**self.create_arguments()))
        self.resource_id_set(project.id)

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        changes: dict[str, Any] = self.changed_name(prop_diff)
        if self.DESCRIPTION in prop_diff:
            changes["description"] = prop_diff[self.DESCRIPTION] or ""
        if self.ENABLED in prop_diff:
            changes["is_enabled"] = bool(prop_diff[self.ENABLED])
        if self.DOMAIN in prop_diff:
            # Keystone refuses to move a project, in its own words (as Heat sends it).
            changes["domain_id"] = prop_diff[self.DOMAIN] or "default"
        if self.TAGS in prop_diff:
            changes["tags"] = list(prop_diff[self.TAGS] or [])
        if changes:
            self.keystone(lambda: self.client().update_project(self.resource_id, **changes))

    def handle_delete(self) -> Any:
        if self.resource_id is not None:
            self._delete_default_security_group()
        return super().handle_delete()

    def _delete_default_security_group(self) -> None:
        """Neutron's "default" group of this project (made when the project first used
        Neutron); a cloud without Neutron has none."""
        if not self.client_plugin().connection.has_service("network"):
            return
        neutron = self.client_plugin("neutron")
        for group in neutron.client().security_groups(project_id=self.resource_id, name="default"):
            try:
                neutron.client().delete_security_group(group.id, ignore_missing=False)
            except Exception as error:  # noqa: BLE001 - openstacksdk's types
                neutron.ignore_not_found(error)


def resource_mapping() -> dict[str, type[KeystoneProject]]:
    return {"OS::Keystone::Project": KeystoneProject}
