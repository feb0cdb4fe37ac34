"""Software deployments (Heat's ``software_deployment`` table), and the purpose of a
signal credential.

- ``software_deployments``: one row per config applied to one server, stored by the
  software_deployments API and by the OS::Heat::SoftwareDeployment family of resources.
  ``config_id`` names a row of ``software_config`` without a foreign key: a deployment
  whose config is gone is still shown (its metadata leaves the config out).
- ``signal_credentials.purpose``: NULL for an ordinary credential that may signal its
  resource; "metadata" for one that lets a server's agent read its deployments.

Revision ID: 0009
Revises: 0008
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "software_deployments",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("config_id", sa.String(36), nullable=False),
        sa.Column("server_id", sa.String(255), nullable=False),
        sa.Column("input_values", JSON, nullable=True),
        sa.Column("output_values", JSON, nullable=True),
        sa.Column("action", sa.String(255), nullable=True),
        sa.Column("status", sa.String(255), nullable=True),
        sa.Column("status_reason", sa.Text, nullable=True),
        sa.Column("tenant", sa.String(64), nullable=False),
        sa.Column("stack_user_project_id", sa.String(64), nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=True),
    )
    op.create_index("ix_software_deployments_config_id", "software_deployments", ["config_id"])
    op.create_index("ix_software_deployments_server_id", "software_deployments", ["server_id"])
    with op.batch_alter_table("signal_credentials") as batch:
        batch.add_column(sa.Column("purpose", sa.String(32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("signal_credentials") as batch:
        batch.drop_column("purpose")
    op.drop_table("software_deployments")
