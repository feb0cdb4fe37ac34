"""Zaqar (the messaging service) in the test cloud, started only when a test asks for
``zaqar_service``: the Zaqar 2026.2 API (its WSGI application under uWSGI) with its SQL
management store (queues, pools, flavors) on the machine's MariaDB and its message store
(messages, claims, subscriptions) on the machine's Redis, behind Keystone's authtoken like
the six services of ``cloud.py``, with signed URLs enabled, the notifier in the message
pipeline (so subscriptions are delivered) and Zaqar's service user as the trustee of
``trust+`` subscriptions (so a message reaches Mistral with a token of the subscriber's trust).

Owns Zaqar's venv (its pins in ``zaqar-requirements.txt``, cached beside the cloud's), its
configuration, database, Redis database number, catalog entry and process for one test
session. It reuses the cloud's modules (``venv_cache``, ``identity``, ``infrastructure``,
``sessions``) and must not change the cloud's six services or their golden copy.

Attached to the dev cloud (``STOKER_TEST_CLOUD=dev``), each test session still starts its
own Zaqar (own database) and points the catalog's ``messaging`` endpoints at it: two
sessions using Zaqar on the dev cloud at the same moment would take the catalog from each
other. The Redis message store is shared by every session (database ``REDIS_DB``): Zaqar
keys it by project and queue, the tests name their queues with random suffixes, and a
session's own cloud deletes its projects' keys at stop (``_redis.py`` speaks to Redis).
"""

from __future__ import annotations

import functools
import os
import secrets
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.cloud import identity, installation
from tests.cloud.addons._redis import RedisCommands
from tests.cloud.addons._service import (
    Launcher,
    ServiceVenv,
    process_environment,
    register_service,
    run_command,
    stop_after_failure,
    unregister_endpoints,
)
from tests.cloud.infrastructure import InfrastructureError, reachable
from tests.cloud.sessions import SessionRecord
from tests.support import venv_cache

if TYPE_CHECKING:
    from tests.cloud.cloud import DevCloud

REQUIREMENTS = Path(__file__).with_name("zaqar-requirements.txt")
SERVICE_USER = "zaqar"
SERVICE_NAME = "zaqar"
SERVICE_TYPE = "messaging"
REDIS_HOST = "127.0.0.1"
REDIS_PORT = int(os.environ.get("STOKER_DEVCLOUD_REDIS_PORT", "6379"))
# The Redis database (of the server's 16) that holds the test cloud's Zaqar messages.
REDIS_DB = 11
# Seconds Zaqar may take to answer after its launch (about 6 s here).
READY_TIMEOUT_S = 180
# Seconds the SQL store's migration may take (about 5 s here).
MIGRATION_TIMEOUT_S = 600

UWSGI_INI = """\
# zaqar's API of the test cloud under uWSGI: one process, four threads (as cloud.py's APIs).
[uwsgi]
http-socket = 127.0.0.1:{port}
module = zaqar.transport.wsgi.app:application
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

ZAQAR_CONF = """\
[DEFAULT]
auth_strategy = keystone
log_file = {log_file}

[drivers]
transport = wsgi
message_store = redis
management_store = sqlalchemy

[drivers:message_store:redis]
uri = redis://{redis_host}:{redis_port}?dbid={redis_db}

[drivers:management_store:sqlalchemy]
uri = {database_url}

[storage]
# Posting a message notifies the queue's subscribers (webhooks, mail).
message_pipeline = zaqar.notification.notifier

[signed_url]
secret_key = {signed_url_key}

[keystone_authtoken]
{authentication}

