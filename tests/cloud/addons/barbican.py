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
)
from tests.cloud.addons.barbican_installation import (
    BARBICAN_CONF,
    UWSGI_INI,
    BarbicanError,
    barbican_venv,
    requirements_hash,
)
from tests.cloud.infrastructure import InfrastructureError
from tests.cloud.sessions import SessionRecord
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

    def __init__(self, cloud: DevCloud, directory: Path, environment: ServiceVenv | None = None):
        from tests.cloud.cloud import free_port

        self.cloud = cloud
        self.directory = directory.resolve()
        self.environment = environment or barbican_venv(cloud.environment.cache)
        suffix = secrets.token_hex(3)
        self.session = f"{cloud.session}_barbican_{suffix}"
        self.database = f"{cloud.database_prefix}barbican_{suffix}"
        self.topic = f"barbican.workers.{suffix}"
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.home = self.directory / "home"
        self.logs = self.directory / "logs"
        self.launcher = Launcher(
            label="test cloud",
            directory=self.directory,
            logs=self.logs,
            environment=self._environment,
            error=BarbicanError,
        )
        self.record: SessionRecord | None = None
        self.timings: dict[str, float] = {}
        self._probe: str | None = None

    # -- start ------------------------------------------------------------------------

    def start(self) -> BarbicanService:
        started = time.monotonic()
        try:
            self.timings["venv_s"] = self.environment.ensure()
            self._start()
        except (identity.ServiceError, InfrastructureError, OSError) as error:
            stop_after_failure(self.stop)
            raise BarbicanError(f"Barbican: {error}\nAll logs: {self.logs}") from error
        except BaseException:
            stop_after_failure(self.stop)
            raise
        self.timings["start_s"] = time.monotonic() - started - self.timings["venv_s"]
        return BarbicanService(
            self.endpoint,
            self.directory,
            self.database,
            self.launcher.pid("barbican-worker"),
            dict(self.timings),
        )

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
        (self.home / ".barbican").mkdir(parents=True, exist_ok=True)
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
            endpoints=self.endpoint,
        )
        phase = time.monotonic()
        self.launcher.add(
            "barbican-api",
            [str(self.environment.bin("uwsgi")), "--ini", str(self.directory / "uwsgi.ini")],
            [self.logs / "barbican-api.log"],
        )
        self.launcher.add(
            "barbican-worker",
            [
                str(self.environment.bin("barbican-worker")),
                "--log-file",
                str(self.logs / "barbican-worker.log"),
            ],
            [self.logs / "barbican-worker.log"],
        )
        self.launcher.launch("barbican-api")
        self.launcher.launch("barbican-worker")
        keystone = identity.Keystone(self.cloud.keystone_url)
        self.launcher.wait(
            "barbican-api",
            lambda: self._get(keystone, f"{self.endpoint}/v1/secrets") == 200,
            READY_TIMEOUT_S,
        )
        self.launcher.wait("barbican-worker", lambda: self._order_done(keystone), READY_TIMEOUT_S)
        self.timings["ready_s"] = time.monotonic() - phase

    def _database_schema(self) -> None:
        """Barbican's schema: the golden dump of the first start restored (under a
        second), or ``barbican-manage db upgrade`` (10-15 s) and the dump saved. The dump is
        keyed by the pins: new Barbican, new dump. Only the schema is in it: the API adds
        its secret stores when it starts, and each project's key when first used."""
        golden = GoldenSchema(
            self.cloud.mariadb,
            self.environment.cache / f"barbican-golden-{requirements_hash()}.sql",
            lambda: venv_cache.cache_lock(
                self.environment.cache, "barbican-golden", installation.LOCK_WAIT_S, BarbicanError
            ),
            MIGRATION_TIMEOUT_S,
        )
        golden.prepare(
            self.database,
            lambda: run_command(
                "barbican-manage db upgrade",
                [str(self.environment.bin("barbican-manage")), "db", "upgrade"],
                log=self.logs / "manage.out",
                directory=self.directory,
                environment=self._environment(),
                timeout_s=MIGRATION_TIMEOUT_S,
                error=BarbicanError,
                label="Barbican: ",
            ),
        )

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
        return process_environment(self.environment.path, home=self.home)

    # -- readiness --------------------------------------------------------------------

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
                self.launcher.failure("barbican-worker", f"failed the probe order: {order}")
            )
        if order["status"] != "ACTIVE":
            return False
        keystone.call("DELETE", order["secret_ref"])
        keystone.call("DELETE", probe)
        return True

    # -- stop -------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop both processes, drop the database. Safe to call twice."""
        self.launcher.stop()
        try:
            self.cloud.mariadb.drop([self.database])
        except InfrastructureError as error:
            raise BarbicanError(f"stopping Barbican: {error}") from None
        if self.record is not None:
            self.record.remove()


def start_for(cloud: DevCloud, directory: Path) -> tuple[BarbicanService, Callable[[], None]]:
    """Barbican beside ``cloud`` outside pytest (``bench/heat_templates.py --cloud``), and
    what stops it."""
    barbican = Barbican(cloud, directory)
    return barbican.start(), barbican.stop


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
