"""heat-tempest-plugin's scenario tests (``heat_tempest_plugin.tests.scenario``) run against a
real ``stoker serve`` on the test cloud, as a Heat deployment would run them: stoker validates
Keystone tokens (``STOKER_AUTH_MODE=keystone``) and is the catalog's ``orchestration``
service, and tempest talks to the cloud's real Keystone, Nova, Neutron, Cinder, Glance and,
for the alarm test, Gnocchi and Aodh (the ``aodh_service`` add-on, whose evaluator and
notifier fire the alarm). The plugin's own Keystone client is used unchanged
(``tests/support/tempest.py``'s ``Selection(token_identity=False)``).

Which scenario tests run here is decided by what their servers must do: the six services'
Nova runs the fake virt driver, so a server goes ACTIVE but never boots an operating system.
The classes whose servers must boot, run their user data and reach stoker
(``RUN_WITH_GUESTS``) are skipped here and run on the guests' host (``addons/guests.py``)
in ``test_guests_tempest_scenarios.py``, with this module's ``keystone_stoker``,
``scenario_conf`` and checks. A test that cannot run on either is listed in
``CANNOT_RUN_HERE`` with its obstacle (tempest's ``skip_scenario_test_list``, so the plugin
skips it); the README's table (tests/cloud/README.md, "heat-tempest-plugin's scenario
tests") says the same. Every other scenario test must pass, except those in
``KNOWN_FAILURES``, each with the cause seen in its failure.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import pytest

from tests.cloud import identity
from tests.support.server import Server
from tests.support.tempest import Selection, SuiteRun, require_tempest, run_suite

SCENARIO_PACKAGE = "heat_tempest_plugin.tests.scenario"
# Seconds the scenario tests may take in all (the alarm test waits up to 120 s for Aodh).
SUITE_TIMEOUT_S = 900
# Seconds the plugin's waits give a stack or resource to reach a status.
BUILD_TIMEOUT_S = 240

pytestmark = [pytest.mark.slow, pytest.mark.timeout(2400)]

# heat-tempest-plugin 3.0.0's scenario package: 10 tests in 8 classes.
SCENARIO_TESTS = 10

# Classes whose servers must boot and reach stoker: they run on the guests' host, in
# test_guests_tempest_scenarios.py (which says what each guest does), and are skipped here.
RUN_WITH_GUESTS = frozenset(
    {"CfnInitIntegrationTest", "ServerSignalIntegrationTest", "SoftwareConfigIntegrationTest"}
)
# Class (or Class.test) -> why it cannot run on this cloud, with or without the guests' host.
CANNOT_RUN_HERE = {
    "VolumeBackupRestoreIntegrationTest": (
        "its server's user data must mount the volume, write a file and signal a "
        "WaitCondition with the data read back after a restore: the cloud's Cinder back "
        "end is a no-op one, whose volumes a guest cannot mount"
    ),
    "LoadBalancerTest": (
        "each pool member's server runs a netcat web server from user data and signals a "
        "WaitCondition before its PoolMember is made, and the test reaches them through the "
        "load balancer: Octavia runs here with the no-op "
        "amphora driver, which forwards no traffic (see test_octavia_*.py)"
    ),
}
# The tests that run here: every scenario test less the classes above.
RUNS_HERE = {
    "scenario.test_aodh_alarm.AodhAlarmTest.test_alarm",
    "scenario.test_base_resources.BasicResourcesTest.test_base_resources_integration",
    "scenario.test_remote_deeply_nested.RemoteDeeplyNestedStackTest.test_remote_nested",
}
# Test (Class.test) -> why it fails against stoker today, from the failure seen. A known
# failure that passes fails this test: take it off the list with the fix.
KNOWN_FAILURES: dict[str, str] = {}
SERVICE_PASSWORD = "stoker-scenario-secret"


def scenario_conf(
    openstack_cloud,
    directory: Path,
    network: str,
    subnet: str,
    public: str,
    *,
    skipped: Iterable[str],
    image: str | None = None,
    flavor: str = "m1.tiny",
    build_timeout_s: int = BUILD_TIMEOUT_S,
    dns_servers: str | None = None,
    user: tuple[str, str] = ("demo", identity.DEMO_PASSWORD),
) -> str:
    """tempest.conf for the demo user on the test cloud: real Keystone, the networks made
    for the run, and the image and flavor servers boot with (the cloud's fake image and
    tiny flavor unless given: the guests' on their host); the scenario classes or tests
    ``skipped`` in tempest's ``skip_scenario_test_list``; ``dns_servers`` for the
    templates' subnets that take them (the plugin's default is Google's); ``user``: the
    name and password of the user (of the project of that name) the tests run as."""
    available = ("heat", "nova", "neutron", "glance", "cinder", "aodh", "gnocchi")
    absent = ("swift", "zaqar", "barbican", "octavia", "designate", "manila", "mistral")
    services = "".join(f"{name} = true\n" for name in available) + "".join(
        f"{name} = false\n" for name in absent
    )
    image = image or openstack_cloud.image_id
    return (
        "[DEFAULT]\n"
        "use_stderr = false\n"
        f"log_dir = {directory}\n"
        "log_file = tempest.log\n"
        "\n[oslo_concurrency]\n"
        f"lock_path = {directory / 'locks'}\n"
        "\n[service_available]\n"
        f"{services}"
        "\n[volume-feature-enabled]\n"
        "backup = true\n"
        "\n[heat_plugin]\n"
        f"auth_url = {openstack_cloud.keystone_url}\n"
        f"username = {user[0]}\n"
        f"password = {user[1]}\n"
        f"project_name = {user[0]}\n"
        "user_domain_name = Default\n"
        "project_domain_name = Default\n"
        f"region = {identity.REGION}\n"
        f"instance_type = {flavor}\n"
        f"minimal_instance_type = {flavor}\n"
        f"image_ref = {image}\n"
        f"minimal_image_ref = {image}\n"
        f"fixed_network_name = {network}\n"
        f"network_for_ssh = {network}\n"
        f"fixed_subnet_name = {subnet}\n"
        f"floating_network_name = {public}\n"
        + (f"dns_servers = {dns_servers}\n" if dns_servers is not None else "")
        + "build_interval = 2\n"
        f"build_timeout = {build_timeout_s}\n"
        f"skip_scenario_test_list = {','.join(sorted(skipped))}\n"
        "convergence_engine_enabled = true\n"
        "\n[heat_features_enabled]\n"
        "multi_cloud = false\n"
    )


@contextlib.contextmanager
def keystone_stoker(
    openstack_cloud, tmp_path: Path, suffix: str, host: str = "127.0.0.1", **environment: str
) -> Iterator[Server]:
    """``stoker serve`` validating the test cloud's Keystone tokens, with a service user of
    its own (deleted after), listening on ``host``; its signal URLs lead back to it."""
    admin = identity.Keystone(openstack_cloud.keystone_url)
    service_role = admin.ensure("roles", "role", "service")["id"]
    service_project = admin.ensure("projects", "project", "service", domain_id="default")
    stoker_user = admin.call("POST", "/users", body={"user": {"name": f"stoker-sc-{suffix}", "password": SERVICE_PASSWORD, "domain_id": "default"}})["user"]  # fmt: skip
    admin.grant(service_project["id"], stoker_user["id"], service_role)
    server = Server(
        f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        tmp_path / "serve.log",
        start_timeout_s=120,
        host=host,
        STOKER_AUTH_MODE="keystone",
        STOKER_KEYSTONE_AUTH_URL=openstack_cloud.keystone_url,
        STOKER_KEYSTONE_USERNAME=stoker_user["name"],
        STOKER_KEYSTONE_PASSWORD=SERVICE_PASSWORD,
        STOKER_KEYSTONE_PROJECT_NAME="service",
        STOKER_KEYSTONE_USER_DOMAIN_NAME="Default",
        STOKER_KEYSTONE_PROJECT_DOMAIN_NAME="Default",
        STOKER_KEYSTONE_REGION_NAME=identity.REGION,
        **identity.STACK_DOMAIN_ENVIRONMENT,
        **environment,
    )
    # The signal URLs Aodh's notifier POSTs, and a guest's signals and metadata requests,
    # must lead back to this server.
    server.environment["STOKER_PUBLIC_URL"] = server.url
    try:
        server.start()
        yield server
    finally:
        if server.process is not None:
            log = server.stop()
            assert "Traceback" not in log, log
        admin.call("DELETE", f"/users/{stoker_user['id']}")


@pytest.fixture
def deployment(openstack_cloud, aodh_service, tmp_path):
    """stoker serving in keystone mode, the catalog's orchestration service, with a demo
    network (``heat-net-*``) and an external network (``public-*``) for the tests. Its trusts
    may be delegated on (STOKER_ALLOW_TRUSTS_REDELEGATION), as the alarm test's ``trust+``
    action needs when stoker creates the alarm through the stack's trust."""
    suffix = secrets.token_hex(3)
    admin = identity.Keystone(openstack_cloud.keystone_url)
    cloud_admin = openstack_cloud.connect("admin")
    demo = openstack_cloud.connect("demo")
    with keystone_stoker(openstack_cloud, tmp_path, suffix, STOKER_ALLOW_TRUSTS_REDELEGATION="true") as server:
        catalog = admin.call("POST", "/services", body={"service": {"name": f"stoker-sc-{suffix}", "type": "orchestration"}})["service"]  # fmt: skip
        admin.call("POST", "/endpoints", body={"endpoint": {"service_id": catalog["id"], "interface": "public", "region_id": identity.REGION, "url": server.url + "/v1/%(tenant_id)s"}})  # fmt: skip
        public = cloud_admin.network.create_network(name=f"public-{suffix}", is_router_external=True)
        cloud_admin.network.create_subnet(network_id=public.id, name=f"public-subnet-{suffix}", ip_version=4, cidr="172.24.8.0/24")  # fmt: skip
        network = demo.network.create_network(name=f"heat-net-{suffix}")
        subnet = demo.network.create_subnet(network_id=network.id, name=f"heat-subnet-{suffix}", ip_version=4, cidr="10.8.0.0/24")  # fmt: skip
        try:
            yield (
                server,
                scenario_conf(
                    openstack_cloud,
                    tmp_path / "suite",
                    network.name,
                    subnet.name,
                    public.name,
                    skipped=CANNOT_RUN_HERE.keys() | RUN_WITH_GUESTS,
                ),
            )
        finally:
            admin.call("DELETE", f"/services/{catalog['id']}")
            demo.network.delete_network(network.id, ignore_missing=True)
            cloud_admin.network.delete_network(public.id, ignore_missing=True)


def summary(run: SuiteRun) -> str:
    counts = run.counts()
    return (
        f"heat-tempest-plugin scenarios against stoker on the test cloud: {counts['passed']} "
        f"passed, {counts['failed']} failed, {counts['skipped']} skipped in {run.seconds:.0f} s"
    )


def run_scenarios(
    server: Server,
    configuration: str,
    openstack_cloud,
    directory: Path,
    timeout_s: float = SUITE_TIMEOUT_S,
    test_timeout_s: float | None = None,
) -> SuiteRun:
    """The scenario package run once against ``server`` as the demo user, with
    ``configuration`` as tempest.conf; each outcome printed."""
    environment = require_tempest(directory / "install.log")
    demo = openstack_cloud.connect("demo")
    run = run_suite(
        environment,
        f"{server.url}/v1/{demo.current_project_id}",
        directory / "suite",
        workers=1,
        timeout_s=timeout_s,
        selection=Selection(packages=(SCENARIO_PACKAGE,), gabbi=False, token_identity=False),
        configuration_text=configuration,
        **({"test_timeout_s": test_timeout_s} if test_timeout_s is not None else {}),
    )
    print(summary(run))
    for name, outcome in sorted(run.outcomes.items()):
        # A failure's cause is at the end of its detail (the plugin's log comes first).
        detail = outcome.detail[-1500:] if outcome.status == "failed" else outcome.detail[:200]
        print(f"  {outcome.status.upper()} {name} ({outcome.seconds:.0f} s) {detail}")
    return run


def assert_outcomes(
    run: SuiteRun, runs: set[str], skipped: Iterable[str], known_failures: Mapping[str, str]
) -> None:
    """Every scenario test has an outcome; the tests ``runs`` ran (the others skipped, each
    of a class or test in ``skipped``) and passed, except those in ``known_failures``,
    which must still fail."""
    assert len(run.outcomes) == SCENARIO_TESTS, f"{summary(run)}:\n{run.output}"
    ran = {name.split("[")[0] for name in run.outcomes if run.outcomes[name].status != "skipped"}
    assert ran == runs, f"{summary(run)}; ran {sorted(ran)}:\n{run.output}"
    skipped = set(skipped)

    def short(name: str) -> str:
        return ".".join(name.split("[")[0].split(".")[2:])

    for name, outcome in run.outcomes.items():
        if outcome.status == "skipped":
            assert name.split(".")[2] in skipped or short(name) in skipped, (
                f"{name} skipped: {outcome.detail}"
            )
    failed = {
        name: outcome
        for name, outcome in run.with_status("failed").items()
        if short(name) not in known_failures
    }
    assert not failed, f"{summary(run)}:\n" + "\n".join(
        f"--- {name}\n{outcome.detail}" for name, outcome in sorted(failed.items())
    )
    fixed = [
        n for n, o in run.outcomes.items() if short(n) in known_failures and o.status == "passed"
    ]
    assert not fixed, f"these pass now, take them off the known failures: {fixed}"


def test_aodh_tempest_scenarios(deployment, openstack_cloud, tmp_path):
    server, configuration = deployment
    run = run_scenarios(server, configuration, openstack_cloud, tmp_path)
    assert_outcomes(run, RUNS_HERE, CANNOT_RUN_HERE.keys() | RUN_WITH_GUESTS, KNOWN_FAILURES)
