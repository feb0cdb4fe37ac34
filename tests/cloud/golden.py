"""The golden copy: the test cloud's databases as the first start left them, migrated and
registered, so later starts restore them in a second instead of migrating for a minute.

Owns where the copy lives (keyed by the pinned requirements' hash, like the venv), saving it
(mysqldump of each database, Keystone's keys) and restoring it into a new
session's databases, rewriting what differs per session: the catalog's URLs and Nova's cell
mappings. It must not start services.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

from tests.cloud.infrastructure import MariaDB
from tests.cloud.installation import ServiceEnvironment, cache_lock

# Bumped when what the golden copy holds changes, so old copies are not restored.
GOLDEN_FORMAT = 2  # 2: Keystone's database in MariaDB, no SQLite file
# Seconds loading one dump may take.
RESTORE_TIMEOUT_S = 600


class GoldenCopyError(Exception):
    """The copy could not be loaded; the message says which database and how to rebuild it."""


# What the initialised databases are made from besides the pinned services: the services'
# configuration, and the catalog, users and databases our registration creates.
_MADE_FROM = (
    Path(__file__).parent / "configuration",
    Path(__file__).parent / "identity.py",
    Path(__file__).parent / "services.py",
    Path(__file__).parent / "cloud.py",
)


def _made_from_hash() -> str:
    digest = hashlib.sha256()
    for source in _MADE_FROM:
        for path in sorted(source.rglob("*")) if source.is_dir() else [source]:
            if path.is_file():
                digest.update(path.name.encode())
                digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


def golden_directory(environment: ServiceEnvironment) -> Path:
    """Where the initialised databases of this set of pinned services, made by this
    version of our configuration and registration, are kept (a change to either makes a
    new copy rather than restoring a stale one)."""
    return environment.cache / f"golden-{environment.key}-{_made_from_hash()}-v{GOLDEN_FORMAT}"


def save(
    golden: Path, mariadb: MariaDB, databases: dict[str, str], keystone_directory: Path
) -> None:
    """Dump ``databases`` (name in the copy -> this session's database) and Keystone's files.

    Written aside and renamed into place under a lock: two first starts at once save one copy,
    and a start never restores half a copy.
    """
    with cache_lock("golden"):
        if (golden / "complete").exists():
            return
        building = golden.with_name(golden.name + f".building-{os.getpid()}")
        shutil.rmtree(building, ignore_errors=True)
        building.mkdir(parents=True)
        for name, database in databases.items():
            mariadb.dump(database, building / f"{name}.sql")
        shutil.copytree(keystone_directory, building / "keystone")
        (building / "complete").write_text(json.dumps({"format": GOLDEN_FORMAT}))
        shutil.rmtree(golden, ignore_errors=True)
        building.rename(golden)


def restore(
    golden: Path,
    mariadb: MariaDB,
    databases: dict[str, str],
    keystone_directory: Path,
    endpoints: dict[str, str],
    cells: dict[str, dict[str, str]],
) -> None:
    """Load the copy into this session's ``databases`` (all at once) and Keystone directory.

    ``endpoints`` maps service types to this session's URLs; ``cells`` maps Nova's cell names
    to the columns of their cell mapping (database_connection, transport_url).
    """
    shutil.rmtree(keystone_directory, ignore_errors=True)
    shutil.copytree(golden / "keystone", keystone_directory)
    loads = []
    for name, database in databases.items():
        dump = open(golden / f"{name}.sql", "rb")  # noqa: SIM115 - closed below, after the load
        load = subprocess.Popen(
            mariadb.restore_command(database),
            stdin=dump,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        loads.append((name, dump, load))
    failures = []
    for name, dump, load in loads:
        try:
            _, error = load.communicate(timeout=RESTORE_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            load.kill()
            _, error = load.communicate()
        dump.close()
        if load.returncode != 0:
            failures.append(
                f"restoring {name} from {golden}: {error.decode(errors='replace').strip()}"
            )
    if failures:
        raise GoldenCopyError(
            "\n".join(failures)
            + f"\nDelete {golden} (python -m tests.cloud forget-golden) to rebuild it."
        )
    # The copy was made by another session: its ports, databases and vhost were not ours.
    statements = [
        f"UPDATE endpoint SET url = '{url}' WHERE service_id IN "
        f"(SELECT id FROM service WHERE type = '{service_type}');"
        for service_type, url in endpoints.items()
    ]
    mariadb.execute(" ".join(statements), database=databases["keystone"])
    statements = []
    for cell, columns in cells.items():
        assignments = ", ".join(f"{column} = '{value}'" for column, value in columns.items())
        statements.append(f"UPDATE cell_mappings SET {assignments} WHERE name = '{cell}';")
    mariadb.execute(" ".join(statements), database=databases["nova_api"])
