"""Stack locks with an expiring lease.

Revision ID: 0002
Revises: 0001
"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "stack_locks",
        sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("engine_id", sa.String(36), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer, nullable=False),
        sa.Column("expires_at", sa.DateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("stack_locks")
