"""AWS::IAM::User: a Keystone stack user (``resources.openstack.keystone.stack_user``)
whose physical id is its Keystone id and whose reference (``Ref``) is its name, as in
Heat, so an AWS::IAM::AccessKey's ``UserName`` names it.

``Policies`` name OS::Heat::AccessPolicy resources in Heat; stoker has no such type, so a
policy given as a string is refused with the place to fix (an embedded map is ignored,
as Heat ignores it). ``Path`` and ``Groups`` are Heat's "Not Implemented.".

Must not: show the login password anywhere (it is kept redacted).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.keystone import stack_user
from stoker.sdk import properties, support
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource

# The resource data's key of an imported user's name.
USER_NAME = "user_name"


class User(Resource):
    """A Keystone user of the stack, for software that calls the CFN API."""

    support_status = support.SupportStatus()
    default_client_name = "keystone"

    PROPERTIES = (PATH, GROUPS, LOGIN_PROFILE, POLICIES) = (
        "Path",
        "Groups",
        "LoginProfile",
        "Policies",
    )
    _LOGIN_PROFILE_KEYS = (LOGIN_PROFILE_PASSWORD,) = ("Password",)

    properties_schema = {
        PATH: properties.Schema(properties.Schema.STRING, "Not Implemented."),
        GROUPS: properties.Schema(properties.Schema.LIST, "Not Implemented."),
        LOGIN_PROFILE: properties.Schema(
            properties.Schema.MAP,
            "A login profile for the user.",
            schema={LOGIN_PROFILE_PASSWORD: properties.Schema(properties.Schema.STRING)},
        ),
        POLICIES: properties.Schema(
            properties.Schema.LIST, "Access policies to apply to the user."
        ),
    }

    def validate(self) -> None:
        super().validate()
        for index, policy in enumerate(self.properties.resolved().get(self.POLICIES) or []):
            if isinstance(policy, str):
                raise ValidationError(
                    f"Policies names {policy!r}, an OS::Heat::AccessPolicy, which stoker does not have",
                    path=f"resources.{self.name}.properties.{self.POLICIES}[{index}]",
                    hint="remove the policy: the stack user may read and signal every resource of its stack",
                )

    def get_reference_id(self) -> str:
        # The user's name: the physical resource name it was made with, or an imported
        # user's own (handle_import).
        return str(self.data().get(USER_NAME) or self.physical_resource_name())

    def handle_import(self) -> None:
        """An imported user: its id and name kept as a create keeps them, for the delete
        and for what names the user (an AccessKey's UserName). Its password is not known."""
        user = self.client().get_user(self.resource_id)
        self.data_set(stack_user.USER_ID, str(user.id))
        self.data_set(USER_NAME, str(user.name))

    def handle_create(self) -> str:
        profile = self.properties[self.LOGIN_PROFILE]
        password = (
            profile.get(self.LOGIN_PROFILE_PASSWORD) if isinstance(profile, Mapping) else None
        )
        user_id = stack_user.create_stack_user(self, password)
        self.resource_id_set(user_id)
        return user_id

    def handle_delete(self) -> None:
        stack_user.delete_stack_user(self)

    def find_created(self) -> str | None:
        return stack_user.find_created_user(self)

    def handle_check(self) -> None:
        if self.resource_id is not None:
            stack_user.get_user(self, self.resource_id)

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return stack_user.get_user(self, self.resource_id)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"AWS::IAM::User": User}
