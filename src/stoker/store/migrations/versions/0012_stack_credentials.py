"""The credentials stoker acts for a stack's user with (a Keystone trust), sealed.

Revision ID: 0012
Revises: 0011
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "stack_credentials",
        sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("credential", sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql"), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("stack_credentials")
