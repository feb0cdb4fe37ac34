"""Barbican (the key manager) in the test cloud, started only when a test asks for
``barbican_service``: barbican-api under uWSGI with the simple_crypto plugin (secrets
encrypted with a key made for the session), its database on the machine's MariaDB, and
barbican-worker over the cloud's RabbitMQ vhost (orders are processed there), behind
Keystone's authtoken like the six services of ``cloud.py``.

Owns Barbican's configuration, database (and its golden dump), catalog entry and
processes for one test session; its venv and configuration templates are
``barbican_installation.py``'s. It reuses
the cloud's modules (``venv_cache``, ``identity``, ``infrastructure``, ``sessions``) and
must not change the cloud's six services or their golden copy.

Attached to the dev cloud (``STOKER_TEST_CLOUD=dev``), each test session still starts its
own Barbican (own database, own RPC topic, so two sessions' workers never take each
other's orders) and points the catalog's ``key-manager`` endpoints at it: two sessions
using Barbican on the dev cloud at the same moment would take the catalog from each other.
"""

from __future__ import annotations

import base64
import contextlib
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
from tests.cloud.addons.barbican_installation import (
    BARBICAN_CONF,
    UWSGI_INI,
    BarbicanEnvironment,
    BarbicanError,
    requirements_hash,
)
from tests.cloud.infrastructure import InfrastructureError
from tests.cloud.sessions import SessionRecord, die_with_parent, stop_groups
from tests.support import venv_cache

if TYPE_CHECKING:
    from tests.cloud.cloud import DevCloud

SERVICE_USER = "barbican"
SERVICE_NAME = "barbican"
SERVICE_TYPE = "key-manager"
# Seconds Barbican may take to answer, and its worker to finish the first order.
READY_TIMEOUT_S = 180
# Seconds a migration may take (about 15 s here).
MIGRATION_TIMEOUT_S = 600


@dataclass
class BarbicanService:
    """What tests get: Barbican's endpoint (as the catalog has it) and where its logs are."""

    endpoint: str
    directory: Path
    database: str
    worker_group: int
    timings: dict[str, float] = field(default_factory=dict)

    @contextlib.contextmanager
    def worker_paused(self) -> Iterator[None]:
        """barbican-worker stopped (SIGSTOP) meanwhile: orders stay PENDING until it goes on."""
        os.killpg(self.worker_group, signal.SIGSTOP)
        try:
            yield
        finally:
            os.killpg(self.worker_group, signal.SIGCONT)

    @property
    def logs(self) -> Path:
        return self.directory / "logs"

    @property
    def log_files(self) -> list[Path]:
        return sorted(self.logs.glob("*"))


