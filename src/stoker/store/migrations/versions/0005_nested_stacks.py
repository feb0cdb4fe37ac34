"""Nested stacks: the owning stack and resource of a child stack, and its depth.

Revision ID: 0005
Revises: 0004
"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("stacks") as batch:
        batch.add_column(sa.Column("owner_id", sa.String(36), nullable=True))
        batch.add_column(sa.Column("owner_resource", sa.String(255), nullable=True))
        batch.add_column(sa.Column("nested_depth", sa.Integer, nullable=False, server_default="0"))
    op.create_index("ix_stacks_owner_id", "stacks", ["owner_id"])


def downgrade() -> None:
    op.drop_index("ix_stacks_owner_id", "stacks")
    with op.batch_alter_table("stacks") as batch:
        batch.drop_column("nested_depth")
        batch.drop_column("owner_resource")
        batch.drop_column("owner_id")
