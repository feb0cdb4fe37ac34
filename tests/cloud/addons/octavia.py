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
import string
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.cloud import identity
from tests.cloud.addons._service import (
    GoldenSchema,
    Launcher,
    Process,
    ServiceVenv,
    process_environment,
    register_service,
    run_command,
    stop_after_failure,
)
from tests.cloud.infrastructure import InfrastructureError
from tests.cloud.installation import InstallationError, cache_lock
from tests.cloud.sessions import SessionRecord

__all__ = ["OctaviaService", "octavia_service"]

ADDONS = Path(__file__).resolve().parent
REQUIREMENTS = ADDONS / "octavia-requirements.txt"
CONFIGURATION = ADDONS / "octavia.conf"
SERVICE_NAME, SERVICE_TYPE, USER = "octavia", "load-balancer", "octavia"
# The queue octavia-worker consumes (Octavia's constant, not configurable).
WORKER_TOPIC = "octavia_provisioning_v2"
# Seconds the wait for the service to answer may take.
READY_TIMEOUT_S = 180


class OctaviaError(Exception):
    """Octavia did not start; the message names the process and ends with its log tail."""


def free_port() -> int:
    from tests.cloud.cloud import free_port as cloud_free_port

    return cloud_free_port()


# -- the venv -----------------------------------------------------------------------------


def octavia_venv() -> ServiceVenv:
    """Octavia's venv in the cloud's cache, keyed by a hash of its pins and the Python."""
    return ServiceVenv(
        REQUIREMENTS,
        directory="octavia-venv-{key}",
        lock="octavia-install",
        log="octavia-install.log",
        what="Octavia",
        error=InstallationError,
    )


# -- the running service ------------------------------------------------------------------


@dataclass
class OctaviaService:
    """One Octavia for one test session. ``endpoint`` is its API's root URL (also in the
    catalog as ``load-balancer``); ``timings`` the seconds each phase of the start took."""

    cloud: Any
    directory: Path
    environment: ServiceVenv = field(default_factory=octavia_venv)
    token: str = field(default_factory=lambda: f"{os.getpid()}_{secrets.token_hex(2)}")
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
        self.launcher = Launcher(
            label="Octavia",
            directory=self.directory,
            logs=self.logs,
            environment=lambda: process_environment(
                self.environment.path, tmpdir=self.data / "tmp"
            ),
            error=OctaviaError,
        )

    @property
    def processes(self) -> dict[str, Process]:
        return self.launcher.processes

    # -- start --------------------------------------------------------------------------

    def start(self) -> OctaviaService:
        try:
            self._start()
        except (identity.ServiceError, InfrastructureError, InstallationError, OSError) as error:
            stop_after_failure(self.stop)
            raise OctaviaError(f"Octavia: {error}\nAll logs: {self.logs}") from error
        except BaseException:
            stop_after_failure(self.stop)
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
        self.record = self.launcher.record = SessionRecord(
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
        register_service(
            self.cloud.keystone_url,
            user=USER,
            name=SERVICE_NAME,
            service_type=SERVICE_TYPE,
            endpoints=self.endpoint,
        )
        phase = self._phase("keystone", phase)
        for name in self.processes:
            self.launcher.launch(name)
        keystone = identity.Keystone(self.cloud.keystone_url)
        self.launcher.wait("octavia-api", lambda: self._answers(keystone), READY_TIMEOUT_S)
        self.launcher.wait("octavia-worker", self._worker_listens, READY_TIMEOUT_S)
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
        self.launcher.add(
            "octavia-api",
            [str(self.environment.bin("uwsgi")), "--ini", str(self.etc / "uwsgi.ini")],
            [self.logs / "octavia-api.log"],
        )
        self.launcher.add(
            "octavia-worker",
            [str(self.environment.bin("octavia-worker")), "--config-file", str(configuration),
             "--log-file", str(self.logs / "octavia-worker.log")],
            [self.logs / "octavia-worker.log"],
        )  # fmt: skip

    def _prepare_database(self) -> None:
        self.cloud.mariadb.create([self.database])
        golden = GoldenSchema(
            self.cloud.mariadb,
            self.cache_golden,
            lambda: cache_lock("octavia-golden"),
        )
        migrate = [
            str(self.environment.bin("octavia-db-manage")),
            "--config-file",
            str(self.etc / "octavia.conf"),
            "upgrade",
            "head",
        ]
        restored = golden.prepare(
            self.database,
            lambda: run_command(
                "octavia-db-manage upgrade",
                migrate,
                log=self.logs / "octavia-db-manage.out",
                directory=self.directory,
                environment=self.launcher.environment(),
                timeout_s=600,
                error=OctaviaError,
                label="Octavia: ",
            ),
        )
        if restored:
            self.timings["golden_restored"] = 1

    @property
    def cache_golden(self) -> Path:
        """The migrated schema's dump, keyed like the venv."""
        return self.environment.cache / f"octavia-golden-{self.environment.key}.sql"

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

    # -- stop ---------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop both processes and drop the database. Safe to call twice."""
        self.launcher.stop()
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


def start_for(cloud: Any, directory: Path) -> tuple[OctaviaService, Callable[[], None]]:
    """Octavia beside ``cloud`` outside pytest (``bench/heat_templates.py --cloud``), and
    what stops it."""
    service = OctaviaService(cloud, directory).start()
    return service, service.stop


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
