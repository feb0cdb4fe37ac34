"""The test cloud's own virtual environment: built once per pinned set, cached outside the clone.

Owns the cache directory, the hash that keys everything cached there (the environment and the
golden database copy), the file locks that let two test runs share that cache, and building the
environment. It must not start services (``cloud.py`` does) and never touches stoker's own venv:
the services' 180 pinned packages would clash with stoker's dependencies.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

CLOUD_DIRECTORY = Path(__file__).resolve().parent
REQUIREMENTS = CLOUD_DIRECTORY / "requirements.txt"
ML2_PACKAGE = CLOUD_DIRECTORY / "ml2_noop"
# The installer, pinned like the rest: uv installs the 180 wheels in about a minute where pip
# takes several, and it comes from PyPI through pip like any package.
UV_REQUIREMENT = "uv==0.13.8"
# Seconds one step of the build may take before it counts as hung (downloads on a busy machine).
BUILD_STEP_TIMEOUT_S = 1800
# Seconds a test run waits for another run's build or snapshot to finish.
LOCK_WAIT_S = 2400


class InstallationError(Exception):
    """The environment could not be built; the message names the step and its log."""


def cache_directory() -> Path:
    """``${XDG_CACHE_HOME:-~/.cache}/stoker/devcloud``: survives clones, shared by every run."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "stoker" / "devcloud"


def requirements_hash() -> str:
    """What the environment is built from: the pins, our ML2 driver and the Python version."""
    digest = hashlib.sha256()
    digest.update(REQUIREMENTS.read_bytes())
    digest.update(UV_REQUIREMENT.encode())
    for path in sorted(ML2_PACKAGE.iterdir()):
        if path.is_file():
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    digest.update(f"{sys.version_info.major}.{sys.version_info.minor}".encode())
    return digest.hexdigest()[:16]


@contextlib.contextmanager
def cache_lock(name: str, wait_s: float = LOCK_WAIT_S) -> Iterator[None]:
    """An exclusive lock shared by every test run on the machine (flock: released if we die)."""
    directory = cache_directory()
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / f"{name}.lock", "w") as handle:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise InstallationError(
                        f"another test run has held {directory / (name + '.lock')} for {wait_s:.0f} s; "
                        "if no other run is going on, delete that file"
                    ) from None
                time.sleep(1)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class ServiceEnvironment:
    """The virtual environment holding Keystone, Placement, Neutron, Glance, Cinder and Nova."""

    def __init__(self, cache: Path | None = None):
        self.cache = cache or cache_directory()
        self.key = requirements_hash()
        self.path = self.cache / f"venv-{self.key}"
        self.marker = self.path / ".stoker-complete"

    def bin(self, name: str) -> Path:
        return self.path / "bin" / name

    def etc(self, project: str) -> Path:
        """Where the wheels install their sample files (api-paste.ini)."""
        return self.path / "etc" / project

    @property
    def ready(self) -> bool:
        return self.marker.exists()

    def ensure(self, log_path: Path) -> float:
        """Build the environment unless a complete one is cached; returns the seconds spent building."""
        if self.ready:
            return 0.0
        with cache_lock("install"):
            # Another run may have finished building while we waited for the lock.
            if self.ready:
                return 0.0
            started = time.monotonic()
            self._build(log_path)
            elapsed = time.monotonic() - started
            self.marker.write_text(json.dumps({"build_seconds": round(elapsed, 1)}))
            return elapsed

    def _build(self, log_path: Path) -> None:
        # An incomplete environment (a build killed half-way) is rebuilt from nothing: scripts
        # carry the environment's absolute path, so it is built in place, never moved.
        shutil.rmtree(self.path, ignore_errors=True)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        # The caller's environment is kept: it carries the machine's proxy and CA settings
        # (SSL_CERT_FILE and the like), which uv needs as much as pip does.
        environment = {
            name: value
            for name, value in os.environ.items()
            if name not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "UV_PYTHON")
        }
        environment.update(
            UV_CACHE_DIR=str(self.cache / "uv-cache"),
            UV_NO_PROGRESS="1",
            PIP_DISABLE_PIP_VERSION_CHECK="1",
        )
        with open(log_path, "a") as log, tempfile.TemporaryDirectory() as scratch:
            # Built from a copy: building in the clone would leave build/ and egg-info behind.
            driver = Path(scratch) / "ml2_noop"
            shutil.copytree(ML2_PACKAGE, driver)
            python = str(self.bin("python"))
            steps = [
                ("create the venv", [sys.executable, "-m", "venv", str(self.path)]),
                ("install uv", [python, "-m", "pip", "install", "-q", UV_REQUIREMENT]),
                (
                    "install the pinned services",
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
                (
                    "install the ML2 driver",
                    [str(self.bin("uv")), "pip", "install", "--python", python, str(driver)],
                ),
            ]
            for what, command in steps:
                log.write(f"\n$ {' '.join(command)}\n")
                log.flush()
                try:
                    result = subprocess.run(
                        command,
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        env=environment,
                        timeout=BUILD_STEP_TIMEOUT_S,
                        check=False,
                    )
                except subprocess.TimeoutExpired:
                    raise InstallationError(
                        f"building the test cloud's venv: '{what}' took over {BUILD_STEP_TIMEOUT_S} s; "
                        f"see {log_path}"
                    ) from None
                if result.returncode != 0:
                    raise InstallationError(
                        f"building the test cloud's venv: '{what}' failed (exit {result.returncode}):\n"
                        f"{tail(log_path)}\nFull log: {log_path}"
                    )


def tail(path: Path, lines: int = 30) -> str:
    """The last lines of a log, for error messages."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    return "\n".join(text.splitlines()[-lines:])
