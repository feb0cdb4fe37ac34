"""The remote backend without a server: fault bodies as one error, the event stream's
messages, where a URL's project is, and waiting for an action on the stream (resumed
where it broke) or, on a server without one, by polling the events API. A scripted
transport stands in for HTTP (the real one is the acceptance tests')."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from stoker.cli import remote
from stoker.cli.backend import StackRequest
from stoker.cli.connection import split_url
from stoker.cli.remote import RemoteBackend
from stoker.cli.transport import RemoteError, Response, StreamBrokenError, error_of, server_sent
from stoker.template import loader

ENDPOINT = "http://stoker.test/v1/p"
STACK = "stacks/web/1234"


def test_error_of_a_fault_prefers_the_placed_details_and_splits_several_problems():
    one = error_of(400, {"error": {"type": "StackValidationFailed", "message": "Property is required", "details": "t.yaml:4:5: resources.a: Property is required"}}, "")
    assert (str(one), one.problems, one.heat_type) == ("t.yaml:4:5: resources.a: Property is required", [], "StackValidationFailed")
    several = error_of(400, {"error": {"message": "2 problems:\n  - a.yaml:1:1: one\n    - nested detail\n  - a.yaml:2:1: two"}}, "")
    assert several.problems == ["a.yaml:1:1: one\n    - nested detail", "a.yaml:2:1: two"]
    listed = error_of(400, {"error": {"message": "m", "details": ["x", "y"]}}, "")
    assert listed.problems == ["x", "y"] and str(listed) == "2 problems:\n  - x\n  - y"
    assert str(error_of(502, None, "<html>Bad Gateway</html>")) == "<html>Bad Gateway</html>"
    assert str(error_of(500, "not a fault", "")) == "HTTP 500"


def test_server_sent_messages_skip_comments_and_join_data_lines():
    lines = [": ping", "event: event", "id: 1-7", "data: {\"a\":", "data: 1}", "", "", "event: stack", "data: {}", ""]
    assert list(server_sent(iter(lines))) == [("event", "1-7", '{"a":\n1}'), ("stack", None, "{}")]


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("http://h:8004", ("http://h:8004", None)),
        ("http://h:8004/", ("http://h:8004", None)),
        ("http://h:8004/v1", ("http://h:8004", None)),
        ("http://h:8004/v1/web/", ("http://h:8004", "web")),
        ("https://h/orchestration/v1/abc", ("https://h/orchestration", "abc")),
    ],
)
def test_split_url_finds_the_project_the_url_names(url, expected):
    assert split_url(url) == expected


class ScriptedTransport:
    """Answers each request with the next answer scripted for (method, path); records
    what was asked."""

    def __init__(self) -> None:
        self.answers: dict[tuple[str, str], list[Callable[[Any, dict], Response]]] = {}
        self.streams: list[Callable[[dict, dict], tuple[int, list[str]]]] = []
        self.asked: list[tuple[str, str, Any]] = []
        self.stream_headers: list[dict] = []

    def on(self, method: str, path: str, *answers: Callable[[Any, dict], Response]) -> None:
        self.answers.setdefault((method, path), []).extend(answers)

    def request(self, method: str, url: str, body: Any = None, params: Any = None) -> Response:
        path = url.removeprefix(ENDPOINT + "/")
        self.asked.append((method, path, body))
        queue = self.answers[(method, path)]
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        return answer(body, dict(params or {}))

    @contextlib.contextmanager
    def stream(self, url: str, params: Any, headers: Any) -> Iterator[tuple[int, Iterator[str]]]:
        self.stream_headers.append(dict(headers))
        if not self.streams:
            raise StreamBrokenError("no more streams scripted")
        status, lines = self.streams.pop(0)(dict(params), dict(headers))
        yield status, iter(lines)

    def close(self) -> None:
        return None


def reply(status: int, body: Any = None, headers: dict | None = None) -> Callable[[Any, dict], Response]:
    return lambda _body, _params: Response(status, headers or {}, json.dumps(body).encode() if body is not None else b"")


def event(number: int, status: str = "CREATE_COMPLETE") -> dict[str, Any]:
    return {"id": f"e{number}", "resource_name": "web", "resource_status": status, "resource_status_reason": "state changed", "event_time": "2026-01-01T00:00:00Z", "links": []}


def stack(status: str) -> dict[str, Any]:
    return {"stack": {"id": "1234", "stack_name": "web", "stack_status": status, "stack_status_reason": "", "outputs": []}}


def backend(transport: ScriptedTransport) -> RemoteBackend:
    return RemoteBackend(ENDPOINT, transport, loader.DEFAULT_LIMITS)


REQUEST = StackRequest(template=None, parameters={"size": 3})


def test_create_waits_on_the_stream_and_resumes_it_where_it_broke():
    transport = ScriptedTransport()
    transport.on("POST", "stacks", reply(201, {"stack": {"id": "1234", "links": []}}))
    transport.on("GET", STACK, reply(200, stack("CREATE_COMPLETE")))
    # The first connection ends after one event, without the stack's state (a server
    # stopping); the second is asked to resume after it.
    transport.streams.append(lambda params, headers: (200, ["event: event", "id: 1-1", f"data: {json.dumps(event(1, 'CREATE_IN_PROGRESS'))}", ""]))
    transport.streams.append(
        lambda params, headers: (
            200,
            ["event: event", "id: 1-2", f"data: {json.dumps(event(2))}", "", "event: stack", 'data: {"stack": {}}', ""],
        )
    )
    seen: list[str] = []
    found = backend(transport).create_stack("web", REQUEST, lambda e: seen.append(e["id"]))
    assert found["stack_status"] == "CREATE_COMPLETE"
    assert seen == ["e1", "e2"]
    assert transport.stream_headers == [{}, {"Last-Event-ID": "1-1"}]
    assert transport.asked[0] == ("POST", "stacks", {"stack_name": "web", "parameters": {"size": 3}})


def test_update_without_a_stream_polls_the_events_after_those_before_it(monkeypatch):
    monkeypatch.setattr(remote.time, "sleep", lambda seconds: None)
    transport = ScriptedTransport()
    transport.on("GET", "stacks/web", reply(302, {}, {"Location": f"{ENDPOINT}/{STACK}"}))
    transport.on("PUT", STACK, reply(202))
    shown = [stack("UPDATE_IN_PROGRESS"), stack("UPDATE_IN_PROGRESS"), stack("UPDATE_COMPLETE")]
    transport.on("GET", STACK, *[reply(200, body) for body in shown], reply(200, stack("UPDATE_COMPLETE")))
    pages = {None: [event(0)], "e0": [event(1)], "e1": [event(2)], "e2": []}

    def events(_body: Any, params: dict) -> Response:
        if params.get("sort_dir") == "desc":
            return Response(200, {}, json.dumps({"events": [event(0)]}).encode())
        return Response(200, {}, json.dumps({"events": pages[params.get("marker")]}).encode())

    transport.on("GET", f"{STACK}/events", events)
    transport.streams.append(lambda params, headers: (404, []))  # no stream on this server
    seen: list[str] = []
    found = backend(transport).update_stack("web", REQUEST, existing=False, on_event=lambda e: seen.append(e["id"]))
    assert found["stack_status"] == "UPDATE_COMPLETE"
    assert seen == ["e1", "e2"]  # not e0, recorded before the update
    assert ("PUT", STACK, {"parameters": {"size": 3}}) in transport.asked


def test_a_server_error_reaches_the_command_as_one_error():
    transport = ScriptedTransport()
    transport.on("GET", "stacks/ghost", reply(404, {"code": 404, "error": {"type": "EntityNotFound", "message": "The Stack (ghost) could not be found.", "details": "The Stack (ghost) could not be found. (see 'stoker stack list')"}}))
    with pytest.raises(RemoteError) as raised:
        backend(transport).get_stack("ghost")
    assert str(raised.value) == "The Stack (ghost) could not be found. (see 'stoker stack list')"
    assert raised.value.status == 404


PLAN = {
    "resource_changes": {
        "added": [{"resource_name": "first", "resource_type": "T", "reason": "new resource"}, {"resource_name": "second", "resource_type": "T", "reason": "new resource"}],
        "deleted": [], "replaced": [], "updated": [], "unchanged": [],
    },
    "implementations": [{"resource_name": "second", "resource_type": "T", "template": "b.yaml", "requires": "flavour=b"}],
}


def test_preview_create_asks_a_stoker_server_for_the_plan_the_embedded_engine_makes():
    transport = ScriptedTransport()

    def preview(body: Any, params: dict) -> Response:
        assert params == {"with_plan": "true", "plan": "true"} and body["stack_name"] == "web"
        return Response(200, {}, json.dumps({"stack": {"id": "None", "resources": []}, **PLAN}).encode())

    transport.on("POST", "stacks/preview", preview)
    assert backend(transport).preview_create("web", REQUEST) == PLAN


def test_preview_create_of_another_heat_orders_its_preview_requirements_first():
    # A Heat that is not stoker ignores with_plan: the plan comes from its preview.
    written = loader.Document({"resources": {"child": {"type": "child.yaml"}}}, None)
    resources = [
        {"resource_name": "last", "resource_type": "T", "required_by": []},
        {"resource_name": "first", "resource_type": "T", "required_by": ["last"]},
        [{"resource_name": "inner", "resource_type": "T", "parent_resource": "child", "required_by": []}],
    ]
    transport = ScriptedTransport()
    transport.on("POST", "stacks/preview", reply(200, {"stack": {"id": "None", "resources": resources}}))
    plan = backend(transport).preview_create("web", StackRequest(template=remote.Source(written, "t.yaml"), template_text="{}"))
    changes = plan["resource_changes"]
    assert list(changes) == ["added", "deleted", "replaced", "updated", "unchanged"]  # as the engine's
    added = [(change["resource_name"], change["resource_type"]) for change in changes["added"]]
    assert added.index(("first", "T")) < added.index(("last", "T")) and ("child", "child.yaml") in added
    assert "implementations" not in plan


def test_validate_asks_for_the_notes_of_what_a_create_would_need():
    transport = ScriptedTransport()
    asked: list[dict] = []

    def validate(_body: Any, params: dict) -> Response:
        asked.append(params)
        return Response(200, {}, json.dumps({"Description": "d", "Notes": ["t.yaml:3:5: parameters.name: missing"]}).encode())

    transport.on("POST", "validate", validate)
    assert backend(transport).validate_template(REQUEST, show_nested=False)["Notes"] == ["t.yaml:3:5: parameters.name: missing"]
    backend(transport).validate_template(REQUEST, show_nested=True)
    assert asked == [{"with_notes": "true"}, {"with_notes": "true", "show_nested": "true"}]
