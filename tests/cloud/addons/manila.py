"""Manila (shared file systems) in the test cloud, started only when a test asks for
``manila_service``: manila-api under uWSGI, manila-scheduler and manila-share, its database
on the machine's MariaDB and its RPC on the cloud's RabbitMQ vhost, behind Keystone's
authtoken like the six services of ``cloud.py``; registered as ``sharev2``.

The share back ends are Manila's own dummy driver (``manila.tests.share.drivers.dummy``, the
one Manila's CI runs its API tests with; the wheel ships it): shares, access rules and
snapshots really go through the API, scheduler and share manager (``creating`` ->
``available``, ``deleting`` -> gone) but no storage is exported. Two back ends: ``dummy``
(``driver_handles_share_servers = False``: a share needs no share server) and
``dummy_dhss`` (True: a share on a share network gets a share server, whose port Manila's
Neutron network plugin makes on the share network's subnet, recording the subnet's CIDR and
IP version on the share network; its one admin allocation comes from a standalone range, as
in Manila's CI).

Owns Manila's configuration, database (and its golden dump), the public share types
``default`` (Manila refuses a share without a type when it has no default) and ``dhss``,
made as the admin when the API answers, catalog entry and processes for one test session.
On the dev cloud (``STOKER_TEST_CLOUD=dev``) each session starts its own Manila and points
the catalog at it.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.cloud import identity, installation
from tests.cloud.addons._service import (
    GoldenSchema,
    Launcher,
    ServiceVenv,
    process_environment,
    register_service,
    run_command,
    stop_after_failure,
    unregister_endpoints,
)
from tests.cloud.infrastructure import InfrastructureError
from tests.cloud.sessions import SessionRecord
from tests.support import venv_cache

if TYPE_CHECKING:
    from tests.cloud.cloud import DevCloud

REQUIREMENTS = Path(__file__).with_name("manila-requirements.txt")
SERVICE_USER = "manila"
SERVICE_NAME = "manilav2"
SERVICE_TYPE = "sharev2"
# The API version the add-on's own calls (the default share type, readiness) speak.
API_VERSION = "2.13"
DEFAULT_SHARE_TYPE = "default"
# The public share type of the back end that makes share servers (on a share network).
SHARE_SERVERS_TYPE = "dhss"
# The back ends' names in the share host (``<host>@dummy#<pool>``): without and with
# share servers.
BACKEND = "dummy"
SERVERS_BACKEND = "dummy_dhss"
READY_TIMEOUT_S = 180
# Seconds the scheduler has to know both back ends' pools before it is started again.
POOLS_FIRST_WAIT_S = 120
MIGRATION_TIMEOUT_S = 600

UWSGI_INI = """\
# Manila's API of the test cloud under uWSGI: one process, four threads (as cloud.py's APIs).
[uwsgi]
http-socket = 127.0.0.1:{port}
module = manila.wsgi.api:application
virtualenv = {venv}
master = true
processes = 1
threads = 4
lazy-apps = true
die-on-term = true
need-app = true
add-header = Connection: close
buffer-size = 65535
"""

MANILA_CONF = """\
[DEFAULT]
log_file = {log_file}
host = {host}
state_path = {state}
transport_url = {transport_url}
auth_strategy = keystone
api_paste_config = {paste}
enabled_share_backends = {backend},{servers_backend}
enabled_share_protocols = NFS,CIFS
default_share_type = {default_share_type}
# The share service reports its pools to the scheduler this often (seconds).
periodic_interval = 5
# A share server goes with the last share on it (a share network is then deleted at once).
delete_share_server_with_last_share = True
scheduler_driver = manila.scheduler.drivers.filter.FilterScheduler

[oslo_concurrency]
lock_path = {state}/locks

[database]
connection = {database_url}
# Three processes beside every other service on one shared MariaDB (151 connections):
# small pools, so a busy machine does not refuse Manila's share service a connection.
max_pool_size = 2
max_overflow = 5

[keystone_authtoken]
{authentication}

[{backend}]
share_driver = manila.tests.share.drivers.dummy.DummyDriver
share_backend_name = {backend}
driver_handles_share_servers = False
# Manila's CI slows every driver call by seconds; here a share is "creating" for a second.
dummy_driver_default_driver_method_delay = 0
dummy_driver_driver_methods_delays = create_share:1,ensure_share:0,get_pool:0

