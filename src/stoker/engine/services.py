"""The engine as a service (Heat's ``service_manage_report`` and ``service_manage_cleanup``):
an engine serving the API writes its row in the service table when it starts, reports
every ``report_interval_s`` seconds that it is alive, prunes the rows of engines of its
host that stopped reporting three intervals ago, and deletes its row when it stops.

``GET /services`` reads the rows (``formatted``): an engine whose last report is more
than two intervals old is ``down``, as in Heat's ``format_service``. This module knows
nothing of stacks or jobs; it must not hold a stack's lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from datetime import datetime, timedelta
from typing import Any

from stoker.identifiers import new_id
from stoker.store import Store
from stoker.store.repository import utcnow

LOG = logging.getLogger(__name__)

# Heat's values for its engine service.
BINARY = "heat-engine"
TOPIC = "engine"


class ServiceReport:
    """This engine's row in the service table, kept alive while it serves."""

    def __init__(self, store: Store, engine_id: str, report_interval_s: int, host: str | None = None):
        self.store = store
        self.engine_id = engine_id
        self.report_interval_s = max(1, int(report_interval_s))
        self.hostname = socket.gethostname()
        # Heat's ``host`` option defaults to the host name too.
        self.host = host or self.hostname
        self.service_id: str | None = None
        self._task: asyncio.Task[None] | None = None

    def report(self) -> None:
        """Write the row the first time, then mark it reported; prune the dead."""
        now = utcnow()
        if self.service_id is None:
            self.service_id = new_id()
            self.store.serving.add_service(
                {
                    "id": self.service_id,
                    "engine_id": self.engine_id,
                    "host": self.host,
                    "hostname": self.hostname,
                    "binary": BINARY,
                    "topic": TOPIC,
                    "report_interval": self.report_interval_s,
                    # Heat reports the row right after creating it: updated_at is set.
                    "created_at": now,
                    "updated_at": now,
                    "deleted_at": None,
                }
            )
        else:
            self.store.serving.report_service(self.service_id, now)
        self.prune(now)

    def prune(self, now: datetime) -> None:
        """Heat's cleanup: rows of this host and binary not reported for three intervals."""
        before = now - timedelta(seconds=3 * self.report_interval_s)
        stale = [
            row["id"]
            for row in self.store.serving.list_services()
            if row["id"] != self.service_id
            and (row["host"], row["binary"], row["hostname"]) == (self.host, BINARY, self.hostname)
            and row["updated_at"] is not None
            and row["updated_at"] < before
        ]
        self.store.serving.delete_services(stale, now)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        """Report now, then every interval on ``loop`` until ``stop``."""
        self.report()
        self._task = loop.create_task(self._report_forever())

    async def _report_forever(self) -> None:
        while True:
            await asyncio.sleep(self.report_interval_s)
            try:
                await asyncio.to_thread(self.report)
            except Exception:  # noqa: BLE001 - a missed report is retried at the next interval
                LOG.exception("reporting engine %s as alive failed", self.engine_id)

    async def stop(self) -> None:
        """Stop reporting and delete the row: this engine no longer serves."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        if self.service_id is not None:
            await asyncio.to_thread(self.store.serving.delete_services, [self.service_id], utcnow())
            self.service_id = None


def _isoformat(value: datetime | None) -> str | None:
    return value.replace(microsecond=0).isoformat() if value is not None else None


def formatted(row: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """One row as Heat's ``format_service`` answers it (``status`` up or down)."""
    now = now or utcnow()
    last = row["updated_at"] or row["created_at"]
    status = "up" if (now - last).total_seconds() <= 2 * row["report_interval"] else "down"
    return {
        "id": row["id"],
        "binary": row["binary"],
        "engine_id": row["engine_id"],
        "host": row["host"],
        "hostname": row["hostname"],
        "topic": row["topic"],
        "report_interval": row["report_interval"],
        "created_at": _isoformat(row["created_at"]),
        "updated_at": _isoformat(row["updated_at"]),
        "deleted_at": _isoformat(row["deleted_at"]),
        "status": status,
    }