class Barbican:
    """Barbican beside a running ``DevCloud``: ``start()`` then ``stop()`` (safe after a failure)."""

    def __init__(
        self, cloud: DevCloud, directory: Path, environment: BarbicanEnvironment | None = None
    ):
        from tests.cloud.cloud import free_port

        self.cloud = cloud
        self.directory = directory.resolve()
        self.environment = environment or BarbicanEnvironment(cloud.environment.cache)
        suffix = secrets.token_hex(3)
        self.session = f"{cloud.session}_barbican_{suffix}"
        self.database = f"{cloud.database_prefix}barbican_{suffix}"
        self.topic = f"barbican.workers.{suffix}"
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.home = self.directory / "home"
        self.logs = self.directory / "logs"
        self.processes: dict[str, subprocess.Popen] = {}
        self.outputs: dict[str, Path] = {}
        self.record: SessionRecord | None = None
        self.timings: dict[str, float] = {}
        self._probe: str | None = None

    # -- start ------------------------------------------------------------------------

    def start(self) -> BarbicanService:
        started = time.monotonic()
        try:
            self.timings["venv_s"] = self.environment.ensure(
                self.environment.cache / "barbican-install.log"
            )
            self._start()
        except (identity.ServiceError, InfrastructureError, OSError) as error:
            self.stop()
            raise BarbicanError(f"Barbican: {error}\nAll logs: {self.logs}") from error
        except BaseException:
            self.stop()
            raise
        self.timings["start_s"] = time.monotonic() - started - self.timings["venv_s"]
        return BarbicanService(
            self.endpoint,
            self.directory,
            self.database,
            self.processes["barbican-worker"].pid,
            dict(self.timings),
        )

    def _start(self) -> None:
        # Recorded before anything is made: a killed run's database and processes are
        # reaped by the next cloud start (sessions.reap_abandoned_sessions).
        self.record = SessionRecord(
            self.environment.cache,
            self.session,
            owned=True,
            databases=[self.database],
            vhost="",
            directory=self.directory,
            venv=self.environment.path,
        )
        self.logs.mkdir(parents=True, exist_ok=True)
        (self.home / ".barbican").mkdir(parents=True, exist_ok=True)
        self._write_configuration()
        phase = time.monotonic()
        self.cloud.mariadb.create([self.database])
        self._database_schema()
        self.timings["database_s"] = time.monotonic() - phase
        self._register()
        phase = time.monotonic()
        self._launch(
            "barbican-api",
            [str(self.environment.bin("uwsgi")), "--ini", str(self.directory / "uwsgi.ini")],
        )
        self._launch(
            "barbican-worker",
            [
                str(self.environment.bin("barbican-worker")),
                "--log-file",
                str(self.logs / "barbican-worker.log"),
            ],
        )
        keystone = identity.Keystone(self.cloud.keystone_url)
        self._wait(
            "barbican-api", lambda: self._get(keystone, f"{self.endpoint}/v1/secrets") == 200
        )
        self._wait("barbican-worker", lambda: self._order_done(keystone))
        self.timings["ready_s"] = time.monotonic() - phase

    def _database_schema(self) -> None:
        """Barbican's schema: the golden dump of the first start restored (under a
        second), or ``barbican-manage db upgrade`` (10-15 s) and the dump saved. The dump is
        keyed by the pins: new Barbican, new dump. Only the schema is in it: the API adds
        its secret stores when it starts, and each project's key when first used."""
        golden = self.environment.cache / f"barbican-golden-{requirements_hash()}.sql"
        if golden.exists():
            with open(golden, "rb") as dump:
                restored = subprocess.run(
                    self.cloud.mariadb.restore_command(self.database),
                    stdin=dump,
                    capture_output=True,
                    timeout=MIGRATION_TIMEOUT_S,
                    check=False,
                )
            if restored.returncode == 0:
                return
            # A damaged dump: migrate instead, and save a new one.
            self.cloud.mariadb.create([self.database])
        self._run(
            "barbican-manage db upgrade",
            [str(self.environment.bin("barbican-manage")), "db", "upgrade"],
        )
        lock = venv_cache.cache_lock(
            self.environment.cache, "barbican-golden", installation.LOCK_WAIT_S, BarbicanError
        )
        with lock:
            partial = golden.with_suffix(f".{os.getpid()}.partial")
            self.cloud.mariadb.dump(self.database, partial)
            partial.replace(golden)

    def _write_configuration(self) -> None:
        kek = base64.urlsafe_b64encode(os.urandom(32)).decode()
        (self.home / ".barbican" / "barbican.conf").write_text(
            BARBICAN_CONF.format(
                endpoint=self.endpoint,
                transport_url=self.cloud.rabbitmq.transport_url(self.cloud.vhost),
                log_file=self.logs / "barbican-api.log",
                database_url=f"{self.cloud.mariadb.url}/{self.database}",
                topic=self.topic,
                kek=kek,
                authentication=identity.service_authentication(
                    SERVICE_USER, self.cloud.keystone_url
                ),
            )
        )
        (self.directory / "uwsgi.ini").write_text(
            UWSGI_INI.format(
                port=self.port,
                paste=self.environment.path / "etc" / "barbican" / "barbican-api-paste.ini",
                venv=self.environment.path,
            )
        )

    def _environment(self) -> dict[str, str]:
        # Barbican reads its configuration at import time from the default places only
        # (~/.barbican/barbican.conf first): HOME is the session's directory.
        environment = {
            "PATH": f"{self.environment.path / 'bin'}:{os.defpath}",
            "HOME": str(self.home),
            "LANG": "C.UTF-8",
            "PYTHONWARNINGS": "ignore",
        }
        for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE"):
            if name in os.environ:
                environment[name] = os.environ[name]
        return environment

    def _run(self, what: str, command: list[str]) -> None:
        log = self.logs / "manage.out"
        with open(log, "ab") as output:
            try:
                result = subprocess.run(
                    command,
                    stdin=subprocess.DEVNULL,
                    stdout=output,
                    stderr=subprocess.STDOUT,
                    cwd=self.directory,
                    env=self._environment(),
                    timeout=MIGRATION_TIMEOUT_S,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise BarbicanError(
                    f"Barbican: {what} took over {MIGRATION_TIMEOUT_S} s; see {log}"
                ) from None
        if result.returncode != 0:
            raise BarbicanError(
                f"Barbican: {what} failed (exit {result.returncode}):\n{venv_cache.tail(log)}\nFull log: {log}"
            )

    def _register(self) -> None:
        """The service user (admin and service in project ``service``), the service and
        its three endpoints, made or re-pointed at this Barbican: registering twice (the
        dev cloud, a retry) changes nothing but the URL."""
        keystone = identity.Keystone(self.cloud.keystone_url)
        roles = {
            role: keystone.ensure("roles", "role", role)["id"] for role in ("admin", "service")
        }
        project = keystone.ensure("projects", "project", "service", domain_id="default")
        user = keystone.ensure(
            "users",
            "user",
            SERVICE_USER,
            domain_id="default",
            password=identity.SERVICE_PASSWORD,
            default_project_id=project["id"],
        )
        for role in roles.values():
            keystone.grant(project["id"], user["id"], role)
        services = keystone.call("GET", f"/services?type={SERVICE_TYPE}")["services"]
        service = (
            next((s for s in services if s["name"] == SERVICE_NAME), None)
            or keystone.call(
                "POST", "/services", body={"service": {"name": SERVICE_NAME, "type": SERVICE_TYPE}}
            )["service"]
        )
        endpoints = keystone.call("GET", f"/endpoints?service_id={service['id']}")["endpoints"]
        by_interface = {endpoint["interface"]: endpoint for endpoint in endpoints}
        for interface in ("public", "internal", "admin"):
            existing = by_interface.get(interface)
            if existing is None:
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
            elif existing["url"] != self.endpoint:
                keystone.call(
                    "PATCH",
                    f"/endpoints/{existing['id']}",
                    body={"endpoint": {"url": self.endpoint}},
                )

    def _launch(self, name: str, command: list[str]) -> None:
        output_path = self.logs / f"{name}.out"
        self.outputs[name] = output_path
        with open(output_path, "ab") as output:
            popen = subprocess.Popen(
                command,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=self.directory,
                env=self._environment(),
                start_new_session=True,
                preexec_fn=die_with_parent,
            )
        self.processes[name] = popen
        self.record.remember_group(popen.pid)

    # -- readiness --------------------------------------------------------------------

    def _wait(self, name: str, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        last = "not ready"
        while True:
            for process_name, popen in self.processes.items():
                if popen.poll() is not None:
                    raise BarbicanError(
                        self._failure(process_name, f"exited with status {popen.returncode}")
                    )
            try:
                if ready():
                    return
            except (OSError, identity.ServiceError, ValueError, KeyError) as error:
                last = str(error)
            if time.monotonic() > deadline:
                raise BarbicanError(
                    self._failure(name, f"not ready after {READY_TIMEOUT_S} s (last: {last})")
                )
            time.sleep(0.5)

    def _failure(self, name: str, what: str) -> str:
        parts = [f"test cloud: {name} {what}."]
        for log in (self.outputs.get(name), self.logs / f"{name}.log"):
            if log is not None and log.exists() and log.stat().st_size:
                parts.append(f"--- last lines of {log}:\n{venv_cache.tail(log, 25)}")
        parts.append(f"All logs: {self.logs}")
        return "\n".join(parts)

    @staticmethod
    def _get(keystone: identity.Keystone, url: str) -> int:
        return identity.request(
            "GET", url, token=keystone.token, timeout_s=identity.PROBE_TIMEOUT_S
        ).status

    def _order_done(self, keystone: identity.Keystone) -> bool:
        """The worker is ready when an order it was sent is ACTIVE: an order sent before
        it listened would wait in RabbitMQ, so one probe order is enough."""
        probe = self._probe
        if probe is None:
            answer = identity.request(
                "POST",
                f"{self.endpoint}/v1/orders",
                token=keystone.token,
                body={
                    "type": "key",
                    "meta": {"name": "stoker-probe", "algorithm": "aes", "bit_length": 128},
                },
            )
            if answer.status != 202:
                raise identity.ServiceError(
                    f"the probe order was refused: {answer.status} {answer.body}"
                )
            probe = self._probe = answer.body["order_ref"]
        order = keystone.call("GET", probe)
        if order["status"] == "ERROR":
            raise BarbicanError(
                self._failure("barbican-worker", f"failed the probe order: {order}")
            )
        if order["status"] != "ACTIVE":
            return False
        keystone.call("DELETE", order["secret_ref"])
        keystone.call("DELETE", probe)
        return True

    # -- stop -------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop both processes, drop the database. Safe to call twice."""
        running = list(self.processes.values())
        stop_groups([popen.pid for popen in running])
        for popen in running:
            try:
                popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        self.processes.clear()
        try:
            self.cloud.mariadb.drop([self.database])
        except InfrastructureError as error:
            raise BarbicanError(f"stopping Barbican: {error}") from None
        if self.record is not None:
            self.record.remove()


@pytest.fixture(scope="session")
def barbican_service(
    openstack_cloud: DevCloud, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[BarbicanService]:
    """Barbican (API and worker) registered in the session's cloud as ``key-manager``."""
    barbican = Barbican(openstack_cloud, tmp_path_factory.mktemp("barbican"))
    try:
        service = barbican.start()
    except BarbicanError as error:
        pytest.fail(str(error), pytrace=False)
    # Seen with -s; the README's measured times come from it.
    print(
        f"\nBarbican started at {service.endpoint}: "
        + ", ".join(f"{k} {v:.1f}" for k, v in service.timings.items())
    )
    try:
        yield service
    finally:
        barbican.stop()
