"""The Alembic migrations against real databases: they build exactly ``tables.metadata``.

Every test runs on a SQLite file and on PostgreSQL (the ``database_url`` fixture).
"""

from __future__ import annotations

import fcntl
import subprocess
import sys
import textwrap
import time
import uuid
from datetime import datetime
from pathlib import Path

import pytest
import sqlalchemy as sa
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from alembic.script import ScriptDirectory

from stoker.store import StackRecord, Store, migrations, tables
from stoker.store.repository import HEAD_REVISION

STOKER_TABLES = set(tables.metadata.tables)

# Several processes start stoker against one fresh database at the same moment (an API
# server and engine workers brought up together). Each round uses a fresh database.
MIGRATING_PROCESSES = 6
MIGRATION_ROUNDS = 5


def schema_differences(connection: sa.Connection) -> list:
    context = MigrationContext.configure(connection, opts={"compare_type": True, "compare_server_default": True})
    return compare_metadata(context, tables.schema())


def database_revision(connection: sa.Connection) -> str | None:
    return MigrationContext.configure(connection).get_current_revision()


def table_names(store: Store) -> set[str]:
    return set(sa.inspect(store.engine).get_table_names())


def test_migrations_build_the_declared_schema(store: Store) -> None:
    with store.engine.connect() as connection:
        assert schema_differences(connection) == []
    assert table_names(store) == STOKER_TABLES | {"alembic_version"}


def test_migrations_head_revision_matches_script_directory() -> None:
    scripts = ScriptDirectory.from_config(migrations.config())
    assert scripts.get_heads() == [HEAD_REVISION]
    assert scripts.get_current_head() == HEAD_REVISION


def test_migrations_record_head_revision_in_database(store: Store) -> None:
    with store.engine.connect() as connection:
        assert database_revision(connection) == HEAD_REVISION


def test_migrations_downgrade_to_base_then_upgrade_to_head(store: Store) -> None:
    with store.engine.begin() as connection:
        command.downgrade(migrations.config(connection), "base")
    with store.engine.connect() as connection:
        assert database_revision(connection) is None
    assert table_names(store) & STOKER_TABLES == set()

    with store.engine.begin() as connection:
        migrations.upgrade(connection)
    with store.engine.connect() as connection:
        assert database_revision(connection) == HEAD_REVISION
        assert schema_differences(connection) == []

    template_id = store.store_template({"resources": {}}, {}, {})
    stack = StackRecord(str(uuid.uuid4()), "after", "CREATE", "COMPLETE", "", template_id, {}, created_at=datetime(2024, 1, 1))
    store.create_stack(stack)
    assert store.get_stack(stack.id) == stack


def test_store_migrate_upgrades_a_downgraded_database(store: Store) -> None:
    with store.engine.begin() as connection:
        command.downgrade(migrations.config(connection), "base")

    store.migrate()

    with store.engine.connect() as connection:
        assert database_revision(connection) == HEAD_REVISION
        assert schema_differences(connection) == []


def test_store_migrate_leaves_no_tables_behind_when_it_fails(
    database_url: str, request: pytest.FixtureRequest
) -> None:
    store = Store(database_url)
    try:
        # A table in the way makes the migration fail part-way through (after it has
        # created raw_templates, stacks and resources); migrate() is one transaction, so
        # nothing of it may stay. Otherwise every later migrate() fails on "already exists".
        with store.engine.begin() as connection:
            connection.execute(sa.text("CREATE TABLE events (id INTEGER)"))

        with pytest.raises(sa.exc.DBAPIError):
            store.migrate()

        assert table_names(store) == {"events"}
    finally:
        store.close()


_MIGRATE_WHEN_GATE_OPENS = textwrap.dedent(
    """
    import fcntl, sys
    from pathlib import Path
    from stoker.store import Store

    url, ready, gate = sys.argv[1:]
    store = Store(url)
    Path(ready).touch()
    with open(gate) as gate_file:
        fcntl.flock(gate_file, fcntl.LOCK_SH)  # blocks until the test opens the gate
    store.migrate()
    store.close()
    """
)


