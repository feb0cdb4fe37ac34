"""Signals as rows, and the capability credentials that may send them.

- ``signals``: one row per signal a resource received (a wait condition handle's
  SUCCESS or FAILURE), unique per (resource, signal id), so a repeated signal is not
  counted twice and a signal sent while no engine runs is kept for the next one.
- ``signal_credentials``: the SHA-256 of each secret that may signal one resource.

Revision ID: 0008
Revises: 0007
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "signals",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), nullable=False),
        sa.Column("resource_uuid", sa.String(36), nullable=False),
        sa.Column("signal_id", sa.String(255), nullable=False),
        sa.Column("details", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("handled_at", sa.DateTime, nullable=True),
        sa.UniqueConstraint("resource_uuid", "signal_id", name="uq_signals_resource_signal"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_signals_stack_id", "signals", ["stack_id"])
    op.create_table(
        "signal_credentials",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), nullable=False),
        sa.Column("resource_uuid", sa.String(36), nullable=False),
        sa.Column("secret_hash", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("revoked_at", sa.DateTime, nullable=True),
    )
    op.create_index("ix_signal_credentials_stack_id", "signal_credentials", ["stack_id"])
    op.create_index("ix_signal_credentials_resource_uuid", "signal_credentials", ["resource_uuid"])


def downgrade() -> None:
    op.drop_table("signal_credentials")
    op.drop_table("signals")
