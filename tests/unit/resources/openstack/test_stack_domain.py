"""Heat's stack user domain without a cloud: the operator's settings (Heat's names, from
``STOKER_*``, the password never shown) as client plugins get them, and a server given
half of them refusing to start. What the domain admin does in Keystone is tested on the
real Keystone (tests/cloud/test_stack_users.py)."""

from __future__ import annotations

import pytest

from stoker.resources.openstack.keystone.stack_domain import stack_domain_for
from stoker.service import build_registry
from stoker.settings import Settings

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
    assert stack_domain_for({}, "http://keystone.example/v3") is None


def test_a_server_with_half_of_the_stack_domain_settings_does_not_start(tmp_path):
    from stoker.api.app import create_app
    from stoker.sdk.exceptions import ClientPluginError

    settings = Settings(database_url=f"sqlite:///{tmp_path / 's.sqlite'}", stack_user_domain="heat", stack_domain_admin_password=PASSWORD)
    with pytest.raises(ClientPluginError, match="needs STOKER_STACK_DOMAIN_ADMIN too") as raised:
        create_app(settings)
    assert PASSWORD not in str(raised.value)
