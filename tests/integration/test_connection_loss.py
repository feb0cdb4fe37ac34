"""Database connections dropped under a real ``stoker serve`` on PostgreSQL: while 30
stack creates are sent and run, the test has PostgreSQL terminate every connection of
the server again and again (``pg_terminate_backend``, as a restart or an operator
would). Every create is accepted and every stack reaches CREATE_COMPLETE: reads and
write transactions lost with their connection are run again (store/connection_loss.py),
and the server logs no traceback.

Only the server's own connections are terminated (by their application_name): the
database is shared with other tests.
"""

from __future__ import annotations

import inspect
import uuid
from collections.abc import Iterator

import pytest

from stoker.store import Store
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
    log = server.stop()
    assert "Traceback" not in log, log[-4000:]
    assert "database connection lost" in log  # the repeats are logged, one line each


def test_connection_loss_every_read_of_the_store_is_repeated():
    # A read method added later is repeated too, or this names it.
    unrepeated = []
    for name, method in inspect.getmembers(Store, inspect.isfunction):
        source = inspect.getsource(inspect.unwrap(method))
        if "self._read()" in source and name not in ("migrate", "_read") and not hasattr(method, "__wrapped__"):
            unrepeated.append(name)
    assert not unrepeated, f"reads not marked @reads (store/connection_loss.py): {unrepeated}"
