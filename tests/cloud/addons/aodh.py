"""Aodh (alarming) and Gnocchi (its metrics source) in the test cloud, started only when a
test asks for ``aodh_service``: Gnocchi 4.7's API (under uWSGI) and metricd, its indexer on
the machine's MariaDB and its measures in files; Aodh 2026.2's API (under uWSGI),
evaluator, notifier and listener, its database on MariaDB and its messages on the cloud's
RabbitMQ vhost; both behind Keystone's authtoken like the six services of ``cloud.py``.
The evaluator runs every ``EVALUATION_INTERVAL_S`` seconds (Aodh's default is 60) and
metricd processes measures every second, so an alarm fires seconds after its measures.

No Ceilometer: tests push measures straight into Gnocchi's API (``push_measures``) and
events straight onto the topic the listener reads (``publish_event``), as Ceilometer's
publishers would.

Owns the venv (its pins in ``aodh-requirements.txt``, cached beside the cloud's), the two
configurations, databases, catalog entries (``alarming`` and ``metric``) and processes for
one test session; reuses the cloud's modules and must not change its six services. On the
dev cloud (``STOKER_TEST_CLOUD=dev``) each session starts its own Aodh and Gnocchi and
points the catalog at them: two sessions at once would take the catalog (and the shared
vhost's notifier topic) from each other.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.cloud import identity, installation
from tests.cloud.infrastructure import InfrastructureError
from tests.cloud.sessions import SessionRecord, die_with_parent, stop_groups
from tests.support import venv_cache

if TYPE_CHECKING:
    from tests.cloud.cloud import DevCloud

REQUIREMENTS = Path(__file__).with_name("aodh-requirements.txt")
# Seconds between two evaluations of every alarm (Aodh's default: 60).
EVALUATION_INTERVAL_S = 5
# The archive policy the tests' metrics use: one point every 5 s for an hour.
ARCHIVE_POLICY = "stoker-5s"
ARCHIVE_GRANULARITY_S = 5
# The topic Aodh's listener reads events from (Ceilometer's notifier publisher posts there).
EVENT_TOPIC = "alarm.all"
READY_TIMEOUT_S = 180
MIGRATION_TIMEOUT_S = 600

UWSGI_INI = """\
# {name}'s API of the test cloud under uWSGI: one process, four threads (as cloud.py's APIs).
[uwsgi]
http-socket = 127.0.0.1:{port}
module = {module}
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

GNOCCHI_CONF = """\
[DEFAULT]
log_file = {log_file}
coordination_url = file://{locks}

[api]
auth_mode = keystone

[indexer]
url = {database_url}

[storage]
driver = file
file_basepath = {data}

[metricd]
workers = 1
metric_processing_delay = 1

[keystone_authtoken]
{authentication}
"""

AODH_CONF = """\
[DEFAULT]
log_file = {log_file}
transport_url = {transport_url}
evaluation_interval = {evaluation_interval}

[api]
auth_mode = keystone

[database]
connection = {database_url}

[listener]
event_alarm_topic = {event_topic}

[keystone_authtoken]
{authentication}

[service_credentials]
{authentication}
interface = public
"""


class AodhError(Exception):
    """Aodh or Gnocchi did not start; the message names the step or process and ends with its log tail."""


def requirements_hash() -> str:
    return venv_cache.environment_key(
        [REQUIREMENTS.read_bytes(), installation.UV_REQUIREMENT.encode()]
    )


class AodhEnvironment:
    """Aodh and Gnocchi's venv: ``<cache>/aodh-venv-<hash>``, built once under a lock."""

    def __init__(self, cache: Path | None = None):
        self.cache = cache or installation.cache_directory()
        self.path = self.cache / f"aodh-venv-{requirements_hash()}"
        self.marker = self.path / ".stoker-complete"

    def bin(self, name: str) -> Path:
        return self.path / "bin" / name

    def ensure(self, log_path: Path) -> float:
        lock = venv_cache.cache_lock(
            self.cache, "aodh-install", installation.LOCK_WAIT_S, AodhError
        )
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
            (
                "install uv",
                None,
                [python, "-m", "pip", "install", "-q", installation.UV_REQUIREMENT],
            ),
            (
                "install Aodh and Gnocchi",
                str(REQUIREMENTS),
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
                installation.BUILD_STEP_TIMEOUT_S,
                "Aodh's venv",
                AodhError,
                shown=" ".join,
            )


