"""The job queue's schema (procrastinate's, in the store's database) is created once and
brought up to the installed procrastinate by its own migration scripts, on PostgreSQL."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from stoker.job_queue import SCHEMA_MARK_TABLE, ensure_schema, procrastinate_migrations
from stoker.store import Store

pytestmark = pytest.mark.postgres

RETRY = "procrastinate_trigger_function_status_events_update_v1"


@pytest.fixture
def store(postgres_url: str):
    made = Store(postgres_url)
    made.migrate()
    yield made
    made.close()


def _scalar(store: Store, query: str, **parameters):
    with store.engine.connect() as connection:
        return connection.execute(sa.text(query), parameters).scalar()


def test_the_schema_is_made_once_and_marked_with_the_last_migration(store):
    assert ensure_schema(store) == []
    latest = procrastinate_migrations()[-1][0]
    assert _scalar(store, f"SELECT migration FROM {SCHEMA_MARK_TABLE}") == latest
    assert _scalar(store, "SELECT to_regclass('procrastinate_jobs')") is not None
    # A second start changes nothing.
    assert ensure_schema(store) == []
    assert _scalar(store, f"SELECT count(*) FROM {SCHEMA_MARK_TABLE}") == 1


def test_a_schema_behind_the_installed_procrastinate_is_migrated(store):
    ensure_schema(store)
    names = [name for name, _ in procrastinate_migrations()]
    # As if the schema had been made by a procrastinate before the last migration: the
    # mark names the one before it, and what the last one makes is not there.
    with store.engine.begin() as connection:
        connection.execute(sa.text(f"UPDATE {SCHEMA_MARK_TABLE} SET migration = :before"), {"before": names[-2]})
        connection.execute(sa.text("DROP TRIGGER procrastinate_trigger_status_events_update_v1 ON procrastinate_jobs"))
        connection.execute(sa.text(f"DROP FUNCTION {RETRY}"))
    assert _scalar(store, "SELECT to_regproc(:name)", name=RETRY) is None

    assert ensure_schema(store) == [names[-1]]
    assert _scalar(store, "SELECT to_regproc(:name)", name=RETRY) is not None
    assert _scalar(store, f"SELECT migration FROM {SCHEMA_MARK_TABLE}") == names[-1]


def test_a_schema_made_before_the_mark_is_taken_as_current(store):
    ensure_schema(store)
    with store.engine.begin() as connection:
        connection.execute(sa.text(f"DROP TABLE {SCHEMA_MARK_TABLE}"))
    assert ensure_schema(store) == []
    assert _scalar(store, f"SELECT migration FROM {SCHEMA_MARK_TABLE}") == procrastinate_migrations()[-1][0]
