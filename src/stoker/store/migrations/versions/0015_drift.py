"""The last drift detection of each stack (``stack_drift``).

Revision ID: 0015_drift
Revises: 0014_embedded_project
"""

import sqlalchemy as sa
from alembic import op

revision = "0015_drift"
down_revision = "0014_embedded_project"
branch_labels = None
depends_on = None


def upgrade() -> None:
    json = sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql")
    op.create_table(
        "stack_drift",
        sa.Column(
            "stack_id",
            sa.String(36),
            sa.ForeignKey("stacks.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("detected_at", sa.DateTime, nullable=False),
        sa.Column("summary", json, nullable=False),
        sa.Column("resources", json, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("stack_drift")
