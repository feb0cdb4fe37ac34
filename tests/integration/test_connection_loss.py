"""Database connections dropped under a real ``stoker serve`` on PostgreSQL: while 30
stack creates are sent and run, and then while the 30 stacks are deleted, the test has
PostgreSQL terminate every connection of the server again and again
(``pg_terminate_backend``, as a restart or an operator would, at random moments). Every
create and delete is accepted and every stack reaches CREATE_COMPLETE, then
DELETE_COMPLETE: reads and write transactions lost with their connection are run again
(store/connection_loss.py), including a write that met the loss inside a transaction it
went on with (a lock taken with its admission), and the server logs no traceback.

Only the server's own connections are terminated (by their application_name): the
database is shared with other tests.
"""

from __future__ import annotations

import inspect
import logging
import time
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from stoker.store import Store, tables
from stoker.store.drift import DriftRepository
from stoker.store.events import EventRepository
from stoker.store.serving import ServingRepository
from stoker.store.signals import SignalRepository
from stoker.store.software_configs import SoftwareConfigRepository
from tests.support.records import make_stack
from tests.support.server import Server
from tests.support.terminator import Terminator

pytestmark = pytest.mark.postgres

TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "resources": {
        # In flight for a while, so that connections are lost while actions run.
        **{f"slow{index}": {"type": "OS::Heat::TestResource", "properties": {"wait_secs": 1, "value": f"v{index}"}} for index in range(3)},
        "after": {"type": "OS::Heat::TestResource", "depends_on": ["slow0", "slow1", "slow2"], "properties": {"value": "done"}},
    },
}
STACKS = 30


@pytest.fixture
def application_name() -> str:
    return f"stoker-loss-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def server(postgres_url: str, application_name: str, tmp_path) -> Iterator[Server]:
    running = Server(f"{postgres_url}&application_name={application_name}", tmp_path / "server.log", STOKER_AUTH_MODE="none").start()
    yield running
    if running.process is not None and running.process.poll() is None:  # the test stops it itself when it passes
        running.stop()


def test_connection_loss_thirty_creates_complete_while_connections_are_terminated(server, postgres_server, application_name):
    ids = []
    with Terminator(postgres_server, application_name) as terminator:
        for number in range(STACKS):
            status, body = server.request("POST", "/stacks", {"stack_name": f"lossy-{number}", "template": TEMPLATE})
            assert status == 201, (number, body)
            ids.append(body["stack"]["id"])
        # The actions are still in flight: terminate on until the first has finished.
        server.wait_for(ids[0], timeout=120)
    assert terminator.ended >= 3, f"only {terminator.ended} connections were terminated in {terminator.rounds} rounds"
    outcomes = {stack_id: server.wait_for(stack_id, timeout=120) for stack_id in ids}
    failed = {found["stack_name"]: (found["stack_status"], found["stack_status_reason"]) for found in outcomes.values() if found["stack_status"] != "CREATE_COMPLETE"}
    assert not failed, failed
    # Every resource of every stack is there and complete.
    status, body = server.request("GET", f"/stacks/lossy-0/{ids[0]}/resources")
    assert status == 200 and {resource["resource_status"] for resource in body["resources"]} == {"CREATE_COMPLETE"}, body
    with Terminator(postgres_server, application_name) as terminator:
        for number, stack_id in enumerate(ids):
            status, body = server.request("DELETE", f"/stacks/lossy-{number}/{stack_id}")
            assert status == 204, (number, body)
        server.wait_for(ids[0], timeout=120)
    assert terminator.ended >= 3, f"only {terminator.ended} connections were terminated in {terminator.rounds} rounds"
    outcomes = {stack_id: server.wait_for(stack_id, timeout=120) for stack_id in ids}
    failed = {found["stack_name"]: (found["stack_status"], found["stack_status_reason"]) for found in outcomes.values() if found["stack_status"] != "DELETE_COMPLETE"}
    assert not failed, failed
    log = server.stop()
    assert "Traceback" not in log, log[-4000:]
    assert "database connection lost" in log  # the repeats are logged, one line each