[{servers_backend}]
share_driver = manila.tests.share.drivers.dummy.DummyDriver
share_backend_name = {servers_backend}
driver_handles_share_servers = True
dummy_driver_default_driver_method_delay = 0
dummy_driver_driver_methods_delays = create_share:1,ensure_share:0,get_pool:0
# Share servers get their ports from Neutron, on the share network's subnet; Manila then
# records the network's type, segmentation id, CIDR and IP version on the share network.
network_api_class = manila.network.neutron.neutron_network_plugin.NeutronNetworkPlugin
# The dummy driver also asks for one admin allocation: from a range of our own, as Manila's
# CI does (no Neutron involved).
admin_network_config_group = adminnet

[adminnet]
network_api_class = manila.network.standalone_network_plugin.StandaloneNetworkPlugin
standalone_network_plugin_gateway = 198.18.0.1
standalone_network_plugin_mask = 24
standalone_network_plugin_allowed_ip_ranges = 198.18.0.10-198.18.0.250
network_plugin_ipv4_enabled = True

[neutron]
{authentication}
"""


class ManilaError(Exception):
    """Manila did not start; the message names the step or process and ends with its log tail."""


def manila_venv(cache: Path | None = None) -> ServiceVenv:
    return ServiceVenv(
        REQUIREMENTS,
        directory="manila-venv-{key}",
        lock="manila-install",
        log="manila-install.log",
        what="Manila",
        error=ManilaError,
        cache=cache,
    )


@dataclass
class ManilaService:
    """What tests get: Manila's endpoint (as the catalog has it), the cloud, and where its logs are."""

    endpoint: str
    cloud: DevCloud
    directory: Path
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def logs(self) -> Path:
        return self.directory / "logs"


