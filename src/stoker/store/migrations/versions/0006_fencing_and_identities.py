"""Fencing tokens on stack locks, row ids that are never reused, and one live stack per
name.

- ``stack_locks.token``: new at every acquisition; a job's writes carry it.
- SQLite: ``raw_templates``, ``resources`` and ``events`` are rebuilt with AUTOINCREMENT,
  so the id of a deleted row is never handed out again (PostgreSQL's sequences already
  never go back). Rebuilding ``raw_templates`` drops a table ``stacks`` refers to: run
  it through ``Store.migrate``, which turns SQLite's foreign keys off for the migration
  and checks them all before it commits.
- ``uq_stacks_live_name``: a partial unique index over the live top-level stacks of a
  project. Duplicates made before it existed (a race the index now prevents) keep the
  oldest stack's name; the others are renamed ``<name>-<first 8 characters of the id>``.

Revision ID: 0006
Revises: 0005
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None

_REBUILT = ("raw_templates", "resources", "events")
_LIVE_TOP_LEVEL = "deleted_at IS NULL AND owner_id IS NULL"


def _rename_duplicates() -> None:
    connection = op.get_bind()
    stacks = sa.table(
        "stacks",
        sa.column("id", sa.String),
        sa.column("name", sa.String),
        sa.column("project_id", sa.String),
        sa.column("created_at", sa.DateTime),
        sa.column("deleted_at", sa.DateTime),
        sa.column("owner_id", sa.String),
    )
    rows = connection.execute(
        sa.select(stacks.c.id, stacks.c.name, stacks.c.project_id)
        .where(stacks.c.deleted_at.is_(None), stacks.c.owner_id.is_(None))
        .order_by(stacks.c.created_at, stacks.c.id)
    )
    seen: set[tuple[str, str]] = set()
    for row in rows.all():
        key = (row.project_id, row.name)
        if key in seen:
            connection.execute(stacks.update().where(stacks.c.id == row.id).values(name=f"{row.name}-{row.id[:8]}"))
        seen.add(key)


def _rebuild_with_autoincrement() -> None:
    if op.get_bind().dialect.name != "sqlite":
        return
    for name in _REBUILT:
        with op.batch_alter_table(name, recreate="always", table_kwargs={"sqlite_autoincrement": True}):
            pass


def upgrade() -> None:
    # Locks held while migrating (none should be) get an empty token: their jobs' writes
    # are refused from now on.
    with op.batch_alter_table("stack_locks") as batch:
        batch.add_column(sa.Column("token", sa.String(36), nullable=False, server_default=""))
    with op.batch_alter_table("stack_locks") as batch:
        batch.alter_column("token", server_default=None, existing_type=sa.String(36), existing_nullable=False)
    _rebuild_with_autoincrement()
    _rename_duplicates()
    op.create_index(
        "uq_stacks_live_name",
        "stacks",
        ["project_id", "name"],
        unique=True,
        sqlite_where=sa.text(_LIVE_TOP_LEVEL),
        postgresql_where=sa.text(_LIVE_TOP_LEVEL),
    )


def downgrade() -> None:
    # The tables keep AUTOINCREMENT: harmless to the older code, and rebuilding a table
    # that others refer to needs foreign keys off, which only Store.migrate arranges.
    op.drop_index("uq_stacks_live_name", "stacks")
    with op.batch_alter_table("stack_locks") as batch:
        batch.drop_column("token")
