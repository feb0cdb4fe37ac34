"""A service that never answers does not leave a stack IN_PROGRESS: every request has a
timeout (the cloud's ``api_timeout``, 60 s unless set), a poll that got no answer asks
again, and a create whose request got none fails with the reason. Nova is behind the
capping proxy (tests/cloud/capping.py), told to hold chosen requests unanswered.
Keystone behind the same proxy closing connections unanswered: authentication is sent
again; a create (a POST Keystone may have carried out) looks for its object first."""

from __future__ import annotations

import secrets
import tempfile
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from stoker.clouds import source as cloud_module
from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from tests.cloud.capping import CappingProxy, capped_environ
from tests.cloud.test_nova_server import (
    ids_of,
    network_resources,
    server,
    server_gone,
    template,
    wait_gone,
)
from tests.support.stacks import from_data

TIMEOUT_S = 3


@pytest.fixture
def slow_nova(openstack_cloud):
    """Nova behind a proxy that can hold requests, for a cloud whose api_timeout is 3 s."""
    with capped_environ(openstack_cloud, "compute", "2.96", settings={"api_timeout": TIMEOUT_S}) as environ:
        set_cloud_source(EnvironmentCloudSource(dict(environ)))
        try:
            yield environ.proxy
        finally:
            set_cloud_source(None)


def listings(proxy) -> int:
    return sum(1 for method, path, _ in proxy.requests if method == "GET" and path.endswith("/servers/detail"))


def test_a_poll_that_gets_no_answer_asks_again(openstack_cloud, slow_nova, make_service):
    service = make_service()
    suffix = secrets.token_hex(3)
    resources = {**network_resources(suffix, "10.39.0.0/24"), "vm": server([{"network": {"get_resource": "net"}}])}
    # The first two listings of the servers the polls read are never answered.
    slow_nova.stall("GET", r"/servers/detail$", times=2, seconds=TIMEOUT_S * 3)

    stack = service.create_stack(f"hung-{suffix}", from_data(template(resources)))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert listings(slow_nova) >= 3
    assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"


def test_a_create_that_gets_no_answer_fails_instead_of_waiting_for_ever(openstack_cloud, slow_nova, make_service):
    service = make_service()
    suffix = secrets.token_hex(3)
    resources = {**network_resources(suffix, "10.40.0.0/24"), "vm": server([{"network": {"get_resource": "net"}}])}
    slow_nova.stall("POST", r"/servers$", times=1, seconds=TIMEOUT_S * 3)

    stack = service.create_stack(f"lost-{suffix}", from_data(template(resources)))

    assert stack.state == "CREATE_FAILED"
    vm = next(r for r in service.list_resources(stack.name) if r.name == "vm")
    assert vm.state == "CREATE_FAILED"
    assert "timed out" in vm.status_reason.lower() or "timeout" in vm.status_reason.lower(), vm.status_reason
    # nothing reached Nova, and the stack goes on: an update makes the server
    stack = service.update_stack(stack.name, from_data(template(resources)))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    server_id = ids_of(service, stack.name)["vm"]
    assert service.delete_stack(stack.name).state == "DELETE_COMPLETE"
    connection = openstack_cloud.connect("admin")
    wait_gone(lambda found: None if server_gone(connection, found) else found, server_id)


def test_without_a_configured_timeout_requests_get_stokers_default(openstack_cloud):
    with capped_environ(openstack_cloud, "compute", "2.96") as environ:
        region = EnvironmentCloudSource(dict(environ)).cloud_region(None)
        connection = cloud_module._connect(region)
        assert connection.config.config["api_timeout"] == cloud_module.DEFAULT_API_TIMEOUT_S
        assert connection.session.timeout == cloud_module.DEFAULT_API_TIMEOUT_S