@dataclass
class AodhService:
    """What tests get: the two endpoints, the venv's python (to publish events), the
    transport URL, the keystone URL, and where the logs are."""

    aodh_endpoint: str
    gnocchi_endpoint: str
    keystone_url: str
    python: Path
    transport_url: str
    directory: Path
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def logs(self) -> Path:
        return self.directory / "logs"

    def push_measures(self, token: str, metric_id: str, values: list[float]) -> None:
        """Measures stamped now (one per value, a millisecond apart) into a Gnocchi metric."""
        now = time.time()
        measures = [
            {"timestamp": _iso(now + index / 1000), "value": value}
            for index, value in enumerate(values)
        ]
        answer = identity.request(
            "POST",
            f"{self.gnocchi_endpoint}/v1/metric/{metric_id}/measures",
            token=token,
            body=measures,
        )
        if answer.status != 202:
            raise AssertionError(f"Gnocchi refused the measures: {answer.status} {answer.body}")

    def publish_event(self, event_type: str, traits: dict[str, str]) -> None:
        """One event, as Ceilometer's notifier publisher sends it, onto the listener's topic."""
        event = {
            "message_id": secrets.token_hex(16),
            "event_type": event_type,
            "generated": _iso(time.time()),
            "traits": [[name, 1, value] for name, value in traits.items()],
            "raw": {},
        }
        script = (
            "import json, sys\n"
            "import oslo_messaging\n"
            "from oslo_config import cfg\n"
            "url, topic, event = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])\n"
            "transport = oslo_messaging.get_notification_transport(cfg.CONF, url=url)\n"
            "notifier = oslo_messaging.Notifier(transport, driver='messagingv2', publisher_id='ceilometer', topics=[topic])\n"
            "notifier.sample({}, 'event.sample', [event])\n"
            "transport.cleanup()\n"
        )
        subprocess.run(
            [str(self.python), "-c", script, self.transport_url, EVENT_TOPIC, json.dumps(event)],
            check=True,
            timeout=60,
            capture_output=True,
        )


def _iso(moment: float) -> str:
    import datetime

    return (
        datetime.datetime.fromtimestamp(moment, datetime.UTC)
        .replace(tzinfo=None)
        .isoformat(timespec="milliseconds")
    )


