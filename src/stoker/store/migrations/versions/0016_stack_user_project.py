"""Stacks record the stack user domain's project their users live in (Heat's
``stack_user_project_id``): None for every stack made before, whose users (if any) are
in the stack's own project.

Revision ID: 0016_stack_user_project
Revises: 0015_drift
"""

import sqlalchemy as sa
from alembic import op

revision = "0016_stack_user_project"
down_revision = "0015_drift"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("stacks", sa.Column("stack_user_project_id", sa.String(64), nullable=True))


def downgrade() -> None:
    # batch: SQLite before 3.35 cannot drop a column in place.
    with op.batch_alter_table("stacks") as batch:
        batch.drop_column("stack_user_project_id")
