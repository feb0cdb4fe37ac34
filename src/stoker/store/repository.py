"""The repository: every query stoker makes goes through ``Store``.

A write method returns only after its transaction has committed, so a caller that has
returned from a state change knows it is durable. Writes go through the single writer
thread (``stoker.store.writer``), which batches concurrent writes into one commit;
``<op>_nowait`` variants return the Future instead of waiting, for the event loop.
Methods are safe to call from any thread (plugins persist physical ids from handler
threads). Reads use pooled connections of their own; each read method is repeated whole
on a lost connection (``@reads``, ``connection_loss.py``), as the writer repeats a
transaction lost before its COMMIT.

What it owns: the connections and the one writer, the schema's migration, and the
core every action runs on: stacks, templates, resources, snapshots and locks. The rest
are parts beside it, each a class of its own made here with the collaborators it uses
(the read engine and the writer) and held as a member, so a caller names the part it
uses: ``store.events`` (events.py), ``store.signals`` (signals and their credentials,
signals.py), ``store.software_configs`` (software configs and deployments,
software_configs.py), ``store.serving`` (what serve mode keeps, serving.py) and
``store.drift`` (the last drift detection, drift.py). What it must not do: reach into a
part's private members (a write of the core that carries an event asks ``events`` for
it), or let a part reach into the core's (tests/unit/test_store_parts.py).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from datetime import timedelta
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection, Engine

from stoker.store import locks, tables
from stoker.store.connection_loss import quiet_lost_checkins, reads
from stoker.store.drift import DriftRepository
from stoker.store.events import EventRepository
from stoker.store.locks import Fence, LockHolder
from stoker.store.records import (
    EventRecord,
    ResourceRecord,
    SnapshotRecord,
    StackRecord,
    TemplateRecord,
    stack_record,
    utcnow,
)
from stoker.store.sealing import SealedJSON, Sealer, attach
from stoker.store.serving import ServingRepository
from stoker.store.signals import SignalRepository
from stoker.store.software_configs import SoftwareConfigRepository
from stoker.store.stale import StaleRead
from stoker.store.writer import Alone, Statements, WriteQueue, run_statements

HEAD_REVISION = "0016_stack_user_project"


def _sqlite_pragmas(dbapi_connection: Any, connection_record: Any) -> None:
    # pysqlite's own transaction handling BEGINs only before DML, so DDL would autocommit
    # and a failed migration would leave half a schema: SQLAlchemy BEGINs instead.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    # First, so the statements below wait for another process instead of failing.
    cursor.execute("PRAGMA busy_timeout=30000")
    # WAL lets readers run beside the writer; NORMAL syncs at checkpoints, which keeps
    # committed transactions durable across a process crash (not an OS crash).
    _switch_to_wal(cursor)
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def _switch_to_wal(cursor: Any) -> None:
    """Switching a new database to WAL needs it to itself, and SQLite answers "locked"
    at once instead of waiting for busy_timeout; so wait here (up to 30 s)."""
    import sqlite3
    import time

    deadline = time.monotonic() + 30
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as error:
            if "locked" not in str(error) or time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _sqlite_begin(connection: Connection) -> None:
    # Straight to the driver: this runs once per commit of the writer, and a statement
    # through SQLAlchemy costs more than SQLite's own work for it.
    statement = connection.get_execution_options().get("sqlite_begin", "BEGIN")
    dbapi_error = connection.dialect.loaded_dbapi.Error
    cursor = connection.connection.cursor()
    try:
        cursor.execute(statement)
    except dbapi_error as error:  # as SQLAlchemy would have raised it
        raise sa.exc.DBAPIError.instance(statement, (), error, dbapi_error, dialect=connection.dialect) from error
    finally:
        cursor.close()


# Alembic's ``op`` and ``context`` are process-global: two threads migrating at once
# would run each other's DDL on the wrong connection.
_migrate_lock = threading.Lock()


def _revision(connection: Connection) -> str | None:
    if not sa.inspect(connection).has_table("alembic_version"):
        return None
    return connection.execute(sa.text("SELECT version_num FROM alembic_version")).scalar()


def make_engine(url: str) -> Engine:
    if url.startswith("sqlite"):
        path = url.split(":///", 1)[-1]
        if path and path != ":memory:":
            Path(path).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = sa.create_engine(url, connect_args={"check_same_thread": False})
        sa.event.listen(engine, "connect", _sqlite_pragmas)
        sa.event.listen(engine, "begin", _sqlite_begin)
        return engine
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://"):]
    # pool_pre_ping: a pooled connection the server has ended since (a restart,
    # pg_terminate_backend) is replaced before it is handed out; one lost while in use
    # is connection_loss.py's.
    engine = sa.create_engine(url, pool_size=10, max_overflow=20, pool_pre_ping=True)
    quiet_lost_checkins(engine.pool.logger)
    return engine


_STACK_FIELDS = [c.name for c in tables.stacks.columns]
_RESOURCE_FIELDS = [c.name for c in tables.resources.columns]
_RESOURCE_OPEN_FIELDS = [c.name for c in tables.resources.columns if not isinstance(c.type, SealedJSON)]


def _update_statement(table: sa.Table, fields: frozenset[str]) -> sa.Update:
    """An UPDATE by id with bound parameters; built once per set of fields (building
    statements per call costs more than running them). A resource row is named by its
    stack too, never by its id alone."""
    where = [table.c.id == sa.bindparam("_id")]
    if table is tables.resources:
        where.append(table.c.stack_id == sa.bindparam("_stack_id"))
    return table.update().where(*where).values({name: sa.bindparam(name) for name in sorted(fields)})


class StackNameTakenError(Exception):
    """Another live stack of the project has the name (the database refused the row)."""


class _Refused:
    """A write's refusal, returned from the writer thread and raised by the caller."""

    __slots__ = ("error",)

    def __init__(self, error: Exception):
        self.error = error


