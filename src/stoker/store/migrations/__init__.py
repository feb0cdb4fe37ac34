"""Alembic migrations for the store; ``upgrade`` runs them on an open connection."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy.engine import Connection

HERE = Path(__file__).parent


def config(connection: Connection | None = None):
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(HERE))
    if connection is not None:
        cfg.attributes["connection"] = connection
    return cfg


def upgrade(connection: Connection, revision: str = "head") -> None:
    from alembic import command

    command.upgrade(config(connection), revision)
