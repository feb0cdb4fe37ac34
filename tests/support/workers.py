"""A real cluster for the workers' tests: ``stoker serve --job-queue procrastinate`` and
``stoker worker`` processes on a PostgreSQL schema of the test's own, with the reads the
tests make of it (the stacks' own events, the lock rows, procrastinate's jobs)."""

from __future__ import annotations

import os
import signal
import subprocess
from collections import Counter
from pathlib import Path

import sqlalchemy as sa
from cryptography.fernet import Fernet

from tests.support.server import STOKER, Server
from tests.support.waiting import settled, wait_until


class Cluster:
    def __init__(self, database_url: str, directory: Path):
        self.environment = {
            **os.environ,
            "STOKER_DATABASE_URL": database_url,
            "STOKER_JOB_QUEUE": "procrastinate",
            # Every process seals and opens with the same key (job arguments, parameters).
            "STOKER_ENCRYPTION_KEY": Fernet.generate_key().decode(),
            # A dead worker's stacks are resumed once their lease has run out.
            "STOKER_LOCK_LEASE_S": "6",
        }
        self.environment.pop("STOKER_DEBUG", None)
        self.directory = directory
        self.server = Server(database_url, directory / "serve.log", **{k: v for k, v in self.environment.items() if k.startswith("STOKER_")})
        self.workers: list[tuple[subprocess.Popen, Path]] = []
        self.database_url = database_url

    def start_worker(self, *options: str, fault: str | None = None, application_name: str | None = None) -> subprocess.Popen:
        """A ``stoker worker``; ``fault``: the point at which it stops itself
        (``STOKER_FAULT_AT``, see stoker/faults.py); ``application_name``: what its
        database connections are named (every one: the store's, procrastinate's)."""
        log = self.directory / f"worker-{len(self.workers)}.log"
        command = [STOKER, "worker", "--concurrency", "10", *options]
        environment = {**self.environment, "STOKER_FAULT_AT": fault} if fault else dict(self.environment)
        if application_name is not None:
            separator = "&" if "?" in self.database_url else "?"
            environment["STOKER_DATABASE_URL"] = f"{self.database_url}{separator}application_name={application_name}"
        process = subprocess.Popen(command, env=environment, stdout=log.open("w"), stderr=subprocess.STDOUT)
        self.workers.append((process, log))
        return process

    def wait(self, name: str, timeout: float = 240) -> dict:
        """The stack ``name`` once its action ended (deleted: gone by name)."""

        def ended() -> dict | None:
            status, body = self.server.request("GET", f"/stacks/{name}")
            if status == 404:
                return {"stack_status": "DELETE_COMPLETE"}
            assert status == 200, body
            return body["stack"] if settled(body["stack"]["stack_status"]) else None

        return wait_until(ended, f"stack {name}", timeout, interval_s=0.5)

    def stop(self) -> None:
        for process, _ in self.workers:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process, _ in self.workers:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
        if self.server.process is not None and self.server.process.poll() is None:
            self.server.stop()

    def execute(self, statement: str, **parameters) -> None:
        """A write of the test's own (a forged lock row, say), committed."""
        engine = sa.create_engine(self.database_url.replace("postgresql://", "postgresql+psycopg://", 1))
        try:
            with engine.begin() as connection:
                connection.execute(sa.text(statement), parameters)
        finally:
            engine.dispose()

    def scalar(self, query: str, **parameters) -> object:
        engine = sa.create_engine(self.database_url.replace("postgresql://", "postgresql+psycopg://", 1))
        try:
            with engine.connect() as connection:
                return connection.execute(sa.text(query), parameters).scalar()
        finally:
            engine.dispose()


def started_actions(cluster: Cluster, name: str) -> Counter:
    """How many times each action of the stack started (its own events)."""
    status, body = cluster.server.request("GET", f"/stacks/{name}")
    assert status == 200, body
    stack_id = body["stack"]["id"]
    status, body = cluster.server.request("GET", f"/stacks/{name}/{stack_id}/events?limit=1000")
    assert status == 200, body
    own = [e for e in body["events"] if e["logical_resource_id"] == name and e["physical_resource_id"] == stack_id]
    return Counter(e["resource_status_reason"] for e in own if e["resource_status"].endswith("_IN_PROGRESS"))


def wait_until_held_by(cluster: Cluster, worker: subprocess.Popen) -> None:
    """Until ``worker`` holds the (one) stack's lock: it runs the action."""
    wait_until(lambda: cluster.scalar("SELECT pid FROM stack_locks") == worker.pid, "the worker to take the stack")


def wait_until_polled(cluster: Cluster, resource: str) -> None:
    """Until ``resource``'s create handler has returned and its token is stored: the engine
    polls it now, and an engine that dies from here is resumed by another. (Killed before,
    the resource's progress is unknown and it is failed, by design: on a loaded machine
    that window, from the lock taken to the token stored, lasted long enough to be hit.)"""
    query = "SELECT count(*) FROM resources WHERE name = :name AND handler_token IS NOT NULL AND handler_token::text <> 'null'"
    wait_until(lambda: cluster.scalar(query, name=resource) == 1, f"{resource}'s handler to return")


def stack_tree(cluster: Cluster, stack_id: str) -> list[str]:
    """The ids of a stack and every stack below it."""
    engine = sa.create_engine(cluster.database_url.replace("postgresql://", "postgresql+psycopg://", 1))
    try:
        with engine.connect() as connection:
            found, level = [stack_id], [stack_id]
            while level:
                level = list(connection.execute(sa.text("SELECT id FROM stacks WHERE owner_id IN :ids").bindparams(sa.bindparam("ids", expanding=True)), {"ids": level}).scalars())
                found += level
            return found
    finally:
        engine.dispose()


def process_stopped(process: subprocess.Popen) -> bool:
    """Whether the process is stopped (SIGSTOP: state T in /proc)."""
    with open(f"/proc/{process.pid}/stat") as stat:
        return stat.read().split(")")[-1].split()[0] in ("T", "t")
