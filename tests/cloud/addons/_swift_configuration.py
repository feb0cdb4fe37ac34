"""The parts of Swift's test-cloud recipe that start nothing (``swift.py`` starts it):
its venv (``swift-requirements.txt``, in the cloud's cache), the configuration files of
one session (``swift.conf``, the proxy's paste pipeline, the three storage servers),
the check that the filesystem takes user extended attributes, and the idempotent
registration of its service user, service and endpoints in Keystone.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from tests.cloud import identity
from tests.cloud.addons._service import ServiceVenv, register_service
from tests.cloud.cloud import CloudError
from tests.cloud.installation import InstallationError

REQUIREMENTS = Path(__file__).with_name("swift-requirements.txt")
SERVERS = ("account", "container", "object")
# The service user's name and the catalog's entry.
SERVICE_USER, SERVICE_NAME, SERVICE_TYPE = "swift", "swift", "object-store"
# The project's members may operate their account (and so set its temp-URL keys).
OPERATOR_ROLES = "admin, member"


class SwiftError(CloudError):
    """Swift did not start; the message names the server and ends with its log tail."""


def swift_venv() -> ServiceVenv:
    """The venv holding Swift and keystonemiddleware, in the cloud's cache."""
    return ServiceVenv(
        REQUIREMENTS,
        directory="venv-swift-{key}",
        lock="install-swift",
        log="install-swift.log",
        what="Swift",
        error=InstallationError,
    )


def check_user_xattrs(directory: Path) -> None:
    """Swift's object server keeps metadata in ``user.*`` extended attributes."""
    probe = directory / ".xattr-probe"
    probe.write_text("")
    try:
        os.setxattr(probe, "user.stoker", b"1")
    except OSError as error:
        raise SwiftError(
            f"Swift: the filesystem of {directory} does not take user extended attributes ({error}); "
            "Swift's object server needs them (mount it with user_xattr, or put the test's temporary "
            "directory on a filesystem that has them)"
        ) from None
    finally:
        probe.unlink(missing_ok=True)


def configuration(directory: Path, ports: dict[str, int], keystone_url: str) -> dict[str, str]:
    """File name -> text of every configuration file of the session."""
    etc, devices = directory / "etc", directory / "data" / "devices"
    common = "\n".join(
        [
            "[DEFAULT]",
            "bind_ip = 127.0.0.1",
            "workers = 0",
            # Swift drops to user "swift" by default; the tests run as whoever they run as.
            f"user = {_user_name()}",
            f"swift_dir = {etc}",
            f"devices = {devices}",
            "mount_check = false",
            "log_level = INFO",
        ]
    )
    files = {
        "swift.conf": "\n".join(
            [
                "[swift-hash]",
                f"swift_hash_path_suffix = stoker-{secrets.token_hex(8)}",
                "swift_hash_path_prefix = stoker",
                "[storage-policy:0]",
                "name = Policy-0",
                "default = yes",
            ]
        ),
    }
    for server in SERVERS:
        files[f"{server}-server.conf"] = "\n".join(
            [
                common,
                f"bind_port = {ports[server]}",
                "[pipeline:main]",
                f"pipeline = healthcheck {server}-server",
                "[filter:healthcheck]",
                "use = egg:swift#healthcheck",
                f"[app:{server}-server]",
                f"use = egg:swift#{server}",
                "",
            ]
        )
    files["proxy-server.conf"] = "\n".join(
        [
            common,
            f"bind_port = {ports['proxy']}",
            "[pipeline:main]",
            # tempurl before the auth middlewares (a temp URL needs no token); legacy
            # versioned writes for Heat's signal handles (X-Versions-Location).
            "pipeline = catch_errors gatekeeper healthcheck proxy-logging listing_formats tempurl "
            "authtoken keystoneauth copy dlo versioned_writes proxy-logging proxy-server",
            "[app:proxy-server]",
            "use = egg:swift#proxy",
            "account_autocreate = true",
            "[filter:authtoken]",
            "paste.filter_factory = keystonemiddleware.auth_token:filter_factory",
            "delay_auth_decision = true",
            identity.service_authentication(SERVICE_USER, keystone_url),
            "[filter:keystoneauth]",
            "use = egg:swift#keystoneauth",
            f"operator_roles = {OPERATOR_ROLES}",
            "[filter:tempurl]",
            "use = egg:swift#tempurl",
            "[filter:versioned_writes]",
            "use = egg:swift#versioned_writes",
            "allow_versioned_writes = true",
            *(
                f"[filter:{name}]\nuse = egg:swift#{egg}"
                for name, egg in (
                    ("catch_errors", "catch_errors"),
                    ("gatekeeper", "gatekeeper"),
                    ("healthcheck", "healthcheck"),
                    ("proxy-logging", "proxy_logging"),
                    ("listing_formats", "listing_formats"),
                    ("copy", "copy"),
                    ("dlo", "dlo"),
                )
            ),
            "",
        ]
    )
    return files


def _user_name() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


def register(keystone_url: str, endpoint: str, root: str) -> None:
    """Swift's service user (admin in project ``service``), its service and its three
    endpoints (the admin one without the account); idempotent, and an endpoint of an
    earlier start is pointed at this one."""
    register_service(
        keystone_url,
        user=SERVICE_USER,
        name=SERVICE_NAME,
        service_type=SERVICE_TYPE,
        endpoints={"public": endpoint, "internal": endpoint, "admin": root},
        roles=("admin",),
    )
