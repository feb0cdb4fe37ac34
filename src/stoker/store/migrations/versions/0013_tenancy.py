"""Projects kept apart in software deployments (issue 26): a deployment's server is
found by its physical id (an index), and a deployment another project made for this
project's stack users no longer reaches this project.

Before this revision any caller could name any project as a deployment's
``stack_user_project_id``, which made the deployment that project's too: it was listed
to it and served to its servers' agents. The API now refuses that to all but a cloud
admin; here the rows that name a project other than the one that made them lose the
name, so a deployment injected before the upgrade stops being served. (A cloud admin's
own such deployments are cleared alike: the rows do not say who made them.)

Revision ID: 0013_tenancy
Revises: 0012
"""

import sqlalchemy as sa
from alembic import op

revision = "0013_tenancy"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_resources_physical_resource_id", "resources", ["physical_resource_id"])
    deployments = sa.table("software_deployments", sa.column("tenant", sa.String), sa.column("stack_user_project_id", sa.String))
    op.execute(
        deployments.update()
        .where(deployments.c.stack_user_project_id.is_not(None), deployments.c.stack_user_project_id != deployments.c.tenant)
        .values(stack_user_project_id=None)
    )


def downgrade() -> None:
    # The names cleared are not brought back: they were the hole.
    op.drop_index("ix_resources_physical_resource_id", "resources")