[trustee]
# The user trust+ subscribers' trusts delegate to (Zaqar's own): its notifier posts a
# message with a token of the trust (OS::Zaqar::MistralTrigger's subscriptions).
auth_type = password
auth_url = {keystone_url}
username = {service_user}
password = {service_password}
user_domain_name = Default
"""


class ZaqarError(Exception):
    """Zaqar did not start; the message names the step or process and ends with its log tail."""


def requirements_hash() -> str:
    return venv_cache.environment_key(
        [REQUIREMENTS.read_bytes(), installation.UV_REQUIREMENT.encode()]
    )


def zaqar_venv(cache: Path | None = None) -> ServiceVenv:
    """Zaqar's own venv: ``<cache>/zaqar-venv-<hash>``, built once under a lock."""
    return ServiceVenv(
        REQUIREMENTS,
        directory="zaqar-venv-{key}",
        lock="zaqar-install",
        log="zaqar-install.log",
        what="Zaqar",
        error=ZaqarError,
        cache=cache,
    )


@dataclass
class ZaqarService:
    """What tests get: Zaqar's endpoint (as the catalog has it), its signed-URL key and
    where its logs are."""

    endpoint: str
    directory: Path
    database: str
    redis_db: int
    signed_url_key: str
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def logs(self) -> Path:
        return self.directory / "logs"


