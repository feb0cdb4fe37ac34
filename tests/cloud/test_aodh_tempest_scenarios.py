"""heat-tempest-plugin's scenario tests (``heat_tempest_plugin.tests.scenario``) run against a
real ``stoker serve`` on the test cloud, as a Heat deployment would run them: stoker validates
Keystone tokens (``STOKER_AUTH_MODE=keystone``) and is the catalog's ``orchestration``
service, and tempest talks to the cloud's real Keystone, Nova, Neutron, Cinder, Glance and,
for the alarm test, Gnocchi and Aodh (the ``aodh_service`` add-on, whose evaluator and
notifier fire the alarm). The plugin's own Keystone client is used unchanged
(``tests/support/tempest.py``'s ``Selection(token_identity=False)``).

Which scenario tests can run here is decided by what their guests must do: the six services'
Nova runs the fake virt driver, so a server goes ACTIVE but never boots an operating system;
the guests' host (``addons/guests.py``) boots real guests, which run their user data and have
a network (``test_guests.py``), but this run does not yet hand tempest the guests' image,
flavor and external network. A test that needs a guest is listed in
``CANNOT_RUN_HERE`` with its obstacle (tempest's ``skip_scenario_test_list``, so the plugin
skips it); the README's table (tests/cloud/README.md, "heat-tempest-plugin's scenario tests")
says the same. Every other scenario test must pass, except those in ``KNOWN_FAILURES``,
each with the cause seen in its failure.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Iterator
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

# Class (or Class.test) -> why it cannot run on this cloud: what its guest must do.
CANNOT_RUN_HERE = {
    "CfnInitIntegrationTest": (
        "its server must run cfn-init and cfn-signal to a WaitCondition, answer ping on its "
        "floating IP and SSH as ec2-user: "
        "guests boot with a network (addons/guests.py, test_guests.py), but this run does not yet give tempest the guests' image, flavor and external network, nor serve stoker on an address a guest reaches"
    ),
    "ServerSignalIntegrationTest": (
        "its server's user data (cloud-init) must signal a WaitCondition, and the test pings the "
        "floating IP: guests boot with a network (addons/guests.py, test_guests.py), but this run does not yet give tempest the guests' image, flavor and external network, nor serve stoker on an address a guest reaches"
    ),
    "SoftwareConfigIntegrationTest": (
        "its servers must run os-collect-config and the config hooks, which signal the "
        "deployments over the network: guests boot with a network (addons/guests.py, test_guests.py), but this run does not yet give tempest the guests' image, flavor and external network, nor serve stoker on an address a guest reaches"
    ),
    "VolumeBackupRestoreIntegrationTest": (
        "its server's user data must mount the volume, write a file and signal a "
        "WaitCondition with the data read back after a restore: guests boot with a network (addons/guests.py, test_guests.py), but this run does not yet give tempest the guests' image, flavor and external network, nor serve stoker on an address a guest reaches; and the "
        "cloud's Cinder back end is a no-op one, whose volumes a guest cannot mount"
    ),
    "LoadBalancerTest": (
        "each pool member's server runs a netcat web server from user data and signals a "
        "WaitCondition before its PoolMember is made, and the test reaches them through the "
        "load balancer: Octavia runs here with the no-op "
        "amphora driver, which forwards no traffic (see test_octavia_*.py)"
    ),
}
# The tests that run: every scenario test less the classes above.
RUNS_HERE = {
    "scenario.test_aodh_alarm.AodhAlarmTest.test_alarm",
    "scenario.test_base_resources.BasicResourcesTest.test_base_resources_integration",
    "scenario.test_remote_deeply_nested.RemoteDeeplyNestedStackTest.test_remote_nested",
}
# Test (Class.test) -> why it fails against stoker today, from the failure seen. A known
# failure that passes fails this test: take it off the list with the fix.
KNOWN_FAILURES: dict[str, str] = {}
SERVICE_PASSWORD = "stoker-scenario-secret"


def scenario_conf(openstack_cloud, directory: Path, network: str, subnet: str, public: str) -> str:
    """tempest.conf for the demo user on the test cloud: real Keystone, the cloud's tiny
    flavor and image, the networks made for the run."""
    available = ("heat", "nova", "neutron", "glance", "cinder", "aodh", "gnocchi")
    absent = ("swift", "zaqar", "barbican", "octavia", "designate", "manila", "mistral")
    services = "".join(f"{name} = true\n" for name in available) + "".join(
        f"{name} = false\n" for name in absent
    )
    flavor = "m1.tiny"
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
        "username = demo\n"
        f"password = {identity.DEMO_PASSWORD}\n"
        "project_name = demo\n"
        "user_domain_name = Default\n"
        "project_domain_name = Default\n"
        f"region = {identity.REGION}\n"
        f"instance_type = {flavor}\n"
        f"minimal_instance_type = {flavor}\n"
        f"image_ref = {openstack_cloud.image_id}\n"
        f"minimal_image_ref = {openstack_cloud.image_id}\n"
        f"fixed_network_name = {network}\n"
        f"fixed_subnet_name = {subnet}\n"
        f"floating_network_name = {public}\n"
        "build_interval = 2\n"
        f"build_timeout = {BUILD_TIMEOUT_S}\n"
        f"skip_scenario_test_list = {','.join(sorted(CANNOT_RUN_HERE))}\n"
        "convergence_engine_enabled = true\n"
        "\n[heat_features_enabled]\n"
        "multi_cloud = false\n"
    )


@contextlib.contextmanager
def keystone_stoker(openstack_cloud, tmp_path: Path, suffix: str, **environment: str) -> Iterator[Server]:
    """``stoker serve`` validating the test cloud's Keystone tokens, with a service user of
    its own (deleted after); its signal URLs lead back to it."""
    admin = identity.Keystone(openstack_cloud.keystone_url)
    service_role = admin.ensure("roles", "role", "service")["id"]
    service_project = admin.ensure("projects", "project", "service", domain_id="default")
    stoker_user = admin.call("POST", "/users", body={"user": {"name": f"stoker-sc-{suffix}", "password": SERVICE_PASSWORD, "domain_id": "default"}})["user"]  # fmt: skip
    admin.grant(service_project["id"], stoker_user["id"], service_role)
    server = Server(
        f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        tmp_path / "serve.log",
        start_timeout_s=120,
        STOKER_AUTH_MODE="keystone",
        STOKER_KEYSTONE_AUTH_URL=openstack_cloud.keystone_url,
        STOKER_KEYSTONE_USERNAME=stoker_user["name"],
        STOKER_KEYSTONE_PASSWORD=SERVICE_PASSWORD,
        STOKER_KEYSTONE_PROJECT_NAME="service",
        STOKER_KEYSTONE_USER_DOMAIN_NAME="Default",
        STOKER_KEYSTONE_PROJECT_DOMAIN_NAME="Default",
        STOKER_KEYSTONE_REGION_NAME=identity.REGION,
        **environment,
    )
    # The signal URLs Aodh's notifier POSTs must lead back to this server.
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
                    openstack_cloud, tmp_path / "suite", network.name, subnet.name, public.name
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


def test_aodh_tempest_scenarios(deployment, openstack_cloud, tmp_path):
    server, configuration = deployment
    environment = require_tempest(tmp_path / "install.log")
    demo = openstack_cloud.connect("demo")
    run = run_suite(
        environment,
        f"{server.url}/v1/{demo.current_project_id}",
        tmp_path / "suite",
        workers=1,
        timeout_s=SUITE_TIMEOUT_S,
        selection=Selection(packages=(SCENARIO_PACKAGE,), gabbi=False, token_identity=False),
        configuration_text=configuration,
    )
    print(summary(run))
    for name, outcome in sorted(run.outcomes.items()):
        # A failure's cause is at the end of its detail (the plugin's log comes first).
        detail = outcome.detail[-1500:] if outcome.status == "failed" else outcome.detail[:200]
        print(f"  {outcome.status.upper()} {name} ({outcome.seconds:.0f} s) {detail}")
    assert len(run.outcomes) == SCENARIO_TESTS, f"{summary(run)}:\n{run.output}"
    ran = {name.split("[")[0] for name in run.outcomes if run.outcomes[name].status != "skipped"}
    assert ran == RUNS_HERE, f"{summary(run)}; ran {sorted(ran)}:\n{run.output}"
    for name, outcome in run.outcomes.items():
        if outcome.status == "skipped":
            assert name.split(".")[2] in CANNOT_RUN_HERE, f"{name} skipped: {outcome.detail}"

    def short(name: str) -> str:
        return ".".join(name.split("[")[0].split(".")[2:])

    failed = {
        name: outcome
        for name, outcome in run.with_status("failed").items()
        if short(name) not in KNOWN_FAILURES
    }
    assert not failed, f"{summary(run)}:\n" + "\n".join(
        f"--- {name}\n{outcome.detail}" for name, outcome in sorted(failed.items())
    )
    fixed = [
        n for n, o in run.outcomes.items() if short(n) in KNOWN_FAILURES and o.status == "passed"
    ]
    assert not fixed, f"these pass now, take them off KNOWN_FAILURES: {fixed}"
