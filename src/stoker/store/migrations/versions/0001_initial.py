"""Initial schema: raw templates, stacks, resources, events.

Revision ID: 0001
Revises:
"""

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "raw_templates",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("template", JSON, nullable=False),
        sa.Column("files", JSON, nullable=False),
        sa.Column("environment", JSON, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "stacks",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("status_reason", sa.Text, nullable=False),
        sa.Column("raw_template_id", sa.Integer, sa.ForeignKey("raw_templates.id"), nullable=False),
        sa.Column("prev_raw_template_id", sa.Integer, sa.ForeignKey("raw_templates.id"), nullable=True),
        sa.Column("parameters", JSON, nullable=False),
        sa.Column("disable_rollback", sa.Boolean, nullable=False),
        sa.Column("timeout_mins", sa.Integer, nullable=True),
        sa.Column("tags", JSON, nullable=False),
        sa.Column("project_id", sa.String(64), nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=True),
        sa.Column("deleted_at", sa.DateTime, nullable=True),
    )
    op.create_index("ix_stacks_name", "stacks", ["name"])
    op.create_index("ix_stacks_deleted_at", "stacks", ["deleted_at"])
    op.create_table(
        "resources",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("uuid", sa.String(36), nullable=False, unique=True),
        sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("type", sa.String(255), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("status_reason", sa.Text, nullable=False),
        sa.Column("physical_resource_id", sa.String(255), nullable=True),
        sa.Column("properties", JSON, nullable=True),
        sa.Column("attributes", JSON, nullable=True),
        sa.Column("data", JSON, nullable=True),
        sa.Column("definition", JSON, nullable=True),
        sa.Column("handler_token", JSON, nullable=True),
        sa.Column("current", sa.Boolean, nullable=False),
        sa.Column("replaces", sa.Integer, nullable=True),
        sa.Column("replaced_by", sa.Integer, nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=True),
    )
    op.create_index("ix_resources_stack_id", "resources", ["stack_id"])
    op.create_table(
        "events",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("uuid", sa.String(36), nullable=False, unique=True),
        sa.Column("stack_id", sa.String(36), sa.ForeignKey("stacks.id", ondelete="CASCADE"), nullable=False),
        sa.Column("resource_name", sa.String(255), nullable=False),
        sa.Column("physical_resource_id", sa.String(255), nullable=True),
        sa.Column("resource_type", sa.String(255), nullable=False),
        sa.Column("resource_action", sa.String(32), nullable=False),
        sa.Column("resource_status", sa.String(32), nullable=False),
        sa.Column("resource_status_reason", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
    )
    op.create_index("ix_events_stack_id", "events", ["stack_id"])


def downgrade() -> None:
    op.drop_table("events")
    op.drop_table("resources")
    op.drop_table("stacks")
    op.drop_table("raw_templates")