class Zaqar:
    """Zaqar beside a running ``DevCloud``: ``start()`` then ``stop()`` (safe after a failure)."""

    def __init__(self, cloud: DevCloud, directory: Path, environment: ServiceVenv | None = None):
        from tests.cloud.cloud import free_port

        self.cloud = cloud
        self.directory = directory.resolve()
        self.environment = environment or zaqar_venv(cloud.environment.cache)
        suffix = secrets.token_hex(3)
        self.session = f"{cloud.session}_zaqar_{suffix}"
        self.database = f"{cloud.database_prefix}zaqar_{suffix}"
        self.signed_url_key = secrets.token_hex(16)
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.home = self.directory / "home"
        self.logs = self.directory / "logs"
        self.launcher = Launcher(
            label="test cloud",
            directory=self.directory,
            logs=self.logs,
            environment=self._environment,
            error=ZaqarError,
        )
        self.record: SessionRecord | None = None
        self.registered = False
        self.timings: dict[str, float] = {}

    # -- start ------------------------------------------------------------------------

    def start(self) -> ZaqarService:
        if not reachable(REDIS_HOST, REDIS_PORT):
            raise ZaqarError(
                f"Zaqar: Redis is not reachable at {REDIS_HOST}:{REDIS_PORT}; its message store needs it"
            )
        started = time.monotonic()
        try:
            self.timings["venv_s"] = self.environment.ensure()
            self._start()
        except (identity.ServiceError, InfrastructureError, OSError) as error:
            stop_after_failure(self.stop)
            raise ZaqarError(f"Zaqar: {error}\nAll logs: {self.logs}") from error
        except BaseException:
            stop_after_failure(self.stop)
            raise
        self.timings["start_s"] = time.monotonic() - started - self.timings["venv_s"]
        return ZaqarService(
            self.endpoint,
            self.directory,
            self.database,
            REDIS_DB,
            self.signed_url_key,
            dict(self.timings),
        )

    def _start(self) -> None:
        # Recorded before anything is made: a killed run's database and process are reaped
        # by the next cloud start (sessions.reap_abandoned_sessions).
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
        (self.home / ".zaqar").mkdir(parents=True, exist_ok=True)
        self._write_configuration()
        phase = time.monotonic()
        self.cloud.mariadb.create([self.database])
        run_command(
            "zaqar-sql-db-manage upgrade head",
            [
                str(self.environment.bin("zaqar-sql-db-manage")),
                "--config-file",
                str(self.configuration),
                "upgrade",
                "head",
            ],
            log=self.logs / "manage.out",
            directory=self.directory,
            environment=self._environment(),
            timeout_s=MIGRATION_TIMEOUT_S,
            error=ZaqarError,
            label="Zaqar: ",
        )
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
        self.launcher.add(
            "zaqar-api",
            [str(self.environment.bin("uwsgi")), "--ini", str(self.directory / "uwsgi.ini")],
            [self.logs / "zaqar-api.log"],
        )
        self.launcher.launch("zaqar-api")
        keystone = identity.Keystone(self.cloud.keystone_url)
        self.launcher.wait("zaqar-api", lambda: self._queues_listed(keystone), READY_TIMEOUT_S)
        self.timings["ready_s"] = time.monotonic() - phase

    @property
    def configuration(self) -> Path:
        return self.home / ".zaqar" / "zaqar.conf"

    def _write_configuration(self) -> None:
        self.configuration.write_text(
            ZAQAR_CONF.format(
                log_file=self.logs / "zaqar-api.log",
                redis_host=REDIS_HOST,
                redis_port=REDIS_PORT,
                redis_db=REDIS_DB,
                database_url=f"{self.cloud.mariadb.url}/{self.database}",
                signed_url_key=self.signed_url_key,
                authentication=identity.service_authentication(
                    SERVICE_USER, self.cloud.keystone_url
                ),
                keystone_url=self.cloud.keystone_url,
                service_user=SERVICE_USER,
                service_password=identity.SERVICE_PASSWORD,
            )
        )
        (self.directory / "uwsgi.ini").write_text(
            UWSGI_INI.format(port=self.port, venv=self.environment.path)
        )

    def _environment(self) -> dict[str, str]:
        # Zaqar's WSGI application reads its configuration from the default places only
        # (~/.zaqar/zaqar.conf first; it passes no arguments): HOME is the session's directory.
        return process_environment(self.environment.path, home=self.home)

    def _forget_messages(self) -> None:
        """Delete what the session's projects left in the shared Redis database: Zaqar
        keys it ``<project>.<queue>...`` and keeps a queue's counters after the queue is
        deleted. Only for a session's own cloud: the dev cloud's projects are shared."""
        if self.cloud.session == "dev":
            return
        keystone = identity.Keystone(self.cloud.keystone_url)
        projects = [project["id"] for project in keystone.call("GET", "/projects")["projects"]]
        with socket.create_connection((REDIS_HOST, REDIS_PORT), timeout=10) as connection:
            redis = RedisCommands(connection)
            redis.call("SELECT", str(REDIS_DB))
            for project in projects:
                keys = redis.call("KEYS", f"{project}.*")
                if keys:
                    redis.call("DEL", *keys)

    # -- readiness --------------------------------------------------------------------

    def _queues_listed(self, keystone: identity.Keystone) -> bool:
        # Through Keystone's authtoken and both stores: the listing reads the SQL store.
        answer = identity.request(
            "GET",
            f"{self.endpoint}/v2/queues",
            token=keystone.token,
            headers={"Client-ID": "0b6a9c5e-7f4d-4d0e-9a57-3c2f1d8e6b10"},
            timeout_s=identity.PROBE_TIMEOUT_S,
        )
        return answer.status == 200

    # -- stop -------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the API, drop the database, take this Zaqar's endpoints out of the catalog
        (on the dev cloud, which outlives the session). Safe to call twice."""
        self.launcher.stop()
        if self.registered:
            self.registered = False
            unregister = functools.partial(
                unregister_endpoints, self.cloud.keystone_url, self.endpoint
            )
            for forget in (self._forget_messages, unregister):
                try:
                    forget()
                except (identity.ServiceError, OSError):
                    pass  # the session's own Keystone may be stopping with it
        try:
            self.cloud.mariadb.drop([self.database])
        except InfrastructureError as error:
            raise ZaqarError(f"stopping Zaqar: {error}") from None
        if self.record is not None:
            self.record.remove()


def start_for(cloud: DevCloud, directory: Path) -> tuple[ZaqarService, Callable[[], None]]:
    """Zaqar beside ``cloud`` outside pytest (``bench/heat_templates.py --cloud``), and
    what stops it."""
    zaqar = Zaqar(cloud, directory)
    return zaqar.start(), zaqar.stop


@pytest.fixture(scope="session")
def zaqar_service(
    openstack_cloud: DevCloud, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ZaqarService]:
    """Zaqar registered in the session's cloud as ``messaging`` (service ``zaqar``)."""
    zaqar = Zaqar(openstack_cloud, tmp_path_factory.mktemp("zaqar"))
    try:
        service = zaqar.start()
    except ZaqarError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        yield service
    finally:
        zaqar.stop()
