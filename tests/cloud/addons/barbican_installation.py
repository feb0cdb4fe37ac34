"""Barbican's installation for the test cloud's add-on (``barbican.py``): its venv, built
once per pinned set (``barbican-requirements.txt``) beside the cloud's in the cache, and
the configuration files a session writes from the templates here.

It must not start anything (``barbican.py`` does).
"""

from __future__ import annotations

from pathlib import Path

from tests.cloud import installation
from tests.cloud.addons._service import ServiceVenv
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


def barbican_venv(cache: Path | None = None) -> ServiceVenv:
    """Barbican's own venv: ``<cache>/barbican-venv-<hash>``, built once under a lock."""
    return ServiceVenv(
        REQUIREMENTS,
        directory="barbican-venv-{key}",
        lock="barbican-install",
        log="barbican-install.log",
        what="Barbican",
        error=BarbicanError,
        cache=cache,
    )
