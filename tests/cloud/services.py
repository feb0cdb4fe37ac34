"""What each service of the test cloud is: its configuration files, generated from the
templates in ``configuration/`` for one session, and its command line and logs.

Owns the per-service facts the recipe established (which options matter, how each API runs
under uWSGI, which processes may see the databases). It must not start anything.
"""

from __future__ import annotations

import shutil
import string
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tests.cloud import identity
from tests.cloud.installation import CLOUD_DIRECTORY

if TYPE_CHECKING:
    from tests.cloud.cloud import DevCloud

TEMPLATES = CLOUD_DIRECTORY / "configuration"
# Our Nova virt and Cinder volume drivers (see each module): on the services' PYTHONPATH.
DRIVERS = CLOUD_DIRECTORY / "drivers"
APIS = ["keystone", "placement", "neutron", "glance", "cinder", "nova"]


@dataclass
class Process:
    """One long-running process of the cloud; ``output`` is its stdout and stderr."""

    name: str
    command: list[str]
    output: Path
    logs: list[Path]
    popen: subprocess.Popen | None = None


def write_configuration(cloud: DevCloud) -> dict[str, Process]:
    """Write every configuration file of ``cloud``'s session; return its processes by name."""
    processes: dict[str, Process] = {}
    values = {
        "venv": str(cloud.environment.path),
        "data": str(cloud.data),
        "logs": str(cloud.logs),
        "mysql": cloud.mariadb.url,
        "database_prefix": cloud.database_prefix,
        "transport_url": cloud.rabbitmq.transport_url(cloud.vhost),
        "host": cloud.host,
        "keystone_url": cloud.keystone_url,
        "cloud_name": cloud.cloud_name,
        "admin_password": identity.ADMIN_PASSWORD,
        "demo_password": identity.DEMO_PASSWORD,
    }
    for user in ("placement", "neutron", "glance", "cinder", "nova"):
        values[f"service_auth_{user}"] = identity.service_authentication(user, cloud.keystone_url)
    files = {
        "keystone/keystone.conf": "keystone.conf",
        "placement/placement.conf": "placement.conf",
        "neutron/neutron.conf": "neutron.conf",
        "neutron/ml2_conf.ini": "ml2_conf.ini",
        "glance/glance-api.conf": "glance-api.conf",
        "cinder/cinder.conf": "cinder.conf",
        "nova/nova.conf": "nova.conf",
        "nova/nova-db.conf": "nova-db.conf",
        "clouds.yaml": "clouds.yaml",
    }
    for target, template in files.items():
        render(template, cloud.etc / target, values)
    cloud.clouds_yaml.chmod(0o600)
    shutil.copy(
        cloud.environment.etc("nova") / "api-paste.ini", cloud.etc / "nova" / "api-paste.ini"
    )

    uwsgi_extra = {
        "keystone": [f"env = OS_KEYSTONE_CONFIG_DIR={cloud.etc}/keystone"],
        "placement": [f"env = OS_PLACEMENT_CONFIG_DIR={cloud.etc}/placement"],
        "neutron": [
            f"env = OS_NEUTRON_CONFIG_DIR={cloud.etc}/neutron",
            "env = OS_NEUTRON_CONFIG_FILES=neutron.conf;ml2_conf.ini",
        ],
        # Glance streams image data: chunked uploads and raw bodies, bigger headers.
        "glance": [
            f"env = OS_GLANCE_CONFIG_DIR={cloud.etc}/glance",
            "http-auto-chunked = true",
            "http-raw-body = true",
            "chunked-input-limit = 10485760",
        ],
        "cinder": [
            f"pyargv = --config-file {cloud.etc}/cinder/cinder.conf --log-file {cloud.logs}/cinder-api.log"
        ],
        "nova": [
            f"env = OS_NOVA_CONFIG_DIR={cloud.etc}/nova",
            # Nova's WSGI app loads its paste pipeline from the FIRST of these files.
            "env = OS_NOVA_CONFIG_FILES=api-paste.ini;nova.conf;nova-db.conf",
            f"pyargv = --log-file {cloud.logs}/nova-api.log",
        ],
    }
    modules = {
        "keystone": "keystone.wsgi.api:application",
        "placement": "placement.wsgi.api:application",
        "neutron": "neutron.wsgi.api:application",
        "glance": "glance.wsgi.api:application",
        "cinder": "cinder.wsgi.api:application",
        "nova": "nova.wsgi.osapi_compute:application",
    }
    for api in APIS:
        render(
            "uwsgi.ini",
            cloud.etc / api / "uwsgi.ini",
            {
                "port": str(cloud.ports[api]),
                "module": modules[api],
                "venv": str(cloud.environment.path),
                "extra": "\n".join(uwsgi_extra[api]),
            },
        )

    cinder = ["--config-file", f"{cloud.etc}/cinder/cinder.conf"]
    nova = ["--config-file", f"{cloud.etc}/nova/nova.conf"]
    nova_with_database = [*nova, "--config-file", f"{cloud.etc}/nova/nova-db.conf"]
    service_logs = {
        "keystone-api": ["keystone.log"],
        "placement-api": ["placement.log"],
        "neutron-api": ["neutron.log"],
        "glance-api": ["glance.log"],
        "cinder-api": ["cinder-api.log"],
        "nova-api": ["nova-api.log"],
    }
    for api in APIS:
        name = f"{api}-api"
        processes[name] = Process(
            name,
            [str(cloud.environment.bin("uwsgi")), "--ini", str(cloud.etc / api / "uwsgi.ini")],
            cloud.logs / f"{name}.out",
            [cloud.logs / log for log in service_logs[name]],
        )
    for name, arguments in (
        ("cinder-scheduler", cinder),
        ("cinder-volume", cinder),
        ("cinder-backup", cinder),
        ("nova-conductor", nova_with_database),
        ("nova-scheduler", nova_with_database),
    ):
        processes[name] = Process(
            name,
            [str(cloud.environment.bin(name)), *arguments],
            cloud.logs / f"{name}.out",
            [cloud.logs / f"{name}.log"],
        )
    # nova-compute through our module, which registers its virt driver where Nova looks
    # (nova.virt) first; named by --log-file, since the log is named after the script.
    processes["nova-compute"] = Process(
        "nova-compute",
        [
            str(cloud.environment.bin("python")),
            "-m",
            "stoker_devcloud_compute",
            *nova,
            "--log-file",
            str(cloud.logs / "nova-compute.log"),
        ],
        cloud.logs / "nova-compute.out",
        [cloud.logs / "nova-compute.log"],
    )
    return processes


def render(template: str, target: Path, values: dict[str, str]) -> None:
    # substitute(), not safe_substitute(): a misspelt placeholder fails here, not in a service.
    text = string.Template((TEMPLATES / template).read_text()).substitute(values)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
