"""Mistral (the workflow service) in the test cloud, started only when a test asks for
``mistral_service``: Mistral 2026.2's API (its WSGI application under uWSGI) and one
``mistral-server`` running its engine, executor and periodic tasks (cron triggers, checked
every second), its database on the machine's MariaDB and its RPC on the cloud's RabbitMQ
vhost, behind Keystone's authtoken like the six services of ``cloud.py``; registered in the
catalog as ``workflowv2`` (the type Heat's mistral client plugin asks for).

Owns Mistral's venv (its pins in ``mistral-requirements.txt``, cached beside the cloud's),
its configuration, database (and its golden dump), catalog entry and processes for one test
session. It reuses the cloud's modules and must not change the cloud's six services or their
golden copy. On the dev cloud (``STOKER_TEST_CLOUD=dev``) each session starts its own
Mistral and points the catalog at it: two sessions at once would take the catalog (and the
shared vhost's RPC topics) from each other.
"""

from __future__ import annotations

import secrets
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

REQUIREMENTS = Path(__file__).with_name("mistral-requirements.txt")
SERVICE_USER = "mistral"
SERVICE_NAME = "mistral"
SERVICE_TYPE = "workflowv2"
# Seconds Mistral's API may take to answer after its launch.
READY_TIMEOUT_S = 180
# Seconds the schema's migration may take.
MIGRATION_TIMEOUT_S = 600

UWSGI_INI = """\
# mistral's API of the test cloud under uWSGI: one process, four threads (as cloud.py's APIs).
[uwsgi]
http-socket = 127.0.0.1:{port}
module = mistral.wsgi:application
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

MISTRAL_CONF = """\
[DEFAULT]
log_file = {log_file}
transport_url = {transport_url}

[database]
connection = {database_url}

[pecan]
auth_enable = true

[cron_trigger]
# Cron triggers fire from mistral-server's periodic tasks, checked every second.
run_in_api = false
execution_interval = 1

[keystone_authtoken]
{authentication}

[keystone]
region_name = {region}
"""


class MistralError(Exception):
    """Mistral did not start; the message names the step or process and ends with its log tail."""


def requirements_hash() -> str:
    return venv_cache.environment_key(
        [REQUIREMENTS.read_bytes(), installation.UV_REQUIREMENT.encode()]
    )


def mistral_venv(cache: Path | None = None) -> ServiceVenv:
    """Mistral's own venv: ``<cache>/mistral-venv-<hash>``, built once under a lock."""
    return ServiceVenv(
        REQUIREMENTS,
        directory="mistral-venv-{key}",
        lock="mistral-install",
        log="mistral-install.log",
        what="Mistral",
        error=MistralError,
        cache=cache,
    )


@dataclass
class MistralService:
    """What tests get: Mistral's endpoint (the catalog's, ``/v2`` included) and where its
    logs are."""

    endpoint: str
    directory: Path
    database: str
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def logs(self) -> Path:
        return self.directory / "logs"


