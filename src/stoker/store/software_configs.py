"""The software configs and software deployments part of the repository (Heat's
software_config and software_deployment tables), ``Store.software_configs``.

What it owns: those two tables' queries, and which project's stack holds the server a
deployment names (``physical_id_owner``, a read of the stacks and resources tables).
What it must not do: shape a config or a deployment for anyone
(``sdk/software_config.py`` does), decide what an update may mean beyond the columns it
may change (``engine/software_deployments.py`` does), or change any other table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from stoker.store import tables
from stoker.store.connection_loss import reads
from stoker.store.records import SoftwareConfigRecord, SoftwareDeploymentRecord, utcnow
from stoker.store.writer import WriteQueue

_SOFTWARE_CONFIG_FIELDS = [c.name for c in tables.software_config.columns]
_SOFTWARE_DEPLOYMENT_FIELDS = [c.name for c in tables.software_deployments.columns]
# What an update may change (Heat's update_software_deployment); the rest is fixed at create.
_SOFTWARE_DEPLOYMENT_CHANGES = frozenset(
    {"config_id", "input_values", "shown_input_values", "output_values", "shown_output_values", "action", "status", "status_reason", "updated_at"}
)


def _software_config(row: Any) -> SoftwareConfigRecord:
    return SoftwareConfigRecord(**{name: getattr(row, name) for name in _SOFTWARE_CONFIG_FIELDS})


def _software_deployment(row: Any) -> SoftwareDeploymentRecord:
    return SoftwareDeploymentRecord(**{name: getattr(row, name) for name in _SOFTWARE_DEPLOYMENT_FIELDS})


class SoftwareConfigRepository:
    """Software configs and deployments, read on ``engine``'s pooled connections and
    written through ``writes`` (the store's one writer)."""

    def __init__(self, engine: Engine, writes: WriteQueue):
        self._writes = writes
        self._read: Callable[[], Connection] = engine.connect

    # -- software configs -----------------------------------------------------------

    def create_software_config(self, record: SoftwareConfigRecord) -> None:
        """Insert a software config row (``created_at`` is set when not given)."""
        record.created_at = record.created_at or utcnow()
        values = {name: getattr(record, name) for name in _SOFTWARE_CONFIG_FIELDS}
        self._writes.run(lambda connection: connection.execute(tables.software_config.insert(), values))

    @reads
    def get_software_config(self, config_id: str) -> SoftwareConfigRecord | None:
        table = tables.software_config
        with self._read() as connection:
            row = connection.execute(sa.select(table).where(table.c.id == config_id)).first()
        return _software_config(row) if row is not None else None

    @reads
    def list_software_configs(
        self, limit: int | None = None, marker: str | None = None, tenant: str | None = None, name: str | None = None
    ) -> list[SoftwareConfigRecord]:
        """Newest first (created_at, then id, both descending), as Heat pages them.
        ``marker``: the id of the config the page starts after; an unknown marker is
        ignored (Heat's paginate_query). ``tenant``, ``name``: only those (None: all)."""
        table = tables.software_config
        query = sa.select(table).order_by(table.c.created_at.desc(), table.c.id.desc())
        scope = [table.c.tenant == tenant] if tenant is not None else []
        query = query.where(*scope)
        if name is not None:
            query = query.where(table.c.name == name)
        with self._read() as connection:
            if marker is not None:
                # Another project's config is no marker: its place is not this list's.
                after = connection.execute(sa.select(table.c.created_at, table.c.id).where(table.c.id == marker, *scope)).first()
                if after is not None:
                    query = query.where(
                        sa.or_(table.c.created_at < after.created_at, sa.and_(table.c.created_at == after.created_at, table.c.id < after.id))
                    )
            if limit is not None:
                query = query.limit(limit)
            return [_software_config(row) for row in connection.execute(query)]

    def delete_software_config(self, config_id: str) -> bool:
        """Delete a software config row; False when there was none."""
        table = tables.software_config
        return bool(self._writes.run(lambda connection: connection.execute(table.delete().where(table.c.id == config_id)).rowcount))

    # -- software deployments -------------------------------------------------------

    def create_software_deployment(self, record: SoftwareDeploymentRecord) -> bool:
        """Insert a software deployment row (``created_at`` is set when not given);
        False, and nothing written, when a deployment has its id already."""
        record.created_at = record.created_at or utcnow()
        values = {name: getattr(record, name) for name in _SOFTWARE_DEPLOYMENT_FIELDS}
        table = tables.software_deployments

        def write(connection: Connection) -> bool:
            # A taken id is an answer, not an error: a savepoint undoes only this row,
            # and the writes batched with it commit.
            try:
                with connection.begin_nested():
                    connection.execute(table.insert(), values)
            except sa.exc.IntegrityError:
                if connection.execute(sa.select(table.c.id).where(table.c.id == record.id)).first() is not None:
                    return False
                raise
            return True

        return bool(self._writes.run(write))

    @reads
    def get_software_deployment(self, deployment_id: str) -> SoftwareDeploymentRecord | None:
        table = tables.software_deployments
        with self._read() as connection:
            row = connection.execute(sa.select(table).where(table.c.id == deployment_id)).first()
        return _software_deployment(row) if row is not None else None

    @reads
    def list_software_deployments(self, server_id: str | None = None, project: str | None = None) -> list[SoftwareDeploymentRecord]:
        """Oldest first (created_at, then id), as Heat lists them; ``server_id``: only
        the deployments to that server (None: all); ``project``: only those it made or
        whose stack users it holds (Heat's tenant or stack_user_project_id; None: all)."""
        table = tables.software_deployments
        query = sa.select(table).order_by(table.c.created_at, table.c.id)
        if project is not None:
            query = query.where(sa.or_(table.c.tenant == project, table.c.stack_user_project_id == project))
        if server_id is not None:
            query = query.where(table.c.server_id == server_id)
        with self._read() as connection:
            return [_software_deployment(row) for row in connection.execute(query)]

    @reads
    def physical_id_owner(self, physical_id: str) -> str | None:
        """The project of the live stack (nested ones included) whose resource first had
        ``physical_id`` as its physical id (None: no live stack's): whose server a
        deployment's ``server_id`` names. The first, because an adopted stack may give a
        resource of its own the physical id of a resource another project made."""
        resources, stacks = tables.resources, tables.stacks
        query = (
            sa.select(stacks.c.project_id)
            .select_from(resources.join(stacks, resources.c.stack_id == stacks.c.id))
            .where(resources.c.physical_resource_id == physical_id, stacks.c.deleted_at.is_(None))
            .order_by(resources.c.created_at, resources.c.id)
            .limit(1)
        )
        with self._read() as connection:
            return connection.execute(query).scalar()

    def update_software_deployment(
        self, deployment_id: str, *, when_status: str | None = None, **fields: Any
    ) -> SoftwareDeploymentRecord | None:
        """Change ``fields`` of a deployment (any of config_id, input_values,
        shown_input_values, output_values, shown_output_values, action, status,
        status_reason, updated_at)
        and return the row as
        committed; None when there is no such deployment, or, with ``when_status``, when
        its status is no longer that one (a signal must not land on a deployment that
        another signal has finished meanwhile)."""
        unknown = set(fields) - _SOFTWARE_DEPLOYMENT_CHANGES
        if unknown:
            raise TypeError(f"a software deployment's {', '.join(sorted(unknown))} cannot be updated")
        table = tables.software_deployments
        where = [table.c.id == deployment_id]
        if when_status is not None:
            where.append(table.c.status == when_status)

        def write(connection: Connection) -> SoftwareDeploymentRecord | None:
            read = where
            if fields:
                if not connection.execute(table.update().where(*where).values(fields)).rowcount:
                    return None
                # Read back by id alone: the update may have changed the status it was guarded by.
                read = where[:1]
            row = connection.execute(sa.select(table).where(*read)).first()
            return _software_deployment(row) if row is not None else None

        return self._writes.run(write)

    def delete_software_deployment(self, deployment_id: str) -> bool:
        """Delete a software deployment row; False when there was none."""
        table = tables.software_deployments
        return bool(self._writes.run(lambda connection: connection.execute(table.delete().where(table.c.id == deployment_id)).rowcount))
