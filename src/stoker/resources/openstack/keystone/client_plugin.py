"""The ``keystone`` client plugin (openstacksdk's identity proxy) and the custom
constraints Heat registers for Keystone."""

from __future__ import annotations

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin
from stoker.resources.openstack.constraints import LookupConstraint

__all__ = ["KeystoneClientPlugin", "client_mapping", "constraint_mapping"]


class KeystoneClientPlugin(OpenStackClientPlugin):
    """Keystone through openstacksdk's ``connection.identity``."""

    name = "keystone"
    service_type = "identity"
    proxy_name = "identity"

    def get_project_id(self, project: str) -> str:
        return self.find_id("project", project)

    def get_user_id(self, user: str) -> str:
        return self.find_id("user", user)

    def get_role_id(self, role: str) -> str:
        return self.find_id("role", role)

    def get_domain_id(self, domain: str) -> str:
        return self.find_id("domain", domain)

    def get_group_id(self, group: str) -> str:
        return self.find_id("group", group)


class _KeystoneConstraint(LookupConstraint):
    client_plugin_name = "keystone"


class ProjectConstraint(_KeystoneConstraint):
    name, entity = "keystone.project", "project"


class UserConstraint(_KeystoneConstraint):
    name, entity = "keystone.user", "user"


class RoleConstraint(_KeystoneConstraint):
    name, entity = "keystone.role", "role"


class DomainConstraint(_KeystoneConstraint):
    name, entity = "keystone.domain", "domain"


class GroupConstraint(_KeystoneConstraint):
    name, entity = "keystone.group", "group"


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"keystone": KeystoneClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {c.name: c for c in (ProjectConstraint, UserConstraint, RoleConstraint, DomainConstraint, GroupConstraint)}
