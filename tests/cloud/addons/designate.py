"""Designate (DNS as a service) beside the test cloud, started only for the tests that ask
for ``designate_service``, at most once per test session.

Owns Designate's session: its venv (``designate-requirements.txt``, cached like the cloud's),
its MariaDB database and RabbitMQ vhost (named with the cloud session's prefix and a token
of its own, so test runs sharing the dev cloud never share them; dropped at stop), its
configuration, its service user and catalog entry in the session's Keystone (registered
idempotently: the dev cloud may already have one), and its five processes: designate-api,
-central, -worker, -producer and -mdns, each leading its own process group and dying with
the test run. A record under the cloud's ``sessions/`` lets the next start of any cloud
reap what a killed run left.

The back end is Designate's own ``fake`` pool target (it accepts every zone), and the pool's
one nameserver is designate-mdns itself: the worker's SOA poll after a create or update reads
the zone's real serial from mdns, so zones and recordsets go PENDING -> ACTIVE through the
real worker; the target's NOTIFY goes to mdns as well (it answers at once). The API runs
under gunicorn: designate-api's own server refuses Designate's threading back end. The poll threshold is 0 %, because mdns still answers for a zone that is being
deleted (no real nameserver drops it), which at Designate's default 100 % would turn every
delete into ERROR after the poll retries. What this cannot show: a zone actually served by
BIND or PowerDNS, and ERROR coming from a back end.
"""

from __future__ import annotations

import functools
import secrets
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.cloud import identity
from tests.cloud.addons._service import (
    Launcher,
    Process,
    ServiceVenv,
    process_environment,
    register_service,
    run_command,
    stop_after_failure,
    unregister_endpoints,
)
from tests.cloud.cloud import CloudError, DevCloud, free_port
from tests.cloud.infrastructure import InfrastructureError, MariaDB, RabbitMQ
from tests.cloud.sessions import SessionRecord, reap_abandoned_sessions

REQUIREMENTS = Path(__file__).with_name("designate-requirements.txt")
SERVICE_TYPE = "dns"
SERVICE_NAME = "designate"
# Designate's built-in default pool (its migrations create it; central's default_pool_id).
DEFAULT_POOL_ID = "794ccc2c-d751-44fe-b57f-8894c9f5c842"
# Seconds a designate-manage command, and the whole wait for readiness, may take.
MANAGE_TIMEOUT_S = 300
READY_TIMEOUT_S = 300
PROCESSES = (
    "designate-central",
    "designate-worker",
    "designate-producer",
    "designate-mdns",
    "designate-api",
)


class DesignateError(Exception):
    """Designate did not start; the message names the process and ends with its log tail."""


def designate_venv() -> ServiceVenv:
    """The venv holding Designate, in the cloud's cache, keyed by its pins."""
    return ServiceVenv(
        REQUIREMENTS,
        directory="designate-venv-{key}",
        lock="install-designate",
        log="install-designate.log",
        what="Designate",
        error=DesignateError,
    )