def migrate_from_processes_at_once(url: str, directory: Path, count: int) -> list[str]:
    """Start ``count`` processes that each call Store(url).migrate() at the same moment;
    return the error output of those that failed."""
    gate = directory / "gate"
    gate.touch()
    with open(gate) as gate_file:
        fcntl.flock(gate_file, fcntl.LOCK_EX)
        processes = [
            subprocess.Popen(
                [sys.executable, "-c", _MIGRATE_WHEN_GATE_OPENS, url, str(directory / f"ready-{index}"), str(gate)],
                stderr=subprocess.PIPE,
                text=True,
            )
            for index in range(count)
        ]
        deadline = time.monotonic() + 60
        while not all((directory / f"ready-{index}").exists() for index in range(count)):
            assert time.monotonic() < deadline, "migrating processes did not start"
            assert all(process.poll() is None for process in processes), "a migrating process died early"
            time.sleep(0.01)
        fcntl.flock(gate_file, fcntl.LOCK_UN)
    failures = []
    for process in processes:
        _, errors = process.communicate(timeout=120)
        if process.returncode != 0:
            failures.append(next((line for line in reversed(errors.strip().splitlines()) if "Error" in line), errors.strip()[-300:]) if errors.strip() else f"exit {process.returncode}")
    return failures


@pytest.mark.slow
@pytest.mark.parametrize("database", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_store_migrate_from_several_processes_at_once_succeeds(
    database: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    for round_number in range(MIGRATION_ROUNDS):
        directory = tmp_path / f"round-{round_number}"
        directory.mkdir()
        if database == "sqlite":
            url = f"sqlite:///{directory / 'stoker.sqlite'}"
        else:
            url = fresh_postgres_url(request)
        failures = migrate_from_processes_at_once(url, directory, MIGRATING_PROCESSES)
        assert failures == [], f"round {round_number}: {len(failures)} of {MIGRATING_PROCESSES} failed: {failures}"
        store = Store(url)
        try:
            with store.engine.connect() as connection:
                assert database_revision(connection) == HEAD_REVISION
                assert schema_differences(connection) == []
        finally:
            store.close()


def fresh_postgres_url(request: pytest.FixtureRequest) -> str:
    """A schema of its own, as the ``postgres_url`` fixture makes (which gives one per test)."""
    server = request.getfixturevalue("postgres_server")
    schema = f"stoker_test_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(server)
    with admin.begin() as connection:
        connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))

    def drop() -> None:
        with admin.begin() as connection:
            connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()

    request.addfinalizer(drop)
    separator = "&" if "?" in server else "?"
    return f"{server}{separator}options=-csearch_path%3D{schema}"


def test_migration_0006_keeps_data_renames_duplicate_names_and_never_reuses_ids(database_url: str) -> None:
    store = Store(database_url)
    try:
        with store.engine.begin() as connection:
            migrations.upgrade(connection, "0005")
            templates = [connection.execute(tables.raw_templates.insert().values(template={}, files={}, environment={}, created_at=datetime(2024, 1, 1))).inserted_primary_key[0] for _ in range(3)]
            # Two live stacks with one name: the race 0006 closes had made them.
            for number, name in enumerate(["twin", "twin", "single"]):
                connection.execute(
                    sa.text(
                        "INSERT INTO stacks (id, name, action, status, status_reason, raw_template_id, parameters, disable_rollback, tags, project_id, created_at, nested_depth)"
                        " VALUES (:id, :name, 'CREATE', 'COMPLETE', '', :template, '{}', true, '[]', '', :created, 0)"
                    ),
                    {"id": f"stack-{number}", "name": name, "template": templates[number], "created": datetime(2024, 1, 1 + number)},
                )
        store.migrate()
        with store.engine.connect() as connection:
            assert database_revision(connection) == HEAD_REVISION
            names = dict(connection.execute(sa.text("SELECT id, name FROM stacks")).all())
        assert names == {"stack-0": "twin", "stack-1": "twin-stack-1", "stack-2": "single"}
        assert [store.get_template(template_id).id for template_id in templates] == templates
        # The last template's id is not handed out again once its row is gone.
        with store.engine.begin() as connection:
            connection.execute(tables.stacks.delete().where(tables.stacks.c.id == "stack-2"))
            connection.execute(tables.raw_templates.delete().where(tables.raw_templates.c.id == templates[-1]))
        assert store.store_template({}, {}, {}) > templates[-1]
    finally:
        store.close()


