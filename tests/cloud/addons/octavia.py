"""Octavia (load balancing) as an add-on service of the test cloud: the ``octavia_service``
fixture, started the first time a test asks for it and stopped at the end of the session.

Owns Octavia's own venv (``octavia-requirements.txt``, cached like the cloud's), its
database on MariaDB (named with the cloud session's prefix and a token of this test run,
dropped at stop; its migrated schema kept as a golden dump beside the venv), its service
user, service and endpoints in the session's Keystone (registered idempotently, so it also
works attached to the dev cloud), and its two processes: octavia-api under uWSGI and
octavia-worker, which takes the API's requests over RabbitMQ (a vhost of its own, deleted
at stop). The amphora provider runs with every no-op driver (amphora, compute, network,
volume, image, distributor), so a load balancer really goes PENDING_CREATE -> ACTIVE
through the worker's flows without Nova servers, Neutron ports or an amphora image.
Health manager and housekeeping are not started: nothing here needs them.

It must not change the six services' venv, databases or golden copy.
"""

from __future__ import annotations

import os
import secrets
import shutil
import string
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.cloud import identity
from tests.cloud.infrastructure import InfrastructureError
from tests.cloud.installation import UV_REQUIREMENT, InstallationError, cache_directory, cache_lock
from tests.cloud.sessions import SessionRecord, die_with_parent, stop_groups
from tests.support import venv_cache

__all__ = ["OctaviaService", "octavia_service"]

ADDONS = Path(__file__).resolve().parent
REQUIREMENTS = ADDONS / "octavia-requirements.txt"
CONFIGURATION = ADDONS / "octavia.conf"
SERVICE_NAME, SERVICE_TYPE, USER = "octavia", "load-balancer", "octavia"
# The queue octavia-worker consumes (Octavia's constant, not configurable).
WORKER_TOPIC = "octavia_provisioning_v2"
# Seconds one step of the venv build, and the wait for the service to answer, may take.
BUILD_STEP_TIMEOUT_S = 1800
READY_TIMEOUT_S = 180


class OctaviaError(Exception):
    """Octavia did not start; the message names the process and ends with its log tail."""


def free_port() -> int:
    from tests.cloud.cloud import free_port as cloud_free_port

    return cloud_free_port()


# -- the venv -----------------------------------------------------------------------------


class OctaviaEnvironment:
    """Octavia's venv in the cloud's cache, keyed by a hash of its pins and the Python."""

    def __init__(self) -> None:
        self.cache = cache_directory()
        self.key = venv_cache.environment_key([REQUIREMENTS.read_bytes(), UV_REQUIREMENT.encode()])
        self.path = self.cache / f"octavia-venv-{self.key}"
        self.marker = self.path / ".stoker-complete"
        self.golden = self.cache / f"octavia-golden-{self.key}.sql"

    def bin(self, name: str) -> Path:
        return self.path / "bin" / name

    def ensure(self) -> float:
        """Build the venv unless a complete one is cached; the seconds spent building."""
        log_path = self.cache / "octavia-install.log"
        return venv_cache.build_once(
            self.marker, cache_lock("octavia-install"), lambda: self._build(log_path)
        )

    def _build(self, log_path: Path) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
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
                "install Octavia",
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
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "a") as log:
            venv_cache.run_steps(
                steps,
                log,
                log_path,
                environment,
                BUILD_STEP_TIMEOUT_S,
                "Octavia's venv",
                InstallationError,
                shown=" ".join,
            )


# -- the running service ------------------------------------------------------------------


@dataclass
class Process:
    name: str
    command: list[str]
    output: Path
    logs: list[Path]
    popen: subprocess.Popen | None = None