class Aodh:
    """Aodh and Gnocchi beside a running ``DevCloud``: ``start()`` then ``stop()``."""

    def __init__(
        self, cloud: DevCloud, directory: Path, environment: AodhEnvironment | None = None
    ):
        from tests.cloud.cloud import free_port

        self.cloud = cloud
        self.directory = directory.resolve()
        self.environment = environment or AodhEnvironment(cloud.environment.cache)
        suffix = secrets.token_hex(3)
        self.session = f"{cloud.session}_aodh_{suffix}"
        self.databases = {
            name: f"{cloud.database_prefix}{name}_{suffix}" for name in ("aodh", "gnocchi")
        }
        self.ports = {name: free_port() for name in ("aodh", "gnocchi")}
        self.endpoints = {name: f"http://127.0.0.1:{port}" for name, port in self.ports.items()}
        self.etc = self.directory / "etc"
        # Where the WSGI applications look (oslo.config's defaults, HOME being the directory):
        # they take no arguments.
        self.gnocchi_conf = self.directory / ".gnocchi" / "gnocchi.conf"
        self.aodh_conf = self.directory / ".aodh" / "aodh.conf"
        self.logs = self.directory / "logs"
        self.processes: dict[str, subprocess.Popen] = {}
        self.record: SessionRecord | None = None
        self.registered: list[str] = []
        self.timings: dict[str, float] = {}
        self.transport_url = cloud.rabbitmq.transport_url(cloud.vhost)

    # -- start ------------------------------------------------------------------------

    def start(self) -> AodhService:
        started = time.monotonic()
        try:
            self.timings["venv_s"] = self.environment.ensure(
                self.environment.cache / "aodh-install.log"
            )
            self._start()
        except (identity.ServiceError, InfrastructureError, OSError) as error:
            self.stop()
            raise AodhError(f"Aodh: {error}\nAll logs: {self.logs}") from error
        except BaseException:
            self.stop()
            raise
        self.timings["start_s"] = time.monotonic() - started - self.timings["venv_s"]
        return AodhService(
            self.endpoints["aodh"], self.endpoints["gnocchi"], self.cloud.keystone_url, self.environment.bin("python"),
            self.transport_url, self.directory, dict(self.timings),
        )  # fmt: skip

    def _start(self) -> None:
        self.record = SessionRecord(
            self.environment.cache, self.session, owned=True, databases=list(self.databases.values()),
            vhost="", directory=self.directory, venv=self.environment.path,
        )  # fmt: skip
        self.logs.mkdir(parents=True, exist_ok=True)
        for directory in (self.etc, self.gnocchi_conf.parent, self.aodh_conf.parent):
            directory.mkdir(parents=True, exist_ok=True)
        self._write_configuration()
        phase = time.monotonic()
        self.cloud.mariadb.create(list(self.databases.values()))
        self._run(
            "gnocchi-upgrade",
            [str(self.environment.bin("gnocchi-upgrade")), "--config-file", str(self.gnocchi_conf)],
        )
        self._run(
            "aodh-dbsync",
            [str(self.environment.bin("aodh-dbsync")), "--config-file", str(self.aodh_conf)],
        )
        self.timings["migrate_s"] = time.monotonic() - phase
        self._register("gnocchi", "gnocchi", "metric", self.endpoints["gnocchi"])
        self._register("aodh", "aodh", "alarming", self.endpoints["aodh"])
        phase = time.monotonic()
        self._launch(
            "gnocchi-api",
            [str(self.environment.bin("uwsgi")), "--ini", str(self.etc / "gnocchi-uwsgi.ini")],
        )
        self._launch(
            "gnocchi-metricd",
            [str(self.environment.bin("gnocchi-metricd")), "--config-file", str(self.gnocchi_conf)],
        )
        self._launch(
            "aodh-api",
            [str(self.environment.bin("uwsgi")), "--ini", str(self.etc / "aodh-uwsgi.ini")],
        )
        for program in ("aodh-evaluator", "aodh-notifier", "aodh-listener"):
            self._launch(
                program, [str(self.environment.bin(program)), "--config-file", str(self.aodh_conf)]
            )
        keystone = identity.Keystone(self.cloud.keystone_url)
        self._wait(
            "gnocchi-api",
            lambda: self._answers(keystone, f"{self.endpoints['gnocchi']}/v1/archive_policy"),
        )
        self._wait(
            "aodh-api", lambda: self._answers(keystone, f"{self.endpoints['aodh']}/v2/alarms")
        )
        self._ensure_archive_policy(keystone)
        self.timings["ready_s"] = time.monotonic() - phase

    def _write_configuration(self) -> None:
        url = self.cloud.mariadb.url
        self.gnocchi_conf.write_text(
            GNOCCHI_CONF.format(
                log_file=self.logs / "gnocchi.log", locks=self.directory / "gnocchi-locks",
                database_url=f"{url}/{self.databases['gnocchi']}", data=self.directory / "gnocchi-data",
                authentication=identity.service_authentication("gnocchi", self.cloud.keystone_url),
            )
        )  # fmt: skip
        self.aodh_conf.write_text(
            AODH_CONF.format(
                log_file=self.logs / "aodh.log", transport_url=self.transport_url,
                evaluation_interval=EVALUATION_INTERVAL_S, database_url=f"{url}/{self.databases['aodh']}",
                event_topic=EVENT_TOPIC, authentication=identity.service_authentication("aodh", self.cloud.keystone_url),
            )
        )  # fmt: skip
        for name, module in (
            ("gnocchi", "gnocchi.rest.wsgi:application"),
            ("aodh", "aodh.wsgi.api:application"),
        ):
            (self.etc / f"{name}-uwsgi.ini").write_text(
                UWSGI_INI.format(
                    name=name, port=self.ports[name], module=module, venv=self.environment.path
                )
            )

    def _environment(self) -> dict[str, str]:
        environment = {
            "PATH": f"{self.environment.path / 'bin'}:{os.defpath}",
            "HOME": str(self.directory),
            "LANG": "C.UTF-8",
            "PYTHONWARNINGS": "ignore",
            "GNOCCHI_CONFIG_FILE": str(self.gnocchi_conf),
            "AODH_CONFIG_FILE": str(self.aodh_conf),
            "OS_OSLO_CONFIG_FILES": "",
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
                    command, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, cwd=self.directory,
                    env=self._environment(), timeout=MIGRATION_TIMEOUT_S, check=False,
                )  # fmt: skip
            except subprocess.TimeoutExpired:
                raise AodhError(
                    f"Aodh: {what} took over {MIGRATION_TIMEOUT_S} s; see {log}"
                ) from None
        if result.returncode != 0:
            raise AodhError(
                f"Aodh: {what} failed (exit {result.returncode}):\n{venv_cache.tail(log)}\nFull log: {log}"
            )

    def _register(self, user_name: str, service_name: str, service_type: str, url: str) -> None:
        """The service user (admin and service in project ``service``), the service and its
        three endpoints, made or re-pointed here: registering twice changes only the URL."""
        keystone = identity.Keystone(self.cloud.keystone_url)
        roles = {
            role: keystone.ensure("roles", "role", role)["id"] for role in ("admin", "service")
        }
        project = keystone.ensure("projects", "project", "service", domain_id="default")
        user = keystone.ensure(
            "users",
            "user",
            user_name,
            domain_id="default",
            password=identity.SERVICE_PASSWORD,
            default_project_id=project["id"],
        )
        for role in roles.values():
            keystone.grant(project["id"], user["id"], role)
        self.registered.append(url)
        services = keystone.call("GET", f"/services?type={service_type}")["services"]
        service = (
            next((s for s in services if s["name"] == service_name), None)
            or keystone.call(
                "POST", "/services", body={"service": {"name": service_name, "type": service_type}}
            )["service"]
        )
        endpoints = keystone.call("GET", f"/endpoints?service_id={service['id']}")["endpoints"]
        by_interface = {endpoint["interface"]: endpoint for endpoint in endpoints}
        for interface in ("public", "internal", "admin"):
            existing = by_interface.get(interface)
            if existing is None:
                keystone.call(
                    "POST", "/endpoints",
                    body={"endpoint": {"service_id": service["id"], "interface": interface, "url": url, "region_id": identity.REGION}},
                )  # fmt: skip
            elif existing["url"] != url:
                keystone.call(
                    "PATCH", f"/endpoints/{existing['id']}", body={"endpoint": {"url": url}}
                )

    def _unregister(self) -> None:
        keystone = identity.Keystone(self.cloud.keystone_url)
        for service_type in ("alarming", "metric"):
            for service in keystone.call("GET", f"/services?type={service_type}")["services"]:
                for endpoint in keystone.call("GET", f"/endpoints?service_id={service['id']}")[
                    "endpoints"
                ]:
                    if endpoint["url"] in self.registered:
                        keystone.call("DELETE", f"/endpoints/{endpoint['id']}")

    def _ensure_archive_policy(self, keystone: identity.Keystone) -> None:
        """The tests' archive policy (5 s points for an hour), made once per Gnocchi."""
        answer = identity.request(
            "POST", f"{self.endpoints['gnocchi']}/v1/archive_policy", token=keystone.token,
            body={
                "name": ARCHIVE_POLICY,
                "aggregation_methods": ["mean", "max", "min", "last"],
                "definition": [{"granularity": f"{ARCHIVE_GRANULARITY_S}s", "timespan": "1 hour"}],
            },
        )  # fmt: skip
        if answer.status not in (201, 409):
            raise AodhError(f"Gnocchi refused the archive policy: {answer.status} {answer.body}")

    def _launch(self, name: str, command: list[str]) -> None:
        with open(self.logs / f"{name}.out", "ab") as output:
            process = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT, cwd=self.directory,
                env=self._environment(), start_new_session=True, preexec_fn=die_with_parent,
            )  # fmt: skip
        self.processes[name] = process
        self.record.remember_group(process.pid)

    # -- readiness --------------------------------------------------------------------

    def _wait(self, name: str, ready: Callable[[], bool]) -> None:
        deadline = time.monotonic() + READY_TIMEOUT_S
        last = "not ready"
        while True:
            for program, process in self.processes.items():
                if process.poll() is not None:
                    raise AodhError(
                        self._failure(program, f"exited with status {process.returncode}")
                    )
            try:
                if ready():
                    return
            except (OSError, identity.ServiceError, ValueError, KeyError) as error:
                last = str(error)
            if time.monotonic() > deadline:
                raise AodhError(
                    self._failure(name, f"not ready after {READY_TIMEOUT_S} s (last: {last})")
                )
            time.sleep(0.5)

    def _failure(self, name: str, what: str) -> str:
        parts = [f"test cloud: {name} {what}."]
        for log in (self.logs / f"{name}.out", self.logs / "aodh.log", self.logs / "gnocchi.log"):
            if log.exists() and log.stat().st_size:
                parts.append(f"--- last lines of {log}:\n{venv_cache.tail(log, 25)}")
        parts.append(f"All logs: {self.logs}")
        return "\n".join(parts)

    @staticmethod
    def _answers(keystone: identity.Keystone, url: str) -> bool:
        return (
            identity.request(
                "GET", url, token=keystone.token, timeout_s=identity.PROBE_TIMEOUT_S
            ).status
            == 200
        )

    # -- stop -------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop the processes, drop the databases, take the endpoints out of the catalog.
        Safe to call twice."""
        if self.processes:
            stop_groups([process.pid for process in self.processes.values()])
            for process in self.processes.values():
                try:
                    process.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    pass
            self.processes = {}
        if self.registered:
            try:
                self._unregister()
            except (identity.ServiceError, OSError):
                pass  # the session's own Keystone may be stopping with it
            self.registered = []
        try:
            self.cloud.mariadb.drop(list(self.databases.values()))
        except InfrastructureError as error:
            raise AodhError(f"stopping Aodh: {error}") from None
        if self.record is not None:
            self.record.remove()


@pytest.fixture(scope="session")
def aodh_service(
    openstack_cloud: DevCloud, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AodhService]:
    """Aodh registered as ``alarming`` and Gnocchi as ``metric`` in the session's cloud."""
    aodh = Aodh(openstack_cloud, tmp_path_factory.mktemp("aodh"))
    try:
        service = aodh.start()
    except AodhError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        yield service
    finally:
        aodh.stop()
