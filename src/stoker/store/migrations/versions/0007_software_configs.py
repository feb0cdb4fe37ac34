"""Software configs (Heat's ``software_config`` table), stored by the software_configs
API and by the OS::Heat::SoftwareConfig family of resources.

Revision ID: 0007
Revises: 0006
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "software_config",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("name", sa.String(255), nullable=True),
        sa.Column("group", sa.String(255), nullable=True),
        sa.Column("config", JSON, nullable=True),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_software_config_tenant", "software_config", ["tenant"])
    op.create_index("ix_software_config_created_at", "software_config", ["created_at"])


def downgrade() -> None:
    op.drop_table("software_config")
