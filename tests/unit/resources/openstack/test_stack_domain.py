"""Heat's stack user domain without a cloud: the operator's settings (Heat's names, from
``STOKER_*``, the password never shown) as client plugins get them, and the domain
admin's requests on a stand-in Keystone (tests/support/fake_keystone.py): a project
found again rather than made twice, a user checked before it is deleted, a project of
another domain never deleted, Keystone's refusals said without any secret."""

from __future__ import annotations

import pytest

from stoker.resources.openstack.keystone.stack_domain import (
    StackDomain,
    StackDomainError,
    StackDomainUserError,
    stack_domain_for,
)
from stoker.service import build_registry
from stoker.settings import Settings
from tests.support.fake_keystone import IDENTITY_URL, FakeKeystone

PASSWORD = "the-admin-password-3"


def test_settings_read_the_stack_domain_from_the_environment_and_never_show_the_password(monkeypatch):
    monkeypatch.setenv("STOKER_STACK_USER_DOMAIN", "heat")
    monkeypatch.setenv("STOKER_STACK_DOMAIN_ADMIN", "heat_domain_admin")
    monkeypatch.setenv("STOKER_STACK_DOMAIN_ADMIN_PASSWORD", PASSWORD)
    settings = Settings.from_env()
    assert (settings.stack_user_domain, settings.stack_domain_admin, settings.stack_domain_admin_password) == ("heat", "heat_domain_admin", PASSWORD)
    assert PASSWORD not in repr(settings)
    registry = build_registry(settings)
    assert registry.client_settings["stack_user_domain"] == "heat"
    assert registry.client_settings["stack_domain_admin_password"] == PASSWORD
    assert PASSWORD not in repr(registry)


def test_settings_without_the_stack_domain_give_plugins_none():
    assert Settings().stack_domain() == {}
    assert "stack_user_domain" not in build_registry(Settings()).client_settings


@pytest.mark.parametrize(
    ("given", "missing"),
    [
        ({"stack_user_domain": "heat"}, "STOKER_STACK_DOMAIN_ADMIN, STOKER_STACK_DOMAIN_ADMIN_PASSWORD"),
        ({"stack_user_domain": "heat", "stack_domain_admin": "admin"}, "STOKER_STACK_DOMAIN_ADMIN_PASSWORD"),
        ({"stack_domain_admin": "admin", "stack_domain_admin_password": PASSWORD}, "STOKER_STACK_USER_DOMAIN"),
    ],
)
def test_half_of_the_stack_domain_settings_is_refused_without_the_password(given, missing):
    with pytest.raises(ValueError, match=f"needs {missing} too") as raised:
        Settings(**given).stack_domain()
    assert PASSWORD not in str(raised.value)


def test_a_plugin_without_a_stack_domain_setting_gets_none():
    assert stack_domain_for({}, IDENTITY_URL) is None


def domain(keystone: FakeKeystone) -> StackDomain:
    return StackDomain(keystone.session(), IDENTITY_URL, "heat")


def test_a_project_made_already_is_found_not_made_twice():
    keystone = FakeKeystone()
    first = domain(keystone).create_project("p-stack")
    assert domain(keystone).create_project("p-stack") == first
    assert list(keystone.projects) == [first]
    assert keystone.projects[first]["description"] == "Heat stack user project"


def test_a_project_create_that_loses_a_race_finds_the_winners():
    """Made at the same moment by a sibling stack's job: not there when looked for,
    Keystone's 409 on the create, then found."""
    keystone = FakeKeystone()
    winner = keystone.add_project("p-stack", keystone.domain_id)
    looks = []

    class Racing(StackDomain):
        def find_project(self, name):
            looks.append(name)
            return None if len(looks) == 1 else super().find_project(name)

    assert Racing(keystone.session(), IDENTITY_URL, "heat").create_project("p-stack") == winner
    assert list(keystone.projects) == [winner] and len(looks) == 2


def test_only_a_project_of_the_stack_domain_is_deleted():
    keystone = FakeKeystone()
    own = keystone.add_project("p-stack", keystone.domain_id)
    others = keystone.add_project("owner", "default")
    assert domain(keystone).delete_project(others) is False
    assert domain(keystone).delete_project(own) is True
    assert domain(keystone).delete_project(own) is False  # gone: nothing to do
    assert list(keystone.projects) == [others]


