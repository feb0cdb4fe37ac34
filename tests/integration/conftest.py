"""Fixtures of the integration tests: a migrated store on each database."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from stoker.store import Store


@pytest.fixture
def store(database_url: str) -> Iterator[Store]:
    """A migrated store, once on a SQLite file and once on PostgreSQL."""
    store = Store(database_url)
    store.migrate()
    yield store
    store.close()
