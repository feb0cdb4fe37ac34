"""Previous parameters (for update rollback), cancel requests on stack locks, and the
hook (breakpoint) a resource waits at.

Revision ID: 0003
Revises: 0002
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("stacks") as batch:
        batch.add_column(sa.Column("prev_parameters", JSON, nullable=True))
    with op.batch_alter_table("stack_locks") as batch:
        batch.add_column(sa.Column("cancel", sa.String(16), nullable=True))
    with op.batch_alter_table("resources") as batch:
        batch.add_column(sa.Column("hook", sa.String(16), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("resources") as batch:
        batch.drop_column("hook")
    with op.batch_alter_table("stack_locks") as batch:
        batch.drop_column("cancel")
    with op.batch_alter_table("stacks") as batch:
        batch.drop_column("prev_parameters")