@contextmanager
def keystone_behind_a_proxy(openstack_cloud):
    """The admin's cloud with Keystone (authentication and the identity service) reached
    through a proxy, installed as stoker's cloud source; yields the proxy."""
    keystone = urlsplit(openstack_cloud.keystone_url)
    name = openstack_cloud.cloud("admin")
    entry = yaml.safe_load(Path(openstack_cloud.clouds_yaml).read_text())["clouds"][name]
    # Keystone carries no microversion: the proxy's cap never applies, it forwards all.
    with CappingProxy(f"{keystone.scheme}://{keystone.netloc}", "2.1") as proxy, tempfile.TemporaryDirectory() as directory:
        entry = {**entry, "auth": {**entry["auth"], "auth_url": proxy.url + keystone.path}}
        entry["identity_endpoint_override"] = proxy.url + keystone.path
        clouds_yaml = Path(directory) / "clouds.yaml"
        clouds_yaml.write_text(yaml.safe_dump({"clouds": {"proxied": entry}}))
        set_cloud_source(EnvironmentCloudSource({"OS_CLIENT_CONFIG_FILE": str(clouds_yaml), "OS_CLOUD": "proxied"}))
        try:
            yield proxy
        finally:
            set_cloud_source(None)


def sent(proxy, method: str, ending: str) -> int:
    return sum(1 for seen, path, _ in proxy.requests if seen == method and path.endswith(ending))


def test_authentication_is_sent_again_when_keystone_closes_the_connection_unanswered(openstack_cloud, make_service):
    service = make_service()
    name = f"reauth-{secrets.token_hex(3)}"
    resources = {"role": {"type": "OS::Keystone::Role", "properties": {"name": name}}}
    with keystone_behind_a_proxy(openstack_cloud) as proxy:
        # The first two token requests find their connection closed, no answer sent.
        proxy.stall("POST", r"/auth/tokens$", times=2, seconds=0)

        stack = service.create_stack(name, from_data(template(resources)))

        assert stack.state == "CREATE_COMPLETE", stack.status_reason
        assert sent(proxy, "POST", "/auth/tokens") == 3
        assert sent(proxy, "POST", "/roles") == 1
        assert openstack_cloud.connect("admin").identity.find_role(name) is not None

        # A create whose connection closed is not blindly sent again (Keystone may have
        # carried it out): a service, whose name Keystone does not keep unique, is looked
        # up by its physical resource name first, and made only if it is not there.
        proxy.stall("POST", r"/services$", times=1, seconds=0)
        resources["service"] = {"type": "OS::Keystone::Service", "properties": {"type": name}}
        stack = service.update_stack(name, from_data(template(resources)))

        assert stack.state == "UPDATE_COMPLETE", stack.status_reason
        calls = [method for method, path, _ in proxy.requests if path.startswith("/v3/services")]
        assert calls[:3] == ["POST", "GET", "POST"], calls
        identity = openstack_cloud.connect("admin").identity
        assert len(list(identity.services(type=name))) == 1
        assert service.delete_stack(name).state == "DELETE_COMPLETE"
    admin = openstack_cloud.connect("admin").identity
    assert admin.find_role(name) is None and not list(admin.services(type=name))


class Action:
    """A context (stack action) for ``connection_for``."""


def test_a_connection_authenticates_through_connections_closed_unanswered(openstack_cloud):
    retries = cloud_module.TOKENLESS_CONNECT_RETRIES
    with keystone_behind_a_proxy(openstack_cloud) as proxy:
        proxy.stall("POST", r"/auth/tokens$", times=retries, seconds=0)
        connection = cloud_module.connection_for(Action())

        assert connection.authorize()
        assert sent(proxy, "POST", "/auth/tokens") == retries + 1

        # One more than that is the error, naming where the connection failed.
        proxy.stall("POST", r"/auth/tokens$", times=retries + 1, seconds=0)
        connection.session.auth.invalidate()
        with pytest.raises(Exception, match="Unable to establish connection to .*/v3/auth/tokens"):
            connection.session.get_token()
        assert sent(proxy, "POST", "/auth/tokens") == 2 * (retries + 1)