class Store:
    """The core (stacks, templates, resources, snapshots, locks) and its parts."""

    def __init__(self, url: str, sealer: Sealer | None = None):
        self.url = url
        # Seals the redacted values of resource data (see sealing.py).
        self.sealer = sealer or Sealer.for_database(url)
        self.engine = make_engine(url)
        attach(self.engine, self.sealer)
        self.is_sqlite = self.engine.dialect.name == "sqlite"
        # Writers take SQLite's write lock when they begin (BEGIN IMMEDIATE), so a
        # read-then-write transaction cannot lose a race with another process.
        self._write_engine = self.engine.execution_options(sqlite_begin="BEGIN IMMEDIATE")
        self.writes = WriteQueue(self._write_engine)
        self._statements: dict[tuple[str, frozenset[str]], sa.Update] = {}
        resources = tables.resources
        self._insert_resource_statement = resources.insert().returning(resources.c.id)
        replacement_id = sa.select(resources.c.id).where(resources.c.uuid == sa.bindparam("_replacement")).scalar_subquery()
        self._retire_statement = (
            resources.update()
            .where(resources.c.id == sa.bindparam("_id"), resources.c.stack_id == sa.bindparam("_stack_id"))
            .values(current=sa.bindparam("current"), replaced_by=replacement_id, updated_at=sa.bindparam("updated_at"))
        )
        # The parts: each reads on the engine's pooled connections and writes through
        # the one writer; none knows another, nor the core.
        self.events = EventRepository(self.engine, self.writes)
        self.signals = SignalRepository(self.engine, self.writes)
        self.software_configs = SoftwareConfigRepository(self.engine, self.writes)
        self.serving = ServingRepository(self.engine, self.writes)
        self.drift = DriftRepository(self.engine, self.writes)

    def _update_resource(self, connection: Connection, record: ResourceRecord, fields: dict[str, Any]) -> None:
        connection.execute(self._update_statement_for(tables.resources, fields), {"_id": record.id, "_stack_id": record.stack_id, **fields})

    def close(self) -> None:
        self.writes.close()
        self.engine.dispose()

    def _read(self) -> Any:
        return self.engine.connect()

    # -- schema -------------------------------------------------------------------

    def migrate(self) -> None:
        """Bring the schema to the newest revision (fast when it already is)."""
        with self._read() as connection:
            if _revision(connection) == HEAD_REVISION:
                return
        from stoker.store.migrations import upgrade

        with _migrate_lock, self._write_engine.connect() as connection:
            if self.is_sqlite:
                # Rebuilding a table others refer to (SQLite's only way to change it)
                # drops it first: foreign keys are checked once, before the commit,
                # instead. The pragma works only outside a transaction.
                raw = connection.connection.dbapi_connection
                assert raw is not None  # checked out just now: not invalidated
                raw.execute("PRAGMA foreign_keys=OFF")
            try:
                with connection.begin():
                    if not self.is_sqlite:
                        # Serialise migrating processes; released when this transaction ends.
                        connection.execute(sa.text("SELECT pg_advisory_xact_lock(hashtext('stoker.migrate.' || current_schema()))"))
                    # Another process may have migrated while this one waited for the lock.
                    if _revision(connection) == HEAD_REVISION:
                        return
                    upgrade(connection)
                    if self.is_sqlite and connection.exec_driver_sql("PRAGMA foreign_key_check").first() is not None:
                        raise RuntimeError("the migration would break foreign keys; nothing was changed")
            finally:
                if self.is_sqlite:
                    raw = connection.connection.dbapi_connection
                    assert raw is not None  # None only once invalidated (the database lost): fails either way
                    raw.execute("PRAGMA foreign_keys=ON")

    # -- templates ----------------------------------------------------------------

    def store_template(self, template: Mapping[str, Any], files: Mapping[str, str], environment: Mapping[str, Any]) -> int:
        values = {"template": dict(template), "files": dict(files), "environment": dict(environment), "created_at": utcnow()}

        def write(connection: Connection) -> int:
            return tables.inserted_id(connection.execute(tables.raw_templates.insert(), values))

        return self.writes.run(write)

    @reads
    def get_template(self, template_id: int) -> TemplateRecord:
        with self._read() as connection:
            row = connection.execute(sa.select(tables.raw_templates).where(tables.raw_templates.c.id == template_id)).one_or_none()
        if row is None:
            # Templates go only when no stack names them: the stack record that gave this
            # id was read before an update replaced its template (stale.py).
            raise StaleRead(f"template {template_id} is gone: the stack was updated while it was read")
        return TemplateRecord(row.id, row.template, row.files, row.environment)

    # -- stacks ---------------------------------------------------------------------

    def create_stack(
        self,
        record: StackRecord,
        event: EventRecord | None = None,
        credential: tuple[str, Mapping[str, Any]] | None = None,
        also: Callable[[Connection], Any] | None = None,
    ) -> Any:
        """Insert a stack; ``credential`` ((kind, data)) is what stoker acts for its user
        with, committed with the stack itself (never a stack without its credential).
        ``also`` runs in the same transaction (the enqueue of the stack's first job);
        its result is returned."""
        values = {name: getattr(record, name) for name in _STACK_FIELDS}
        values["created_at"] = values["created_at"] or utcnow()

        def write(connection: Connection) -> _Refused | None:
            # A refusal is an answer, not an error: the writes batched with this one
            # commit; a savepoint undoes the loser's row of a race the index decided.
            if record.owner_id is None and self._name_taken(connection, record):
                return _Refused(StackNameTakenError(record.name))
            try:
                with connection.begin_nested():
                    connection.execute(tables.stacks.insert(), values)
            except sa.exc.IntegrityError:
                if record.owner_id is None and self._name_taken(connection, record):
                    return _Refused(StackNameTakenError(record.name))
                raise
            if credential is not None:
                connection.execute(
                    tables.stack_credentials.insert(),
                    {"stack_id": record.id, "kind": credential[0], "credential": dict(credential[1]), "created_at": values["created_at"]},
                )
            if event is not None:
                self.events.add_event_on(connection, event)
            return also(connection) if also is not None else None

        result = self.writes.run(write)
        if isinstance(result, _Refused):
            raise result.error
        return result

    @staticmethod
    def _name_taken(connection: Connection, record: StackRecord) -> bool:
        table = tables.stacks
        query = sa.select(table.c.id).where(
            table.c.project_id == record.project_id,
            table.c.name == record.name,
            table.c.deleted_at.is_(None),
            table.c.owner_id.is_(None),
        )
        return connection.execute(query).first() is not None

    @reads
    def get_stack(self, stack_id: str) -> StackRecord | None:
        with self._read() as connection:
            row = connection.execute(sa.select(tables.stacks).where(tables.stacks.c.id == stack_id)).first()
        return stack_record(row) if row else None

    def left_stack_state(self, stack_id: str, timeout: float = 5.0) -> str | None:
        """The state (e.g. ``ROLLBACK_IN_PROGRESS``) a stack is left in when this
        process leaves at once: the writer is halted first (nothing more commits), then
        the row is read on a connection of its own, outside the pool (the caller may have
        interrupted this thread inside it: a signal handler). None when the writer could
        not be halted in time or the read failed."""
        if not self.writes.halt(timeout):
            return None
        engine = sa.create_engine(self.engine.url, poolclass=sa.pool.NullPool)
        try:
            with engine.connect() as connection:
                table = tables.stacks
                row = connection.execute(sa.select(table.c.action, table.c.status).where(table.c.id == stack_id)).first()
        except sa.exc.SQLAlchemyError:
            return None
        finally:
            engine.dispose()
        return f"{row.action}_{row.status}" if row else None

    @reads
    def find_stack(self, name_or_id: str, project_id: str | None = None, stack_users: bool = False) -> StackRecord | None:
        """A live (not deleted) stack by id or name; ``project_id``: only that
        project's (None: any project's); with ``stack_users``, also a stack whose users
        live in that project (Heat's stack_get_by_name: its stack_user_project_id)."""
        table = tables.stacks
        live: list[sa.ColumnElement[bool]] = [table.c.deleted_at.is_(None)]
        if project_id is not None and stack_users:
            live.append(sa.or_(table.c.project_id == project_id, table.c.stack_user_project_id == project_id))
        elif project_id is not None:
            live.append(table.c.project_id == project_id)
        with self._read() as connection:
            row = connection.execute(sa.select(table).where(table.c.id == name_or_id, *live)).first()
            if row is None:
                row = connection.execute(
                    sa.select(table)
                    .where(table.c.name == name_or_id, *live)
                    .order_by(table.c.created_at.desc())
                ).first()
        return stack_record(row) if row else None

    @reads
    def list_stacks(
        self, include_deleted: bool = False, include_nested: bool = False, hidden_tags: Iterable[str] = (), project_id: str | None = None
    ) -> list[StackRecord]:
        """Stacks oldest first; those carrying any of ``hidden_tags`` are left out
        (Heat's hidden_stack_tags). ``project_id``: only that project's (None: every
        project's)."""
        table = tables.stacks
        query = sa.select(table).order_by(table.c.created_at)
        if project_id is not None:
            query = query.where(table.c.project_id == project_id)
        if not include_deleted:
            query = query.where(table.c.deleted_at.is_(None))
        if not include_nested:
            query = query.where(table.c.owner_id.is_(None))
        hidden = set(hidden_tags)
        with self._read() as connection:
            # Tags are a JSON list: filtered here, the same on every database.
            stacks = [stack_record(row) for row in connection.execute(query)]
        return [stack for stack in stacks if not hidden.intersection(stack.tags or ())] if hidden else stacks

    @reads
    def child_stacks(self, owner_id: str) -> list[StackRecord]:
        """The live nested stacks a stack's resources own."""
        table = tables.stacks
        query = sa.select(table).where(table.c.owner_id == owner_id, table.c.deleted_at.is_(None)).order_by(table.c.created_at)
        with self._read() as connection:
            return [stack_record(row) for row in connection.execute(query)]

    @reads
    def count_tree_resources(self, root_id: str) -> int:
        """The current resources of a live stack and of every live nested stack under it
        (Heat's total_resources, which max_resources_per_stack limits: engine/trees.py)."""
        stacks, resources = tables.stacks, tables.resources
        tree = sa.select(stacks.c.id).where(stacks.c.id == root_id, stacks.c.deleted_at.is_(None)).cte("tree", recursive=True)
        child = stacks.alias("child")
        tree = tree.union_all(sa.select(child.c.id).where(child.c.owner_id == tree.c.id, child.c.deleted_at.is_(None)))
        query = sa.select(sa.func.count()).select_from(resources).where(
            resources.c.stack_id.in_(sa.select(tree.c.id)), resources.c.current.is_(True)
        )
        with self._read() as connection:
            return int(connection.execute(query).scalar_one())

    @reads
    def tree_has_failed_resource(self, stack_id: str) -> bool:
        """Whether a current resource of a live stack or of a live nested stack under it
        is FAILED (one marked unhealthy included), in one query that reads no property."""
        stacks, resources = tables.stacks, tables.resources
        tree = sa.select(stacks.c.id).where(stacks.c.id == stack_id, stacks.c.deleted_at.is_(None)).cte("tree", recursive=True)
        child = stacks.alias("child")
        tree = tree.union_all(sa.select(child.c.id).where(child.c.owner_id == tree.c.id, child.c.deleted_at.is_(None)))
        query = sa.select(resources.c.id).where(
            resources.c.stack_id.in_(sa.select(tree.c.id)), resources.c.current.is_(True), resources.c.status == "FAILED"
        ).limit(1)
        with self._read() as connection:
            return connection.execute(query).first() is not None

    def set_stack_user_project(self, stack_ids: Iterable[str], project_id: str | None) -> None:
        """Record the stack user domain's project of the stacks ``stack_ids`` (a tree's
        root and the nested stack that made it), committed before it returns; their
        ``updated_at`` stays (no action changed them)."""
        statements = [self._statements_for(tables.stacks, stack_id, {"stack_user_project_id": project_id}, None) for stack_id in stack_ids]
        self.writes.run(Statements([op for statement in statements for op in statement.ops]))

    def update_stack(self, stack_id: str, event: EventRecord | None = None, **fields: Any) -> None:
        self.update_stack_nowait(stack_id, event, **fields).result()

    def update_stack_nowait(self, stack_id: str, event: EventRecord | None = None, **fields: Any) -> Future[None]:
        return self.writes.submit(self._stack_write(stack_id, event, fields))

    async def update_stack_async(self, stack_id: str, event: EventRecord | None = None, **fields: Any) -> None:
        await self.writes.submit_async(self._stack_write(stack_id, event, fields))

    def _stack_write(self, stack_id: str, event: EventRecord | None, fields: dict[str, Any]) -> Statements | Any:
        fields.setdefault("updated_at", utcnow())
        statements = self._statements_for(tables.stacks, stack_id, fields, event)
        # The job that records its stack IN_PROGRESS has started the accepted action it
        # runs: the action's row goes in the same transaction (see Job.accepted).
        fence = locks.current_fence.get()
        if fields.get("status") == "IN_PROGRESS" and fence is not None and fence.accepted is not None and fence.stack_id == stack_id:
            statements.ops.append((self._started_statement, {"_accepted": fence.accepted}, None))
        if "raw_template_id" in fields or "prev_raw_template_id" in fields:
            return self._template_switch(stack_id, statements)
        return statements

    _started_statement = tables.accepted_actions.delete().where(tables.accepted_actions.c.id == sa.bindparam("_accepted"))

    def _template_switch(self, stack_id: str, statements: Statements) -> Any:
        """A write that changes which templates a stack refers to: the templates it lets
        go of are deleted in the same transaction when no other stack refers to them
        (snapshots keep their own copy; events name none)."""
        stacks = tables.stacks

        def write(connection: Connection) -> None:
            before = connection.execute(
                sa.select(stacks.c.raw_template_id, stacks.c.prev_raw_template_id).where(stacks.c.id == stack_id)
            ).first()
            run_statements(connection, statements)
            if before is not None:
                self._prune_templates(connection, {before.raw_template_id, before.prev_raw_template_id})

        return write

    @staticmethod
    def _prune_templates(connection: Connection, candidates: Iterable[int | None]) -> int:
        """Delete the candidate templates no stack refers to; returns how many went."""
        ids = [template_id for template_id in candidates if template_id]
        if not ids:
            return 0
        templates, stacks = tables.raw_templates, tables.stacks
        referenced = sa.select(stacks.c.id).where(
            sa.or_(stacks.c.raw_template_id == templates.c.id, stacks.c.prev_raw_template_id == templates.c.id)
        )
        return connection.execute(templates.delete().where(templates.c.id.in_(ids), ~referenced.exists())).rowcount

    def prune_template(self, template_id: int) -> int:
        """Delete a stored template no stack refers to (one a refused request stored)."""
        return self.writes.run(lambda connection: self._prune_templates(connection, [template_id]), fence=None)

    def _update_statement_for(self, table: sa.Table, fields: dict[str, Any]) -> sa.Update:
        key = (table.name, frozenset(fields))
        statement = self._statements.get(key)
        if statement is None:
            statement = self._statements[key] = _update_statement(table, key[1])
        return statement

    def _statements_for(self, table: sa.Table, row_id: Any, fields: dict[str, Any], event: EventRecord | None, stack_id: str | None = None) -> Statements:
        """An UPDATE of one row and, with it, the event that records the change."""
        parameters = {"_id": row_id, **fields} if stack_id is None else {"_id": row_id, "_stack_id": stack_id, **fields}
        ops: list[tuple[Any, dict[str, Any], Any]] = [(self._update_statement_for(table, fields), parameters, (table.name, row_id))]
        if event is not None:
            ops.append(self.events.event_insert(event))
        return Statements(ops)

    # -- resources ---------------------------------------------------------------

    def insert_resources(self, records: Iterable[ResourceRecord]) -> None:
        """Insert new resource rows; their ``id`` is filled in."""
        records = list(records)
        if records:
            self.writes.run(self._insert_resources_write(records))

    async def insert_resources_async(self, records: Iterable[ResourceRecord]) -> None:
        records = list(records)
        if records:
            await self.writes.submit_async(self._insert_resources_write(records))

    async def insert_replacement_async(self, replacement: ResourceRecord, old: ResourceRecord) -> None:
        """Insert a replacement and retire the old record in one transaction, so a crash
        never leaves two current records for one name."""
        write = self._insert_resources_write([replacement])
        # The old row points at the new one by its id, looked up by uuid in the same
        # transaction: so the write needs no answer from the insert, only its order.
        parameters = {"_id": old.id, "_stack_id": old.stack_id, "_replacement": replacement.uuid, "current": False, "updated_at": utcnow()}
        write.ops.append((self._retire_statement, parameters, (tables.resources.name, old.id)))
        write.ordered = True
        await self.writes.submit_async(write)

    async def swap_current_async(self, restored: ResourceRecord, retired: ResourceRecord) -> None:
        """Make a replaced record current again and retire its replacement, atomically."""

        def write(connection: Connection) -> None:
            now = utcnow()
            self._update_resource(connection, restored, {"current": True, "replaced_by": None, "updated_at": now})
            self._update_resource(connection, retired, {"current": False, "updated_at": now})

        await self.writes.submit_async(write)

    def _insert_resources_write(self, records: list[ResourceRecord]) -> Statements:
        """Rows for new records; each record's ``id`` is set from the row inserted (in the
        writer thread, before the commit its caller waits for)."""
        now = utcnow()
        ops: list[tuple[Any, ...]] = []
        for record in records:
            values = {name: getattr(record, name) for name in _RESOURCE_FIELDS if name != "id"}
            values["created_at"] = values["created_at"] or now
            ops.append((self._insert_resource_statement, values, None, functools.partial(setattr, record, "id")))
        return Statements(ops)

    def update_resource(self, record: ResourceRecord, event: EventRecord | None = None, **fields: Any) -> None:
        """Update a resource's row (named by its stack and id, from ``record``)."""
        self.update_resource_nowait(record, event, **fields).result()

    def update_resource_nowait(self, record: ResourceRecord, event: EventRecord | None = None, **fields: Any) -> Future[None]:
        return self.writes.submit(self._resource_write(record, event, fields))

    async def update_resource_async(self, record: ResourceRecord, event: EventRecord | None = None, **fields: Any) -> None:
        await self.writes.submit_async(self._resource_write(record, event, fields))

    def _resource_write(self, record: ResourceRecord, event: EventRecord | None, fields: dict[str, Any]) -> Statements:
        fields["updated_at"] = utcnow()
        return self._statements_for(tables.resources, record.id, fields, event, record.stack_id)

    @reads
    def list_resources(self, stack_id: str, status: str | None = None, sealed: bool = True) -> list[ResourceRecord]:
        """A stack's resource rows, oldest first; ``status``: only those in it. Without
        ``sealed``, the sealed columns (properties, attributes, data, definition) are not
        read and are None: a list of a thousand resources shown to a user needs none of
        them, and opening them was most of its cost."""
        table = tables.resources
        fields = _RESOURCE_FIELDS if sealed else _RESOURCE_OPEN_FIELDS
        query = sa.select(*(table.c[name] for name in fields)).where(table.c.stack_id == stack_id)
        if status is not None:
            query = query.where(table.c.status == status)
        with self._read() as connection:
            rows = connection.execute(query.order_by(table.c.id))
            return [ResourceRecord(**{name: getattr(row, name) for name in fields}) for row in rows]

    def delete_resources(self, stack_id: str, resource_ids: Iterable[int]) -> None:
        """Delete resource rows of one stack."""
        ids = list(resource_ids)
        if not ids:
            return
        resources = tables.resources
        statement = resources.delete().where(resources.c.stack_id == stack_id, resources.c.id.in_(sa.bindparam("ids", expanding=True)))
        # Chunks keep the statement under every driver's parameter limit.
        def write(connection: Connection) -> None:
            for start in range(0, len(ids), 500):
                connection.execute(statement, {"ids": ids[start:start + 500]})

        self.writes.run(write)

    # -- snapshots ---------------------------------------------------------------

    def save_snapshot(self, snapshot: SnapshotRecord) -> None:
        """Insert or replace a snapshot row."""
        table = tables.snapshots
        values = {name: getattr(snapshot, name) for name in ("id", "stack_id", "name", "status", "status_reason", "data")}
        values["created_at"] = snapshot.created_at or utcnow()
        snapshot.created_at = values["created_at"]

        def write(connection: Connection) -> None:
            connection.execute(table.delete().where(table.c.id == snapshot.id))
            connection.execute(table.insert(), values)

        self.writes.run(write)

    @reads
    def list_snapshots(self, stack_id: str) -> list[SnapshotRecord]:
        table = tables.snapshots
        with self._read() as connection:
            rows = connection.execute(sa.select(table).where(table.c.stack_id == stack_id).order_by(table.c.created_at))
            return [SnapshotRecord(row.id, row.stack_id, row.name, row.status, row.status_reason, row.data, row.created_at) for row in rows]

    def delete_snapshot(self, snapshot_id: str) -> None:
        table = tables.snapshots
        self.writes.run(lambda connection: connection.execute(table.delete().where(table.c.id == snapshot_id)))

    # -- locks -------------------------------------------------------------------

    def acquire_lock(
        self,
        stack_id: str,
        token: str,
        engine_id: str,
        lease_s: float,
        admit: Any = None,
        accepted: str | None = None,
    ) -> LockHolder | None:
        """Take the stack's lock for ``lease_s`` seconds with a new ``token``; None when
        taken, else the live holder. ``admit(stack)`` (the stack's row, None when there
        is none) decides whether the job may start: it runs in the transaction that
        takes the lock, so nothing can change the row between the decision and the
        lock, and when it raises, no lock is taken. With ``accepted`` (the accepted
        action the job runs), admit is told whether that action still waits to start:
        ``admit(stack, accepted_pending=...)``."""

        def write(connection: Connection) -> LockHolder | _Refused | None:
            # A savepoint: a refusal undoes this write alone, not the batch around it.
            savepoint = connection.begin_nested()
            try:
                # The lock row first, then the stack's: the order in which fenced writes
                # take them (PostgreSQL would otherwise deadlock the two).
                holder = locks.acquire(connection, stack_id, token, engine_id, utcnow(), timedelta(seconds=lease_s))
                if admit is not None:
                    stacks = tables.stacks
                    query = sa.select(stacks).where(stacks.c.id == stack_id)
                    row = connection.execute(query.with_for_update() if holder is None else query).first()
                    stack = stack_record(row) if row is not None else None
                    if accepted is None:
                        admit(stack)
                    else:
                        admit(stack, accepted_pending=self.serving.accepted_pending(connection, accepted, lock=holder is None))
            except Exception as refusal:  # noqa: BLE001 - handed back to the caller to raise
                if isinstance(refusal, sa.exc.DBAPIError) or connection.invalidated:
                    # The database failed (a lost connection): no answer, but the
                    # writer's to repeat or report; its savepoint went with it.
                    raise
                savepoint.rollback()
                return _Refused(refusal)
            savepoint.commit()
            return holder

        result = self.writes.run(Alone(write), fence=None)
        if isinstance(result, _Refused):
            raise result.error
        return result

    async def renew_lock_async(self, fence: Fence, lease_s: float) -> bool:
        return await self.writes.submit_async(lambda connection: locks.renew(connection, fence, utcnow(), timedelta(seconds=lease_s)), fence=None)

    def release_lock(self, fence: Fence) -> None:
        self.writes.run(Alone(lambda connection: locks.release(connection, fence)), fence=None)

    def request_cancel(self, stack_id: str, mode: str) -> bool:
        return self.writes.run(lambda connection: locks.request_cancel(connection, stack_id, mode), fence=None)

    @reads
    def cancel_requests(self) -> dict[tuple[str, str], str]:
        """Every cancel request on a held lock: (stack id, token) -> mode (engine/cancels.py)."""
        with self._read() as connection:
            return locks.cancel_requests(connection)

    @reads
    def resource_hook(self, record: ResourceRecord) -> str | None:
        table = tables.resources
        with self._read() as connection:
            return connection.execute(sa.select(table.c.hook).where(table.c.id == record.id, table.c.stack_id == record.stack_id)).scalar()

    @reads
    def lock_holder(self, stack_id: str) -> LockHolder | None:
        with self._read() as connection:
            return locks.holder(connection, stack_id)

    @reads
    def stacks_unfinished(self) -> list[StackRecord]:
        """Live stacks whose last action has not finished (candidates for recovery):
        IN_PROGRESS, or DELETE_COMPLETE and not yet marked deleted."""
        table = tables.stacks
        deleted = sa.and_(table.c.action == "DELETE", table.c.status == "COMPLETE")
        query = sa.select(table).where(sa.or_(table.c.status == "IN_PROGRESS", deleted), table.c.deleted_at.is_(None)).order_by(table.c.created_at)
        with self._read() as connection:
            return [stack_record(row) for row in connection.execute(query)]

