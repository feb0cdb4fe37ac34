"""Actions the API accepted for workers and that no job has started yet.

Revision ID: 0013_jobs
Revises: 0013_secrets
"""

import sqlalchemy as sa
from alembic import op

revision = "0013_jobs"
down_revision = "0013_secrets"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "accepted_actions",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), nullable=False),
        sa.Column("action", sa.String(16), nullable=False),
        sa.Column("job_id", sa.BigInteger, nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("accepted_actions")
