"""The parts every service of the test cloud repeats, for the add-ons (``barbican.py``,
``designate.py``, ``octavia.py``, ``swift.py``, ``zaqar.py``) and for ``cloud.py``'s six:

- ``ServiceVenv``: a service's own venv in the cloud's cache, built once per pinned set
  (venv, then uv, then the pins) under a lock shared by every test run;
- ``process_environment``: the few variables a service process is given (its venv first
  on PATH, the machine's CA settings; never stoker's venv, ``OS_*`` or PYTHONPATH);
- ``register_service`` / ``unregister_endpoints``: the service user, service and
  endpoints in the session's Keystone, made or re-pointed idempotently (the dev cloud
  outlives sessions, so an entry may already be there);
- ``Launcher``: long-running processes, each leading its own process group (recorded for
  the reaper), waited for until they answer, named with their log tail when one exits or
  never answers, and stopped;
- ``run_command``: one-shot commands (migrations, ``*-manage``) into a log;
- ``GoldenSchema``: a migrated schema dumped once per pinned set, restored by later starts.

These are parts taking their collaborators (MariaDB, the session record, the error class a
service raises), not a base class: each service keeps its own configuration, readiness
probes and start order. Nothing here starts anything on import, and cache paths and lock
names stay each service's own (a new name would rebuild the cached venvs).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path

from tests.cloud import identity
from tests.cloud.infrastructure import InfrastructureError, MariaDB
from tests.cloud.installation import BUILD_STEP_TIMEOUT_S, LOCK_WAIT_S, UV_REQUIREMENT
from tests.cloud.installation import cache_directory as cloud_cache_directory
from tests.cloud.services import Process
from tests.cloud.sessions import SessionRecord, die_with_parent, stop_groups
from tests.support import venv_cache

__all__ = [
    "GoldenSchema",
    "Launcher",
    "Process",
    "ServiceVenv",
    "process_environment",
    "register_service",
    "run_command",
    "stop_after_failure",
    "unregister_endpoints",
]

# Errors a readiness probe may meet while a service is still coming up.
PROBE_ERRORS = (OSError, identity.ServiceError, InfrastructureError, ValueError, KeyError)
# The interfaces every service is registered under.
INTERFACES = ("public", "internal", "admin")


# -- the venv -----------------------------------------------------------------------------


class ServiceVenv:
    """A service's venv: ``<cache>/<directory>``, where ``directory`` names the key
    (``{key}``: a hash of ``requirements``, uv's pin and the Python version). Built from
    nothing under the lock ``lock`` (scripts carry the venv's absolute path, so an
    incomplete one is never repaired or moved); ``.stoker-complete`` is written last."""

    def __init__(
        self,
        requirements: Path,
        *,
        directory: str,
        lock: str,
        log: str,
        what: str,
        error: type[Exception],
        cache: Path | None = None,
    ):
        self.requirements = requirements
        self.cache = cache or cloud_cache_directory()
        self.key = venv_cache.environment_key([requirements.read_bytes(), UV_REQUIREMENT.encode()])
        self.path = self.cache / directory.format(key=self.key)
        self.marker = self.path / ".stoker-complete"
        self.lock_name = lock
        self.log = self.cache / log
        self.what = what
        self.error = error

    def bin(self, name: str) -> Path:
        return self.path / "bin" / name

    def ensure(self, log_path: Path | None = None) -> float:
        """Build the venv unless a complete one is cached; the seconds spent building."""
        log_path = log_path or self.log
        lock = venv_cache.cache_lock(self.cache, self.lock_name, LOCK_WAIT_S, self.error)
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
        uv_install = [str(self.bin("uv")), "pip", "install", "--python", python]
        steps = [
            ("create the venv", None, [sys.executable, "-m", "venv", str(self.path)]),
            ("install uv", None, [python, "-m", "pip", "install", "-q", UV_REQUIREMENT]),
            (
                f"install {self.what}",
                str(self.requirements),
                [*uv_install, "-r", str(self.requirements)],
            ),
        ]
        with open(log_path, "a") as log:
            venv_cache.run_steps(
                steps,
                log,
                log_path,
                environment,
                BUILD_STEP_TIMEOUT_S,
                f"{self.what}'s venv",
                self.error,
                shown=" ".join,
            )


def process_environment(
    venv: Path,
    *,
    home: Path | None = None,
    tmpdir: Path | str | None = None,
    pythonpath: Path | None = None,
) -> dict[str, str]:
    """What a service process runs with: its venv's ``bin`` first on PATH, ``home`` (some
    services read their configuration from ``~/.<service>/`` only), ``tmpdir``, our own
    modules on PYTHONPATH when given, and the machine's CA settings. Nothing else of the
    caller's: stoker's venv, its ``OS_*`` variables or PYTHONPATH must not leak in."""
    environment = {"PATH": f"{venv / 'bin'}:{os.defpath}"}
    if pythonpath is not None:
        environment["PYTHONPATH"] = str(pythonpath)
    environment["HOME"] = str(home or Path.home())
    environment["LANG"] = "C.UTF-8"
    if tmpdir is not None:
        environment["TMPDIR"] = str(tmpdir)
    environment["PYTHONWARNINGS"] = "ignore"
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE"):
        if name in os.environ:
            environment[name] = os.environ[name]
    return environment


# -- the catalog ----------------------------------------------------------------------------


def register_service(
    keystone_url: str,
    *,
    user: str,
    name: str,
    service_type: str,
    endpoints: str | Mapping[str, str],
    roles: Sequence[str] = ("admin", "service"),
) -> None:
    """The service user (``roles`` in project ``service``), the service ``name`` of type
    ``service_type`` and its three endpoints (one URL, or one per interface). Idempotent:
    what exists is reused and an endpoint pointing elsewhere (an earlier session's) is
    moved here; registering twice changes nothing."""
    urls = endpoints if isinstance(endpoints, Mapping) else dict.fromkeys(INTERFACES, endpoints)
    keystone = identity.Keystone(keystone_url)
    role_ids = [keystone.ensure("roles", "role", role)["id"] for role in roles]
    project = keystone.ensure("projects", "project", "service", domain_id="default")
    service_user = keystone.ensure(
        "users",
        "user",
        user,
        domain_id="default",
        password=identity.SERVICE_PASSWORD,
        default_project_id=project["id"],
    )
    for role_id in role_ids:
        keystone.grant(project["id"], service_user["id"], role_id)
    services = keystone.call("GET", f"/services?type={service_type}")["services"]
    service = (
        next((s for s in services if s["name"] == name), None)
        or keystone.call(
            "POST", "/services", body={"service": {"name": name, "type": service_type}}
        )["service"]
    )
    existing = {
        row["interface"]: row
        for row in keystone.call("GET", f"/endpoints?service_id={service['id']}")["endpoints"]
    }
    for interface in INTERFACES:
        url = urls[interface]
        row = existing.get(interface)
        if row is None:
            keystone.call(
                "POST",
                "/endpoints",
                body={
                    "endpoint": {
                        "service_id": service["id"],
                        "interface": interface,
                        "url": url,
                        "region_id": identity.REGION,
                    }
                },
            )
        elif row["url"] != url:
            keystone.call("PATCH", f"/endpoints/{row['id']}", body={"endpoint": {"url": url}})


def unregister_endpoints(keystone_url: str, url: str) -> None:
    """Delete the catalog's endpoints that still lead to ``url`` (a later session may have
    pointed them at its own service since: those stay)."""
    keystone = identity.Keystone(keystone_url)
    for endpoint in keystone.call("GET", "/endpoints")["endpoints"]:
        if endpoint["url"] == url:
            keystone.call("DELETE", f"/endpoints/{endpoint['id']}")


# -- processes ------------------------------------------------------------------------------


class Launcher:
    """A service's long-running processes: ``launch`` each (its own process group, recorded
    in ``record`` so a killed run's are reaped; dying with the test run when
    ``die_with_parent``), ``wait`` until one answers (failing at once when any of them
    exits), and ``stop`` them all. Failures raise ``error`` with ``label`` first, the
    process's name, and the tail of its output and logs."""

    def __init__(
        self,
        *,
        label: str,
        directory: Path,
        logs: Path,
        environment: Callable[[], dict[str, str]],
        error: type[Exception],
        record: SessionRecord | None = None,
        die_with_parent: bool = True,
        poll_s: float = 0.5,
    ):
        self.label = label
        self.directory = directory
        self.logs = logs
        self.environment = environment
        self.error = error
        self.record = record
        self.die_with_parent = die_with_parent
        self.poll_s = poll_s
        self.processes: dict[str, Process] = {}

    def add(
        self, name: str, command: list[str], logs: Sequence[Path] = (), output: Path | None = None
    ) -> Process:
        """A process to launch: its output goes to ``output`` (``<logs>/<name>.out``)."""
        process = Process(name, command, output or self.logs / f"{name}.out", list(logs))
        self.processes[name] = process
        return process

    def launch(self, name: str, environment: Mapping[str, str] | None = None) -> Process:
        process = self.processes[name]
        with open(process.output, "ab") as output:
            process.popen = subprocess.Popen(
                process.command,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=self.directory,
                env=dict(environment) if environment is not None else self.environment(),
                start_new_session=True,
                preexec_fn=die_with_parent if self.die_with_parent else None,
            )
        if self.record is not None:
            self.record.remember_group(process.popen.pid)
        return process

    def pid(self, name: str) -> int:
        return self.processes[name].popen.pid

    def groups(self) -> list[int]:
        """The process groups running now (each process leads its own)."""
        return [p.popen.pid for p in self.processes.values() if p.popen is not None]

    def wait(self, name: str, ready: Callable[[], bool], timeout_s: float) -> None:
        """Until ``ready()`` (the probe of process ``name``) is true; ``error`` when any
        process exits first or ``timeout_s`` passes (with the probe's last problem)."""
        deadline = time.monotonic() + timeout_s
        last_problem = "not ready"
        while True:
            for process in self.processes.values():
                if process.popen is not None and process.popen.poll() is not None:
                    raise self.error(
                        self.failure(process.name, f"exited with status {process.popen.returncode}")
                    )
            try:
                if ready():
                    return
            except PROBE_ERRORS as problem:
                last_problem = str(problem)
            if time.monotonic() > deadline:
                raise self.error(
                    self.failure(name, f"not ready after {timeout_s:.0f} s (last: {last_problem})")
                )
            time.sleep(self.poll_s)

    def failure(self, name: str, what: str) -> str:
        """``<label>: <name> <what>.``, then the tail of the process's output and logs."""
        parts = [f"{self.label}: {name} {what}."]
        process = self.processes.get(name)
        for log in [process.output, *process.logs] if process else []:
            if log.exists() and log.stat().st_size:
                parts.append(f"--- last lines of {log}:\n{venv_cache.tail(log, 25)}")
        parts.append(f"All logs: {self.logs}")
        return "\n".join(parts)

    def stop(self) -> None:
        """Stop every process group (TERM, then KILL) and reap the leaders. Safe twice."""
        running = [p.popen for p in self.processes.values() if p.popen is not None]
        stop_groups([popen.pid for popen in running])
        for popen in running:
            try:
                popen.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        for process in self.processes.values():
            process.popen = None


