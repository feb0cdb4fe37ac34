"""The test cloud's databases: every service's schema made by its own manage command,
six chains at once (a mixin of ``cloud.DevCloud``, which gives the directories, the
services' environment and MariaDB).

What it must not do: start services (``cloud.py``) or write their configuration
(``services.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from tests.cloud import identity
from tests.cloud.addons._service import run_command
from tests.cloud.infrastructure import MariaDB
from tests.cloud.installation import ServiceEnvironment

# Seconds one database migration chain may take.
MIGRATION_TIMEOUT_S = 900


class CloudDatabases:
    """Migrations of a ``DevCloud``'s services."""

    directory: Path
    etc: Path
    logs: Path
    environment: ServiceEnvironment
    mariadb: MariaDB
    database_prefix: str
    keystone_url: str
    _service_environment: Callable[[], dict[str, str]]

    def _keystone_manage(self) -> list[str]:
        return [
            str(self.environment.bin("keystone-manage")),
            "--config-file",
            str(self.etc / "keystone" / "keystone.conf"),
        ]

    def _nova_manage(self) -> list[str]:
        return [
            str(self.environment.bin("nova-manage")),
            "--config-file",
            str(self.etc / "nova" / "nova.conf"),
            "--config-file",
            str(self.etc / "nova" / "nova-db.conf"),
        ]

    def _manage(self, what: str, command: list[str], log: Path | None = None) -> None:
        from tests.cloud.cloud import CloudError

        run_command(
            what,
            command,
            log=log or self.logs / "manage.out",
            directory=self.directory,
            environment=self._service_environment(),
            timeout_s=MIGRATION_TIMEOUT_S,
            error=CloudError,
            label="",
        )

    def _migrate(self) -> None:
        """Every service's schema, six chains at once (about a minute on two cores)."""
        from tests.cloud.cloud import CloudError

        keystone_user = ["--keystone-user", "root", "--keystone-group", "root"]
        cell0 = f"{self.mariadb.url}/{self.database_prefix}nova_cell0"
        chains = {
            "keystone": [
                [*self._keystone_manage(), "db_sync"],
                [*self._keystone_manage(), "fernet_setup", *keystone_user],
                [*self._keystone_manage(), "credential_setup", *keystone_user],
                [
                    *self._keystone_manage(),
                    "bootstrap",
                    "--bootstrap-password",
                    identity.ADMIN_PASSWORD,
                    "--bootstrap-region-id",
                    identity.REGION,
                    "--bootstrap-admin-url",
                    self.keystone_url,
                    "--bootstrap-public-url",
                    self.keystone_url,
                    "--bootstrap-internal-url",
                    self.keystone_url,
                ],
            ],
            "placement": [
                [
                    str(self.environment.bin("placement-manage")),
                    "--config-dir",
                    str(self.etc / "placement"),
                    "db",
                    "sync",
                ]
            ],
            "neutron": [
                [
                    str(self.environment.bin("neutron-db-manage")),
                    "--config-file",
                    str(self.etc / "neutron" / "neutron.conf"),
                    "--config-file",
                    str(self.etc / "neutron" / "ml2_conf.ini"),
                    "upgrade",
                    "heads",
                ]
            ],
            "glance": [
                [
                    str(self.environment.bin("glance-manage")),
                    "--config-file",
                    str(self.etc / "glance" / "glance-api.conf"),
                    "db_sync",
                ]
            ],
            "cinder": [
                [
                    str(self.environment.bin("cinder-manage")),
                    "--config-file",
                    str(self.etc / "cinder" / "cinder.conf"),
                    "db",
                    "sync",
                ]
            ],
            "nova": [
                [*self._nova_manage(), "api_db", "sync"],
                [*self._nova_manage(), "cell_v2", "map_cell0", "--database_connection", cell0],
                [*self._nova_manage(), "cell_v2", "create_cell", "--name", "cell1"],
                [*self._nova_manage(), "db", "sync"],
            ],
        }
        failures: list[str] = []

        def run(project: str, commands: list[list[str]]) -> None:
            try:
                for command in commands:
                    self._manage(
                        f"{project} database setup ('{' '.join(command[1:2] + command[-2:])}')",
                        command,
                        self.logs / f"{project}-manage.out",
                    )
            except CloudError as error:
                failures.append(str(error))

        threads = [threading.Thread(target=run, args=item) for item in chains.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        if failures:
            raise CloudError("\n\n".join(failures))