@dataclass
class DesignateService:
    """A running Designate: what tests use (``endpoint``, ``connect``) and how it stops."""

    cloud: DevCloud
    directory: Path
    environment: ServiceVenv = field(default_factory=designate_venv)
    token: str = field(default_factory=lambda: secrets.token_hex(2))
    timings: dict[str, float] = field(default_factory=dict)
    record: SessionRecord | None = None

    def __post_init__(self) -> None:
        self.directory = self.directory.resolve()
        self.etc = self.directory / "etc"
        self.logs = self.directory / "logs"
        self.data = self.directory / "data"
        self.database = f"{self.cloud.database_prefix}designate_{self.token}"
        self.vhost = f"{self.cloud.vhost}_designate_{self.token}"
        self.api_port = free_port()
        self.mdns_port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.api_port}/"
        self.pool_id = DEFAULT_POOL_ID
        self.mariadb = MariaDB()
        self.rabbitmq = RabbitMQ()
        self.launcher = Launcher(
            label="Designate",
            directory=self.directory,
            logs=self.logs,
            environment=self._environment,
            error=DesignateError,
        )

    @property
    def processes(self) -> dict[str, Process]:
        return self.launcher.processes

    def connect(self, user: str = "admin"):
        """An openstacksdk Connection as ``user``; its ``dns`` proxy reaches this Designate."""
        return self.cloud.connect(user)

    # -- start ----------------------------------------------------------------------------

    def start(self) -> DesignateService:
        started = time.monotonic()
        try:
            self._start()
        except (
            identity.ServiceError,
            InfrastructureError,
            OSError,
            subprocess.SubprocessError,
        ) as error:
            stop_after_failure(self.stop)
            raise DesignateError(f"Designate: {error}\nAll logs: {self.logs}") from error
        except BaseException:
            stop_after_failure(self.stop)
            raise
        self.timings["total_s"] = time.monotonic() - started
        return self

    def _start(self) -> None:
        reap_abandoned_sessions(self.environment.cache, self.mariadb, self.rabbitmq)
        self.logs.mkdir(parents=True, exist_ok=True)
        self.timings["install_s"] = self.environment.ensure()
        phase = time.monotonic()
        self.record = self.launcher.record = SessionRecord(
            self.environment.cache,
            f"{self.cloud.session}_designate_{self.token}",
            owned=True,
            databases=[self.database],
            vhost=self.vhost,
            directory=self.directory,
            venv=self.environment.path,
        )
        self._write_configuration()
        self.mariadb.create([self.database])
        self.rabbitmq.create_vhost(self.vhost)
        register_service(
            self.cloud.keystone_url,
            user=SERVICE_NAME,
            name=SERVICE_NAME,
            service_type=SERVICE_TYPE,
            endpoints=self.endpoint,
        )
        self._manage("database sync", "database", "sync")
        self.timings["databases_s"] = time.monotonic() - phase
        phase = time.monotonic()
        for name in PROCESSES:
            self._launch(name)
        keystone = identity.Keystone(self.cloud.keystone_url)
        self._wait(
            "designate-api",
            lambda: (
                identity.request(
                    "GET",
                    f"{self.endpoint}v2/zones",
                    token=keystone.token,
                    timeout_s=identity.PROBE_TIMEOUT_S,
                ).status
                == 200
            ),
        )
        # Every service's heartbeat reached central: its RPC server listens. A message sent
        # before it declared its queue is dropped, so designate-manage waits for this.
        for name in PROCESSES[:-1]:
            self._wait(
                name, functools.partial(self._service_up, keystone, name.removeprefix("designate-"))
            )
        # The worker loads the pool lazily (at its first zone), so it is written after its start.
        self._manage("pool update", "pool", "update", "--file", str(self.etc / "pools.yaml"))
        self._probe(keystone)
        self.timings["ready_s"] = time.monotonic() - phase

    def _service_up(self, keystone: identity.Keystone, service: str) -> bool:
        statuses = keystone.call("GET", f"{self.endpoint}v2/service_statuses")["service_statuses"]
        return any(
            status["service_name"] == service and status["status"] == "UP" for status in statuses
        )

    def _probe(self, keystone: identity.Keystone) -> None:
        """A zone through the whole path (api -> central -> worker -> fake target, serial
        polled from mdns) must become ACTIVE, and its deletion finish."""
        zones = f"{self.endpoint}v2/zones"
        zone = keystone.call(
            "POST",
            zones,
            body={"name": f"stoker-probe-{self.token}.test.", "email": "probe@example.org"},
            expect=(201, 202),
        )
        self._wait(
            "designate-worker",
            lambda: keystone.call("GET", f"{zones}/{zone['id']}")["status"] == "ACTIVE",
        )
        keystone.call("DELETE", f"{zones}/{zone['id']}", expect=(202, 204))
        self._wait(
            "designate-worker",
            lambda: (
                identity.request(
                    "GET",
                    f"{zones}/{zone['id']}",
                    token=keystone.token,
                    timeout_s=identity.PROBE_TIMEOUT_S,
                ).status
                == 404
            ),
        )

    def _write_configuration(self) -> None:
        for path in (self.etc, self.logs, self.data / "lock"):
            path.mkdir(parents=True, exist_ok=True)
        authentication = identity.service_authentication(SERVICE_NAME, self.cloud.keystone_url)
        (self.etc / "designate.conf").write_text(
            f"""[DEFAULT]
transport_url = {self.rabbitmq.transport_url(self.vhost)}
host = stoker-designate-{self.token}
state_path = {self.data}
# The API's log (under gunicorn it has no command line); the others name theirs with --log-file.
log_file = {self.logs}/designate-api.log
debug = false
use_stderr = false

[oslo_concurrency]
lock_path = {self.data}/lock

[storage:sqlalchemy]
connection = {self.mariadb.url}/{self.database}?charset=utf8mb4

[keystone_authtoken]
{authentication}

[service:api]
listen = 127.0.0.1:{self.api_port}
api_base_uri = {self.endpoint}
auth_strategy = keystone
api_paste_config = {self.etc}/api-paste.ini
enable_api_v2 = true
enable_api_admin = true
enabled_extensions_admin = quotas
workers = 1
threads = 20

[service:central]
workers = 1
default_pool_id = {self.pool_id}

[service:mdns]
listen = 127.0.0.1:{self.mdns_port}
workers = 1

[service:producer]
workers = 1

[service:worker]
workers = 1
threads = 20
# See the module's docstring: mdns answers for zones being deleted too.
threshold_percentage = 0
poll_timeout = 5
poll_retry_interval = 1
poll_max_retries = 3
poll_delay = 0

[heartbeat_emitter]
heartbeat_interval = 2
"""
        )
        (self.etc / "pools.yaml").write_text(
            f"""- name: default
  description: stoker test cloud (fake target, mdns as the nameserver)
  attributes: {{}}
  ns_records:
    - hostname: ns1.stoker.test.
      priority: 1
  nameservers:
    - host: 127.0.0.1
      port: {self.mdns_port}
  targets:
    - type: fake
      description: Designate's fake back end
      masters:
        - host: 127.0.0.1
          port: {self.mdns_port}
      # Where the worker sends its NOTIFY after each change: mdns answers at once (NOTAUTH
      # for a primary zone); the default, port 53, times out after 10 s, three times.
      options:
        host: 127.0.0.1
        port: {self.mdns_port}
"""
        )
        paste = self.environment.path / "etc" / "designate" / "api-paste.ini"
        (self.etc / "api-paste.ini").write_text(paste.read_text())

    def _environment(self) -> dict[str, str]:
        return process_environment(self.environment.path, tmpdir=tempfile.gettempdir())

    def _unregister(self) -> None:
        unregister_endpoints(self.cloud.keystone_url, self.endpoint)

    def _manage(self, what: str, *arguments: str) -> None:
        run_command(
            f"designate-manage {what}",
            [
                str(self.environment.bin("designate-manage")),
                "--config-file",
                str(self.etc / "designate.conf"),
                *arguments,
            ],
            log=self.logs / "designate-manage.log",
            directory=self.directory,
            environment=self._environment(),
            timeout_s=MANAGE_TIMEOUT_S,
            error=DesignateError,
            label="Designate: ",
        )

    def _launch(self, name: str) -> None:
        log = self.logs / f"{name}.log"
        environment = self._environment()
        if name == "designate-api":
            # designate-api's own server is oslo.service's WSGI server, which refuses to run
            # on the threading back end Designate now uses: the API runs as a WSGI app under
            # gunicorn (sync workers answer one request per connection, then close it).
            command = [
                str(self.environment.bin("gunicorn")),
                "--bind", f"127.0.0.1:{self.api_port}",
                "--workers", "2",
                "--timeout", "120",
                "designate.wsgi.api:application",
            ]  # fmt: skip
            environment["OS_DESIGNATE_CONFIG_DIR"] = str(self.etc)
        else:
            command = [
                str(self.environment.bin(name)),
                "--config-file",
                str(self.etc / "designate.conf"),
                "--log-file",
                str(log),
            ]
        self.launcher.add(name, command, [log])
        self.launcher.launch(name, environment)

    def _wait(
        self, name: str, ready: Callable[[], bool], timeout_s: float = READY_TIMEOUT_S
    ) -> None:
        self.launcher.wait(name, ready, timeout_s)

    # -- stop -----------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the processes, drop the database and vhost, remove our endpoints. Safe twice."""
        self.launcher.stop()
        problems = []
        for step in (
            self._unregister,
            lambda: self.mariadb.drop([self.database]),
            lambda: self.rabbitmq.delete_vhost(self.vhost),
        ):
            try:
                step()
            except (identity.ServiceError, InfrastructureError, OSError) as error:
                problems.append(str(error))
        if self.record is not None and not problems:
            self.record.remove()
        if problems:
            raise DesignateError("stopping Designate: " + "; ".join(problems))


def start_for(cloud: DevCloud, directory: Path) -> tuple[DesignateService, Callable[[], None]]:
    """Designate beside ``cloud`` outside pytest (``bench/heat_templates.py --cloud``), and
    what stops it."""
    service = DesignateService(cloud, directory).start()
    return service, service.stop


@pytest.fixture(scope="session")
def designate_service(
    openstack_cloud: DevCloud, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[DesignateService]:
    """Designate on loopback for this test session, in the session's Keystone catalog."""
    service = DesignateService(openstack_cloud, tmp_path_factory.mktemp("designate"))
    try:
        service.start()
    except (DesignateError, CloudError) as error:
        pytest.fail(str(error), pytrace=False)
    try:
        yield service
    finally:
        service.stop()
