"""The job queue stoker runs stack actions on: procrastinate's app on the store's
PostgreSQL, its schema (created and migrated by its own scripts), a ``Job`` as a job's
sealed arguments, and the few queries stoker runs on procrastinate's table itself
(enqueue in the caller's transaction, what waits, the tree's share, cancelling a job no
worker has taken). ``workers.py`` owns who runs the jobs and when.

Must not: run jobs, or keep a queue of its own (procrastinate is the queue).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from stoker.engine.engine import Job
from stoker.engine.states import Action
from stoker.sdk.exceptions import StokerError
from stoker.store import Store
from stoker.store.connection_loss import repeated
from stoker.store.writer import Alone

LOG = logging.getLogger(__name__)

TASK = "stoker.stack_job"
# A signal to a resource that resizes a nested stack (a ScalingPolicy): engine/scaling.py.
SIGNAL_TASK = "stoker.scaling_signal"
QUEUE = "stacks"


class WorkerConfigurationError(StokerError):
    """Workers need PostgreSQL (the store and the queue are the same database)."""


def conninfo(database_url: str) -> str:
    """The libpq URI psycopg takes, from the store's SQLAlchemy URL."""
    from sqlalchemy.engine import make_url

    url = make_url(database_url)
    if url.get_backend_name() != "postgresql":
        raise WorkerConfigurationError(
            f"Workers need PostgreSQL: the job queue lives in the store's database, and {url.get_backend_name()} is not PostgreSQL",
            hint="set STOKER_DATABASE_URL=postgresql://user@host/database (SQLite runs each action in the command's own process)",
        )
    return url.set(drivername="postgresql").render_as_string(hide_password=False)


def make_app(database_url: str) -> Any:
    import procrastinate

    from stoker.queue_connector import QueueConnector

    # Its queries are repeated on a lost connection (queue_connector.py).
    return procrastinate.App(connector=QueueConnector(conninfo=conninfo(database_url)))


# Which of procrastinate's migrations the queue's schema has: the name of the last one
# (procrastinate names them by the version that brought them, so they sort in order).
SCHEMA_MARK_TABLE = "stoker_queue_schema"


def procrastinate_migrations() -> list[tuple[str, str]]:
    """procrastinate's migration scripts, in order: (name, path)."""
    from pathlib import Path

    from procrastinate.schema import SchemaManager

    folder = Path(SchemaManager.get_migrations_path())
    return sorted((path.stem, str(path)) for path in folder.glob("*.sql"))


def ensure_schema(store: Store) -> list[str]:
    """procrastinate's tables, functions and types in the store's database: created when
    missing, brought up to the installed procrastinate by its own migration scripts
    otherwise (those after the last one applied, in order). One transaction, serialised
    by an advisory lock between processes starting together; every server and worker
    calls it at start. Returns the migrations applied."""
    from pathlib import Path

    import psycopg
    import sqlalchemy as sa
    from procrastinate.schema import SchemaManager

    migrations = procrastinate_migrations()
    latest = migrations[-1][0]
    applied: list[str] = []
    with store.engine.begin() as connection:
        connection.execute(
            sa.text(
                "SELECT pg_advisory_xact_lock(hashtext('stoker.procrastinate.' || current_schema()))"
            )
        )
        connection.execute(
            sa.text(f"CREATE TABLE IF NOT EXISTS {SCHEMA_MARK_TABLE} (migration text NOT NULL)")
        )
        found = connection.execute(sa.text("SELECT to_regclass('procrastinate_jobs')")).scalar()
        mark = connection.execute(sa.text(f"SELECT migration FROM {SCHEMA_MARK_TABLE}")).scalar()
        # Run as they are: their text has '%' signs that are no placeholders.
        raw = connection.connection.dbapi_connection
        assert isinstance(raw, psycopg.Connection)  # the store's PostgreSQL driver
        with raw.cursor() as cursor:
            if found is None:
                cursor.execute(SchemaManager.get_schema())
            elif mark is not None:
                for name, path in migrations:
                    if name > mark:
                        LOG.warning(
                            "upgrading the job queue's schema: procrastinate migration %s", name
                        )
                        cursor.execute(Path(path).read_text(encoding="utf-8"))
                        applied.append(name)
            # else: made before stoker kept the mark, by this procrastinate: it is current.
        if mark != latest:
            connection.execute(sa.text(f"DELETE FROM {SCHEMA_MARK_TABLE}"))
            connection.execute(
                sa.text(f"INSERT INTO {SCHEMA_MARK_TABLE} (migration) VALUES (:latest)"),
                {"latest": latest},
            )
    return applied


# -- a Job as a job's arguments ---------------------------------------------------------


def job_arguments(job: Job, store: Store, tree: str | None = None) -> dict[str, Any]:
    fields = {
        "stack_id": job.stack_id,
        "action": str(job.action),
        "template_id": job.template_id,
        "parameters": dict(job.parameters),
        "resume": job.resume,
        "adopt_data": dict(job.adopt_data),
        "snapshot_id": job.snapshot_id,
        "queued": job.queued,
        "stack_fields": dict(job.stack_fields),
        "accepted": job.accepted,
    }
    arguments = {
        "stack_id": job.stack_id,
        "action": str(job.action),
        "job": store.sealer.seal_value(fields),
    }
    if tree is not None:
        arguments["tree"] = tree  # a nested stack's job: its root stack (ChildJobs' share)
    return arguments


