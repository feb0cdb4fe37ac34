"""AWS::IAM::AccessKey: an EC2 keypair (a Keystone ``ec2`` credential) of the
AWS::IAM::User its ``UserName`` names. Its physical id is the access key; the secret
key is kept redacted and is the ``SecretAccessKey`` attribute, which ``resource show``
masks (``sensitive_attributes``). ``Serial`` and ``Status`` are Heat's not-implemented
properties.

Owns: finding the user by its name in the stack users' project (Heat finds the User
resource by reference), and the keypair's lifecycle (``stack_user.create_keypair``:
written before it is sent, found again after a crash).
"""

from __future__ import annotations

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

    def _user_id(self) -> str | None:
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
        access, _secret = stack_user.create_keypair(self)
        self.resource_id_set(access)
        return access

    def handle_delete(self) -> None:
        stack_user.delete_keypair(self)

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
