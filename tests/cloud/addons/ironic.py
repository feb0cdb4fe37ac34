"""Ironic (bare metal) in the test cloud, started only when a test asks for
``ironic_service``: ironic-api and ironic-conductor (Ironic 39) with only the
``fake-hardware`` hardware type and its fake interfaces (nodes are records; powering and
deploying them changes states and touches no machine), the conductor reached over
JSON-RPC on a port of the session's own (no RabbitMQ: two sessions never share a
conductor), its database on the machine's MariaDB, the API behind Keystone's authtoken
like the six services of ``cloud.py``, registered as ``baremetal``.

Owns Ironic's configuration, database (and its golden dump: ``ironic-dbsync`` takes
about 35 s, the dump a second), catalog entry and processes for one test session; it
reuses the cloud's modules and must not change the cloud's six services. Attached to the
dev cloud (``STOKER_TEST_CLOUD=dev``), each session starts its own Ironic and points the
catalog's ``baremetal`` endpoints at it.

Ironic's policy is its default (scopes enforced: oslo.policy no longer lets them be turned
off): a project-scoped ``admin`` makes nodes its project owns and manages their ports, which
is how the tests (and Heat's Ironic types, an administrator's) act.
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
)
from tests.cloud.infrastructure import InfrastructureError
from tests.cloud.sessions import SessionRecord
from tests.support import venv_cache

if TYPE_CHECKING:
    from tests.cloud.cloud import DevCloud

REQUIREMENTS = Path(__file__).with_name("ironic-requirements.txt")
SERVICE_USER = "ironic"
SERVICE_NAME = "ironic"
SERVICE_TYPE = "baremetal"
READY_TIMEOUT_S = 180
MIGRATION_TIMEOUT_S = 600

IRONIC_CONF = """\
[DEFAULT]
auth_strategy = keystone
host = {host}
rpc_transport = json-rpc
log_file = {log_file}
enabled_hardware_types = fake-hardware
enabled_bios_interfaces = no-bios
enabled_boot_interfaces = fake
enabled_console_interfaces = no-console
enabled_deploy_interfaces = fake
enabled_firmware_interfaces = no-firmware
enabled_inspect_interfaces = no-inspect
enabled_management_interfaces = fake
enabled_network_interfaces = noop
enabled_power_interfaces = fake
enabled_raid_interfaces = no-raid
enabled_rescue_interfaces = no-rescue
enabled_vendor_interfaces = no-vendor
default_network_interface = noop

[api]
host_ip = 127.0.0.1
port = {api_port}
api_workers = 1
public_endpoint = {endpoint}

[json_rpc]
auth_strategy = noauth
host_ip = 127.0.0.1
port = {rpc_port}

[database]
connection = {database_url}

[dhcp]
dhcp_provider = none

[conductor]
automated_clean = false

[keystone_authtoken]
{authentication}

[service_catalog]
{authentication}
"""


class IronicError(Exception):
    """Ironic did not start; the message names the step or process and ends with its log tail."""


def ironic_venv(cache: Path | None = None) -> ServiceVenv:
    """Ironic's own venv: ``<cache>/ironic-venv-<hash>``, built once under a lock."""
    return ServiceVenv(
        REQUIREMENTS,
        directory="ironic-venv-{key}",
        lock="ironic-install",
        log="ironic-install.log",
        what="Ironic",
        error=IronicError,
        cache=cache,
    )


@dataclass
class IronicService:
    """What tests get: Ironic's endpoint (as the catalog has it) and where its logs are."""

    endpoint: str
    directory: Path
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def logs(self) -> Path:
        return self.directory / "logs"