def test_connection_loss_every_read_of_the_store_is_repeated():
    # A read method added later is repeated too, or this names it: the core's and its parts'.
    unrepeated = []
    for repository in (Store, EventRepository, SignalRepository, SoftwareConfigRepository, ServingRepository, DriftRepository):
        for name, method in inspect.getmembers(repository, inspect.isfunction):
            source = inspect.getsource(inspect.unwrap(method))
            if "self._read()" in source and name not in ("migrate", "_read") and not hasattr(method, "__wrapped__"):
                unrepeated.append(f"{repository.__name__}.{name}")
    assert not unrepeated, f"reads not marked @reads (store/connection_loss.py): {unrepeated}"


def test_connection_loss_inside_a_lock_taken_with_its_admission_is_repeated(postgres_url):
    # The loss falls inside the lock's write, at the statement that reads the stack for
    # its admission: the write went on from there before (it took the failure for the
    # admission's refusal) and the COMMIT then found the transaction invalid. The
    # connection is terminated by PostgreSQL just before that statement, twice: the
    # writer's batch and then its one-by-one attempt each meet it.
    store = Store(postgres_url)
    store.migrate()
    killer = sa.create_engine(postgres_url)
    terminated = []

    def terminate_before_the_admission(connection, cursor, statement, parameters, context, executemany):
        if len(terminated) < 2 and statement.startswith("SELECT stacks.id"):
            pid = connection.connection.dbapi_connection.info.backend_pid
            with killer.begin() as side:
                side.execute(sa.text("SELECT pg_terminate_backend(:pid, 10000)"), {"pid": pid})
            terminated.append(pid)

    try:
        stack = make_stack(store)
        admitted = []
        sa.event.listen(store.engine, "before_cursor_execute", terminate_before_the_admission)
        assert store.acquire_lock(stack.id, "mine", "engine", 60.0, admitted.append) is None  # taken: no refusal, no error
        assert len(terminated) == 2
        assert [found.id for found in admitted] == [stack.id]  # admitted once, by the repeat that committed
        with killer.connect() as connection:
            assert connection.execute(sa.select(tables.stack_locks.c.token).where(tables.stack_locks.c.stack_id == stack.id)).scalar() == "mine"
    finally:
        store.close()
        killer.dispose()


SWEEP_TEMPLATE = """\
heat_template_version: 2021-04-16
resources:
  a: {type: OS::Heat::TestResource, properties: {value: x}}
  b: {type: OS::Heat::TestResource, depends_on: a, properties: {value: y}}
"""


def test_connection_loss_at_each_statement_of_a_create_is_repeated(postgres_url):
    # A stack created again and again, its connection terminated by PostgreSQL just
    # before the N-th statement the create sends, for every N the create has: each
    # completes, whichever read, write, savepoint, lock or event the loss falls on.
    from stoker.service import Service, Source
    from stoker.settings import Settings

    service = Service(Settings(database_url=postgres_url))
    killer = sa.create_engine(postgres_url)
    state = {"sent": 0, "at": 0, "terminated": None}

    def terminate_at_the_chosen_statement(connection, cursor, statement, parameters, context, executemany):
        state["sent"] += 1
        if state["terminated"] is None and state["sent"] == state["at"]:
            state["terminated"] = statement.split("(")[0][:60]
            with killer.begin() as side:
                side.execute(sa.text("SELECT pg_terminate_backend(:pid, 10000)"), {"pid": connection.connection.dbapi_connection.info.backend_pid})

    sa.event.listen(service.store.engine, "before_cursor_execute", terminate_at_the_chosen_statement)
    met = []
    try:
        for at in range(1, 500):
            state.update(sent=0, at=at, terminated=None)
            stack = service.create_stack(f"swept-{at}", Source(SWEEP_TEMPLATE, "swept.yaml"))
            assert (stack.action, stack.status) == ("CREATE", "COMPLETE"), (at, state["terminated"], stack.status_reason)
            if state["terminated"] is None:  # past the create's last statement
                break
            met.append(state["terminated"])
    finally:
        service.close()
        killer.dispose()
    # The loss fell on every kind of statement a create sends.
    kinds = {statement.split()[0] for statement in met}
    assert {"SELECT", "INSERT", "DELETE", "SAVEPOINT", "RELEASE"} <= kinds, met
    assert len(met) >= 20, met


