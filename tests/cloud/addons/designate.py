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
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.cloud import identity
from tests.cloud.cloud import CloudError, DevCloud, free_port
from tests.cloud.infrastructure import InfrastructureError, MariaDB, RabbitMQ
from tests.cloud.installation import UV_REQUIREMENT, cache_directory
from tests.cloud.services import Process
from tests.cloud.sessions import (
    SessionRecord,
    die_with_parent,
    reap_abandoned_sessions,
    stop_groups,
)
from tests.support import venv_cache

REQUIREMENTS = Path(__file__).with_name("designate-requirements.txt")
SERVICE_TYPE = "dns"
SERVICE_NAME = "designate"
# Designate's built-in default pool (its migrations create it; central's default_pool_id).
DEFAULT_POOL_ID = "794ccc2c-d751-44fe-b57f-8894c9f5c842"
# Seconds a build step, a designate-manage command, and the whole wait for readiness may take.
BUILD_STEP_TIMEOUT_S = 1800
MANAGE_TIMEOUT_S = 300
READY_TIMEOUT_S = 300
LOCK_WAIT_S = 2400
PROCESSES = (
    "designate-central",
    "designate-worker",
    "designate-producer",
    "designate-mdns",
    "designate-api",
)


class DesignateError(Exception):
    """Designate did not start; the message names the process and ends with its log tail."""


class DesignateEnvironment:
    """The venv holding Designate, in the cloud's cache, keyed by its pins."""

    def __init__(self) -> None:
        self.cache = cache_directory()
        self.key = venv_cache.environment_key([REQUIREMENTS.read_bytes(), UV_REQUIREMENT.encode()])
        self.path = self.cache / f"designate-venv-{self.key}"
        self.marker = self.path / ".stoker-complete"

    def bin(self, name: str) -> Path:
        return self.path / "bin" / name

    def ensure(self, log_path: Path) -> float:
        """Build unless a complete venv is cached; the seconds spent building."""
        lock = venv_cache.cache_lock(self.cache, "install-designate", LOCK_WAIT_S, DesignateError)
        return venv_cache.build_once(self.marker, lock, lambda: self._build(log_path))

    def _build(self, log_path: Path) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        environment = venv_cache.outside_environment(("UV_PYTHON",))
        environment.update(
            UV_CACHE_DIR=str(self.cache / "uv-cache"),
            UV_NO_PROGRESS="1",
            PIP_DISABLE_PIP_VERSION_CHECK="1",
        )
        python = str(self.bin("python"))
        steps = [
            ("create the venv", None, [sys.executable, "-m", "venv", str(self.path)]),
            ("install uv", None, [python, "-m", "pip", "install", "-q", UV_REQUIREMENT]),
            (
                "install Designate",
                None,
                [
                    str(self.bin("uv")),
                    "pip",
                    "install",
                    "--python",
                    python,
                    "-r",
                    str(REQUIREMENTS),
                ],
            ),
        ]
        with open(log_path, "a") as log:
            venv_cache.run_steps(
                steps,
                log,
                log_path,
                environment,
                BUILD_STEP_TIMEOUT_S,
                "Designate's venv",
                DesignateError,
                shown=" ".join,
            )


