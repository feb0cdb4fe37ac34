"""The event stream (``GET .../events/stream``) as a client reads it: a real ``stoker
serve`` on 127.0.0.1 and httpx reading the text/event-stream as it comes. Stacks pause
at a hook where a test needs them in progress, so nothing here depends on timing: a
deadline only bounds a wait that would otherwise hang."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from stoker.api import event_hub
from stoker.api.app import create_app
from stoker.settings import Settings
from tests.acceptance.conftest import client_environment
from tests.support import server as server_process

TOP = """
heat_template_version: 2021-04-16
resources:
  first:
    type: OS::Heat::TestResource
    properties: {value: one}
  outer:
    type: outer.yaml
    depends_on: [first]
  last:
    type: OS::Heat::TestResource
    depends_on: [outer]
    properties: {value: three}
"""
FILES = {
    "outer.yaml": "heat_template_version: 2021-04-16\nresources:\n  inner:\n    type: inner.yaml\n",
    "inner.yaml": "heat_template_version: 2021-04-16\nresources:\n  leaf:\n    type: OS::Heat::TestResource\n    properties: {value: deep}\n",
}
# ``first`` waits at a hook until the test clears it: the stack is in progress until then.
HOOKED = {"resource_registry": {"resources": {"first": {"hooks": ["pre-create"]}}}}
PAUSED = "CREATE paused until Hook pre-create is cleared"
SIMPLE = "heat_template_version: 2021-04-16\nresources:\n  only:\n    type: OS::Heat::TestResource\n"
TIMEOUT = httpx.Timeout(60.0)


@dataclass
class Message:
    event: str
    id: str | None
    data: Any


@dataclass
class Stream:
    """One open stream, read message by message (comments kept apart)."""

    response: httpx.Response
    lines: Iterator[str]
    comments: list[str] = field(default_factory=list)

    def next(self) -> Message | None:
        """The next message; None when the server ended the stream."""
        fields: dict[str, str] = {}
        for line in self.lines:
            if line == "":
                if fields:
                    return Message(fields.get("event", "message"), fields.get("id"), json.loads(fields["data"]))
                continue
            if line.startswith(":"):
                self.comments.append(line)
                continue
            name, _, value = line.partition(":")
            fields[name] = value[1:] if value.startswith(" ") else value
        return None

    def until(self, done) -> list[Message]:
        """Messages up to and including the first for which ``done(message)``."""
        found = []
        while (message := self.next()) is not None:
            found.append(message)
            if done(message):
                return found
        raise AssertionError(f"the stream ended before the awaited message: {found}")

    def rest(self) -> list[Message]:
        found = []
        while (message := self.next()) is not None:
            found.append(message)
        return found


class Server(server_process.Server):
    def __init__(self, database_url: str, log_path: Path, **environment: str):
        super().__init__(database_url, log_path, **environment)
        self.http = httpx.Client(timeout=TIMEOUT)

    def stop(self, kill: bool = False) -> str:
        self.http.close()
        log = super().stop(kill=kill)
        assert "Traceback" not in log, log
        return log

    def stream(self, path: str, headers: dict[str, str] | None = None, **params: str):
        """A context manager: the open stream of ``path`` (under the project's endpoint)."""
        return _open(self.http, self.endpoint + path, headers or {}, params)

    def create(self, name: str, template: str = TOP, environment: dict | None = None, files: dict | None = None) -> str:
        body = {"stack_name": name, "template": template, "files": FILES if files is None else files}
        if environment:
            body["environment"] = environment
        status, created = self.request("POST", "/stacks", body)
        assert status == 201, created
        return created["stack"]["id"]

    def events(self, name: str, stack_id: str) -> list[dict]:
        status, body = self.request("GET", f"/stacks/{name}/{stack_id}/events?nested_depth=5")
        assert status == 200, body
        return body["events"]

    def unset_hook(self, name: str, stack_id: str) -> None:
        status, body = self.request("POST", f"/stacks/{name}/{stack_id}/resources/first/signal", {"unset_hook": "pre-create"})
        assert status == 200, body


class _open:
    def __init__(self, client: httpx.Client, url: str, headers: dict[str, str], params: dict[str, str]):
        self.context = client.stream("GET", url, headers=headers, params=params, follow_redirects=True)

    def __enter__(self) -> Stream:
        response = self.context.__enter__()
        assert response.status_code == 200, response.read()
        assert response.headers["content-type"].startswith("text/event-stream")
        return Stream(response, response.iter_lines())

    def __exit__(self, *exc_info: Any) -> None:
        self.context.__exit__(*exc_info)


def cursor(message: Message) -> tuple[int, int]:
    txid, _, event_id = message.id.partition("-")
    return int(txid), int(event_id)


def events_of(messages: list[Message]) -> list[Message]:
    return [message for message in messages if message.event == "event"]


def paused(message: Message) -> bool:
    return message.event == "event" and message.data["resource_name"] == "first" and message.data["resource_status_reason"] == PAUSED


def assert_as_listed(streamed: list[Message], listed: list[dict], same_order: bool = True) -> None:
    """The stream's events are the event list's, each once, in the shape of its items."""
    ids = [message.data["id"] for message in streamed]
    assert len(ids) == len(set(ids)), "an event came twice"
    assert [cursor(m) for m in streamed] == sorted({cursor(m) for m in streamed})
    if same_order:  # SQLite: commit order is id order, which the list follows
        assert ids == [item["id"] for item in listed]
    else:
        assert sorted(ids) == sorted(item["id"] for item in listed)
    by_id = {item["id"]: item for item in listed}
    for message in streamed:
        body = dict(message.data)
        path = body.pop("stack_path")
        assert body == by_id[body["id"]]
        nested = any(link["rel"] == "root_stack" for link in body["links"])
        assert nested == (path != "")


def run_live_nested_and_resumed(server: Server, name: str, same_order: bool = True) -> None:
    """A create with nested stacks read live, the client leaving halfway and resuming
    with Last-Event-ID: every event once, nested ones with their path."""
    stack_id = server.create(name, environment=HOOKED)
    with server.stream(f"/stacks/{name}/{stack_id}/events/stream", until="terminal") as stream:
        before = stream.until(paused)
    # The stream showed the pause while the stack was still in progress.
    status, shown = server.request("GET", f"/stacks/{name}/{stack_id}")
    assert shown["stack"]["stack_status"] == "CREATE_IN_PROGRESS"
    server.unset_hook(name, stack_id)
    with server.stream(f"/stacks/{name}/{stack_id}/events/stream", {"Last-Event-ID": before[-1].id}, until="terminal") as stream:
        after = stream.rest()
    assert after[-1].event == "stack" and after[-1].id is None
    assert after[-1].data["stack"]["stack_status"] == "CREATE_COMPLETE"
    assert all(message.event == "event" for message in after[:-1])
    streamed = events_of(before) + events_of(after)
    assert_as_listed(streamed, server.events(name, stack_id), same_order)
    paths = {(message.data["stack_path"], message.data["resource_name"], message.data["resource_status"]) for message in streamed}
    assert {("", "outer", "CREATE_COMPLETE"), ("outer", "inner", "CREATE_COMPLETE"), ("outer.inner", "leaf", "CREATE_COMPLETE"), ("", name, "CREATE_COMPLETE")} <= paths


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("stream")
    running = Server(f"sqlite:///{directory / 'stoker.sqlite'}", directory / "serve.log", STOKER_EVENT_STREAM_HEARTBEAT_S="0.2").start()
    yield running
    running.stop()


def test_event_stream_shows_nested_events_live_and_resumes_with_last_event_id(server):
    run_live_nested_and_resumed(server, "live")


def test_event_stream_resumes_after_any_event_of_a_finished_stack(server):
    stack_id = server.create("finished")
    server.wait_for(stack_id)
    with server.stream(f"/stacks/finished/{stack_id}/events/stream", until="terminal") as stream:
        everything = stream.rest()
    events = events_of(everything)
    assert everything[-1].event == "stack" and len(events) == len(everything) - 1
    assert_as_listed(events, server.events("finished", stack_id))
    for index in (0, len(events) // 2, len(events) - 1):
        # The header, as EventSource sends it on reconnecting; the query, for a client
        # that cannot set headers; the header wins over a query left from the first URL.
        for headers, params in (({"Last-Event-ID": events[index].id}, {}), ({}, {"last_event_id": events[index].id}), ({"Last-Event-ID": events[index].id}, {"last_event_id": events[0].id})):
            with server.stream(f"/stacks/finished/{stack_id}/events/stream", headers, until="terminal", **params) as stream:
                resumed = stream.rest()
            assert [m.data["id"] for m in events_of(resumed)] == [m.data["id"] for m in events[index + 1:]]
            assert resumed[-1].event == "stack"


def test_event_stream_found_by_name_alone(server):
    stack_id = server.create("by-name", SIMPLE, files={})
    server.wait_for(stack_id)
    redirect = server.http.get(f"{server.endpoint}/stacks/by-name/events/stream", params={"until": "terminal"})
    assert redirect.status_code == 302
    assert redirect.headers["location"] == f"{server.endpoint}/stacks/by-name/{stack_id}/events/stream?until=terminal"
    with server.stream("/stacks/by-name/events/stream", until="terminal") as stream:
        messages = stream.rest()
    assert messages[-1].data["stack"]["id"] == stack_id


def test_event_stream_of_a_stack_deleted_meanwhile_ends_with_the_deleted_stack(server):
    stack_id = server.create("doomed", environment=HOOKED)
    with server.stream(f"/stacks/doomed/{stack_id}/events/stream") as stream:
        stream.until(paused)
        status, body = server.request("DELETE", f"/stacks/doomed/{stack_id}")
        assert status == 204, body
        rest = stream.rest()
    final = rest[-1]
    assert final.event == "stack" and final.data["stack"]["stack_status"] == "DELETE_COMPLETE"
    assert final.data["stack"]["deletion_time"] is not None
    assert ("doomed", "DELETE_COMPLETE") in [(m.data["resource_name"], m.data["resource_status"]) for m in events_of(rest)]
    # Resuming after the end (an EventSource reconnects by itself) gets the end again.
    with server.stream(f"/stacks/doomed/{stack_id}/events/stream", {"Last-Event-ID": events_of(rest)[-1].id}) as stream:
        again = stream.rest()
    assert [m.event for m in again] == ["stack"]


def test_event_stream_from_now_skips_what_was_recorded_before(server):
    stack_id = server.create("checked", SIMPLE, files={})
    server.wait_for(stack_id)
    with server.stream(f"/stacks/checked/{stack_id}/events/stream", **{"from": "now"}) as stream:
        status, body = server.request("POST", f"/stacks/checked/{stack_id}/actions", {"check": None})
        assert status == 200, body
        messages = stream.until(lambda m: m.data["resource_name"] == "checked" and m.data["resource_status"] == "CHECK_COMPLETE")
    assert {m.data["resource_status"].split("_")[0] for m in messages} == {"CHECK"}


def test_event_stream_until_next_action_waits_for_the_action_started_after_it_opened(server):
    stack_id = server.create("nextact")
    server.wait_for(stack_id)
    path = f"/stacks/nextact/{stack_id}/events/stream"
    # until=terminal on a stack at rest ends at once, with the state it was already in.
    with server.stream(path, **{"from": "now", "until": "terminal"}) as stream:
        ended = stream.rest()
    assert [m.event for m in ended] == ["stack"] and ended[0].data["stack"]["stack_status"] == "CREATE_COMPLETE"
    # until=next_action stays open at rest (several of the hub's polls go by), then
    # carries the action started after it opened, nested stacks deleted on the way included.
    with server.stream(path, **{"from": "now", "until": "next_action"}) as stream:
        pings, deadline = 0, time.monotonic() + 60
        for line in stream.lines:
            assert line == "" or line.startswith(":"), f"a stream at rest sent {line!r}"
            pings += line.startswith(":")
            if pings * 0.2 > 3 * event_hub.POLL_INTERVAL_S:
                break
            assert time.monotonic() < deadline
        status, body = server.request("DELETE", f"/stacks/nextact/{stack_id}")
        assert status == 204, body
        rest = stream.rest()
    assert rest[-1].event == "stack" and rest[-1].data["stack"]["stack_status"] == "DELETE_COMPLETE"
    seen = {(m.data["stack_path"], m.data["resource_name"], m.data["resource_status"]) for m in events_of(rest)}
    assert {("", "nextact", "DELETE_IN_PROGRESS"), ("outer.inner", "leaf", "DELETE_COMPLETE"), ("", "nextact", "DELETE_COMPLETE")} <= seen


def test_event_stream_sends_heartbeats_while_idle(server):
    stack_id = server.create("idle", SIMPLE, files={})
    server.wait_for(stack_id)
    with server.stream(f"/stacks/idle/{stack_id}/events/stream", **{"from": "now"}) as stream:
        for line in stream.lines:
            if line.startswith(":"):
                break
            assert line == "", f"an idle stream sent {line!r}"
        else:
            raise AssertionError("the stream ended")


def test_event_stream_refusals_in_heats_fault_shape(server):
    stack_id = server.create("refused", SIMPLE, files={})
    url = f"{server.endpoint}/stacks/refused/{stack_id}/events/stream"
    for headers, params in (({"Last-Event-ID": "not-a-cursor"}, {}), ({}, {"last_event_id": "12"}), ({}, {"until": "forever"}), ({}, {"from": "yesterday"}), ({}, {"limit": "3"})):
        response = server.http.get(url, headers=headers, params=params)
        assert response.status_code == 400, (headers, params, response.text)
        fault = response.json()
        assert fault["code"] == 400 and fault["title"] == "Bad Request" and fault["error"]["type"] == "HTTPBadRequest"
    assert "Last-Event-ID" in server.http.get(url, headers={"Last-Event-ID": "1-x"}).json()["error"]["message"]
    # Another project's stack is not found, as a missing one is not.
    other = server.http.get(f"{server.url}/v1/another-project/stacks/refused/{stack_id}/events/stream")
    assert other.status_code == 404 and other.json()["code"] == 404
    missing = server.http.get(f"{server.endpoint}/stacks/refused/{'0' * 8}-0000-0000-0000-{'0' * 12}/events/stream")
    assert missing.status_code == 404


# -- authentication and policy --------------------------------------------------------

READER = "stream-reader-3c9e1a"
MEMBER = "stream-member-7b2d4f"
OTHER = "stream-other-5e8a0c"


@pytest.fixture(scope="module")
def guarded(tmp_path_factory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("stream-auth")
    tokens = directory / "tokens.yaml"
    tokens.write_text(
        yaml.safe_dump(
            {
                "tokens": {
                    READER: {"project_id": "proj-a", "user_id": "rita", "roles": ["reader"]},
                    MEMBER: {"project_id": "proj-a", "user_id": "mike", "roles": ["member"]},
                    OTHER: {"project_id": "proj-b", "user_id": "bea", "roles": ["member"]},
                }
            }
        )
    )
    running = Server(f"sqlite:///{directory / 'stoker.sqlite'}", directory / "serve.log", STOKER_AUTH_MODE="token", STOKER_AUTH_TOKENS_FILE=str(tokens)).start()
    yield running
    running.stop()


def test_event_stream_a_reader_streams_another_project_gets_404(guarded):
    http = guarded.http
    created = http.post(f"{guarded.url}/v1/proj-a/stacks", headers={"X-Auth-Token": MEMBER}, json={"stack_name": "guarded", "template": SIMPLE})
    assert created.status_code == 201, created.text
    stack_id = created.json()["stack"]["id"]
    path = f"/stacks/guarded/{stack_id}/events/stream"
    with _open(http, f"{guarded.url}/v1/proj-a{path}", {"X-Auth-Token": READER}, {"until": "terminal"}) as stream:
        messages = stream.rest()
    assert messages[-1].event == "stack" and messages[-1].data["stack"]["stack_status"] == "CREATE_COMPLETE"
    assert events_of(messages)
    assert http.get(f"{guarded.url}/v1/proj-a{path}").status_code == 401
    # Another project: its own path finds nothing there; proj-a's path is not its own.
    assert http.get(f"{guarded.url}/v1/proj-b{path}", headers={"X-Auth-Token": OTHER}).status_code == 404
    assert http.get(f"{guarded.url}/v1/proj-a{path}", headers={"X-Auth-Token": OTHER}).status_code == 403


# -- the server's side of a client going away ----------------------------------------


def test_event_stream_client_going_away_ends_the_servers_work(tmp_path):
    """In this process, to see the server's side: the stream's loop ends and gives its
    connection back when the client disconnects."""
    import uvicorn

    app = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'stoker.sqlite'}"))
    streams = app.state.event_streams
    port = server_process.free_port()
    uvicorn_server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=uvicorn_server.run, daemon=True)
    thread.start()
    endpoint = f"http://127.0.0.1:{port}/v1/demo"
    try:
        deadline = time.monotonic() + 30
        while not uvicorn_server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "the server did not start"
            time.sleep(0.05)
        with httpx.Client(timeout=TIMEOUT) as http:
            stack_id = http.post(f"{endpoint}/stacks", json={"stack_name": "left", "template": SIMPLE}).json()["stack"]["id"]
            with _open(http, f"{endpoint}/stacks/left/{stack_id}/events/stream", {}, {}) as stream:
                assert stream.next().event == "event"
                assert (streams.open_streams(), streams.watches()) == (1, 1)
            pool = app.state.service.store.engine.pool
            # The stream's count, its watch (the stack's poll) and connections all go.
            while streams.open_streams() or streams.watches() or pool.checkedout() > 1:  # the writer keeps one
                assert time.monotonic() < deadline + 30, f"still streaming: {streams.open_streams()} streams, {streams.watches()} watches, {pool.checkedout()} connections out"
                time.sleep(0.05)
    finally:
        uvicorn_server.should_exit = True
        thread.join(timeout=30)
    assert not thread.is_alive()


def test_event_stream_server_stopping_ends_open_streams_cleanly(tmp_path):
    """A stopping server ends each stream as a complete response (no ``stack`` message:
    the client resumes elsewhere or later), and says nothing is wrong."""
    running = Server(f"sqlite:///{tmp_path / 'stoker.sqlite'}", tmp_path / "serve.log")
    running.start()
    stack_id = running.create("stopping", SIMPLE, files={})
    running.wait_for(stack_id)
    stopped: list[str] = []
    stopper = threading.Thread(target=lambda: stopped.append(server_process.Server.stop(running)))
    try:
        with running.stream(f"/stacks/stopping/{stack_id}/events/stream") as stream:
            history = stream.until(lambda m: m.data["resource_name"] == "stopping" and m.data["resource_status"] == "CREATE_COMPLETE")
            stopper.start()
            assert stream.rest() == []  # the end of a complete response, not a broken one
    finally:
        if stopper.is_alive() or stopper.ident is not None:
            stopper.join(timeout=60)
        else:
            server_process.Server.stop(running)
        running.http.close()
    assert events_of(history) and stopped
    assert "Traceback" not in stopped[0] and "ERROR" not in stopped[0], stopped[0]


# -- PostgreSQL: events committed by other transactions in any order ------------------


@pytest.mark.postgres
def test_event_stream_on_postgresql(postgres_url, tmp_path):
    running = Server(postgres_url, tmp_path / "serve.log").start()
    try:
        run_live_nested_and_resumed(running, "on-postgres", same_order=False)
    finally:
        running.stop()


# -- many streams: one poll per stack, and a limit per project -----------------------

QUERY_COUNT = Path(__file__).resolve().parents[1] / "support" / "query_count"
STREAMS = 40


def event_reads(path: Path) -> int:
    """How many statements reading the events table the server has sent its database
    (``tests/support/query_count``)."""
    return path.stat().st_size if path.exists() else 0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def reads_over_pings(stream: Stream, counted: Path, pings: int) -> int:
    """The event reads the server makes while ``stream`` receives ``pings`` heartbeats
    sent from now on (those it sent before, still unread, are passed over by the time
    each says it was sent): the server's own clock, so the window follows the server's
    pace, not the test's."""
    since, start, seen = datetime.now(UTC), None, 0
    for line in stream.lines:
        if not line.startswith(": ping - "):
            continue
        if start is None:
            if datetime.fromisoformat(line.removeprefix(": ping - ")) >= since:
                start = event_reads(counted)
            continue
        seen += 1
        if seen == pings:
            return event_reads(counted) - start
    raise AssertionError("the stream ended")


@pytest.mark.parametrize("database", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def test_event_stream_many_streams_of_a_stack_share_one_poll(database, tmp_path, request):
    """Forty idle streams of one stack cost the store what one does, and the server
    answers other requests while they are open."""
    counted = tmp_path / "event-reads"
    database_url = f"sqlite:///{tmp_path / 'stoker.sqlite'}" if database == "sqlite" else request.getfixturevalue("postgres_url")
    running = Server(
        database_url, tmp_path / "serve.log",
        PYTHONPATH=os.pathsep.join(filter(None, [str(QUERY_COUNT), os.environ.get("PYTHONPATH")])),
        STOKER_TEST_QUERY_COUNT_FILE=str(counted), STOKER_EVENT_STREAM_HEARTBEAT_S="0.2",
    ).start()
    readers = httpx.Client(timeout=TIMEOUT, limits=httpx.Limits(max_connections=STREAMS + 10))
    try:
        stack_id = running.create("watched", SIMPLE, files={})
        running.wait_for(stack_id)
        path = f"{running.endpoint}/stacks/watched/{stack_id}/events/stream"
        with _open(running.http, path, {}, {"from": "now"}) as first:
            reads_over_pings(first, counted, 2)  # joined and polling
            alone = reads_over_pings(first, counted, 12)
            others = [_open(readers, path, {}, {"from": "now"}) for _ in range(STREAMS - 1)]
            opened = [other.__enter__() for other in others]
            try:
                reads_over_pings(first, counted, 2)  # every stream joined
                cpu_before = cpu_seconds(running.process.pid)
                together = reads_over_pings(first, counted, 12)
                print(f"event reads over 12 heartbeats: {alone} with one stream, {together} with {STREAMS};"
                      f" server CPU {cpu_seconds(running.process.pid) - cpu_before:.2f} s meanwhile")
                # Other requests are answered while the streams are open.
                for _ in range(10):
                    status, body = running.request("GET", "/stacks")
                    assert status == 200 and [stack["stack_name"] for stack in body["stacks"]] == ["watched"]
                # Still live: an action's events reach every stream.
                status, body = running.request("POST", f"/stacks/watched/{stack_id}/actions", {"check": None})
                assert status == 200, body
                for stream in (first, *opened):
                    stream.until(lambda m: m.data["resource_name"] == "watched" and m.data["resource_status"] == "CHECK_COMPLETE")
            finally:
                for other in others:
                    other.__exit__(None, None, None)
        # One poll serves them all: forty streams read what one does (a poll per
        # stream would make it forty times as much).
        assert together <= 2 * alone + 4, (alone, together)
    finally:
        readers.close()
        running.stop()


LIMITED = 3


def opened_status(http: httpx.Client, url: str) -> int:
    """The status a stream opens with (it is closed at once)."""
    with http.stream("GET", url) as response:
        return response.status_code


def test_event_stream_past_the_projects_limit_is_429_and_the_cli_polls_instead(tmp_path):
    running = Server(f"sqlite:///{tmp_path / 'stoker.sqlite'}", tmp_path / "serve.log", STOKER_MAX_EVENT_STREAMS_PER_PROJECT=str(LIMITED)).start()
    readers = httpx.Client(timeout=TIMEOUT)
    try:
        stack_id = running.create("popular", SIMPLE, files={})
        running.wait_for(stack_id)
        path = f"{running.endpoint}/stacks/popular/{stack_id}/events/stream"
        held = [_open(readers, path, {}, {"from": "now"}) for _ in range(LIMITED)]
        for stream in held:
            stream.__enter__()
        try:
            with running.http.stream("GET", path) as refused:  # a stream, were it opened
                assert refused.status_code == 429, refused.headers
                fault = json.loads(refused.read())
            assert (fault["code"], fault["title"], fault["error"]["type"]) == (429, "Too Many Requests", "HTTPTooManyRequests")
            message = fault["error"]["message"]
            assert f"project {server_process.TENANT} has {LIMITED} open" in message, message
            assert f"STOKER_MAX_EVENT_STREAMS_PER_PROJECT={LIMITED}" in message, message
            assert "close the event streams" in message and "poll the events API" in message, message

            # Another project's streams are its own.
            other = f"{running.url}/v1/another-project"
            created = running.http.post(f"{other}/stacks", json={"stack_name": "elsewhere", "template": SIMPLE})
            assert created.status_code == 201, created.text
            elsewhere = created.json()["stack"]["id"]
            with _open(running.http, f"{other}/stacks/elsewhere/{elsewhere}/events/stream", {}, {"until": "terminal"}) as stream:
                assert stream.rest()[-1].event == "stack"

            # The stoker command waits and follows by polling, and says why.
            template = tmp_path / "simple.yaml"
            template.write_text(SIMPLE)
            env = client_environment(
                {"STOKER_URL": running.endpoint, "STOKER_DATABASE_URL": f"sqlite:///{tmp_path}/no-such-dir/local.sqlite", "PYTHONUNBUFFERED": "1"}
            )
            created = subprocess.run(
                [server_process.STOKER, "stack", "create", "by-cli", "-t", str(template), "--wait"],
                capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL,
            )
            assert created.returncode == 0, created.stderr
            assert "NOTE: the server refused an event stream: Too many open event streams" in created.stderr, created.stderr
            assert "[by-cli]: CREATE_COMPLETE  Stack CREATE completed successfully" in created.stderr, created.stderr
            assert "Traceback" not in created.stderr
            followed = subprocess.Popen(
                [server_process.STOKER, "stack", "event", "list", "by-cli", "--follow"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, stdin=subprocess.DEVNULL,
            )
            try:
                note = followed.stderr.readline()
                assert note.startswith("NOTE: the server refused an event stream: Too many open event streams"), note
                by_cli = running.request("GET", "/stacks?name=by-cli")[1]["stacks"][0]["id"]
                status, body = running.request("POST", f"/stacks/by-cli/{by_cli}/actions", {"check": None})
                assert status == 200, body
                for line in followed.stdout:  # the check's events, polled
                    if "CHECK_COMPLETE" in line and "by-cli" in line:
                        break
                else:
                    raise AssertionError("stoker stack event list --follow ended")
            finally:
                followed.terminate()
                followed.wait(timeout=30)
        finally:
            for stream in held:
                stream.__exit__(None, None, None)
        # A stream closed frees its place (once the server has seen the client go).
        deadline = time.monotonic() + 60
        while (status := opened_status(running.http, path)) == 429:
            assert time.monotonic() < deadline, "the closed streams still count"
            time.sleep(0.1)
        assert status == 200
    finally:
        readers.close()
        running.stop()