def test_a_user_is_checked_before_it_is_deleted():
    keystone = FakeKeystone()
    project = keystone.add_project("p-stack", keystone.domain_id)
    other_project = keystone.add_project("p-other", keystone.domain_id)
    outside = keystone.add_user("u", "default", project)
    elsewhere = keystone.add_user("u", keystone.domain_id, other_project)
    with pytest.raises(StackDomainUserError, match="User delete in invalid domain"):
        domain(keystone).delete_user(outside, project)
    with pytest.raises(StackDomainUserError, match="User delete in invalid project"):
        domain(keystone).delete_user(elsewhere, project)
    assert {outside, elsewhere} <= set(keystone.users)
    mine = keystone.add_user("u", keystone.domain_id, project)
    domain(keystone).delete_user(mine, project)
    domain(keystone).delete_user(mine, project)  # gone: no error
    assert mine not in keystone.users


def test_a_refusal_names_the_request_and_keystones_reason_and_no_secret():
    keystone = FakeKeystone()
    project = keystone.add_project("p-stack", keystone.domain_id)
    keystone.refuse[("POST", "/users")] = 403
    with pytest.raises(StackDomainError) as raised:
        domain(keystone).create_user("web-server-abc", "user-secret-9", project, "stack user")
    assert raised.value.http_status == 403
    assert str(raised.value).startswith("Keystone refused the stack domain admin POST /users (HTTP 403): refused by the test")
    assert "user-secret-9" not in str(raised.value)


def test_the_role_is_made_when_keystone_lacks_it_and_found_after():
    keystone = FakeKeystone()
    made = domain(keystone).role_id("heat_stack_user")
    assert domain(keystone).role_id("heat_stack_user") == made
    assert [role["name"] for role in keystone.roles.values()] == ["heat_stack_user"]


def test_a_queue_of_a_stack_domain_user_is_reached_as_that_user(monkeypatch):
    """Zaqar queues of ZAQAR_SIGNAL and ZAQAR_MESSAGE live in the stack user's project: in
    the stack user domain, not the stack's, so they are reached as the user (Heat's
    create_for_tenant); a legacy user's, with the stack's own connection."""
    from stoker.resources.openstack.keystone import stack_user
    from stoker.resources.openstack.zaqar import signal_queue
    from stoker.resources.openstack.zaqar.client_plugin import ZaqarClientPlugin

    stacks_own = ZaqarClientPlugin(None, name="zaqar", settings={"x": 1})

    class Handle:
        def __init__(self, data):
            self._data = data

        def data(self):
            return self._data

        def client_plugin(self, name):
            assert name == "zaqar"
            return stacks_own

    assert signal_queue._plugin(Handle({stack_user.USER_ID: "u"})) is stacks_own
    users_connection = object()
    monkeypatch.setattr(signal_queue, "_user_connection", lambda resource: users_connection)
    as_user = signal_queue._plugin(Handle({stack_user.USER_ID: "u", stack_user.PROJECT_ID: "p"}))
    assert isinstance(as_user, ZaqarClientPlugin) and as_user.connection is users_connection
    assert as_user.settings == {"x": 1}


def test_a_server_with_half_of_the_stack_domain_settings_does_not_start(tmp_path):
    from stoker.api.app import create_app
    from stoker.sdk.exceptions import ClientPluginError

    settings = Settings(database_url=f"sqlite:///{tmp_path / 's.sqlite'}", stack_user_domain="heat", stack_domain_admin_password=PASSWORD)
    with pytest.raises(ClientPluginError, match="needs STOKER_STACK_DOMAIN_ADMIN too") as raised:
        create_app(settings)
    assert PASSWORD not in str(raised.value)


def test_a_missing_role_the_domain_admin_may_not_make_says_how_to_make_it():
    keystone = FakeKeystone()
    keystone.refuse[("POST", "/roles")] = 403
    with pytest.raises(StackDomainError, match="Keystone has no role heat_stack_user, and the stack domain admin may not make one") as raised:
        domain(keystone).role_id("heat_stack_user")
    assert raised.value.hint == "make it once as the cloud's admin: openstack role create heat_stack_user"