@dataclass
class DesignateService:
    """A running Designate: what tests use (``endpoint``, ``connect``) and how it stops."""

    cloud: DevCloud
    directory: Path
    environment: DesignateEnvironment = field(default_factory=DesignateEnvironment)
    token: str = field(default_factory=lambda: secrets.token_hex(2))
    processes: dict[str, Process] = field(default_factory=dict)
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
            self.stop()
            raise DesignateError(f"Designate: {error}\nAll logs: {self.logs}") from error
        except BaseException:
            self.stop()
            raise
        self.timings["total_s"] = time.monotonic() - started
        return self

    def _start(self) -> None:
        reap_abandoned_sessions(self.environment.cache, self.mariadb, self.rabbitmq)
        self.logs.mkdir(parents=True, exist_ok=True)
        self.timings["install_s"] = self.environment.ensure(
            self.environment.cache / "install-designate.log"
        )
        phase = time.monotonic()
        self.record = SessionRecord(
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
        self._register()
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
        environment = {
            "PATH": f"{self.environment.path / 'bin'}:{os.defpath}",
            "HOME": str(Path.home()),
            "LANG": "C.UTF-8",
            "TMPDIR": tempfile.gettempdir(),
            "PYTHONWARNINGS": "ignore",
        }
        for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE"):
            if name in os.environ:
                environment[name] = os.environ[name]
        return environment

    def _register(self) -> None:
        """The service user (admin and service roles in project ``service``), the ``dns``
        service and its three endpoints at this session's port: an existing entry (the dev
        cloud, another run) is pointed here rather than duplicated."""
        keystone = identity.Keystone(self.cloud.keystone_url)
        roles = {
            role: keystone.ensure("roles", "role", role)["id"] for role in ("admin", "service")
        }
        project = keystone.ensure("projects", "project", "service", domain_id="default")
        user = keystone.ensure(
            "users",
            "user",
            SERVICE_NAME,
            domain_id="default",
            password=identity.SERVICE_PASSWORD,
            default_project_id=project["id"],
        )
        keystone.grant(project["id"], user["id"], roles["admin"])
        keystone.grant(project["id"], user["id"], roles["service"])
        services = keystone.call("GET", f"/services?type={SERVICE_TYPE}")["services"]
        service = (
            next((s for s in services if s["name"] == SERVICE_NAME), None)
            or keystone.call(
                "POST", "/services", body={"service": {"name": SERVICE_NAME, "type": SERVICE_TYPE}}
            )["service"]
        )
        existing = {
            e["interface"]: e
            for e in keystone.call("GET", f"/endpoints?service_id={service['id']}")["endpoints"]
        }
        for interface in ("public", "internal", "admin"):
            if interface in existing:
                keystone.call(
                    "PATCH",
                    f"/endpoints/{existing[interface]['id']}",
                    body={"endpoint": {"url": self.endpoint}},
                )
            else:
                keystone.call(
                    "POST",
                    "/endpoints",
                    body={
                        "endpoint": {
                            "service_id": service["id"],
                            "interface": interface,
                            "url": self.endpoint,
                            "region_id": identity.REGION,
                        }
                    },
                )

    def _unregister(self) -> None:
        """Remove the endpoints that still point at this session (a later run may have
        pointed them elsewhere: those stay)."""
        keystone = identity.Keystone(self.cloud.keystone_url)
        for endpoint in keystone.call("GET", "/endpoints")["endpoints"]:
            if endpoint["url"] == self.endpoint:
                keystone.call("DELETE", f"/endpoints/{endpoint['id']}")

    def _manage(self, what: str, *arguments: str) -> None:
        command = [
            str(self.environment.bin("designate-manage")),
            "--config-file",
            str(self.etc / "designate.conf"),
            *arguments,
        ]
        log = self.logs / "designate-manage.log"
        with open(log, "ab") as output:
            try:
                result = subprocess.run(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    env=self._environment(),
                    cwd=self.directory,
                    timeout=MANAGE_TIMEOUT_S,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise DesignateError(
                    f"Designate: designate-manage {what} took over {MANAGE_TIMEOUT_S} s.\n{venv_cache.tail(log, 25)}"
                ) from None
        if result.returncode != 0:
            raise DesignateError(
                f"Designate: designate-manage {what} failed (exit {result.returncode}).\n{venv_cache.tail(log, 25)}"
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
        process = Process(name, command, self.logs / f"{name}.out", [log])
        with open(process.output, "ab") as output:
            process.popen = subprocess.Popen(
                process.command,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=self.directory,
                env=environment,
                start_new_session=True,
                preexec_fn=die_with_parent,
            )
        self.processes[name] = process
        self.record.remember_group(process.popen.pid)

    def _wait(
        self, name: str, ready: Callable[[], bool], timeout_s: float = READY_TIMEOUT_S
    ) -> None:
        deadline = time.monotonic() + timeout_s
        last_problem = "not ready"
        while True:
            for process in self.processes.values():
                if process.popen is not None and process.popen.poll() is not None:
                    raise DesignateError(
                        self._failure(
                            process.name, f"exited with status {process.popen.returncode}"
                        )
                    )
            try:
                if ready():
                    return
            except (OSError, identity.ServiceError, ValueError, KeyError) as error:
                last_problem = str(error)
            if time.monotonic() > deadline:
                raise DesignateError(
                    self._failure(name, f"not ready after {timeout_s:.0f} s (last: {last_problem})")
                )
            time.sleep(0.5)

    def _failure(self, name: str, what: str) -> str:
        parts = [f"Designate: {name} {what}."]
        process = self.processes.get(name)
        for log in [process.output, *process.logs] if process else []:
            if log.exists() and log.stat().st_size:
                parts.append(f"--- last lines of {log}:\n{venv_cache.tail(log, 25)}")
        parts.append(f"All logs: {self.logs}")
        return "\n".join(parts)

    # -- stop -----------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the processes, drop the database and vhost, remove our endpoints. Safe twice."""
        running = [p.popen for p in self.processes.values() if p.popen is not None]
        stop_groups([popen.pid for popen in running])
        for popen in running:
            try:
                popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        for process in self.processes.values():
            process.popen = None
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
