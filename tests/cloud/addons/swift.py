"""Swift in the test cloud, started only for the tests that ask for ``swift_service``.

Owns Swift's session: its venv (``swift-requirements.txt``, cached beside the cloud's)
and its configuration (both made by ``_swift_configuration.py``: ``swift.conf``, the
proxy's paste pipeline with keystonemiddleware's ``authtoken``, ``keystoneauth``,
``tempurl`` and legacy ``versioned_writes``; one account, container and object server on
local files) written into the session's folder, its rings (built with ``swift-ring-builder``: one replica, one device, ``mount_check``
false), its service user and ``object-store`` endpoints in the session's Keystone
(registered idempotently, so it also works attached to the dev cloud), its four
processes (each leading its own process group, dying with the test run) and their stop.

Swift keeps its account and container databases in SQLite files beside the objects, so
it has no MariaDB database to create or drop. Objects carry their metadata in user
extended attributes: the start checks the session's filesystem takes them and says so
when it does not.

Attached to the dev cloud (STOKER_TEST_CLOUD=dev), Swift is started once under
``<cache>/dev/swift`` and left running for later test runs, like the dev cloud itself;
``stop_dev()`` stops it.
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.cloud import identity
from tests.cloud.addons._service import Launcher, process_environment
from tests.cloud.addons._swift_configuration import (
    SERVERS,
    SwiftError,
    check_user_xattrs,
    configuration,
    register,
    swift_venv,
)
from tests.cloud.cloud import CloudError, DevCloud, free_port
from tests.cloud.installation import InstallationError, cache_directory, cache_lock
from tests.cloud.sessions import SessionRecord, processes_by_group, stop_groups
from tests.support import venv_cache

# Seconds the servers may take to answer once launched.
READY_TIMEOUT_S = 120


@dataclass
class Timings:
    """Seconds spent in each phase of the last start."""

    install_s: float = 0.0
    start_s: float = 0.0


@dataclass
class SwiftService:
    """A running Swift: what tests use is ``url`` (the proxy's root), ``account_url()`` and
    ``logs``; ``endpoint`` is the catalog's URL (``.../v1/AUTH_%(project_id)s``)."""

    directory: Path
    ports: dict[str, int]
    logs: Path
    groups: list[int] = field(default_factory=list)
    timings: Timings = field(default_factory=Timings)
    reused: bool = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.ports['proxy']}"

    @property
    def endpoint(self) -> str:
        return self.url + "/v1/AUTH_%(project_id)s"

    def account_url(self, project_id: str) -> str:
        return f"{self.url}/v1/AUTH_{project_id}"

    def description(self) -> dict:
        return {"ports": self.ports, "groups": self.groups}


