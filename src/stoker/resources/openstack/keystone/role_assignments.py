"""Heat's role assignments: ``RoleAssignments`` (the ``roles`` property of
OS::Keystone::User and OS::Keystone::Group: roles on projects or domains) and the two
types that only assign, OS::Keystone::UserRoleAssignment and
OS::Keystone::GroupRoleAssignment (kept together, where Heat keeps them).

Owns: the ``roles`` schema and its checks (a project or a domain, not both), roles named
by name or id (``name{domain}`` too) compared by id, so an update grants what is new and
revokes what is gone (Heat's diff), and revoking what a resource granted when it is
deleted (assignments already gone are no error).

Decided where Heat is silent or loses assignments: an assignment type records its user's
or group's id as its physical id (``get_resource`` still gives the resource's name, as in
Heat), so that a replacement first revokes what the old one granted
(``prepare_for_replace``) and the new one's grants are not revoked by the old one's
delete; and a changed ``user``/``group`` moves every role to the new one (Heat changes
nothing then).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from stoker.resources.openstack.keystone.keystone import KeystoneResource, keystone_v3
from stoker.sdk import constraints, properties
from stoker.sdk.exceptions import ResourceFailure, ValidationError

__all__ = ["GroupRoleAssignment", "RoleAssignments", "UserRoleAssignment", "resource_mapping"]

# (role id, project id or None, domain id or None)
Assignment = tuple[str, str | None, str | None]


class RoleAssignments:
    """The ``roles`` property and what it grants; the class using it says whose roles
    they are (``assignee``: ``("user", id)`` or ``("group", id)``)."""

    ROLES = "roles"
    ROLE_KEYS = (ROLE, DOMAIN, PROJECT) = ("role", "domain", "project")

    mixin_properties_schema = {
        ROLES: properties.Schema(
            properties.Schema.LIST,
            "List of role assignments.",
            schema=properties.Schema(
                properties.Schema.MAP,
                "Map between role with either project or domain.",
                schema={
                    ROLE: properties.Schema(
                        properties.Schema.STRING,
                        "Keystone role.",
                        required=True,
                        constraints=[constraints.CustomConstraint("keystone.role")],
                    ),
                    PROJECT: properties.Schema(
                        properties.Schema.STRING,
                        "Keystone project.",
                        constraints=[constraints.CustomConstraint("keystone.project")],
                    ),
                    DOMAIN: properties.Schema(
                        properties.Schema.STRING,
                        "Keystone domain.",
                        constraints=[constraints.CustomConstraint("keystone.domain")],
                    ),
                },
            ),
            update_allowed=True,
        )
    }

    # What the class using the mixin has (a KeystoneResource).
    name: str
    properties: Any
    client_plugin: Any

    def validate_assignment_properties(self) -> None:
        for index, assignment in enumerate(self.properties[self.ROLES] or []):
            where = f"resources.{self.name}.properties.{self.ROLES}[{index}]"
            project, domain = assignment.get(self.PROJECT), assignment.get(self.DOMAIN)
            if project is not None and domain is not None:
                raise ValidationError(
                    "Cannot define the following properties at the same time: project, domain.",
                    path=where,
                    hint="a role is given on a project or on a domain: keep one",
                )
            if project is None and domain is None:
                raise ValidationError(
                    f"Either project or domain must be specified for role {assignment.get(self.ROLE)}",
                    path=where,
                    hint="add project: <name or id> or domain: <name or id>",
                )

    def assignments(
        self, roles: Iterable[Mapping[str, Any]] | None, missing_ok: bool = False
    ) -> set[Assignment]:
        """``roles`` (names or ids) as ids; ``missing_ok``: one whose role, project or
        domain is gone is left out (for revoking)."""
        keystone = self.client_plugin()
        found: set[Assignment] = set()
        for assignment in roles or []:
            try:
                role = keystone.get_role_id(assignment[self.ROLE])
                project = assignment.get(self.PROJECT)
                domain = assignment.get(self.DOMAIN)
                found.add((
                    role,
                    keystone.get_project_id(project) if project else None,
                    keystone.get_domain_id(domain) if domain and not project else None,
                ))  # fmt: skip
            except Exception as error:  # noqa: BLE001 - the finders' and openstacksdk's types
                if not missing_ok:
                    raise
                keystone.ignore_not_found(error)
        return found

    def grant_all(self, assignee: tuple[str, str], assignments: Iterable[Assignment]) -> None:
        keystone = self.client_plugin()
        for role, project, domain in sorted(assignments, key=str):
            keystone.grant(
                role, project_id=project, domain_id=domain, **{f"{assignee[0]}_id": assignee[1]}
            )

    def revoke_all(self, assignee: tuple[str, str], assignments: Iterable[Assignment]) -> None:
        keystone = self.client_plugin()
        for role, project, domain in sorted(assignments, key=str):
            keystone.revoke(
                role, project_id=project, domain_id=domain, **{f"{assignee[0]}_id": assignee[1]}
            )

    def live_assignments(self, assignee: tuple[str, str]) -> set[Assignment]:
        listed = self.client_plugin().role_assignments(**{f"{assignee[0]}_id": assignee[1]})
        return {(item["role"], item["project"], item["domain"]) for item in listed}

    def update_assignments(self, assignee: tuple[str, str], prop_diff: Mapping[str, Any]) -> None:
        """Grant the roles the update adds, revoke those it removes (Heat's diff)."""
        if self.ROLES not in prop_diff:
            return
        before = self.assignments(self.properties[self.ROLES], missing_ok=True)
        after = self.assignments(prop_diff[self.ROLES])
        self.grant_all(assignee, after - before)
        self.revoke_all(assignee, before - after)

    def check_assignments(self, assignee: tuple[str, str]) -> None:
        missing = self.assignments(self.properties[self.ROLES]) - self.live_assignments(assignee)
        if missing:
            described = ", ".join(
                f"role {role} on {'project ' + project if project else 'domain ' + str(domain)}"
                for role, project, domain in sorted(missing, key=str)
            )
            raise ResourceFailure(f"The {assignee[0]} {assignee[1]} no longer has {described}")


class _AssignmentResource(RoleAssignments, KeystoneResource):
    """An assignment type: the roles of the user or group its property names."""

    # "user" or "group": the property, and the kind of assignee.
    assignee_kind = ""
    name_property = None
    RELEASED = "released"

    def get_reference_id(self) -> str:
        return self.name  # Heat's: such a resource has no physical id

    def validate(self) -> None:
        super().validate()
        self.validate_assignment_properties()

    def assignee_id(self, value: str) -> str:
        finder = getattr(self.client_plugin(), f"get_{self.assignee_kind}_id")
        return str(finder(value))

    def assignee(self) -> tuple[str, str]:
        assignee_id = self.resource_id or self.assignee_id(self.properties[self.assignee_kind])
        return self.assignee_kind, assignee_id

    def handle_create(self) -> None:
        assignee_id = self.assignee_id(self.properties[self.assignee_kind])
        self.resource_id_set(assignee_id)
        self.grant_all(
            (self.assignee_kind, assignee_id), self.assignments(self.properties[self.ROLES])
        )

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if self.assignee_kind in prop_diff:
            new_id = self.assignee_id(prop_diff[self.assignee_kind])
            if new_id != self.resource_id:
                roles = (
                    prop_diff[self.ROLES]
                    if self.ROLES in prop_diff
                    else self.properties[self.ROLES]
                )
                self.grant_all((self.assignee_kind, new_id), self.assignments(roles))
                self._revoke_granted()
                self.resource_id_set(new_id)
                return
        self.update_assignments(self.assignee(), prop_diff)

    def _revoke_granted(self) -> None:
        if self.resource_id is None:
            # Its create never got as far as recording whose roles it grants, which it
            # does before granting any: it granted nothing (and the roles the template
            # names may be another resource's grants, a replacement's).
            return
        # A user or group already gone took its roles with it: revoking is then a 404, ignored.
        self.revoke_all(
            (self.assignee_kind, self.resource_id),
            self.assignments(self.properties[self.ROLES], missing_ok=True),
        )

    def handle_delete(self) -> None:
        if self.data().get(self.RELEASED):
            return
        self._revoke_granted()

    def prepare_for_replace(self) -> None:
        # The replacement grants the roles again; revoked now, they are not revoked
        # after it by this one's delete.
        self._revoke_granted()
        self.data_set(self.RELEASED, True)

    def restore_prev_rsrc(self, convergence: bool = False) -> None:
        self.grant_all(self.assignee(), self.assignments(self.properties[self.ROLES]))
        self.data_delete(self.RELEASED)

    def handle_check(self) -> None:
        assignee = self.assignee()
        getattr(self.client(), f"get_{self.assignee_kind}")(assignee[1])
        self.check_assignments(assignee)

    def _show_resource(self) -> dict[str, Any] | None:
        return None

    def find_created(self) -> str | None:
        return None


class UserRoleAssignment(_AssignmentResource):
    """Resource for granting roles to a user.

    Resource for specifying users and their's roles.
    """

    support_status = keystone_v3("5.0.0")
    assignee_kind = "user"

    PROPERTIES = (USER,) = ("user",)

    properties_schema = {
        USER: properties.Schema(
            properties.Schema.STRING,
            "Name or id of keystone user.",
            required=True,
            update_allowed=True,
            constraints=[constraints.CustomConstraint("keystone.user")],
        ),
        **RoleAssignments.mixin_properties_schema,
    }


class GroupRoleAssignment(_AssignmentResource):
    """Resource for granting roles to a group.

    Resource for specifying groups and their's roles.
    """

    support_status = keystone_v3("5.0.0")
    assignee_kind = "group"

    PROPERTIES = (GROUP,) = ("group",)

    properties_schema = {
        GROUP: properties.Schema(
            properties.Schema.STRING,
            "Name or id of keystone group.",
            required=True,
            update_allowed=True,
            constraints=[constraints.CustomConstraint("keystone.group")],
        ),
        **RoleAssignments.mixin_properties_schema,
    }


def resource_mapping() -> dict[str, type[KeystoneResource]]:
    return {
        "OS::Keystone::UserRoleAssignment": UserRoleAssignment,
        "OS::Keystone::GroupRoleAssignment": GroupRoleAssignment,
    }
