"""AWS::IAM::AccessKey: an EC2 keypair (a Keystone ``ec2`` credential) of the
AWS::IAM::User its ``UserName`` names. Its physical id is the access key; the secret
key is kept redacted and is the ``SecretAccessKey`` attribute, which ``resource show``
masks (``sensitive_attributes``). ``Serial`` and ``Status`` are Heat's not-implemented
properties.

Owns: finding the user (the stack's AWS::IAM::User whose reference ``UserName`` is, as
Heat finds it; else a user of that name in the stack users' project), and the keypair's
lifecycle (written before it is sent, found again after a crash). For a User of the
stack, the keypair is made and deleted by the stack domain admin when there is a stack
user domain (Heat's ``create_stack_domain_user_keypair``), else as that user (its
password is in the User's data: ``stack_user.create_own_keypair``), as a server's is: in
keystone mode a stack's
actions have a trust-scoped token, and Keystone refuses credentials to a delegated token
("Delegated tokens cannot access credentials directly", seen as heat-tempest-plugin's
CfnInitIntegrationTest's SmokeKeys failed). Any other user's is made with the stack's
credentials (``stack_user.create_keypair``).
"""

from __future__ import annotations

import secrets
from typing import Any, ClassVar

from stoker.resources.openstack.keystone import stack_user
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ResourceFailure
from stoker.sdk.resource import Resource


class AccessKey(Resource):
    """An EC2 keypair of a stack user."""

    support_status = support.SupportStatus()
    default_client_name = "keystone"

    PROPERTIES = (SERIAL, USER_NAME, STATUS) = ("Serial", "UserName", "Status")
    ATTRIBUTES = (USER_NAME_ATTR, SECRET_ACCESS_KEY) = ("UserName", "SecretAccessKey")
    sensitive_attributes: ClassVar[tuple[str, ...]] = (SECRET_ACCESS_KEY,)

    properties_schema = {
        SERIAL: properties.Schema(properties.Schema.INTEGER, "Not Implemented.", implemented=False),
        USER_NAME: properties.Schema(
            properties.Schema.STRING,
            "The name of the user that the new key will belong to.",
            required=True,
        ),
        STATUS: properties.Schema(
            properties.Schema.STRING,
            "Not Implemented.",
            constraints=[constraints.AllowedValues(["Active", "Inactive"])],
            implemented=False,
        ),
    }

    attributes_schema = {
        USER_NAME_ATTR: attributes.Schema(
            "Username associated with the AccessKey.",
            cache_mode=attributes.Schema.CACHE_NONE,
            type=attributes.Schema.STRING,
        ),
        SECRET_ACCESS_KEY: attributes.Schema(
            "Keypair secret key.",
            cache_mode=attributes.Schema.CACHE_NONE,
            type=attributes.Schema.STRING,
        ),
    }

    def _stack_user(self) -> Resource | None:
        """The stack's AWS::IAM::User named by UserName, if it holds its user's password."""
        find = getattr(self.stack, "resource_by_refid", None)
        user = find(self.properties[self.USER_NAME]) if find is not None else None
        if user is None or not user.data().get(stack_user.PASSWORD):
            return None
        return user

    def _user_id(self) -> str | None:
        user = self._stack_user()
        if user is not None and user.data().get(stack_user.USER_ID):
            return str(user.data()[stack_user.USER_ID])
        identity = self.client()
        for user in identity.users(name=self.properties[self.USER_NAME]):
            if getattr(user, "default_project_id", None) == stack_user.stack_user_project_id(self):
                return str(user.id)
        return None

    def handle_create(self) -> str:
        user_id = self._user_id()
        if user_id is None:
            raise ResourceFailure(f"could not find user {self.properties[self.USER_NAME]}")
        self.data_set(stack_user.USER_ID, user_id)
        user = self._stack_user()
        if user is None:
            access, _secret = stack_user.create_keypair(self)
        else:
            access = self.data().get(stack_user.ACCESS_KEY) or secrets.token_hex(16)
            secret = self.data().get(stack_user.SECRET_KEY) or secrets.token_hex(16)
            self.data_set(stack_user.ACCESS_KEY, access, redact=True)
            self.data_set(stack_user.SECRET_KEY, secret, redact=True)
            stack_user.create_own_keypair(
                self, access, secret, password=str(user.data()[stack_user.PASSWORD])
            )
        self.resource_id_set(access)
        return access

    def handle_delete(self) -> None:
        user = self._stack_user()
        if user is None:
            stack_user.delete_keypair(self)
            return
        stack_user.delete_own_keypair(self, password=str(user.data()[stack_user.PASSWORD]))
        for key in (stack_user.ACCESS_KEY, stack_user.SECRET_KEY):
            self.data_delete(key)

    def find_created(self) -> str | None:
        # The access key is written before the keypair is sent (stack_user.create_keypair).
        return self.data().get(stack_user.ACCESS_KEY)

    def handle_check(self) -> None:
        credential_id = self.data().get(stack_user.CREDENTIAL_ID)
        if credential_id:
            self.client().get_credential(credential_id)

    def _resolve_attribute(self, name: str) -> Any:
        if name == self.USER_NAME_ATTR:
            return self.properties[self.USER_NAME]
        if name == self.SECRET_ACCESS_KEY:
            return self.data().get(stack_user.SECRET_KEY) or "000-000-000"
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"AWS::IAM::AccessKey": AccessKey}
