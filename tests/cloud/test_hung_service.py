"""A service that never answers does not leave a stack IN_PROGRESS: every request has a
timeout (the cloud's ``api_timeout``, 60 s unless set), a poll that got no answer asks
again, and a create whose request got none fails with the reason. Nova is behind the
capping proxy (tests/cloud/capping.py), told to hold chosen requests unanswered."""

from __future__ import annotations

import secrets

import pytest

from stoker.resources.openstack import cloud as cloud_module
from stoker.resources.openstack.cloud import EnvironmentCloudSource, set_cloud_source
from tests.cloud.capping import capped_environ
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