class Mistral:
    """Mistral beside a running ``DevCloud``: ``start()`` then ``stop()`` (safe after a failure)."""

    def __init__(self, cloud: DevCloud, directory: Path, environment: ServiceVenv | None = None):
        from tests.cloud.cloud import free_port

        self.cloud = cloud
        self.directory = directory.resolve()
        self.environment = environment or mistral_venv(cloud.environment.cache)
        suffix = secrets.token_hex(3)
        self.session = f"{cloud.session}_mistral_{suffix}"
        self.database = f"{cloud.database_prefix}mistral_{suffix}"
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}/v2"
        self.logs = self.directory / "logs"
        self.configuration = self.directory / "mistral.conf"
        self.launcher = Launcher(
            label="test cloud",
            directory=self.directory,
            logs=self.logs,
            environment=self._environment,
            error=MistralError,
        )
        self.record: SessionRecord | None = None
        self.registered = False
        self.timings: dict[str, float] = {}

    # -- start ------------------------------------------------------------------------

    def start(self) -> MistralService:
        started = time.monotonic()
        try:
            self.timings["venv_s"] = self.environment.ensure()
            self._start()
        except (identity.ServiceError, InfrastructureError, OSError) as error:
            stop_after_failure(self.stop)
            raise MistralError(f"Mistral: {error}\nAll logs: {self.logs}") from error
        except BaseException:
            stop_after_failure(self.stop)
            raise
        self.timings["start_s"] = time.monotonic() - started - self.timings["venv_s"]
        return MistralService(self.endpoint, self.directory, self.database, dict(self.timings))

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
        self._write_configuration()
        phase = time.monotonic()
        self.cloud.mariadb.create([self.database])
        self._database_schema()
        self.timings["migrate_s"] = time.monotonic() - phase
        self.registered = True
        register_service(
            self.cloud.keystone_url,
            user=SERVICE_USER,
            name=SERVICE_NAME,
            service_type=SERVICE_TYPE,
            endpoints=self.endpoint,
        )
        phase = time.monotonic()
        log = self.logs / "mistral.log"
        self.launcher.add(
            "mistral-api",
            [str(self.environment.bin("uwsgi")), "--ini", str(self.directory / "uwsgi.ini")],
            [log],
        )
        self.launcher.add(
            "mistral-server",
            [
                str(self.environment.bin("mistral-server")),
                "--config-file",
                str(self.configuration),
                "--server",
                "engine,executor,periodic",
            ],
            [log],
        )
        self.launcher.launch("mistral-api")
        self.launcher.launch("mistral-server")
        keystone = identity.Keystone(self.cloud.keystone_url)
        self.launcher.wait("mistral-api", lambda: self._workflows_listed(keystone), READY_TIMEOUT_S)
        self.timings["ready_s"] = time.monotonic() - phase

    def _database_schema(self) -> None:
        """Mistral's schema: the golden dump of the first start restored (about a second),
        or ``mistral-db-manage upgrade head`` (a minute or more: 45 migrations) and the
        dump saved. Keyed by the pins: new Mistral, new dump. Only the schema is in it."""
        golden = GoldenSchema(
            self.cloud.mariadb,
            self.environment.cache / f"mistral-golden-{requirements_hash()}.sql",
            lambda: venv_cache.cache_lock(
                self.environment.cache, "mistral-golden", installation.LOCK_WAIT_S, MistralError
            ),
            MIGRATION_TIMEOUT_S,
        )
        golden.prepare(
            self.database,
            lambda: run_command(
                "mistral-db-manage upgrade head",
                [
                    str(self.environment.bin("mistral-db-manage")),
                    "--config-file",
                    str(self.configuration),
                    "upgrade",
                    "head",
                ],
                log=self.logs / "manage.out",
                directory=self.directory,
                environment=self._environment(),
                timeout_s=MIGRATION_TIMEOUT_S,
                error=MistralError,
                label="Mistral: ",
            ),
        )

    def _write_configuration(self) -> None:
        self.configuration.write_text(
            MISTRAL_CONF.format(
                log_file=self.logs / "mistral.log",
                transport_url=self.cloud.rabbitmq.transport_url(self.cloud.vhost),
                database_url=f"{self.cloud.mariadb.url}/{self.database}",
                authentication=identity.service_authentication(
                    SERVICE_USER, self.cloud.keystone_url
                ),
                region=identity.REGION,
            )
        )
        (self.directory / "uwsgi.ini").write_text(
            UWSGI_INI.format(port=self.port, venv=self.environment.path)
        )

    def _environment(self) -> dict[str, str]:
        # Mistral's WSGI application takes no arguments: MISTRAL_CONFIG_FILE names its file.
        environment = process_environment(self.environment.path, home=self.directory)
        environment["MISTRAL_CONFIG_FILE"] = str(self.configuration)
        return environment

    # -- readiness --------------------------------------------------------------------

    def _workflows_listed(self, keystone: identity.Keystone) -> bool:
        # Through Keystone's authtoken and the database.
        answer = identity.request(
            "GET",
            f"{self.endpoint}/workflows",
            token=keystone.token,
            timeout_s=identity.PROBE_TIMEOUT_S,
        )
        return answer.status == 200

    # -- stop -------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the processes, drop the database, take this Mistral's endpoints out of the
        catalog (on the dev cloud, which outlives the session). Safe to call twice."""
        self.launcher.stop()
        if self.registered:
            self.registered = False
            try:
                unregister_endpoints(self.cloud.keystone_url, self.endpoint)
            except (identity.ServiceError, OSError):
                pass  # the session's own Keystone may be stopping with it
        try:
            self.cloud.mariadb.drop([self.database])
        except InfrastructureError as error:
            raise MistralError(f"stopping Mistral: {error}") from None
        if self.record is not None:
            self.record.remove()


def start_for(cloud: DevCloud, directory: Path) -> tuple[MistralService, Callable[[], None]]:
    """Mistral beside ``cloud`` outside pytest (``bench/heat_templates.py --cloud``), and
    what stops it."""
    mistral = Mistral(cloud, directory)
    return mistral.start(), mistral.stop


@pytest.fixture(scope="session")
def mistral_service(
    openstack_cloud: DevCloud, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[MistralService]:
    """Mistral registered in the session's cloud as ``workflowv2`` (service ``mistral``)."""
    mistral = Mistral(openstack_cloud, tmp_path_factory.mktemp("mistral"))
    try:
        service = mistral.start()
    except MistralError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        yield service
    finally:
        mistral.stop()
