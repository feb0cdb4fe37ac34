"""Jobs their worker left unfinished: stalled (the worker's heartbeat stopped: it died)
or handed back at SIGTERM before their action started (procrastinate ended them
``aborted``). Owns how each is settled, in one transaction under the job row's lock, so
that the queue and the stack's accepted action (``tables.accepted_actions``) agree and
two workers looking at once settle a job once.

What it must not do: run a job or resume a stack (``workers.StackWorker`` and the
recovery do), or settle a job whose worker lives.
"""

from __future__ import annotations

import json
from typing import Any

import sqlalchemy as sa

from stoker.store import Store, locks
from stoker.store.repository import utcnow
from stoker.store.writer import Alone

# The job, locked, if it is still ``doing`` for a worker whose heartbeat is older than
# :stale_s seconds (or that procrastinate pruned): procrastinate's stalled-job query for
# one job, read under the row's lock so that only one worker settles it.
_STALLED_JOB = """
SELECT job.id, job.queue_name FROM procrastinate_jobs job
 WHERE job.id = :job_id AND job.status = 'doing'
   AND (job.worker_id IS NULL OR job.worker_id IN (
        SELECT id FROM procrastinate_workers WHERE last_heartbeat < NOW() - make_interval(secs => :stale_s)))
   FOR UPDATE OF job
"""


def settle_stalled_job(store: Store, job_id: int, stale_s: float) -> str:
    """Settle one job of a dead worker, in one transaction under the job row's lock
    (the stack's accepted action and the queue agree): an accepted action that never
    started goes back to the queue, once nothing live holds its stack's lock (a job
    taking the lock now would be refused); any other job is marked failed (its action
    started, and is the recovery's). Returns what was done, in words."""

    def write(connection: Any) -> str:
        job = connection.execute(sa.text(_STALLED_JOB), {"job_id": job_id, "stale_s": stale_s}).first()
        if job is None:
            return "settled by another worker, or its worker lives"
        stack_id = store.serving.accepted_stack_of_job(connection, job_id)
        if stack_id is None:
            connection.execute(sa.text("SELECT procrastinate_finish_job_v1(:job_id, 'failed', false)"), {"job_id": job_id})
            return "marked failed (its action, if it started one, is resumed by the recovery)"
        holder = locks.holder(connection, stack_id)
        if holder is not None and holder.alive(utcnow()):
            return f"waits (the lock of stack {stack_id} is held until {holder.expires_at:%H:%M:%S})"
        connection.execute(sa.text("SELECT procrastinate_retry_job_v2(:job_id, NOW(), NULL, NULL, NULL)"), {"job_id": job_id})
        _notify_queued(connection, job_id, job.queue_name)
        return "its accepted action never started: queued again"

    return str(store.writes.run(Alone(write), fence=None))


# Jobs of accepted actions that a worker handed back at SIGTERM before they started
# (procrastinate ended them ``aborted``), locked; SKIP LOCKED: another worker has them.
_HANDED_BACK_JOBS = """
SELECT job.id, job.queue_name, accepted.stack_id FROM procrastinate_jobs job
  JOIN accepted_actions accepted ON accepted.job_id = job.id
 WHERE job.status = 'aborted'
   FOR UPDATE OF job SKIP LOCKED
"""


def requeue_handed_back_jobs(store: Store) -> list[str]:
    """Put back in the queue, in one transaction, the jobs of accepted actions that a
    stopping worker cancelled before they started (their rows are still there), once
    nothing live holds their stacks' locks. procrastinate retries only ``doing`` and
    ``failed`` jobs: an aborted one goes back to ``todo`` by a plain update. Returns
    what was done, in words."""

    def write(connection: Any) -> list[str]:
        done = []
        for job in connection.execute(sa.text(_HANDED_BACK_JOBS)).all():
            holder = locks.holder(connection, job.stack_id)
            if holder is not None and holder.alive(utcnow()):
                continue
            connection.execute(sa.text("UPDATE procrastinate_jobs SET status = 'todo', attempts = attempts + 1 WHERE id = :job_id"), {"job_id": job.id})
            _notify_queued(connection, job.id, job.queue_name)
            done.append(f"job {job.id} was handed back before its accepted action started: queued again")
        return done

    return list(store.writes.run(Alone(write), fence=None))


def _notify_queued(connection: Any, job_id: int, queue: str) -> None:
    """procrastinate tells idle workers of inserted jobs only: a job queued again is new
    to them."""
    payload = json.dumps({"type": "job_inserted", "job_id": job_id})
    connection.execute(sa.text("SELECT pg_notify('procrastinate_queue_v1#' || :queue, :payload)"), {"queue": queue, "payload": payload})
