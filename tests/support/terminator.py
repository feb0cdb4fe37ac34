"""Terminates a process's database connections again and again (``pg_terminate_backend``,
as a PostgreSQL restart or an operator would), for the connection-loss tests. Only the
connections named ``application_name`` are ended: the database is shared with other
tests."""

from __future__ import annotations

import random
import threading

import sqlalchemy as sa


class Terminator:
    """Terminates every connection named ``application_name``, over and over, from a
    thread of its own, until stopped; counts the connections it ended."""

    def __init__(self, url: str, application_name: str, every_s: float | tuple[float, float] = (0.1, 0.5)):
        """``every_s``: the pause between rounds (seconds), or the bounds of a pause drawn
        at random each round, so that the losses fall at every point of the server's
        transactions and not in step with them."""
        self.engine = sa.create_engine(url)
        self.application_name = application_name
        self.ended = 0
        self.rounds = 0
        self.every_s = every_s
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def terminate(self) -> int:
        with self.engine.begin() as connection:
            return connection.execute(
                sa.text("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = :name AND pid <> pg_backend_pid()"),
                {"name": self.application_name},
            ).scalar()

    def _run(self) -> None:
        while not self.stopping.wait(self._pause()):
            self.ended += self.terminate()
            self.rounds += 1

    def _pause(self) -> float:
        if isinstance(self.every_s, tuple):
            return random.uniform(*self.every_s)  # noqa: S311 - timing, not secrecy
        return self.every_s

    def __enter__(self) -> Terminator:
        self.thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stopping.set()
        self.thread.join()
        self.engine.dispose()
