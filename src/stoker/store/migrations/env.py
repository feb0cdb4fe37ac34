"""Alembic environment: always run with a connection handed in by stoker.store."""

from alembic import context

from stoker.store.tables import metadata

connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("stoker migrations run through stoker.store.migrations.upgrade(connection)")

context.configure(connection=connection, target_metadata=metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
