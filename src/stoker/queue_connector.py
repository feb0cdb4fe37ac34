"""procrastinate's connector for stoker's workers and servers, with lost connections
repeated as the store repeats its own (store/connection_loss.py).

procrastinate (3.x) does not repeat a query whose connection PostgreSQL ended (a
restart, a failover, ``pg_terminate_backend``): a lost heartbeat, fetch or finish stops
the whole worker (``ConnectorException``). Its pool checks a connection before handing
it out, so a query run again gets a fresh one. What is repeated, and how each query's
outcome is known when its connection went during it (procrastinate runs each of its
queries alone, in autocommit, so each is one transaction that did or did not commit):

* A read, the heartbeat, a worker's registration, and every other query: run again. A
  heartbeat or a read twice is harmless; a registration that committed before it was
  lost leaves a worker row with no heartbeat, pruned as stalled.
* Taking a job (``fetch_job``): it may have committed, the job then ``doing`` for this
  worker with nobody running it. Before taking another, the connector looks for such a
  job (``doing``, this worker's, not one this process took) and hands that one to the
  worker, so the job runs, once.
* Ending or re-queueing a job (``finish_job``, ``retry_job``): run again; when that
  finds the job no longer ``doing``, the lost one had committed, which is its outcome.

Owns: which queries are repeated and how, and the jobs this process has taken and not
ended (to tell a lost fetch's job). Must not: decide anything about what a job means
(``workers.py`` and ``unfinished_jobs.py`` do).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import procrastinate
from procrastinate import exceptions, sql

from stoker.store.connection_loss import RETRY_DELAYS_S, driver_lost

LOG = logging.getLogger(__name__)

_FETCH = sql.queries["fetch_job"]
_ENDS = (sql.queries["finish_job"], sql.queries["retry_job"])

# A job this worker took by a fetch whose connection was lost after it committed: the
# columns ``fetch_job`` returns.
_TAKEN_UNSEEN = """
SELECT id, status, task_name, priority, lock, queueing_lock, args, scheduled_at, queue_name, attempts, worker_id
  FROM procrastinate_jobs
 WHERE status = 'doing' AND worker_id = %(worker_id)s AND NOT (id = ANY(%(seen)s::bigint[]))
 ORDER BY id LIMIT 1
"""


def lost(error: BaseException) -> bool:
    """Whether procrastinate's error is a lost connection (its cause, psycopg's)."""
    return isinstance(error, exceptions.ConnectorException) and driver_lost(error.__cause__)


class QueueConnector(procrastinate.PsycopgConnector):
    """``PsycopgConnector`` whose queries are repeated on a lost connection (above)."""

    def __init__(self, **kwargs: Any):
        import psycopg_pool

        # A connection of its own for each query, none kept: with procrastinate's pool
        # of kept connections, terminating the worker's connections every second left
        # every query waiting for one (PoolTimeout after 30 s) until the worker stopped;
        # a query's own connection is fresh, and a lost one costs only that query, which
        # is repeated. procrastinate's queries are few (a fetch and an end per job, a
        # heartbeat every lease / 6).
        kwargs.setdefault("pool_factory", psycopg_pool.AsyncNullConnectionPool)
        super().__init__(**kwargs)
        # Jobs this process took (fetch_job returned them) and has not ended.
        self._taken: set[int] = set()

    async def execute_query_async(self, query: Any, **arguments: Any) -> None:
        await self._repeated(super().execute_query_async, query, arguments)
        if query in _ENDS:
            self._taken.discard(int(arguments["job_id"]))

    async def execute_query_one_async(self, query: Any, **arguments: Any) -> dict[str, Any]:
        row = await self._repeated(super().execute_query_one_async, query, arguments)
        if query == _FETCH and row is not None and row.get("id") is not None:
            self._taken.add(int(row["id"]))
        return row

    async def execute_query_all_async(self, query: Any, **arguments: Any) -> list[dict[str, Any]]:
        return await self._repeated(super().execute_query_all_async, query, arguments)

    async def _repeated(self, run: Any, query: Any, arguments: dict[str, Any]) -> Any:
        was_lost = False
        for attempt, delay in enumerate((*RETRY_DELAYS_S, None), 1):
            try:
                if was_lost and query == _FETCH:
                    unseen = await self._taken_unseen(arguments["worker_id"])
                    if unseen is not None:
                        LOG.warning("job %s was taken by a fetch whose connection was lost: running it", unseen["id"])
                        return unseen
                return await run(query, **arguments)
            except exceptions.ConnectorException as error:
                if query in _ENDS and not lost(error) and _not_doing(error):
                    # The job is no longer ``doing``: the lost attempt had ended it, or
                    # another worker settled it as stalled (its end is theirs now).
                    LOG.warning("job %s was ended already (%s): its end here is dropped", arguments.get("job_id"), "by the lost attempt" if was_lost else "by another worker")
                    return None
                if not lost(error) or delay is None:
                    raise
                was_lost = True
                LOG.warning("job queue: database connection lost (%s); trying again (%d of %d)", _text(error), attempt, len(RETRY_DELAYS_S))
            await asyncio.sleep(delay)
        raise AssertionError("unreachable")

    async def _taken_unseen(self, worker_id: Any) -> dict[str, Any] | None:
        rows = await super().execute_query_all_async(_TAKEN_UNSEEN, worker_id=worker_id, seen=sorted(self._taken))
        return rows[0] if rows else None


def _not_doing(error: BaseException) -> bool:
    """Whether procrastinate refused to end a job that is no longer ``doing``."""
    return "not in \"doing\"" in str(error.__cause__ or "")


def _text(error: BaseException) -> str:
    """The driver's class and first line (never the statement: it may quote data)."""
    cause = error.__cause__ or error
    return f"{type(cause).__name__}: {(str(cause).splitlines() or [''])[0]}"
