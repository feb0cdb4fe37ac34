"""The machine's shared servers the test cloud leans on: MariaDB and RabbitMQ.

Owns whether they are there (a missing one is a skip, not a failure), and the per-session
databases and vhost: created at start, dropped at stop, dumped and restored for the golden
copy. It goes through the machine's ``mysql``/``mysqldump``/``rabbitmqctl`` clients, so it
needs no driver in stoker's venv. It must not start the cloud's services.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

# The machine's servers; the ports can be moved (STOKER_DEVCLOUD_MARIADB_PORT,
# STOKER_DEVCLOUD_RABBITMQ_PORT) for a machine that runs them elsewhere.
MARIADB_HOST = "127.0.0.1"
MARIADB_PORT = int(os.environ.get("STOKER_DEVCLOUD_MARIADB_PORT", "3306"))
MARIADB_USER = "root"
RABBITMQ_HOST = "127.0.0.1"
RABBITMQ_PORT = int(os.environ.get("STOKER_DEVCLOUD_RABBITMQ_PORT", "5672"))
# Seconds a client command (a dump, a restore, a rabbitmqctl call) may take.
CLIENT_TIMEOUT_S = 300
# The connections MariaDB must accept at once. One cloud's services hold two dozen idle
# (24 measured, no add-ons) and more under load and with the add-ons (each API and worker
# process has its own pool); CI runs two session clouds while a test boots a third, and the
# server's default of 151 refused the third's restore with "1040 - Too many connections".
MARIADB_CONNECTIONS = 1000


class InfrastructureError(Exception):
    """MariaDB or RabbitMQ refused what the cloud needs; the message says which and why."""


def reachable(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


def missing_prerequisites() -> list[str]:
    """What this machine lacks to run the test cloud at all: reasons to skip, not to fail."""
    missing = []
    if not reachable(MARIADB_HOST, MARIADB_PORT):
        missing.append(
            f"MariaDB is not reachable at {MARIADB_HOST}:{MARIADB_PORT} (user {MARIADB_USER}, empty password)"
        )
    if not reachable(RABBITMQ_HOST, RABBITMQ_PORT):
        missing.append(
            f"RabbitMQ is not reachable at {RABBITMQ_HOST}:{RABBITMQ_PORT} (guest/guest)"
        )
    return missing


def _client(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise InfrastructureError(
            f"the '{name}' command is not installed; the test cloud needs it (Debian: mariadb-client / rabbitmq-server)"
        )
    return path


def _run(command: list[str], what: str, stdin=None, stdout=None) -> str:
    try:
        result = subprocess.run(
            command,
            stdin=stdin if stdin is not None else subprocess.DEVNULL,
            stdout=stdout if stdout is not None else subprocess.PIPE,
            stderr=subprocess.PIPE,
            timeout=CLIENT_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise InfrastructureError(
            f"{what}: '{' '.join(command)}' took over {CLIENT_TIMEOUT_S} s"
        ) from None
    if result.returncode != 0:
        raise InfrastructureError(
            f"{what}: '{' '.join(command)}' failed: {result.stderr.decode(errors='replace').strip()}"
        )
    return result.stdout.decode(errors="replace") if stdout is None else ""


class MariaDB:
    """The server at 127.0.0.1:3306, through the ``mysql`` client."""

    url = f"mysql+pymysql://{MARIADB_USER}:@{MARIADB_HOST}:{MARIADB_PORT}"

    def _arguments(self, program: str) -> list[str]:
        return [_client(program), f"-u{MARIADB_USER}", f"-h{MARIADB_HOST}", f"-P{MARIADB_PORT}"]

    def execute(self, sql: str, database: str | None = None) -> str:
        command = [*self._arguments("mysql"), "--batch", "--skip-column-names", "-e", sql]
        if database:
            command.append(database)
        return _run(command, "MariaDB")

    def create(self, names: list[str]) -> None:
        # Raised, never lowered: another session may be running with the same server.
        self.execute(
            f"SET GLOBAL max_connections = GREATEST(@@global.max_connections, {MARIADB_CONNECTIONS})"
        )
        self.execute(
            " ".join(
                f"DROP DATABASE IF EXISTS `{name}`; CREATE DATABASE `{name}` CHARACTER SET utf8mb4;"
                for name in names
            )
        )

    def drop(self, names: list[str]) -> None:
        if names:
            self.execute(" ".join(f"DROP DATABASE IF EXISTS `{name}`;" for name in names))

    def databases(self, prefix: str) -> list[str]:
        escaped = prefix.replace("_", "\\_")
        return self.execute(f"SHOW DATABASES LIKE '{escaped}%'").split()

    def dump(self, name: str, path: Path) -> None:
        with open(path, "wb") as output:
            _run(
                [*self._arguments("mysqldump"), "--single-transaction", "--skip-comments", name],
                f"dumping {name}",
                stdout=output,
            )

    def restore_command(self, name: str) -> list[str]:
        """The command that loads a dump (from stdin) into ``name``; the caller runs several at once."""
        return [*self._arguments("mysql"), name]


class RabbitMQ:
    """The broker at 127.0.0.1:5672, administered with ``rabbitmqctl`` (which needs root here)."""

    def _ctl(self, *arguments: str) -> str:
        return _run([_client("rabbitmqctl"), "-q", *arguments], "RabbitMQ")

    def create_vhost(self, name: str) -> None:
        self.delete_vhost(name)
        self._ctl("add_vhost", name)
        self._ctl("set_permissions", "-p", name, "guest", ".*", ".*", ".*")

    def delete_vhost(self, name: str) -> None:
        try:
            self._ctl("delete_vhost", name)
        except InfrastructureError as error:
            if "does not exist" not in str(error) and "no_such_vhost" not in str(error):
                raise

    def vhosts(self) -> list[str]:
        return self._ctl("list_vhosts", "--no-table-headers").split()

    def transport_url(self, vhost: str) -> str:
        return f"rabbit://guest:guest@{RABBITMQ_HOST}:{RABBITMQ_PORT}/{vhost}"