def test_migration_0013_tenancy_clears_stack_user_projects_another_project_named(database_url: str) -> None:
    store = Store(database_url)
    try:
        with store.engine.begin() as connection:
            migrations.upgrade(connection, "0012")
            insert = sa.text(
                "INSERT INTO software_deployments (id, config_id, server_id, tenant, stack_user_project_id, created_at)"
                " VALUES (:id, 'config', 'server-of-a', :tenant, :users, :created)"
            )
            # B's deployment naming A's project (the hole), A's naming its own, and one naming none.
            for deployment_id, tenant, users in (("injected", "b", "a"), ("own", "a", "a"), ("plain", "a", None)):
                connection.execute(insert, {"id": deployment_id, "tenant": tenant, "users": users, "created": datetime(2026, 1, 1)})
        store.migrate()
        with store.engine.connect() as connection:
            assert database_revision(connection) == HEAD_REVISION
            kept = dict(connection.execute(sa.text("SELECT id, stack_user_project_id FROM software_deployments")).all())
        assert kept == {"injected": None, "own": "a", "plain": None}
        # So A's server no longer lists B's deployment; B still has it.
        assert [d.id for d in store.software_configs.list_software_deployments(server_id="server-of-a", project="a")] == ["own", "plain"]
        assert [d.id for d in store.software_configs.list_software_deployments(project="b")] == ["injected"]
    finally:
        store.close()


def test_migration_0014_moves_the_embedded_engines_stacks_to_the_default_project(database_url: str) -> None:
    store = Store(database_url)
    try:
        with store.engine.begin() as connection:
            migrations.upgrade(connection, "0013_jobs")
            template = connection.execute(tables.raw_templates.insert().values(template={}, files={}, environment={}, created_at=datetime(2024, 1, 1))).inserted_primary_key[0]
            insert = sa.text(
                "INSERT INTO stacks (id, name, action, status, status_reason, raw_template_id, parameters, disable_rollback, tags, project_id, created_at, nested_depth, owner_id)"
                " VALUES (:id, :name, 'CREATE', 'COMPLETE', '', :template, '{}', true, '[]', :project, :created, :depth, :owner)"
            )
            # The embedded engine's stacks (one with a nested stack), one whose name a
            # server's stack in 'default' already has (with its nested stack), and another project's.
            for stack_id, name, project, owner in (
                ("embedded", "web", "", None), ("embedded-child", "web-group-x", "", "embedded"),
                ("clash", "db", "", None), ("clash-child", "db-group-y", "", "clash"),
                ("served", "db", "default", None), ("other", "web", "other", None),
            ):  # fmt: skip
                connection.execute(insert, {"id": stack_id, "name": name, "template": template, "project": project, "created": datetime(2024, 1, 1), "depth": 1 if owner else 0, "owner": owner})
            connection.execute(
                sa.text("INSERT INTO software_config (id, name, \"group\", config, tenant, created_at) VALUES ('config', 'c', 'script', '{}', '', :created)"),
                {"created": datetime(2024, 1, 1)},
            )
        store.migrate()
        with store.engine.connect() as connection:
            assert database_revision(connection) == HEAD_REVISION
            projects = dict(connection.execute(sa.text("SELECT id, project_id FROM stacks")).all())
            tenants = [row[0] for row in connection.execute(sa.text("SELECT tenant FROM software_config"))]
        assert projects == {
            "embedded": "default", "embedded-child": "default", "clash": "", "clash-child": "", "served": "default", "other": "other",
        }  # fmt: skip
        assert tenants == ["default"]
    finally:
        store.close()