class Ironic:
    """Ironic beside a running ``DevCloud``: ``start()`` then ``stop()`` (safe after a failure)."""

    def __init__(self, cloud: DevCloud, directory: Path, environment: ServiceVenv | None = None):
        from tests.cloud.cloud import free_port

        self.cloud = cloud
        self.directory = directory.resolve()
        self.environment = environment or ironic_venv(cloud.environment.cache)
        suffix = secrets.token_hex(3)
        self.session = f"{cloud.session}_ironic_{suffix}"
        self.database = f"{cloud.database_prefix}ironic_{suffix}"
        self.port = free_port()
        self.rpc_port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.configuration = self.directory / "ironic.conf"
        self.logs = self.directory / "logs"
        self.launcher = Launcher(
            label="test cloud",
            directory=self.directory,
            logs=self.logs,
            environment=lambda: process_environment(self.environment.path, home=self.directory),
            error=IronicError,
        )
        self.record: SessionRecord | None = None
        self.timings: dict[str, float] = {}

    # -- start ------------------------------------------------------------------------

    def start(self) -> IronicService:
        started = time.monotonic()
        try:
            self.timings["venv_s"] = self.environment.ensure()
            self._start()
        except (identity.ServiceError, InfrastructureError, OSError) as error:
            stop_after_failure(self.stop)
            raise IronicError(f"Ironic: {error}\nAll logs: {self.logs}") from error
        except BaseException:
            stop_after_failure(self.stop)
            raise
        self.timings["start_s"] = time.monotonic() - started - self.timings["venv_s"]
        return IronicService(self.endpoint, self.directory, dict(self.timings))

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
        self.configuration.write_text(
            IRONIC_CONF.format(
                # The conductor's name, which the API's JSON-RPC client connects to.
                host="127.0.0.1",
                log_file=self.logs / "ironic.log",
                api_port=self.port,
                endpoint=self.endpoint,
                rpc_port=self.rpc_port,
                database_url=f"{self.cloud.mariadb.url}/{self.database}",
                authentication=identity.service_authentication(
                    SERVICE_USER, self.cloud.keystone_url
                ),
            )
        )
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
        for program in ("ironic-conductor", "ironic-api"):
            self.launcher.add(
                program,
                [str(self.environment.bin(program)), "--config-file", str(self.configuration)],
                [self.logs / "ironic.log"],
            )
            self.launcher.launch(program)
        keystone = identity.Keystone(self.cloud.keystone_url)
        self.launcher.wait("ironic-api", lambda: self._api_answers(keystone), READY_TIMEOUT_S)
        self.launcher.wait("ironic-conductor", self._conductor_up, READY_TIMEOUT_S)
        self.timings["ready_s"] = time.monotonic() - phase

    def _database_schema(self) -> None:
        """Ironic's schema: the golden dump of the first start restored, or
        ``ironic-dbsync upgrade`` (about 35 s) and the dump saved, keyed by the pins."""
        golden = GoldenSchema(
            self.cloud.mariadb,
            self.environment.cache / f"ironic-golden-{self.environment.key}.sql",
            lambda: venv_cache.cache_lock(
                self.environment.cache, "ironic-golden", installation.LOCK_WAIT_S, IronicError
            ),
            MIGRATION_TIMEOUT_S,
        )
        golden.prepare(
            self.database,
            lambda: run_command(
                "ironic-dbsync upgrade",
                [
                    str(self.environment.bin("ironic-dbsync")),
                    "--config-file",
                    str(self.configuration),
                    "upgrade",
                ],
                log=self.logs / "dbsync.out",
                directory=self.directory,
                environment=process_environment(self.environment.path, home=self.directory),
                timeout_s=MIGRATION_TIMEOUT_S,
                error=IronicError,
                label="Ironic: ",
            ),
        )

    # -- readiness --------------------------------------------------------------------

    def _api_answers(self, keystone: identity.Keystone) -> bool:
        return (
            identity.request(
                "GET",
                f"{self.endpoint}/v1/nodes",
                token=keystone.token,
                timeout_s=identity.PROBE_TIMEOUT_S,
            ).status
            == 200
        )

    def _conductor_up(self) -> bool:
        """The conductor has registered ``fake-hardware`` (nodes can be made from then on).
        Asked of the database: Ironic's own answer (``GET /v1/drivers``) needs a
        system-scoped token, which the cloud's users do not hold."""
        found = self.cloud.mariadb.execute(
            "SELECT COUNT(*) FROM conductor_hardware_interfaces "
            "WHERE hardware_type = 'fake-hardware'",
            database=self.database,
        )
        return found.strip().splitlines()[-1].strip() not in ("", "0")

    # -- stop -------------------------------------------------------------------------

    def stop(self) -> None:
        """Stop both processes, drop the database. Safe to call twice."""
        self.launcher.stop()
        try:
            self.cloud.mariadb.drop([self.database])
        except InfrastructureError as error:
            raise IronicError(f"stopping Ironic: {error}") from None
        if self.record is not None:
            self.record.remove()


def start_for(cloud: DevCloud, directory: Path) -> tuple[IronicService, Callable[[], None]]:
    """Ironic beside ``cloud`` outside pytest (``bench/heat_templates.py --cloud``), and
    what stops it."""
    ironic = Ironic(cloud, directory)
    return ironic.start(), ironic.stop


@pytest.fixture(scope="session")
def ironic_service(
    openstack_cloud: DevCloud, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[IronicService]:
    """Ironic (API and conductor, fake-hardware) registered in the session's cloud as ``baremetal``."""
    ironic = Ironic(openstack_cloud, tmp_path_factory.mktemp("ironic"))
    try:
        service = ironic.start()
    except IronicError as error:
        pytest.fail(str(error), pytrace=False)
    # Seen with -s; the README's measured times come from it.
    print(
        f"\nIronic started at {service.endpoint}: "
        + ", ".join(f"{k} {v:.1f}" for k, v in service.timings.items())
    )
    try:
        yield service
    finally:
        ironic.stop()