class SwiftSession:
    """Starts and stops one Swift for one cloud session."""

    def __init__(self, cloud: DevCloud, directory: Path, owned: bool = True):
        self.cloud = cloud
        self.directory = directory.resolve()
        self.owned = owned
        self.environment = swift_venv()
        self.logs = self.directory / "logs"
        self.record: SessionRecord | None = None
        self.launcher = Launcher(
            label="Swift",
            directory=self.directory,
            logs=self.logs,
            environment=self._environment,
            error=SwiftError,
            die_with_parent=owned,
            poll_s=0.3,
        )

    def start(self) -> SwiftService:
        started = time.monotonic()
        timings = Timings()
        try:
            timings.install_s = self.environment.ensure()
        except InstallationError as error:
            raise SwiftError(str(error)) from None
        ports = {name: free_port() for name in ("proxy", *SERVERS)}
        service = SwiftService(self.directory, ports, self.logs, timings=timings)
        self.record = self.launcher.record = SessionRecord(
            self.environment.cache,
            f"{self.cloud.session}_swift",
            owned=self.owned,
            databases=[],
            vhost="",
            directory=self.directory,
            venv=self.environment.path,
        )
        try:
            self._prepare(ports)
            for name in ("object", "container", "account", "proxy"):
                self._launch(name)
            service.groups = self.launcher.groups()
            for name in SERVERS:
                self._wait(name, lambda name=name: self._healthy(ports[name]))
            self._wait("proxy", lambda: self._healthy(ports["proxy"]))
            register(self.cloud.keystone_url, service.endpoint, service.url)
            self._wait("proxy", lambda: self._account_answers(service))
        except BaseException:
            self.stop()
            raise
        timings.start_s = time.monotonic() - started - timings.install_s
        return service

    def _prepare(self, ports: dict[str, int]) -> None:
        shutil.rmtree(self.directory / "data", ignore_errors=True)
        device = self.directory / "data" / "devices" / "d1"
        device.mkdir(parents=True)
        self.logs.mkdir(parents=True, exist_ok=True)
        check_user_xattrs(device)
        etc = self.directory / "etc"
        etc.mkdir(parents=True, exist_ok=True)
        for name, text in configuration(self.directory, ports, self.cloud.keystone_url).items():
            (etc / name).write_text(text)
        builder = str(self.environment.bin("swift-ring-builder"))
        log_path = self.logs / "rings.log"
        steps = []
        for server in SERVERS:
            ring = str(etc / f"{server}.builder")
            steps += [
                (f"create the {server} ring", None, [builder, ring, "create", "6", "1", "1"]),
                (
                    f"add the {server} device",
                    None,
                    [builder, ring, "add", f"r1z1-127.0.0.1:{ports[server]}/d1", "100"],
                ),
                (f"balance the {server} ring", None, [builder, ring, "rebalance"]),
            ]
        with open(log_path, "a") as log:
            venv_cache.run_steps(
                steps,
                log,
                log_path,
                self._environment(),
                120,
                "Swift's rings",
                SwiftError,
                shown=" ".join,
            )

    def _environment(self) -> dict[str, str]:
        return process_environment(self.environment.path, tmpdir=tempfile.gettempdir())

    def _launch(self, name: str) -> None:
        # -v: Swift logs to syslog otherwise; this puts its log in the file.
        self.launcher.add(
            f"swift-{name}-server",
            [
                str(self.environment.bin(f"swift-{name}-server")),
                str(self.directory / "etc" / f"{name}-server.conf"),
                "-v",
            ],
            output=self.logs / f"{name}-server.log",
        )
        self.launcher.launch(f"swift-{name}-server")

    def _wait(self, name: str, ready, timeout_s: float = READY_TIMEOUT_S) -> None:
        self.launcher.wait(f"swift-{name}-server", ready, timeout_s)

    @staticmethod
    def _healthy(port: int) -> bool:
        answer = identity.request(
            "GET", f"http://127.0.0.1:{port}/healthcheck", timeout_s=identity.PROBE_TIMEOUT_S
        )
        return answer.status == 200

    def _account_answers(self, service: SwiftService) -> bool:
        keystone = identity.Keystone(self.cloud.keystone_url)
        answer = identity.request(
            "HEAD",
            service.account_url(keystone.project_id),
            token=keystone.token,
            timeout_s=identity.PROBE_TIMEOUT_S,
        )
        if answer.status in (401, 403):
            raise identity.ServiceError(f"the proxy refused the admin's token: {answer.status}")
        return 200 <= answer.status < 300

    def stop(self) -> None:
        self.launcher.stop()
        self.launcher.processes.clear()
        if self.record is not None:
            self.record.remove()


# -- the dev cloud's Swift, left running between test runs --------------------------------


def _dev_directory() -> Path:
    return cache_directory() / "dev" / "swift"


def _dev_state() -> Path:
    return _dev_directory() / "state.json"


def _running_dev(cloud: DevCloud) -> SwiftService | None:
    try:
        state = json.loads(_dev_state().read_text())
    except (OSError, ValueError):
        return None
    service = SwiftService(
        _dev_directory(), dict(state["ports"]), _dev_directory() / "logs", list(state["groups"])
    )
    alive = {group for _pid, group in processes_by_group()}
    if not set(service.groups) <= alive:
        return None
    try:
        if not all(SwiftSession._healthy(port) for port in service.ports.values()):
            return None
    except OSError:
        return None
    register(cloud.keystone_url, service.endpoint, service.url)
    service.reused = True
    return service


def _dev_service(cloud: DevCloud) -> SwiftService:
    with cache_lock("dev-swift"):
        service = _running_dev(cloud)
        if service is not None:
            return service
        stop_dev()
        service = SwiftSession(cloud, _dev_directory(), owned=False).start()
        _dev_state().write_text(json.dumps(service.description()))
        return service


def stop_dev() -> None:
    """Stop the dev cloud's Swift, if one runs."""
    try:
        state = json.loads(_dev_state().read_text())
    except (OSError, ValueError):
        return
    stop_groups(list(state.get("groups", [])))
    _dev_state().unlink(missing_ok=True)


def start_for(cloud: DevCloud, directory: Path) -> tuple[SwiftService, Callable[[], None]]:
    """Swift beside ``cloud`` outside pytest (``bench/heat_templates.py --cloud``): the dev
    cloud's (left running), or one in ``directory``; and what stops it."""
    if cloud.session == "dev":
        return _dev_service(cloud), lambda: None
    session = SwiftSession(cloud, directory)
    return session.start(), session.stop


@pytest.fixture(scope="session")
def swift_service(
    openstack_cloud: DevCloud, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SwiftService]:
    """Swift's proxy, account, container and object servers, in the session's Keystone
    catalog as ``object-store``; started at the first test that asks, stopped at the end."""
    if openstack_cloud.session == "dev":
        try:
            service = _dev_service(openstack_cloud)
        except CloudError as error:
            pytest.fail(str(error), pytrace=False)
        yield service
        return
    session = SwiftSession(openstack_cloud, tmp_path_factory.mktemp("swift"))
    try:
        service = session.start()
    except CloudError as error:
        pytest.fail(str(error), pytrace=False)
    try:
        yield service
    finally:
        session.stop()