def stop_after_failure(stop: Callable[[], None]) -> None:
    """``stop()`` after a start failed: a failure of the stop (MariaDB refusing one more
    connection, say) must not replace the start's error, which names the cause."""
    try:
        stop()
    except Exception:  # noqa: BLE001 - the start's error is the one raised
        pass


def run_command(
    what: str,
    command: list[str],
    *,
    log: Path,
    directory: Path,
    environment: Mapping[str, str],
    timeout_s: float,
    error: type[Exception],
    label: str,
) -> None:
    """Run a one-shot command (a migration, a ``*-manage`` call) with its output appended
    to ``log``; ``error`` names it with the log's tail when it fails or hangs."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as output:
        output.write(f"\n$ {' '.join(command)}\n".encode())
        output.flush()
        try:
            result = subprocess.run(
                command,
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=directory,
                env=dict(environment),
                timeout=timeout_s,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise error(
                f"{label}{what} took over {timeout_s:.0f} s:\n{venv_cache.tail(log, 25)}\nFull log: {log}"
            ) from None
    if result.returncode != 0:
        raise error(
            f"{label}{what} failed (exit {result.returncode}):\n{venv_cache.tail(log, 25)}\nFull log: {log}"
        )


# -- the golden schema ------------------------------------------------------------------------


class GoldenSchema:
    """A service's migrated schema as a dump (``path``, keyed by its pins: new pins, new
    dump): restored in about a second where migrating takes 10-60 s. Saved by the first
    start under ``lock``; a dump that does not restore is replaced."""

    def __init__(
        self,
        mariadb: MariaDB,
        path: Path,
        lock: Callable[[], AbstractContextManager[None]],
        timeout_s: float = 600,
    ):
        self.mariadb = mariadb
        self.path = path
        self.lock = lock
        self.timeout_s = timeout_s

    def prepare(self, database: str, migrate: Callable[[], None]) -> bool:
        """Give the (created, empty) ``database`` its schema: the dump restored, or
        ``migrate()`` run and its result dumped. Whether the dump was restored."""
        if self.path.exists():
            with open(self.path, "rb") as dump:
                restored = subprocess.run(
                    self.mariadb.restore_command(database),
                    stdin=dump,
                    capture_output=True,
                    timeout=self.timeout_s,
                    check=False,
                )
            if restored.returncode == 0:
                return True
            # A damaged dump: migrate a fresh database instead, and save a new one.
            self.mariadb.create([database])
        migrate()
        with self.lock():
            partial = self.path.with_name(f"{self.path.name}.{os.getpid()}.partial")
            self.mariadb.dump(database, partial)
            partial.replace(self.path)
        return False
