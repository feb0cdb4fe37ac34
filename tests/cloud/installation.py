"""The test cloud's own virtual environment: built once per pinned set, cached outside the clone.

Owns the cache directory, the hash that keys everything cached there (the environment and the
golden database copy), the file locks that let two test runs share that cache, and building the
environment. It must not start services (``cloud.py`` does) and never touches stoker's own venv:
the services' 180 pinned packages would clash with stoker's dependencies.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

from tests.support import venv_cache
from tests.support.venv_cache import tail  # noqa: F401 - cloud.py takes it from here

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
    return venv_cache.cache_directory("devcloud")


def requirements_hash() -> str:
    """What the environment is built from: the pins, our ML2 driver and the Python version."""
    return venv_cache.environment_key(_requirements_parts())


def _requirements_parts() -> Iterator[bytes]:
    yield REQUIREMENTS.read_bytes()
    yield UV_REQUIREMENT.encode()
    for path in sorted(ML2_PACKAGE.iterdir()):
        if path.is_file():
            yield path.name.encode()
            yield path.read_bytes()


def cache_lock(name: str, wait_s: float = LOCK_WAIT_S) -> AbstractContextManager[None]:
    """An exclusive lock shared by every test run on the machine (flock: released if we die)."""
    return venv_cache.cache_lock(cache_directory(), name, wait_s, InstallationError)


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
        return venv_cache.build_once(self.marker, cache_lock("install"), lambda: self._build(log_path))

    def _build(self, log_path: Path) -> None:
        # An incomplete environment (a build killed half-way) is rebuilt from nothing: scripts
        # carry the environment's absolute path, so it is built in place, never moved.
        shutil.rmtree(self.path, ignore_errors=True)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        # The caller's environment is kept: it carries the machine's proxy and CA settings
        # (SSL_CERT_FILE and the like), which uv needs as much as pip does.
        environment = venv_cache.outside_environment(("UV_PYTHON",))
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
                ("create the venv", None, [sys.executable, "-m", "venv", str(self.path)]),
                ("install uv", None, [python, "-m", "pip", "install", "-q", UV_REQUIREMENT]),
                (
                    "install the pinned services",
                    None,
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
                    None,
                    [str(self.bin("uv")), "pip", "install", "--python", python, str(driver)],
                ),
            ]
            venv_cache.run_steps(
                steps,
                log,
                log_path,
                environment,
                BUILD_STEP_TIMEOUT_S,
                "the test cloud's venv",
                InstallationError,
                shown=" ".join,
            )
