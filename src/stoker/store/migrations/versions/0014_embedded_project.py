"""The embedded engine's stacks get a project (issue 27): rows it made before this
revision have the empty project, which no URL shows and every name lookup of the
embedded command matched; they move to ``default``, the project the embedded engine
now acts in unless told otherwise (STOKER_PROJECT), and the one a server shows at
``/v1/default``. Software configs and deployments it made move with them.

A live top-level stack whose name ``default`` already has (a server made it there) stays
in the empty project, so no two live stacks of a project share a name (the upgrade
logs each one it leaves; ``stoker stack list --all-projects`` lists it, and a server's
admin reaches it by its id).

Revision ID: 0014_embedded_project
Revises: 0013_jobs
"""

import logging

import sqlalchemy as sa
from alembic import op

revision = "0014_embedded_project"
down_revision = "0013_jobs"
branch_labels = None
depends_on = None

DEFAULT_PROJECT = "default"  # settings.DEFAULT_PROJECT when this revision was written
LOG = logging.getLogger(__name__)


def upgrade() -> None:
    connection = op.get_bind()
    stacks = sa.table(
        "stacks", sa.column("id", sa.String), sa.column("name", sa.String), sa.column("project_id", sa.String),
        sa.column("deleted_at", sa.DateTime), sa.column("owner_id", sa.String),
    )  # fmt: skip
    live_top = sa.and_(stacks.c.deleted_at.is_(None), stacks.c.owner_id.is_(None))
    taken = {row.name for row in connection.execute(sa.select(stacks.c.name).where(live_top, stacks.c.project_id == DEFAULT_PROJECT))}
    kept = [
        row for row in connection.execute(sa.select(stacks.c.id, stacks.c.name).where(live_top, stacks.c.project_id == ""))
        if row.name in taken
    ]  # fmt: skip
    for row in kept:
        LOG.warning("stack %s (%s) stays in the empty project: %r already has a live stack named so", row.name, row.id, DEFAULT_PROJECT)
    kept_ids = [row.id for row in kept]
    # A kept stack's nested stacks stay with it (a nested stack is its root's project's).
    pending = list(kept_ids)
    while pending:
        children = [row.id for row in connection.execute(sa.select(stacks.c.id).where(stacks.c.owner_id.in_(pending)))]
        kept_ids += children
        pending = children
    moved = stacks.update().where(stacks.c.project_id == "").values(project_id=DEFAULT_PROJECT)
    if kept_ids:
        moved = moved.where(stacks.c.id.not_in(kept_ids))
    connection.execute(moved)
    for name in ("software_config", "software_deployments"):
        table = sa.table(name, sa.column("tenant", sa.String))
        connection.execute(table.update().where(table.c.tenant == "").values(tenant=DEFAULT_PROJECT))


def downgrade() -> None:
    # Which rows were the embedded engine's is not recorded: they stay in ``default``.
    pass
