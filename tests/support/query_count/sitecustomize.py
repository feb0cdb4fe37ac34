"""Loaded into a ``stoker serve`` process a test starts with this directory on its
PYTHONPATH (Python imports ``sitecustomize`` at start-up): counts the statements the
process sends any database that read the events table, one byte each appended to the
file ``STOKER_TEST_QUERY_COUNT_FILE`` names (its size is the count; appends are atomic,
so a reader never sees half a write). Nothing of stoker's is changed or stubbed: the
count is taken where SQLAlchemy hands each statement to the database driver."""

from __future__ import annotations

import os

_PATH = os.environ.get("STOKER_TEST_QUERY_COUNT_FILE")

if _PATH:
    from sqlalchemy import event
    from sqlalchemy.engine import Engine

    _counted = os.open(_PATH, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    @event.listens_for(Engine, "before_cursor_execute")
    def _count_event_reads(connection, cursor, statement, parameters, context, executemany):  # noqa: ANN001, ARG001
        if "FROM events" in statement:
            os.write(_counted, b".")
