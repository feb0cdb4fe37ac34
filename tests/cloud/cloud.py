"""One running test cloud: Keystone, Placement, Neutron, Glance, Cinder and Nova on loopback.

Owns a session of the cloud from start to stop: its directory (configuration, state, logs),
its free ports, its databases and RabbitMQ vhost (names unique to the session), launching its
processes (each the leader of its own process group, so stopping takes the whole group), the
migrations of a first start, the readiness checks, and what tests are handed (clouds.yaml,
``OS_*`` variables, endpoints, openstacksdk connections). Around it: ``installation.py``
builds the services' venv, ``infrastructure.py`` speaks to MariaDB and RabbitMQ,
``services.py`` writes each service's configuration, ``golden.py`` keeps the initialised
databases, ``sessions.py`` reaps what a killed run left behind.
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.cloud import golden, identity
from tests.cloud.addons._service import Launcher, process_environment
from tests.cloud.databases import CloudDatabases
from tests.cloud.infrastructure import InfrastructureError, MariaDB, RabbitMQ
from tests.cloud.installation import InstallationError, ServiceEnvironment
from tests.cloud.services import APIS, DRIVERS, Process, write_configuration
from tests.cloud.sessions import (
    SessionRecord,
    processes_by_group,
    reap_abandoned_sessions,
)

CLOUD_NAME = "stoker-devcloud"
DATABASES = ["keystone", "placement", "neutron", "glance", "cinder", "nova_api", "nova_cell0", "nova"]
# Seconds the whole wait for readiness may take.
READY_TIMEOUT_S = 300
# What every session offers beyond an empty cloud, so tests can boot servers at once:
# public flavors (name -> ram MiB, vcpus, disk GiB; m1.small is for resize) and a tiny image.
FLAVORS = {"m1.tiny": (512, 1, 1), "m1.small": (1024, 1, 2)}
IMAGE_NAME = "stoker-tiny"


class CloudError(Exception):
    """The cloud did not start; the message names the service and ends with its log tail."""


def free_port() -> int:
    """A port free now, below the kernel's ephemeral range: the APIs bind it minutes
    later (after installing and migrating), and a port the kernel may hand to any
    outgoing connection meanwhile (to PyPI, MariaDB, RabbitMQ) could be gone by then."""
    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    for _ in range(200):
        port = secrets.choice(range(10000, max(10001, low)))
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise CloudError("no free port below the ephemeral range on 127.0.0.1")


@dataclass
class Timings:
    """Seconds spent in each phase of the last start."""

    install_s: float = 0.0
    databases_s: float = 0.0
    golden_restored: bool = False
    ready_s: float = 0.0
    total_s: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)


class DevCloud(CloudDatabases):
    """A test cloud session. ``start()`` then ``stop()``; both are safe to call after a failure."""

    def __init__(
        self,
        directory: Path,
        session: str | None = None,
        environment: ServiceEnvironment | None = None,
        die_with_parent: bool = True,
    ):
        self.directory = directory.resolve()
        self.session = session or f"s{os.getpid()}_{secrets.token_hex(2)}"
        self.environment = environment or ServiceEnvironment()
        self.die_with_parent = die_with_parent
        self.database_prefix = f"stoker_{self.session}_"
        self.vhost = f"stoker_{self.session}"
        self.host = f"stoker-{self.session}".replace("_", "-")
        self.mariadb = MariaDB()
        self.rabbitmq = RabbitMQ()
        self.ports = {api: free_port() for api in APIS}
        self.api_urls = {api: f"http://127.0.0.1:{port}" for api, port in self.ports.items()}
        self.keystone_url = self.api_urls["keystone"] + "/v3"
        self.etc = self.directory / "etc"
        self.data = self.directory / "data"
        self.logs = self.directory / "logs"
        self.clouds_yaml = self.etc / "clouds.yaml"
        self.cloud_name = CLOUD_NAME
        self.launcher = Launcher(
            label="test cloud",
            directory=self.directory,
            logs=self.logs,
            environment=self._service_environment,
            error=CloudError,
            die_with_parent=die_with_parent,
        )
        self.timings = Timings()
        self.project_id: str | None = None
        self.flavors: dict[str, str] = {}
        self.image_id: str | None = None
        self.image_name = IMAGE_NAME
        self.record: SessionRecord | None = None

    @property
    def processes(self) -> dict[str, Process]:
        """Every long-running process of the session, by name (``services.py`` names them)."""
        return self.launcher.processes

    @processes.setter
    def processes(self, processes: dict[str, Process]) -> None:
        self.launcher.processes = processes

    # -- a cloud another process started ----------------------------------------------------

    def description(self) -> dict[str, Any]:
        """What a test session needs to use this running cloud (see ``attach``)."""
        return {
            "ports": self.ports,
            "project_id": self.project_id,
            "flavors": self.flavors,
            "image_id": self.image_id,
        }

    @classmethod
    def attach(cls, directory: Path, description: dict[str, Any]) -> DevCloud:
        """The running cloud in ``directory`` (started by ``python -m tests.cloud start``),
        for use only: this object neither starts nor stops it."""
        cloud = cls(directory, session="dev", die_with_parent=False)
        cloud.ports = dict(description["ports"])
        cloud.api_urls = {api: f"http://127.0.0.1:{port}" for api, port in cloud.ports.items()}
        cloud.keystone_url = cloud.api_urls["keystone"] + "/v3"
        cloud.project_id = description["project_id"]
        cloud.flavors = dict(description["flavors"])
        cloud.image_id = description["image_id"]
        return cloud

    # -- what tests use ---------------------------------------------------------------------

    @property
    def endpoints(self) -> dict[str, str]:
        """Service type -> the catalog's URL for it."""
        urls = {"identity": self.keystone_url}
        for _user, _name, service_type, api, path in identity.CATALOG:
            urls[service_type] = self.api_urls[api] + path
        return urls

    def cloud(self, user: str = "admin") -> str:
        """The clouds.yaml entry for ``admin`` (admin project) or ``demo`` (a member of demo)."""
        if user == "admin":
            return self.cloud_name
        if user == "demo":
            return f"{self.cloud_name}-demo"
        raise ValueError(f"the test cloud has users admin and demo, not {user!r}")

    def environ(self, user: str = "admin") -> dict[str, str]:
        """The ``OS_*`` variables for ``user`` (explicit credentials, plus the clouds.yaml path)."""
        password, project = (
            (identity.ADMIN_PASSWORD, "admin")
            if user == "admin"
            else (identity.DEMO_PASSWORD, "demo")
        )
        self.cloud(user)
        return {
            "OS_CLIENT_CONFIG_FILE": str(self.clouds_yaml),
            "OS_AUTH_URL": self.keystone_url,
            "OS_AUTH_TYPE": "password",
            "OS_USERNAME": user,
            "OS_PASSWORD": password,
            "OS_PROJECT_NAME": project,
            "OS_USER_DOMAIN_NAME": "Default",
            "OS_PROJECT_DOMAIN_NAME": "Default",
            "OS_REGION_NAME": identity.REGION,
            "OS_IDENTITY_API_VERSION": "3",
        }

    def cloud_environ(self, user: str = "admin") -> dict[str, str]:
        """``OS_CLOUD`` and ``OS_CLIENT_CONFIG_FILE``: the clouds.yaml way to the same user."""
        return {"OS_CLIENT_CONFIG_FILE": str(self.clouds_yaml), "OS_CLOUD": self.cloud(user)}

    def connect(self, user: str = "admin", **settings: Any):
        """An openstacksdk Connection as ``user``, from this session's clouds.yaml."""
        import openstack.config
        import openstack.connection

        config = openstack.config.OpenStackConfig(
            config_files=[str(self.clouds_yaml)], load_envvars=False
        )
        return openstack.connection.Connection(
            config=config.get_one(cloud=self.cloud(user), **settings)
        )

    @property
    def access_logs(self) -> dict[str, Path]:
        """API name -> the uWSGI output holding one line per request (for counting API calls)."""
        return {api: self.logs / f"{api}-api.out" for api in APIS}

    def memory_rss_bytes(self) -> int:
        """Resident memory of every process of the cloud, summed."""
        groups = {process.popen.pid for process in self.processes.values() if process.popen}
        total = 0
        for pid, pgid in processes_by_group():
            if pgid in groups:
                try:
                    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                        if line.startswith("VmRSS:"):
                            total += int(line.split()[1]) * 1024
                except OSError:
                    continue
        return total

    # -- start ------------------------------------------------------------------------------

    def start(self) -> DevCloud:
        started = time.monotonic()
        try:
            self._start()
        except (identity.ServiceError, InfrastructureError, OSError) as error:
            self.stop()
            raise CloudError(f"test cloud: {error}\nAll logs: {self.logs}") from error
        except BaseException:
            self.stop()
            raise
        self.timings.total_s = time.monotonic() - started
        return self

    def _start(self) -> None:
        reap_abandoned_sessions(self.environment.cache, self.mariadb, self.rabbitmq)
        phase = time.monotonic()
        try:
            self.timings.install_s = self.environment.ensure(self.environment.cache / "install.log")
        except InstallationError as error:
            raise CloudError(str(error)) from None
        # Recorded before anything is created, so a killed run's leftovers can be found.
        self.record = self.launcher.record = SessionRecord(
            self.environment.cache,
            self.session,
            owned=self.die_with_parent,
            databases=self.database_names,
            vhost=self.vhost,
            directory=self.directory,
            venv=self.environment.path,
        )
        self._prepare_directory()
        self.processes = write_configuration(self)
        try:
            self.mariadb.create(self.database_names)
            self.rabbitmq.create_vhost(self.vhost)
        except InfrastructureError as error:
            raise CloudError(str(error)) from None
        self.timings.phases["prepare"] = time.monotonic() - phase

        phase = time.monotonic()
        copy = golden.golden_directory(self.environment)
        databases = {name: self.database_prefix + name for name in DATABASES}
        if (copy / "complete").exists():
            try:
                golden.restore(
                    copy,
                    self.mariadb,
                    databases,
                    self.data / "keystone",
                    self.endpoints,
                    cells={
                        "cell0": {
                            "database_connection": f"{self.mariadb.url}/{databases['nova_cell0']}"
                        },
                        "cell1": {
                            "database_connection": f"{self.mariadb.url}/{databases['nova']}",
                            "transport_url": self.rabbitmq.transport_url(self.vhost),
                        },
                    },
                )
            except golden.GoldenCopyError as error:
                raise CloudError(str(error)) from None
            self.timings.golden_restored = True
            self.timings.databases_s = time.monotonic() - phase
            self._launch("keystone-api")
            self._wait("keystone-api", self._keystone_answers)
        else:
            self._migrate()
            self.timings.databases_s = time.monotonic() - phase
            self._launch("keystone-api")
            self._wait("keystone-api", self._keystone_answers)
            identity.Keystone(self.keystone_url).register(self.api_urls)
            golden.save(copy, self.mariadb, databases, self.data / "keystone")
        self.timings.phases["keystone"] = time.monotonic() - phase

        phase = time.monotonic()
        keystone = identity.Keystone(self.keystone_url)
        self.project_id = keystone.project_id
        for name in (
            "placement-api",
            "neutron-api",
            "glance-api",
            "cinder-api",
            "nova-api",
            "nova-conductor",
            "nova-scheduler",
            "cinder-scheduler",
            "cinder-volume",
            "cinder-backup",
        ):
            self._launch(name)
        # nova-compute reports its resources to Placement when it starts; started before
        # Placement answers, it would wait for its next periodic report (a minute).
        self._wait(
            "placement-api",
            lambda: (
                identity.request(
                    "GET", self.api_urls["placement"] + "/", timeout_s=identity.PROBE_TIMEOUT_S
                ).status
                == 200
            ),
        )
        self._launch("nova-compute")
        self._wait(
            "neutron-api",
            lambda: self._authorised_get(keystone, self.api_urls["neutron"] + "/v2.0/networks"),
        )
        self._wait(
            "glance-api",
            lambda: self._authorised_get(keystone, self.api_urls["glance"] + "/v2/images"),
        )
        self._wait(
            "cinder-volume",
            lambda: self._service_up(
                keystone,
                f"{self.endpoints['volumev3']}/{self.project_id}/os-services",
                "cinder-volume",
            ),
        )
        self._wait(
            "cinder-backup",
            lambda: self._service_up(
                keystone,
                f"{self.endpoints['volumev3']}/{self.project_id}/os-services",
                "cinder-backup",
            ),
        )
        # Up is not enough: the scheduler must have had cinder-volume's first report of
        # its pools, or the first volume fails "No valid backend was found".
        self._wait(
            "cinder-scheduler",
            lambda: self._listed(
                keystone,
                f"{self.endpoints['volumev3']}/{self.project_id}/scheduler-stats/get_pools",
                "pools",
            ),
        )
        self._wait(
            "nova-compute",
            lambda: self._service_up(
                keystone, self.endpoints["compute"] + "/os-services", "nova-compute"
            ),
        )
        # Map the new compute host into cell1 now rather than at the scheduler's next discovery.
        self._manage(
            "nova-manage discover_hosts", [*self._nova_manage(), "cell_v2", "discover_hosts"]
        )
        self._wait(
            "nova-compute",
            lambda: self._listed(
                keystone, self.endpoints["compute"] + "/os-hypervisors", "hypervisors"
            ),
        )
        self._wait(
            "placement-api",
            lambda: self._listed(
                keystone, self.api_urls["placement"] + "/resource_providers", "resource_providers"
            ),
        )
        self._seed(keystone)
        self.timings.ready_s = time.monotonic() - phase

    def _seed(self, keystone: identity.Keystone) -> None:
        # Neutron loads its policy rules on its first write: concurrent first writes were
        # answered 403 "disallowed by policy" while it did (seen twice; a read first did
        # not help). One write now, before any test writes.
        networking = self.api_urls["neutron"] + "/v2.0/security-groups"
        group = keystone.call("POST", networking, body={"security_group": {"name": "stoker-warm-up"}})
        keystone.call("DELETE", f"{networking}/{group['security_group']['id']}")
        for name, (ram, vcpus, disk) in FLAVORS.items():
            flavor = keystone.call(
                "POST",
                self.endpoints["compute"] + "/flavors",
                body={"flavor": {"name": name, "ram": ram, "vcpus": vcpus, "disk": disk}},
            )["flavor"]
            self.flavors[name] = flavor["id"]
        image = keystone.call(
            "POST",
            self.endpoints["image"] + "/v2/images",
            body={
                "name": IMAGE_NAME,
                "disk_format": "raw",
                "container_format": "bare",
                "visibility": "public",
            },
        )
        answer = identity.request(
            "PUT",
            f"{self.endpoints['image']}/v2/images/{image['id']}/file",
            token=keystone.token,
            raw=bytes(64 * 1024),
        )
        if answer.status != 204:
            raise CloudError(
                self._failure(
                    "glance-api", f"refused the image upload: {answer.status} {answer.body}"
                )
            )
        self.image_id = image["id"]

    @property
    def database_names(self) -> list[str]:
        return [self.database_prefix + name for name in DATABASES]

    def _prepare_directory(self) -> None:
        shutil.rmtree(self.data, ignore_errors=True)
        for path in (
            "keystone",
            "placement",
            "glance/images",
            "glance/staging",
            "glance/tasks",
            "glance/lock",
            "neutron/lock",
            "cinder/lock",
            "cinder/backups",
            "nova/lock",
            "nova/instances",
            "tmp",
        ):
            (self.data / path).mkdir(parents=True, exist_ok=True)
        self.logs.mkdir(parents=True, exist_ok=True)
        for project in ("keystone", "placement", "neutron", "glance", "cinder", "nova"):
            (self.etc / project).mkdir(parents=True, exist_ok=True)

    def _service_environment(self) -> dict[str, str]:
        # Only what the services need: stoker's venv, the caller's OS_* variables or
        # PYTHONPATH must not leak into them. Their own PYTHONPATH holds only our drivers.
        return process_environment(
            self.environment.path, tmpdir=self.data / "tmp", pythonpath=DRIVERS
        )

    def _launch(self, name: str) -> None:
        self.launcher.launch(name)

    # -- readiness ------------------------------------------------------------------------

    def _wait(self, name: str, ready, timeout_s: float = READY_TIMEOUT_S) -> None:
        self.launcher.wait(name, ready, timeout_s)

    def _keystone_answers(self) -> bool:
        return (
            identity.request("GET", self.keystone_url, timeout_s=identity.PROBE_TIMEOUT_S).status
            == 200
        )

    @staticmethod
    def _authorised_get(keystone: identity.Keystone, url: str) -> bool:
        return (
            identity.request(
                "GET", url, token=keystone.token, timeout_s=identity.PROBE_TIMEOUT_S
            ).status
            == 200
        )

    @staticmethod
    def _listed(keystone: identity.Keystone, url: str, key: str) -> bool:
        answer = identity.request(
            "GET", url, token=keystone.token, timeout_s=identity.PROBE_TIMEOUT_S
        )
        return answer.status == 200 and bool(answer.body[key])

    @staticmethod
    def _service_up(keystone: identity.Keystone, url: str, binary: str) -> bool:
        answer = identity.request(
            "GET", url, token=keystone.token, timeout_s=identity.PROBE_TIMEOUT_S
        )
        return answer.status == 200 and any(
            service["binary"] == binary and service["state"] == "up"
            for service in answer.body["services"]
        )

    # -- stop -----------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop every process group, drop the databases and the vhost. Safe to call twice."""
        self.launcher.stop()
        problems: list[str] = []

        def delete_vhost() -> None:
            try:
                self.rabbitmq.delete_vhost(self.vhost)
            except InfrastructureError as error:
                problems.append(str(error))

        # rabbitmqctl takes seconds to start: let it run while the databases are dropped.
        vhost_deletion = threading.Thread(target=delete_vhost)
        vhost_deletion.start()
        try:
            self.mariadb.drop(self.database_names)
        except InfrastructureError as error:
            problems.append(str(error))
        vhost_deletion.join()
        if self.record is not None and not problems:
            self.record.remove()
        if problems:
            raise CloudError("stopping the test cloud: " + "; ".join(problems))