class Manila:
    """Manila beside a running ``DevCloud``: ``start()`` then ``stop()`` (safe after a failure)."""

    def __init__(self, cloud: DevCloud, directory: Path, environment: ServiceVenv | None = None):
        from tests.cloud.cloud import free_port

        self.cloud = cloud
        self.directory = directory.resolve()
        self.environment = environment or manila_venv(cloud.environment.cache)
        suffix = secrets.token_hex(3)
        self.session = f"{cloud.session}_manila_{suffix}"
        self.database = f"{cloud.database_prefix}manila_{suffix}"
        # The share service's host name: RPC topics carry it, so two sessions on one vhost
        # never take each other's messages.
        self.host = f"stoker-manila-{suffix}"
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.home = self.directory / "home"
        self.conf = self.home / ".manila" / "manila.conf"
        self.logs = self.directory / "logs"
        self.launcher = Launcher(
            label="test cloud",
            directory=self.directory,
            logs=self.logs,
            environment=self._environment,
            error=ManilaError,
        )
        self.record: SessionRecord | None = None
        self.registered = False
        self.timings: dict[str, float] = {}

    # -- start ------------------------------------------------------------------------

    def start(self) -> ManilaService:
        started = time.monotonic()
        try:
            self.timings["venv_s"] = self.environment.ensure()
            self._start()
        except (identity.ServiceError, InfrastructureError, OSError) as error:
            stop_after_failure(self.stop)
            raise ManilaError(f"Manila: {error}\nAll logs: {self.logs}") from error
        except BaseException:
            stop_after_failure(self.stop)
            raise
        self.timings["start_s"] = time.monotonic() - started - self.timings["venv_s"]
        return ManilaService(self.endpoint, self.cloud, self.directory, dict(self.timings))

    def _start(self) -> None:
        # Recorded before anything is made: a killed run's database and processes are
        # reaped by the next cloud start (sessions.reap_abandoned_sessions).
        self.record = self.launcher.record = SessionRecord(
            self.environment.cache,
            self.session,
            owned=True,
            databases=[self.database],
            vhost="",
            directory=self.directory,
            venv=self.environment.path,
        )
        self.logs.mkdir(parents=True, exist_ok=True)
        self.conf.parent.mkdir(parents=True, exist_ok=True)
        (self.directory / "state" / "locks").mkdir(parents=True, exist_ok=True)
        self._write_configuration()
        phase = time.monotonic()
        self.cloud.mariadb.create([self.database])
        self._database_schema()
        self.timings["database_s"] = time.monotonic() - phase
        register_service(
            self.cloud.keystone_url,
            user=SERVICE_USER,
            name=SERVICE_NAME,
            service_type=SERVICE_TYPE,
            endpoints=f"{self.endpoint}/v2",
        )
        self.registered = True
        phase = time.monotonic()
        log = [self.logs / "manila.log"]
        self.launcher.add(
            "manila-api",
            [str(self.environment.bin("uwsgi")), "--ini", str(self.directory / "uwsgi.ini")],
            log,
        )
        for program in ("manila-scheduler", "manila-share"):
            self.launcher.add(
                program,
                [str(self.environment.bin(program)), "--config-file", str(self.conf)],
                log,
            )
        for program in ("manila-api", "manila-scheduler", "manila-share"):
            self.launcher.launch(program)
        keystone = identity.Keystone(self.cloud.keystone_url)
        self.launcher.wait(
            "manila-api",
            lambda: self._call(keystone, "GET", "/types").status == 200,
            READY_TIMEOUT_S,
        )
        self._ensure_share_types(keystone)
        try:
            self.launcher.wait("manila-share", lambda: self._pool_reported(keystone), POOLS_FIRST_WAIT_S)
        except ManilaError:
            # Seen in CI, with both clouds booting beside the local tests: the share
            # services ran, but the scheduler never took their reports. A scheduler that
            # starts asks them to report again. Seen too: every process's RPC server hung
            # in its start ("Possible hang: wait is waiting for stop to complete" from
            # oslo.messaging, the scheduler's and both share back ends'), so the share
            # services start again too, before the scheduler.
            self._restart("manila-share")
            self._restart("manila-scheduler")
            self.launcher.wait("manila-share", lambda: self._pool_reported(keystone), READY_TIMEOUT_S)
        self.timings["ready_s"] = time.monotonic() - phase

    def _restart(self, program: str) -> None:
        popen = self.launcher.processes[program].popen
        if popen is not None and popen.poll() is None:
            os.killpg(popen.pid, signal.SIGTERM)
            try:
                popen.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(popen.pid, signal.SIGKILL)
                popen.wait(timeout=30)
        self.launcher.launch(program)

    def _database_schema(self) -> None:
        """Manila's schema: the golden dump of the first start restored, or
        ``manila-manage db sync`` and the dump saved (keyed by the pins)."""
        golden = GoldenSchema(
            self.cloud.mariadb,
            self.environment.cache / f"manila-golden-{self.environment.key}.sql",
            lambda: venv_cache.cache_lock(
                self.environment.cache, "manila-golden", installation.LOCK_WAIT_S, ManilaError
            ),
            MIGRATION_TIMEOUT_S,
        )
        golden.prepare(
            self.database,
            lambda: run_command(
                "manila-manage db sync",
                [
                    str(self.environment.bin("manila-manage")),
                    "--config-file",
                    str(self.conf),
                    "db",
                    "sync",
                ],
                log=self.logs / "manage.out",
                directory=self.directory,
                environment=self._environment(),
                timeout_s=MIGRATION_TIMEOUT_S,
                error=ManilaError,
                label="Manila: ",
            ),
        )

    def _write_configuration(self) -> None:
        self.conf.write_text(
            MANILA_CONF.format(
                log_file=self.logs / "manila.log",
                host=self.host,
                state=self.directory / "state",
                transport_url=self.cloud.rabbitmq.transport_url(self.cloud.vhost),
                paste=self.environment.path / "etc" / "manila" / "api-paste.ini",
                backend=BACKEND,
                servers_backend=SERVERS_BACKEND,
                default_share_type=DEFAULT_SHARE_TYPE,
                database_url=f"{self.cloud.mariadb.url}/{self.database}",
                authentication=identity.service_authentication(
                    SERVICE_USER, self.cloud.keystone_url
                ),
            )
        )
        (self.directory / "uwsgi.ini").write_text(
            UWSGI_INI.format(port=self.port, venv=self.environment.path)
        )

    def _environment(self) -> dict[str, str]:
        # The API reads its configuration from the default places only (~/.manila/ first):
        # HOME is the session's directory.
        return process_environment(self.environment.path, home=self.home)

    # -- readiness --------------------------------------------------------------------

    def _call(
        self, keystone: identity.Keystone, method: str, path: str, body: object = None
    ) -> identity.Response:
        return identity.request(
            method,
            f"{self.endpoint}/v2{path}",
            token=keystone.token,
            body=body,
            headers={"X-OpenStack-Manila-API-Version": API_VERSION},
            timeout_s=identity.PROBE_TIMEOUT_S if method == "GET" else identity.REQUEST_TIMEOUT_S,
        )

    def _ensure_share_types(self, keystone: identity.Keystone) -> None:
        """The public types ``default`` (no share servers) and ``dhss`` (share servers),
        made once per database."""
        types = self._call(keystone, "GET", "/types?is_public=all").body["share_types"]
        existing = {share_type["name"] for share_type in types}
        for name, servers in ((DEFAULT_SHARE_TYPE, False), (SHARE_SERVERS_TYPE, True)):
            if name in existing:
                continue
            answer = self._call(
                keystone,
                "POST",
                "/types",
                {
                    "share_type": {
                        "name": name,
                        "share_type_access:is_public": True,
                        "extra_specs": {
                            "driver_handles_share_servers": servers,
                            "snapshot_support": True,
                        },
                    }
                },
            )
            if answer.status != 200:
                raise ManilaError(
                    f"Manila refused the share type {name}: {answer.status} {answer.body}"
                )

    def _pool_reported(self, keystone: identity.Keystone) -> bool:
        """manila-share is ready when the scheduler knows the pools of both back ends: a
        share made before would fail with "No valid host"."""
        answer = self._call(keystone, "GET", "/scheduler-stats/pools")
        if answer.status != 200:
            return False
        names = [str(pool.get("name", "")) for pool in answer.body.get("pools", [])]
        return all(
            any(name.startswith(f"{self.host}@{backend}#") for name in names)
            for backend in (BACKEND, SERVERS_BACKEND)
        )

    # -- stop -------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the processes, take the endpoints out of the catalog, drop the database.
        Safe to call twice."""
        self.launcher.stop()
        if self.registered:
            try:
                unregister_endpoints(self.cloud.keystone_url, f"{self.endpoint}/v2")
            except (identity.ServiceError, OSError):
                pass  # the session's own Keystone may be stopping with it
            self.registered = False
        try:
            self.cloud.mariadb.drop([self.database])
        except InfrastructureError as error:
            raise ManilaError(f"stopping Manila: {error}") from None
        if self.record is not None:
            self.record.remove()


def start_for(cloud: DevCloud, directory: Path) -> tuple[ManilaService, Callable[[], None]]:
    """Manila beside ``cloud`` outside pytest (``bench/heat_templates.py --cloud``), and
    what stops it."""
    manila = Manila(cloud, directory)
    return manila.start(), manila.stop


@pytest.fixture(scope="session")
def manila_service(
    openstack_cloud: DevCloud, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ManilaService]:
    """Manila (API, scheduler, share service on the dummy back end) registered in the
    session's cloud as ``sharev2``."""
    manila = Manila(openstack_cloud, tmp_path_factory.mktemp("manila"))
    try:
        service = manila.start()
    except ManilaError as first:
        # Seen twice in a row in CI (2026-11-29), never on a quiet machine: the share
        # services' reports never reached the scheduler, and restarting both did not
        # help either. A Manila made again from nothing (its own database, host and
        # topics; the failed one is stopped and dropped) is the last try.
        manila = Manila(openstack_cloud, tmp_path_factory.mktemp("manila"))
        try:
            service = manila.start()
        except ManilaError as error:
            pytest.fail(f"{first}\n\nA second Manila, made from nothing, failed too:\n{error}", pytrace=False)
    # Seen with -s; the README's measured times come from it.
    print(
        f"\nManila started at {service.endpoint}: "
        + ", ".join(f"{key} {value:.1f}" for key, value in service.timings.items())
    )
    try:
        yield service
    finally:
        manila.stop()
