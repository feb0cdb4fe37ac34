"""What users see of software configs and deployments that carry a hidden parameter's
value: ``software_config.shown`` and ``software_deployments.shown_input_values`` and
``shown_output_values``, the values masked (NULL: shown as stored).

The columns that now hold secrets sealed (``raw_templates.template`` and ``files``,
``resources.definition``, ``software_config.config``) keep their type: a sealed value is
JSON too. Rows written
before are read as they are and sealed when written again (store/sealing.py).

Revision ID: 0013_secrets
Revises: 0013_tenancy
"""

import sqlalchemy as sa
from alembic import op

revision = "0013_secrets"
down_revision = "0013_tenancy"
branch_labels = None
depends_on = None

JSON = sa.JSON().with_variant(sa.dialects.postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("software_config") as batch:
        batch.add_column(sa.Column("shown", JSON, nullable=True))
    with op.batch_alter_table("software_deployments") as batch:
        batch.add_column(sa.Column("shown_input_values", JSON, nullable=True))
        batch.add_column(sa.Column("shown_output_values", JSON, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("software_deployments") as batch:
        batch.drop_column("shown_output_values")
        batch.drop_column("shown_input_values")
    with op.batch_alter_table("software_config") as batch:
        batch.drop_column("shown")
