"""Stack users' deletes without a cloud (``keystone.stack_user``, through AWS::IAM::User):
a stack user whose create Keystone refused (403) deletes asking for nothing more (a stack
owner who may not list users could otherwise never delete the stack: heat-tempest-plugin's
CfnInitIntegrationTest as the demo user, DELETE_FAILED with 403 ``identity:list_users``);
any other failure of the lookup still fails the delete; a create cut short after Keystone
made the user still has its user found by name and deleted. A stand-in for the
``keystone`` client plugin holds the users; tests/cloud/test_stack_users.py drives the real
Keystone, SIGKILLs included."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from stoker.resources.aws.iam.user import User
from stoker.resources.openstack.keystone import stack_user
from stoker.sdk.testing import PluginHarness

PROJECT_ID = "project-1"


class Refused(Exception):
    """An HTTP error as openstacksdk raises it (its ``status_code``)."""

    def __init__(self, message: str, status_code: int):
        super().__init__(message)
        self.status_code = status_code


class Identity:
    """The identity calls a stack user makes, on users kept in memory; ``refuse`` names
    the calls answered with a 403, ``cut_short`` the one after which the create dies
    (Keystone made the user, its answer is lost)."""

    def __init__(
        self, refuse: set[str] = frozenset(), cut_short: str | None = None, status: int = 403
    ):
        self.refuse = set(refuse)
        self.status = status
        self.cut_short = cut_short
        self.users_by_id: dict[str, SimpleNamespace] = {}
        self.calls: list[str] = []

    def _call(self, name: str) -> None:
        self.calls.append(name)
        if name in self.refuse:
            raise Refused(f"identity:{name} refused", self.status)

    def users(self, name: str) -> list[SimpleNamespace]:
        self._call("list_users")
        return [user for user in self.users_by_id.values() if user.name == name]

    def get_project(self, project_id: str) -> SimpleNamespace:
        return SimpleNamespace(id=project_id, domain_id="default")

    def create_user(self, **fields: Any) -> SimpleNamespace:
        self._call("create_user")
        user = SimpleNamespace(id=f"user-{len(self.users_by_id) + 1}", **fields)
        self.users_by_id[user.id] = user
        if self.cut_short == "create_user":
            raise ConnectionError("the answer was lost")
        return user

    def update_user(self, user_id: str, **fields: Any) -> None:
        self._call("update_user")

    def find_role(self, name: str, ignore_missing: bool = True) -> SimpleNamespace:
        return SimpleNamespace(id="role-1", name=name)

    def assign_project_role_to_user(self, project_id: str, user_id: str, role_id: str) -> None:
        self._call("assign_role")

    def delete_user(self, user_id: str, ignore_missing: bool = True) -> None:
        self._call("delete_user")
        self.users_by_id.pop(user_id, None)


class Keystone:
    """The ``keystone`` client plugin as stack users use it."""

    settings: dict[str, Any] = {}
    environ: dict[str, str] = {}

    def __init__(self, identity: Identity):
        self.identity = identity
        self.connection = SimpleNamespace(current_project_id=PROJECT_ID)

    def client(self) -> Identity:
        return self.identity

    def read(self, call):
        return call()

    def is_conflict(self, error: BaseException) -> bool:
        return False

    def ignore_not_found(self, error: BaseException) -> None:
        raise error


def iam_user(identity: Identity) -> PluginHarness:
    return PluginHarness(User, {}, name="CfnUser", clients={"keystone": Keystone(identity)})


def test_stack_user_refused_by_keystone_deletes_nothing():
    identity = Identity(refuse={"list_users", "create_user"})
    harness = iam_user(identity)
    with pytest.raises(Refused):
        harness.create()
    harness.delete()
    assert identity.calls == ["list_users", "list_users"]
    assert identity.users_by_id == {}


def test_stack_user_lookup_failing_otherwise_fails_the_delete():
    identity = Identity(refuse={"list_users"}, status=503)
    harness = iam_user(identity)
    with pytest.raises(Refused):
        harness.create()
    with pytest.raises(Refused):
        harness.delete()


def test_stack_user_cut_short_after_keystone_made_it_is_found_by_name_and_deleted():
    identity = Identity(cut_short="create_user")
    harness = iam_user(identity)
    with pytest.raises(ConnectionError):
        harness.create()
    assert stack_user.USER_ID not in harness.data
    assert len(identity.users_by_id) == 1
    harness.delete()
    assert identity.calls[-2:] == ["list_users", "delete_user"]
    assert identity.users_by_id == {}


def test_stack_user_made_is_deleted_by_its_id():
    identity = Identity()
    harness = iam_user(identity)
    harness.create()
    (user_id,) = identity.users_by_id
    assert harness.physical_ids == [user_id]
    harness.delete()
    assert identity.users_by_id == {}
    assert "list_users" not in identity.calls[identity.calls.index("create_user") :]


class UserSession:
    """A keystoneauth session as the stack user: its credentials calls, recorded."""

    def __init__(self, calls: list[tuple[str, str, str | None]], password: str | None):
        self.calls = calls
        self.password = password

    def get(self, url: str, raise_exc: bool = False) -> SimpleNamespace:
        self.calls.append(("GET", url.rsplit("/", 1)[-1], self.password))
        return SimpleNamespace(status_code=404)

    def post(self, url: str, json: dict, raise_exc: bool = False) -> SimpleNamespace:
        self.calls.append(("POST", json["credential"]["user_id"], self.password))
        return SimpleNamespace(status_code=201)

    def delete(self, url: str, raise_exc: bool = False) -> SimpleNamespace:
        self.calls.append(("DELETE", url.rsplit("/", 1)[-1], self.password))
        return SimpleNamespace(status_code=204)


def test_access_key_of_a_stack_user_is_made_and_deleted_as_that_user(monkeypatch):
    # In keystone mode the stack's token is trust-scoped, and Keystone refuses it
    # credentials: the keypair of the stack's own IAM user is made as the user.
    from stoker.resources.aws.iam.access_key import AccessKey

    identity = Identity(refuse={"create_credential"})
    user = iam_user(identity)
    user.create()
    calls: list[tuple[str, str, str | None]] = []
    monkeypatch.setattr(
        stack_user, "user_session", lambda resource, password=None: UserSession(calls, password)
    )
    monkeypatch.setattr(stack_user, "identity_url", lambda resource: "http://keystone/v3")
    key = PluginHarness(
        AccessKey,
        {"UserName": user.reference()},
        name="SmokeKeys",
        clients={"keystone": Keystone(identity)},
    )
    key.stack.resource_by_refid = lambda reference: (
        user.resource if reference == user.reference() else None
    )
    key.create()
    (user_id,) = identity.users_by_id
    password = user.data[stack_user.PASSWORD]
    access = key.physical_ids[-1]
    assert calls[-1] == ("POST", user_id, password)
    assert key.attribute("SecretAccessKey") == key.data[stack_user.SECRET_KEY]
    key.delete()
    credential_id = key.data.get(stack_user.CREDENTIAL_ID)
    assert calls[-1][0] == "DELETE" and calls[-1][2] == password
    assert credential_id is None and stack_user.ACCESS_KEY not in key.data
    assert access and "create_credential" not in identity.calls