def job_from_arguments(arguments: Mapping[str, Any], store: Store) -> Job:
    fields = dict(store.sealer.open_value(arguments["job"], "job arguments"))
    fields["action"] = Action(fields["action"])
    return Job(**fields)


def enqueue_on(
    app: Any,
    store: Store,
    connection: Any,
    job: Job,
    queueing_lock: str | None = None,
    tree: str | None = None,
) -> int:
    """Enqueue ``job`` in the transaction of ``connection`` (a SQLAlchemy connection of
    the store). With ``queueing_lock``, procrastinate refuses a second job with the same
    lock while the first still waits (``AlreadyEnqueued``); ``tree``: the root stack of
    a nested stack's job."""
    dbapi = connection.connection.dbapi_connection
    task = app.configure_task(TASK, queue=QUEUE, connection=dbapi, queueing_lock=queueing_lock)
    return int(task.defer(**job_arguments(job, store, tree)))


def connection_lost(error: BaseException) -> bool:
    """Whether ``error`` is a lost database connection, the store's or the queue's."""
    from stoker import queue_connector
    from stoker.store import connection_loss

    return connection_loss.lost(error) or queue_connector.lost(error)


def pending_job_stacks(store: Store, stack_ids: list[str]) -> set[str]:
    """The stacks among ``stack_ids`` with a job waiting in the queue or running
    (procrastinate's ``todo`` and ``doing``): not abandoned, whatever their lock says."""
    import sqlalchemy as sa

    if not stack_ids:
        return set()
    query = sa.text(
        "SELECT DISTINCT args->>'stack_id' FROM procrastinate_jobs "
        "WHERE status IN ('todo', 'doing') AND task_name = :task AND args->>'stack_id' IN :ids"
    ).bindparams(sa.bindparam("ids", expanding=True))

    def read() -> set[str]:
        with store.engine.connect() as connection:
            return {row[0] for row in connection.execute(query, {"task": TASK, "ids": stack_ids})}

    return repeated(read)


# How long a queue write of the store's writer thread waits for a job row another
# transaction holds (seconds). A worker taking a job holds its row until its own event
# loop commits the fetch; that loop may itself wait for this process's writer thread,
# so a write there that waited for the row without end would stop the whole worker.
QUEUE_LOCK_WAIT_S = 2


def bounded_lock_wait(connection: Any) -> None:
    """In the caller's transaction: a row or lock it waits for longer than
    QUEUE_LOCK_WAIT_S fails it (``lock_wait_ran_out``) instead of waiting on."""
    import sqlalchemy as sa

    connection.execute(sa.text(f"SET LOCAL lock_timeout = '{QUEUE_LOCK_WAIT_S}s'"))


def lock_wait_ran_out(error: BaseException) -> bool:
    """Whether ``error`` (or what caused it) is PostgreSQL's lock_not_available."""
    seen: BaseException | None = error
    while seen is not None:
        if (
            getattr(seen, "sqlstate", None) == "55P03"
            or getattr(getattr(seen, "orig", None), "sqlstate", None) == "55P03"
        ):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def tree_jobs_held(connection: Any, tree: str) -> int:
    """The nested stacks' jobs of stack tree ``tree`` (its root's id) waiting or running,
    counted in the caller's transaction under the tree's advisory lock (held until it
    ends), so two parents of one tree enqueueing at once count each other's."""
    import sqlalchemy as sa

    connection.execute(
        sa.text("SELECT pg_advisory_xact_lock(hashtext('stoker.tree.' || :tree))"), {"tree": tree}
    )
    query = "SELECT count(*) FROM procrastinate_jobs WHERE status IN ('todo', 'doing') AND task_name = :task AND args->>'tree' = :tree"
    return int(connection.execute(sa.text(query), {"task": TASK, "tree": tree}).scalar_one())


def waiting_job(store: Store, queueing_lock: str) -> int | None:
    """The id of the job with this queueing lock that waits for a worker, if any."""
    import sqlalchemy as sa

    def read() -> int | None:
        with store.engine.connect() as connection:
            return connection.execute(
                sa.text(
                    "SELECT id FROM procrastinate_jobs WHERE queueing_lock = :lock AND status = 'todo'"
                ),
                {"lock": queueing_lock},
            ).scalar()

    return repeated(read)


def cancel_waiting_job(store: Store, job_id: int) -> bool:
    """Cancel a job no worker has taken yet (procrastinate's own cancel query, which
    touches only a ``todo`` job); False when a worker has it, or it has ended."""
    from procrastinate import sql

    def write(connection: Any) -> bool:
        bounded_lock_wait(connection)
        with connection.connection.dbapi_connection.cursor() as cursor:
            cursor.execute(
                sql.queries["cancel_job"], {"job_id": job_id, "abort": False, "delete_job": False}
            )
            row = cursor.fetchone()
        return row is not None and row[0] is not None

    try:
        return bool(store.writes.run(Alone(write), fence=None))
    except Exception as error:
        if lock_wait_ran_out(error):
            return False  # a worker is taking it now
        raise
