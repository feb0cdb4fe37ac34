"""The ``openstack_cloud`` pytest fixture: one test cloud per test session, for any test.

tests/conftest.py imports it, so every test under tests/ can ask for it. A machine without
MariaDB or RabbitMQ skips the tests that need the cloud, saying what is missing; any other
failure to start is an ERROR carrying the failing service's log tail.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from tests.cloud.addons import fixtures as addon_fixtures
from tests.cloud.cloud import CloudError, DevCloud
from tests.cloud.infrastructure import missing_prerequisites

# Seconds a test that uses the cloud may take, setup included: the first test of a session
# also pays for starting the cloud (under a minute; two with migrations) and, on a machine
# that never built it, for the services' venv (under a minute here, longer on a slow network).
CLOUD_TEST_TIMEOUT_S = 1500


@pytest.fixture(scope="session")
def openstack_cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevCloud]:
    """Keystone, Placement, Neutron, Glance, Cinder and Nova on loopback, for this session.

    With STOKER_TEST_CLOUD=dev, the tests use the dev cloud ``python -m tests.cloud start``
    left running instead (quicker while developing; several test runs can share it)."""
    if os.environ.get("STOKER_TEST_CLOUD") == "dev":
        from tests.cloud.__main__ import attach_dev

        attached = attach_dev()
        if attached is None:
            pytest.fail(
                "STOKER_TEST_CLOUD=dev but no dev cloud runs: `python -m tests.cloud start` first",
                pytrace=False,
            )
        yield attached
        return
    missing = missing_prerequisites()
    if missing:
        pytest.skip("the test cloud needs MariaDB and RabbitMQ: " + "; ".join(missing))
    cloud = DevCloud(tmp_path_factory.mktemp("openstack-cloud"))
    try:
        cloud.start()
    except CloudError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        yield cloud
    finally:
        cloud.stop()


@pytest.fixture
def admin_cloud(openstack_cloud: DevCloud) -> Iterator[DevCloud]:
    """The cloud, as admin, for the plugins of a Service made in the test (an embedded
    engine's cloud source); unset afterwards."""
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    yield openstack_cloud
    set_cloud_source(None)


@pytest.fixture(name="service")
def deleting_service(make_service: Any) -> Iterator[Any]:
    """A Service whose stacks are deleted after the test (best effort: the test's own
    failure is what matters), so their cloud objects do not outlive it. A module
    imports it to have its ``service`` fixture be this one."""
    made = make_service()
    yield made
    for stack in made.list_stacks():
        try:
            made.delete_stack(stack.name)
        except Exception:  # noqa: BLE001, S110 - best effort
            pass


def mark_cloud_tests(items: list[pytest.Item], parallel: bool = False) -> None:
    """Give every test that uses the cloud the ``cloud`` marker and room for the cloud's
    start, and run them last: the cloud (12 processes, ~2 GB) is up only from the first
    of them to the end of the session.

    ``parallel`` (pytest-xdist's ``--dist loadgroup``, as the README's command runs the
    suite): first instead, the services' group before the add-ons' (the scheduler hands
    groups out in this order, and the two clouds' groups are the longest)."""
    cloud = []
    for item in items:
        if "openstack_cloud" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.cloud)
            marker = item.get_closest_marker("timeout")
            if marker is None or (marker.args and marker.args[0] < CLOUD_TEST_TIMEOUT_S):
                item.add_marker(pytest.mark.timeout(CLOUD_TEST_TIMEOUT_S), append=False)
            cloud.append(item)
    if cloud:
        chosen = set(map(id, cloud))
        rest = [item for item in items if id(item) not in chosen]
        if parallel:
            cloud.sort(key=lambda item: test_group(item.nodeid) != "cloud")  # stable: file order kept
            items[:] = cloud + rest
        else:
            items[:] = rest + cloud


# Modules that use add-on services but are named for what they test, not for one family.
ADDON_MODULES = frozenset({"test_autohealing_templates.py", "test_import_round_trip_addons.py"})


def test_group(nodeid: str) -> str:
    """The group of the test ``nodeid`` when pytest-xdist runs the suite: the tests of the
    six services (``tests/cloud/``), those of an add-on service (``tests/cloud/test_<family>
    ...``, a family of ``tests/cloud/addons/``), and each other test module on its own.
    Each group is run in order by one worker; each cloud group's worker starts a cloud of
    its own (names and ports are per session), so the two halves of the cloud's tests,
    mostly waiting on the services, run side by side from the start, and the other
    modules go to whichever worker is free (``pytest_xdist_make_scheduler``)."""
    path = nodeid.split("::", 1)[0]
    if not path.startswith("tests/cloud/"):
        return path
    module = path.rsplit("/", 1)[-1]
    families = {name.removesuffix("_service") for name in addon_fixtures()}
    if module in ADDON_MODULES or any(module.startswith(f"test_{family}") for family in families):
        return "cloud-addons"
    return "cloud"


@contextmanager
def server_outside_stoker(cloud: DevCloud, prefix: str, cidr: str) -> Iterator[Any]:
    """A server booted with openstacksdk (not through stoker) on a network of its own,
    ACTIVE; deleted with its network afterwards."""
    connection = cloud.connect("admin")
    suffix = secrets.token_hex(3)
    network = connection.network.create_network(name=f"{prefix}-{suffix}")
    subnet = connection.network.create_subnet(network_id=network.id, cidr=cidr, ip_version=4)
    booted = connection.compute.create_server(
        name=f"{prefix}-{suffix}",
        flavor_id=cloud.flavors["m1.tiny"],
        image_id=cloud.image_id,
        networks=[{"uuid": network.id}],
    )
    try:
        yield connection.compute.wait_for_server(booted, wait=120)
    finally:
        connection.compute.delete_server(booted)
        connection.compute.wait_for_delete(booted, wait=120)
        connection.network.delete_subnet(subnet)
        connection.network.delete_network(network)
