"""Horizon with heat-dashboard, as a user who keeps Horizon runs it, in front of stoker (issue 33).

Owns Horizon's virtual environment, built once per pinned set and cached outside the clone
(``~/.cache/stoker/horizon``, as ``tempest.py`` caches Heat's API test suite), the settings it is
installed with (``horizon_local_settings.py`` as ``openstack_dashboard/local/local_settings.py``,
heat-dashboard's ``enabled`` files copied into ``openstack_dashboard/local/enabled``, as
heat-dashboard's install guide says), and one Horizon server on 127.0.0.1 (Django's
``runserver``). It must not start stoker or the test cloud, and never installs into stoker's own
venv: Horizon's Django and oslo pins are not stoker's.
"""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.support import venv_cache

# What is tested with: the releases issue 33 names. The key of the cached environment is made of
# these, the full pinned set (constraints/horizon.txt) and the settings file.
HORIZON_REQUIREMENTS = ("horizon==27.0.0", "heat-dashboard==16.0.0")
SETTINGS = Path(__file__).with_name("horizon_local_settings.py")
BUILD_STEP_TIMEOUT_S = 900
LOCK_WAIT_S = 1200
# Seconds Horizon's runserver gets to answer its login page.
START_TIMEOUT_S = 60


class HorizonInstallationError(Exception):
    """Horizon's environment could not be built; the message names the step and its log."""


class HorizonUnavailableError(HorizonInstallationError):
    """The package index could not be reached: Horizon cannot be installed on this machine."""


def horizon_key() -> str:
    parts = [*(requirement.encode() + b"\n" for requirement in HORIZON_REQUIREMENTS), venv_cache.constraints_file("horizon").read_bytes(), SETTINGS.read_bytes()]
    return venv_cache.environment_key(parts)


class HorizonEnvironment:
    """The cached venv with Horizon, heat-dashboard and its enabled files."""

    def __init__(self, cache: Path | None = None):
        self.cache = cache or venv_cache.cache_directory("horizon")
        self.key = horizon_key()
        self.path = self.cache / f"horizon-{self.key}"
        self.venv = self.path / "venv"
        self.marker = self.path / ".stoker-complete"

    @property
    def python(self) -> Path:
        return self.venv / "bin" / "python"

    def ensure(self, log_path: Path) -> HorizonEnvironment:
        lock = venv_cache.cache_lock(self.cache, f"horizon-{self.key}", LOCK_WAIT_S, HorizonInstallationError)
        venv_cache.build_once(self.marker, lock, lambda: self._build(log_path))
        return self

    def _build(self, log_path: Path) -> None:
        shutil.rmtree(self.path, ignore_errors=True)
        self.path.mkdir(parents=True)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        python = str(self.python)
        # Where heat-dashboard's install guide puts things: its enabled files and the
        # local_settings in openstack_dashboard/local.
        place = (
            "import glob, shutil, sys, heat_dashboard, openstack_dashboard; from pathlib import Path; "
            "local = Path(openstack_dashboard.__file__).parent / 'local'; "
            "[shutil.copy(name, local / 'enabled') for name in glob.glob(str(Path(heat_dashboard.__file__).parent / 'enabled' / '_16*.py'))]; "
            "shutil.copy(sys.argv[1], local / 'local_settings.py')"
        )
        steps = [
            ("create the venv", None, [sys.executable, "-m", "venv", str(self.venv)]),
            (
                "install Horizon and heat-dashboard",
                ", ".join(HORIZON_REQUIREMENTS),
                [python, "-m", "pip", "install", "-q", "--retries", "2", "--timeout", "60", "-c", str(venv_cache.constraints_file("horizon")), *HORIZON_REQUIREMENTS],
            ),
            ("enable heat-dashboard and install the settings", None, [python, "-c", place, str(SETTINGS)]),
        ]
        with open(log_path, "a") as log:
            venv_cache.run_steps(steps, log, log_path, venv_cache.outside_environment(), BUILD_STEP_TIMEOUT_S, "Horizon's venv", HorizonInstallationError, HorizonUnavailableError)


def require_horizon(log_path: Path) -> HorizonEnvironment:
    """Horizon's environment, built if need be; skips the test if the index is unreachable."""
    import pytest

    try:
        return HorizonEnvironment().ensure(log_path)
    except HorizonUnavailableError as error:
        pytest.skip(f"Horizon ({', '.join(HORIZON_REQUIREMENTS)}) cannot be installed: {error}")


class Horizon:
    """One Horizon (``django-admin runserver``) on 127.0.0.1, against a Keystone."""

    def __init__(self, environment: HorizonEnvironment, keystone_url: str, directory: Path, port: int):
        self.environment = environment
        self.keystone_url = keystone_url
        self.directory = directory
        self.url = f"http://127.0.0.1:{port}"
        self.port = port
        self.log_path = directory / "horizon.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Horizon:
        self.directory.mkdir(parents=True, exist_ok=True)
        environment = venv_cache.outside_environment()
        environment.update(
            DJANGO_SETTINGS_MODULE="openstack_dashboard.settings",
            STOKER_HORIZON_SECRET_KEY=secrets.token_urlsafe(32),
            STOKER_HORIZON_KEYSTONE_URL=self.keystone_url,
            STOKER_HORIZON_DATA=str(self.directory),
            no_proxy="127.0.0.1,localhost",
            NO_PROXY="127.0.0.1,localhost",
        )
        django_admin = str(self.environment.venv / "bin" / "django-admin")
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [django_admin, "runserver", "--noreload", "--insecure", f"127.0.0.1:{self.port}"],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=environment,
                cwd=self.directory,
                start_new_session=True,
            )
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.process.poll() is not None:
                raise HorizonInstallationError(f"Horizon exited with {self.process.returncode}:\n{venv_cache.tail(self.log_path)}")
            try:
                with urllib.request.urlopen(f"{self.url}/auth/login/", timeout=5) as response:
                    if response.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                raise HorizonInstallationError(f"Horizon did not answer within {START_TIMEOUT_S} s:\n{venv_cache.tail(self.log_path)}")
            time.sleep(0.5)

    def stop(self) -> str:
        """Stops Horizon; returns its log."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, 15)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, 9)
                self.process.wait()
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