def test_connection_loss_met_again_in_its_transaction_is_a_lost_connection(postgres_url):
    # SQLAlchemy raises PendingRollbackError (no DBAPIError) when a connection whose
    # database connection was lost is used again inside its transaction: it is a lost
    # connection to repeat, and an API answer of 503 with Retry-After, never a 500.
    from sqlalchemy.exc import PendingRollbackError

    from stoker.api.errors import error_response
    from stoker.store import connection_loss

    engine, killer = sa.create_engine(postgres_url), sa.create_engine(postgres_url)
    try:
        with engine.connect() as connection:
            connection.execute(sa.text("SELECT 1"))  # in a transaction from here
            with killer.begin() as side:
                side.execute(sa.text("SELECT pg_terminate_backend(:pid, 10000)"), {"pid": connection.connection.dbapi_connection.info.backend_pid})
            with pytest.raises(sa.exc.OperationalError):
                connection.execute(sa.text("SELECT 2"))
            with pytest.raises(PendingRollbackError) as raised:
                connection.execute(sa.text("SELECT 3"))
    finally:
        engine.dispose()
        killer.dispose()
    error = raised.value
    assert connection_loss.lost(error)
    calls = []

    def unit() -> str:
        calls.append(1)
        if len(calls) == 1:
            raise error
        return "read"

    assert connection_loss.repeated(unit) == "read" and len(calls) == 2
    response = error_response(error)
    assert response.status_code == 503 and response.headers["Retry-After"] == "5"
    assert b"SELECT" not in response.body and b"The database could not answer" in response.body


def test_connection_loss_longer_than_the_repeats_leaves_no_stack_in_progress(server, postgres_server, application_name):
    # Stacks are accepted and their creates run; then PostgreSQL ends the server's
    # connections every few milliseconds for 8 s, longer than a transaction's repeats
    # last (5.55 s), so the jobs fail to write their progress and their end. Once the
    # database answers again, every stack leaves IN_PROGRESS without a restart (a job
    # that failed so is resumed as a restart would), and the log has no traceback.
    ids = []
    for number in range(6):
        status, body = server.request("POST", "/stacks", {"stack_name": f"storm-{number}", "template": TEMPLATE})
        assert status == 201, body
        ids.append(body["stack"]["id"])
    with Terminator(postgres_server, application_name, every_s=(0.001, 0.004)) as terminator:
        time.sleep(8)
    assert terminator.ended >= 20, terminator.ended
    outcomes = {stack_id: server.wait_for(stack_id, timeout=180) for stack_id in ids}
    unfinished = {found["stack_name"]: found["stack_status"] for found in outcomes.values() if found["stack_status"].endswith("IN_PROGRESS")}
    assert not unfinished, unfinished
    log = server.stop()
    assert "Traceback" not in log, log[-4000:]


def test_connection_loss_met_by_the_pool_on_a_checkin_is_one_warning_line(postgres_url, caplog):
    # A connection PostgreSQL ended while it was checked out goes back to the pool, which
    # rolls it back and fails (ci: the server's log had SQLAlchemy's "Exception during
    # reset or similar" traceback). The pool discards it, and the log has one warning line
    # naming the loss, not a traceback.
    store = Store(postgres_url)
    killer = sa.create_engine(postgres_url)
    try:
        connection = store.engine.raw_connection()
        connection.cursor().execute("SELECT 1")  # inside a transaction, so the checkin rolls back
        pid = connection.dbapi_connection.info.backend_pid
        with killer.begin() as side:
            side.execute(sa.text("SELECT pg_terminate_backend(:pid, 10000)"), {"pid": pid})
        with caplog.at_level(logging.WARNING):
            connection.close()
        pooled = [record for record in caplog.records if record.name.startswith("sqlalchemy.pool")]
        assert [(record.levelname, record.exc_info) for record in pooled] == [("WARNING", None)], [record.getMessage() for record in pooled]
        assert pooled[0].getMessage().startswith("database connection lost while it went back to the pool (AdminShutdown: terminating connection"), pooled[0].getMessage()
        with store.engine.connect() as again:  # the pool hands out a live connection after it
            assert again.execute(sa.text("SELECT 1")).scalar() == 1
    finally:
        store.close()
        killer.dispose()
