"""OS::Keystone::User, as Heat has it.

Owns: the user's create (name defaulting to the physical resource name, in a domain, with
a password, an email and a default project), its groups and its roles (``roles``, Heat's
role-assignment mixin), everything updated in place (groups and roles by difference),
delete, and the user's attributes read from Keystone.

The password is a hidden value: it is sent to Keystone only, and an error that quotes it
is reported with it masked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import partial
from typing import Any

from stoker.resources.openstack.keystone.keystone import KeystoneResource, keystone_v3
from stoker.resources.openstack.keystone.role_assignments import RoleAssignments
from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.exceptions import ResourceFailure

__all__ = ["KeystoneUser", "resource_mapping"]

MASK = "******"


class KeystoneUser(RoleAssignments, KeystoneResource):
    """Heat Template Resource for Keystone User.

    Users represent an individual API consumer. A user itself must be owned by a specific
    domain, and hence all user names are not globally unique, but only unique to their
    domain.
    """

    support_status = keystone_v3("2015.1")
    entity, collection = "user", "users"

    PROPERTIES = (NAME, DOMAIN, DESCRIPTION, ENABLED, EMAIL, PASSWORD, DEFAULT_PROJECT, GROUPS) = (
        "name", "domain", "description", "enabled", "email", "password", "default_project", "groups",
    )  # fmt: skip
    ATTRIBUTES = (NAME_ATTR, DEFAULT_PROJECT_ATTR, DOMAIN_ATTR, ENABLED_ATTR, PASSWORD_EXPIRES_AT_ATTR) = (
        "name", "default_project_id", "domain_id", "enabled", "password_expires_at",
    )  # fmt: skip

    properties_schema = {
        NAME: properties.Schema(
            properties.Schema.STRING, "Name of keystone user.", update_allowed=True
        ),
        DOMAIN: properties.Schema(
            properties.Schema.STRING,
            "Name or ID of keystone domain.",
            default="default",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("keystone.domain")],
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING,
            "Description of keystone user.",
            default="",
            update_allowed=True,
        ),
        ENABLED: properties.Schema(
            properties.Schema.BOOLEAN,
            "Keystone user is enabled or disabled.",
            default=True,
            update_allowed=True,
        ),
        EMAIL: properties.Schema(
            properties.Schema.STRING, "Email address of keystone user.", update_allowed=True
        ),
        PASSWORD: properties.Schema(
            properties.Schema.STRING, "Password of keystone user.", update_allowed=True
        ),
        DEFAULT_PROJECT: properties.Schema(
            properties.Schema.STRING,
            "Name or ID of default project of keystone user.",
            update_allowed=True,
            constraints=[constraints.CustomConstraint("keystone.project")],
        ),
        GROUPS: properties.Schema(
            properties.Schema.LIST,
            "Keystone user groups.",
            update_allowed=True,
            schema=properties.Schema(
                properties.Schema.STRING,
                "Keystone user group.",
                constraints=[constraints.CustomConstraint("keystone.group")],
            ),
        ),
        **RoleAssignments.mixin_properties_schema,
    }

    attributes_schema = {
        NAME_ATTR: attributes.Schema(
            "User name.",
            support_status=support.SupportStatus(version="9.0.0"),
            type=attributes.Schema.STRING,
        ),
        DEFAULT_PROJECT_ATTR: attributes.Schema(
            "Default project id for user.",
            support_status=support.SupportStatus(version="9.0.0"),
            type=attributes.Schema.STRING,
        ),
        DOMAIN_ATTR: attributes.Schema(
            "Domain id for user.",
            support_status=support.SupportStatus(version="9.0.0"),
            type=attributes.Schema.STRING,
        ),
        ENABLED_ATTR: attributes.Schema(
            "Flag of enable user.",
            support_status=support.SupportStatus(version="9.0.0"),
            type=attributes.Schema.BOOLEAN,
        ),
        PASSWORD_EXPIRES_AT_ATTR: attributes.Schema(
            "Show user password expiration time.",
            support_status=support.SupportStatus(version="9.0.0"),
            type=attributes.Schema.STRING,
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        resolve = translation.TranslationRule.RESOLVE
        return [
            translation.TranslationRule(
                props, resolve, [self.DOMAIN], client_plugin="keystone", finder="get_domain_id"
            ),
            translation.TranslationRule(
                props,
                resolve,
                [self.DEFAULT_PROJECT],
                client_plugin="keystone",
                finder="get_project_id",
            ),
            translation.TranslationRule(
                props, resolve, [self.GROUPS], client_plugin="keystone", finder="get_group_id"
            ),
        ]

    def validate(self) -> None:
        super().validate()
        self.validate_assignment_properties()

    def _masked(self, call: Callable[[], Any], password: Any) -> Any:
        """``call``'s answer; its error, should it quote the password, with it masked."""
        try:
            return call()
        except Exception as error:
            text = str(error)
            if isinstance(password, str) and password and password in text:
                raise ResourceFailure(text.replace(password, MASK)) from None
            raise

    def create_arguments(self) -> dict[str, Any]:
        """openstacksdk's ``create_user`` arguments (the password among them)."""
        arguments: dict[str, Any] = {
            "name": self.object_name(),
            "domain_id": self.properties[self.DOMAIN],
            "description": self.properties[self.DESCRIPTION],
            "is_enabled": bool(self.properties[self.ENABLED]),
        }
        for key, field in (
            (self.EMAIL, "email"),
            (self.PASSWORD, "password"),
            (self.DEFAULT_PROJECT, "default_project_id"),
        ):
            if self.given(key) is not None:
                arguments[field] = self.given(key)
        return arguments

    def handle_create(self) -> None:
        client = self.client()
        user = self._masked(
            lambda: self.keystone(lambda: client.create_user(**self.create_arguments())),
            self.given(self.PASSWORD),
        )
        self.resource_id_set(user.id)
        for group_id in self.properties[self.GROUPS] or []:
            self.keystone(partial(client.add_user_to_group, user.id, group_id))
        self.grant_all(("user", user.id), self.assignments(self.properties[self.ROLES]))

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        client = self.client()
        changes: dict[str, Any] = self.changed_name(prop_diff)
        fields = (
            (self.DESCRIPTION, "description"), (self.EMAIL, "email"), (self.PASSWORD, "password"),
            (self.DEFAULT_PROJECT, "default_project_id"), (self.DOMAIN, "domain_id"),
        )  # fmt: skip
        for key, field in fields:
            if key in prop_diff:
                changes[field] = prop_diff[key]
        if self.ENABLED in prop_diff:
            changes["is_enabled"] = bool(prop_diff[self.ENABLED])
        if changes:
            self._masked(
                lambda: self.keystone(lambda: client.update_user(self.resource_id, **changes)),
                prop_diff.get(self.PASSWORD),
            )
        if self.GROUPS in prop_diff:
            before = set(self.properties[self.GROUPS] or [])
            after = set(prop_diff[self.GROUPS] or [])
            for group_id in sorted(after - before):
                self.keystone(partial(client.add_user_to_group, self.resource_id, group_id))
            for group_id in sorted(before - after):
                try:
                    self.keystone(partial(client.remove_user_from_group, self.resource_id, group_id))
                except Exception as error:  # noqa: BLE001 - openstacksdk's types
                    self.client_plugin().ignore_not_found(error)
        self.update_assignments(("user", str(self.resource_id)), prop_diff)

    def handle_check(self) -> None:
        super().handle_check()
        self.check_assignments(("user", str(self.resource_id)))

    def _show_resource(self) -> dict[str, Any] | None:
        shown = super()._show_resource()
        if shown is not None:
            shown.pop("password", None)
        return shown


def resource_mapping() -> dict[str, type[KeystoneUser]]:
    return {"OS::Keystone::User": KeystoneUser}