@dataclass
class OctaviaService:
    """One Octavia for one test session. ``endpoint`` is its API's root URL (also in the
    catalog as ``load-balancer``); ``timings`` the seconds each phase of the start took."""

    cloud: Any
    directory: Path
    environment: OctaviaEnvironment = field(default_factory=OctaviaEnvironment)
    token: str = field(default_factory=lambda: f"{os.getpid()}_{secrets.token_hex(2)}")
    processes: dict[str, Process] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    record: SessionRecord | None = None

    def __post_init__(self) -> None:
        self.directory = self.directory.resolve()
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.database = f"{self.cloud.database_prefix}octavia_{self.token}"
        # A vhost of its own: the worker's topic is fixed (octavia_provisioning_v2), so two
        # test runs on the dev cloud's vhost would take each other's requests.
        self.vhost = f"{self.cloud.vhost}_octavia_{self.token}"
        self.etc, self.data, self.logs = (self.directory / part for part in ("etc", "data", "logs"))

    # -- start --------------------------------------------------------------------------

    def start(self) -> OctaviaService:
        try:
            self._start()
        except (identity.ServiceError, InfrastructureError, InstallationError, OSError) as error:
            self.stop()
            raise OctaviaError(f"Octavia: {error}\nAll logs: {self.logs}") from error
        except BaseException:
            self.stop()
            raise
        return self

    def _phase(self, name: str, started: float) -> float:
        now = time.monotonic()
        self.timings[name] = round(now - started, 1)
        return now

    def _start(self) -> None:
        started = time.monotonic()
        self.environment.ensure()
        phase = self._phase("venv", started)
        # Recorded before anything is created, so a killed run's leftovers are reaped.
        self.record = SessionRecord(
            self.environment.cache,
            f"{self.cloud.session}-octavia-{self.token}",
            owned=True,
            databases=[self.database],
            vhost=self.vhost,
            directory=self.directory,
            venv=self.environment.path,
        )
        self._write_configuration()
        self.cloud.rabbitmq.create_vhost(self.vhost)
        self._prepare_database()
        phase = self._phase("database", phase)
        self._register()
        phase = self._phase("keystone", phase)
        for process in self.processes.values():
            self._launch(process)
        keystone = identity.Keystone(self.cloud.keystone_url)
        self._wait("octavia-api", lambda: self._answers(keystone))
        self._wait("octavia-worker", self._worker_listens)
        self._phase("ready", phase)
        self.timings["total"] = round(time.monotonic() - started, 1)

    def _write_configuration(self) -> None:
        for path in (
            self.etc,
            self.data / "lock",
            self.data / "amphora",
            self.data / "certs",
            self.data / "tmp",
            self.logs,
        ):
            path.mkdir(parents=True, exist_ok=True)
        # The local certificate generator signs each amphora's certificate with this CA.
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "30", "-subj", "/CN=stoker-octavia-ca",
             "-keyout", str(self.etc / "ca.key"), "-out", str(self.etc / "ca.pem")],
            check=True, capture_output=True, timeout=60,
        )  # fmt: skip
        values = {
            "transport_url": self.cloud.rabbitmq.transport_url(self.vhost),
            "logs": str(self.logs),
            "data": str(self.data),
            "etc": str(self.etc),
            "mysql": self.cloud.mariadb.url,
            "database": self.database,
            "service_auth": identity.service_authentication(USER, self.cloud.keystone_url),
            # The no-op compute driver boots nothing; Octavia only needs a network id to name.
            "boot_network": "00000000-0000-4000-8000-000000000001",
        }
        configuration = self.etc / "octavia.conf"
        configuration.write_text(string.Template(CONFIGURATION.read_text()).substitute(values))
        (self.etc / "uwsgi.ini").write_text(
            "\n".join(
                [
                    "[uwsgi]",
                    f"http-socket = 127.0.0.1:{self.port}",
                    "module = octavia.wsgi.api:application",
                    f"virtualenv = {self.environment.path}",
                    "master = true",
                    "processes = 1",
                    "threads = 4",
                    "lazy-apps = true",
                    "die-on-term = true",
                    "need-app = true",
                    "add-header = Connection: close",
                    "buffer-size = 65535",
                    f"pyargv = --config-file {configuration} --log-file {self.logs}/octavia-api.log",
                    "",
                ]
            )
        )
        self.processes = {
            "octavia-api": Process(
                "octavia-api",
                [str(self.environment.bin("uwsgi")), "--ini", str(self.etc / "uwsgi.ini")],
                self.logs / "octavia-api.out",
                [self.logs / "octavia-api.log"],
            ),
            "octavia-worker": Process(
                "octavia-worker",
                [str(self.environment.bin("octavia-worker")), "--config-file", str(configuration),
                 "--log-file", str(self.logs / "octavia-worker.log")],
                self.logs / "octavia-worker.out",
                [self.logs / "octavia-worker.log"],
            ),
        }  # fmt: skip

    def _prepare_database(self) -> None:
        mariadb = self.cloud.mariadb
        mariadb.create([self.database])
        golden = self.environment.golden
        if golden.exists():
            with open(golden, "rb") as dump:
                subprocess.run(
                    mariadb.restore_command(self.database),
                    stdin=dump,
                    check=True,
                    capture_output=True,
                    timeout=300,
                )
            self.timings["golden_restored"] = 1
            return
        migrate = [
            str(self.environment.bin("octavia-db-manage")),
            "--config-file",
            str(self.etc / "octavia.conf"),
            "upgrade",
            "head",
        ]
        log = self.logs / "octavia-db-manage.out"
        with open(log, "ab") as output:
            result = subprocess.run(migrate, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                                    env=self._environment(), timeout=600, check=False)  # fmt: skip
        if result.returncode != 0:
            raise OctaviaError(
                f"Octavia: octavia-db-manage upgrade failed ({result.returncode}):\n{venv_cache.tail(log, 25)}"
            )
        with cache_lock("octavia-golden"):
            if not golden.exists():
                building = golden.with_name(golden.name + f".building-{os.getpid()}")
                mariadb.dump(self.database, building)
                building.rename(golden)

    def _register(self) -> None:
        """The service user (admin in project ``service``), the service and its endpoints,
        pointing at this session's API: an existing registration (the dev cloud's, from an
        earlier run) is reused and its URLs moved here."""
        keystone = identity.Keystone(self.cloud.keystone_url)
        admin = keystone.ensure("roles", "role", "admin")["id"]
        service_project = keystone.ensure("projects", "project", "service", domain_id="default")
        user = keystone.ensure(
            "users", "user", USER, domain_id="default", password=identity.SERVICE_PASSWORD,
            default_project_id=service_project["id"],
        )  # fmt: skip
        keystone.grant(service_project["id"], user["id"], admin)
        service_role = keystone.ensure("roles", "role", "service")["id"]
        keystone.grant(service_project["id"], user["id"], service_role)
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
            endpoint = existing.get(interface)
            if endpoint is None:
                keystone.call("POST", "/endpoints", body={"endpoint": {
                    "service_id": service["id"], "interface": interface, "url": self.endpoint, "region_id": identity.REGION,
                }})  # fmt: skip
            elif endpoint["url"] != self.endpoint:
                keystone.call(
                    "PATCH",
                    f"/endpoints/{endpoint['id']}",
                    body={"endpoint": {"url": self.endpoint}},
                )

    def _environment(self) -> dict[str, str]:
        environment = {
            "PATH": f"{self.environment.path / 'bin'}:{os.defpath}",
            "HOME": str(Path.home()),
            "LANG": "C.UTF-8",
            "TMPDIR": str(self.data / "tmp"),
            "PYTHONWARNINGS": "ignore",
        }
        for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE"):
            if name in os.environ:
                environment[name] = os.environ[name]
        return environment

    def _launch(self, process: Process) -> None:
        with open(process.output, "ab") as output:
            process.popen = subprocess.Popen(
                process.command,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=self.directory,
                env=self._environment(),
                start_new_session=True,
                # Owned by this test run even on the dev cloud: it dies with the run.
                preexec_fn=die_with_parent,
            )
        self.record.remember_group(process.popen.pid)

    # -- readiness ----------------------------------------------------------------------

    def _answers(self, keystone: identity.Keystone) -> bool:
        answer = identity.request(
            "GET",
            f"{self.endpoint}/v2/lbaas/loadbalancers",
            token=keystone.token,
            timeout_s=identity.PROBE_TIMEOUT_S,
        )
        return answer.status == 200

    def _worker_listens(self) -> bool:
        """The worker has declared its topic's queue: a request the API casts before that
        would be dropped by RabbitMQ (no queue bound), and its load balancer left
        PENDING_CREATE for ever."""
        queues = self.cloud.rabbitmq._ctl(
            "list_queues", "-p", self.vhost, "name", "--no-table-headers"
        ).split()
        return WORKER_TOPIC in queues

    def _wait(self, name: str, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        last = "not ready"
        while True:
            for process in self.processes.values():
                if process.popen is not None and process.popen.poll() is not None:
                    raise OctaviaError(
                        self._failure(
                            process.name, f"exited with status {process.popen.returncode}"
                        )
                    )
            try:
                if ready():
                    return
            except (
                OSError,
                identity.ServiceError,
                InfrastructureError,
                ValueError,
                KeyError,
            ) as error:
                last = str(error)
            if time.monotonic() > deadline:
                raise OctaviaError(
                    self._failure(name, f"not ready after {READY_TIMEOUT_S} s (last: {last})")
                )
            time.sleep(0.5)

    def _failure(self, name: str, what: str) -> str:
        process = self.processes[name]
        parts = [f"Octavia: {name} {what}."]
        for log in [process.output, *process.logs]:
            if log.exists() and log.stat().st_size:
                parts.append(f"--- last lines of {log}:\n{venv_cache.tail(log, 25)}")
        parts.append(f"All logs: {self.logs}")
        return "\n".join(parts)

    # -- stop ---------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop both processes and drop the database. Safe to call twice."""
        running = [
            process.popen for process in self.processes.values() if process.popen is not None
        ]
        stop_groups([popen.pid for popen in running])
        for popen in running:
            try:
                popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        for process in self.processes.values():
            process.popen = None
        problems = []
        for cleanup in (
            lambda: self.cloud.mariadb.drop([self.database]),
            lambda: self.cloud.rabbitmq.delete_vhost(self.vhost),
        ):
            try:
                cleanup()
            except InfrastructureError as error:
                problems.append(str(error))
        if problems:
            raise OctaviaError("stopping Octavia: " + "; ".join(problems))
        if self.record is not None:
            self.record.remove()


@pytest.fixture(scope="session")
def octavia_service(
    openstack_cloud: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OctaviaService]:
    """Octavia's API and worker on the session's cloud (the dev cloud's too, with
    STOKER_TEST_CLOUD=dev), registered in its catalog as ``load-balancer``."""
    service = OctaviaService(openstack_cloud, tmp_path_factory.mktemp("octavia"))
    try:
        service.start()
    except OctaviaError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        yield service
    finally:
        service.stop()
