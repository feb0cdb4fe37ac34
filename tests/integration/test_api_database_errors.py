"""What the API answers for an error the database itself raised, on real PostgreSQL:
the last line behind the request checks (``api.errors``). A value the database refuses
(a NUL character in text) is a 400, a lost connection a 503; neither shows the SQL, its
parameters or the driver's details, and neither logs a traceback. A resource's or a
stack's failure reason made from such an error shows none of them either."""

from __future__ import annotations

import json
import logging

import pytest
import sqlalchemy as sa

from stoker.api.errors import error_response
from stoker.engine.lifecycle import failure_reason
from stoker.store import tables

pytestmark = pytest.mark.postgres


@pytest.fixture
def engine(postgres_url: str):
    engine = sa.create_engine(postgres_url, pool_pre_ping=True)
    tables.schema().create_all(engine)
    yield engine
    engine.dispose()


def answered(error: BaseException) -> tuple[int, dict]:
    response = error_response(error)
    return response.status_code, json.loads(response.body)


def assert_no_database_text(body: dict) -> None:
    text = json.dumps(body)
    for word in ("SQL", "SELECT", "stacks", "psycopg", "sqlalchemy", "secret-value"):
        assert word not in text, (word, text)


def test_api_database_error_a_value_refused_is_400_without_sql(engine, caplog):
    with pytest.raises(sa.exc.DataError) as refused, engine.connect() as connection:
        connection.execute(sa.select(tables.stacks).where(tables.stacks.c.name == "secret-value\x00"))
    with caplog.at_level(logging.WARNING, "stoker.api.errors"):
        status, body = answered(refused.value)
    assert status == 400 and body["error"]["type"] == "Invalid", body
    assert "NUL character" in body["error"]["message"] and "remove it" in body["error"]["message"], body
    assert_no_database_text(body)
    assert all(record.exc_info is None for record in caplog.records)
    assert not any("secret-value" in record.getMessage() or "SELECT" in record.getMessage() for record in caplog.records)


def test_api_database_error_a_lost_connection_is_503_without_sql(engine, caplog):
    with engine.connect() as connection:
        pid = connection.execute(sa.text("SELECT pg_backend_pid()")).scalar()
        with engine.connect() as killer:
            killer.execute(sa.text("SELECT pg_terminate_backend(:pid)"), {"pid": pid})
        with pytest.raises(sa.exc.OperationalError) as lost:
            connection.execute(sa.select(tables.stacks).where(tables.stacks.c.name == "secret-value"))
    with caplog.at_level(logging.WARNING, "stoker.api.errors"):
        status, body = answered(lost.value)
    assert status == 503, body
    assert_no_database_text(body)
    assert all(record.exc_info is None for record in caplog.records)


def test_api_database_error_a_failure_reason_shows_no_sql(engine):
    with pytest.raises(sa.exc.DataError) as refused, engine.connect() as connection:
        connection.execute(sa.select(tables.stacks).where(tables.stacks.c.name == "secret-value\x00"))
    reason = failure_reason("web", refused.value)
    assert reason == "DataError: resources.web: DataError: PostgreSQL text fields cannot contain NUL (0x00) bytes", reason
