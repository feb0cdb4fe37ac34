"""Persistence: SQLAlchemy tables, the repository every query goes through, migrations."""

from stoker.store.records import EventRecord, ResourceRecord, SnapshotRecord, StackRecord
from stoker.store.repository import Store

__all__ = ["EventRecord", "ResourceRecord", "SnapshotRecord", "StackRecord", "Store"]
