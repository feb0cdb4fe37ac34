"""Barbican's installation for the test cloud's add-on (``barbican.py``): its venv, built
once per pinned set (``barbican-requirements.txt``) beside the cloud's in the cache, and
the configuration files a session writes from the templates here.

It must not start anything (``barbican.py`` does).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from tests.cloud import installation
from tests.support import venv_cache

REQUIREMENTS = Path(__file__).with_name("barbican-requirements.txt")

UWSGI_INI = """\
# barbican-api of the test cloud under uWSGI: one process, four threads (as cloud.py's APIs).
[uwsgi]
http-socket = 127.0.0.1:{port}
paste = config:{paste}
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

BARBICAN_CONF = """\
[DEFAULT]
host_href = {endpoint}
transport_url = {transport_url}
log_file = {log_file}

[database]
connection = {database_url}

[queue]
# Orders go to barbican-worker over RabbitMQ (without it the API would run them itself).
enable = true
topic = {topic}
server_name = {topic}

[secretstore]
enabled_secretstore_plugins = store_crypto

[crypto]
enabled_crypto_plugins = simple_crypto

[simple_crypto_plugin]
kek = {kek}

[keystone_authtoken]
{authentication}

[oslo_policy]
enforce_scope = true
enforce_new_defaults = true
"""


class BarbicanError(Exception):
    """Barbican did not start; the message names the process and ends with its log tail."""


def requirements_hash() -> str:
    return venv_cache.environment_key(
        [REQUIREMENTS.read_bytes(), installation.UV_REQUIREMENT.encode()]
    )


class BarbicanEnvironment:
    """Barbican's own venv: ``<cache>/barbican-venv-<hash>``, built once under a lock."""

    def __init__(self, cache: Path | None = None):
        self.cache = cache or installation.cache_directory()
        self.path = self.cache / f"barbican-venv-{requirements_hash()}"
        self.marker = self.path / ".stoker-complete"

    def bin(self, name: str) -> Path:
        return self.path / "bin" / name

    def ensure(self, log_path: Path) -> float:
        """Build the venv unless a complete one is cached; the seconds spent building."""
        lock = venv_cache.cache_lock(
            self.cache, "barbican-install", installation.LOCK_WAIT_S, BarbicanError
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
                "install Barbican",
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
                "Barbican's venv",
                BarbicanError,
                shown=" ".join,
            )
