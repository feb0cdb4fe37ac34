"""The event stream's order: the writing transaction of each event, and its index.

- ``events.txid``: on PostgreSQL the id of the transaction that inserted the row (the
  store sets it from ``pg_current_xact_id()``); 0 on SQLite and for rows written before
  this revision (they are older than any row written after it, which is the order the
  stream needs).
- ``ix_events_stream`` (stack_id, txid, id): the stream's query per poll.

Revision ID: 0011
Revises: 0010
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("events") as batch:
        batch.add_column(sa.Column("txid", sa.BigInteger, nullable=False, server_default="0"))
    op.create_index("ix_events_stream", "events", ["stack_id", "txid", "id"])


def downgrade() -> None:
    op.drop_index("ix_events_stream", "events")
    # Dropping a column rebuilds the table on SQLite: keep AUTOINCREMENT (0006).
    with op.batch_alter_table("events", table_kwargs={"sqlite_autoincrement": True}) as batch:
        batch.drop_column("txid")
