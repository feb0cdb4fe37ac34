"""Bad input against a real ``stoker serve`` on 127.0.0.1, sent as raw HTTP: each
body, query and size that used to be a 500 (or to store data that broke every later
read) is now a 4xx with Heat's fault body, before anything is stored; the lists and
the stack still read afterwards, and the server log holds no traceback.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from stoker.service import Service, Source
from stoker.settings import Settings
from tests.support.server import TENANT, Server

TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "parameters": {"blob": {"type": "json", "default": {}}, "word": {"type": "string", "default": "one"}},
    "resources": {"value": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "blob"}}}},
    "outputs": {"blob": {"value": {"get_attr": ["value", "value"]}}},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("input")
    running = Server(f"sqlite:///{directory / 'input.sqlite'}", directory / "server.log").start()
    yield running
    log = running.stop()
    # Every refusal below, the 413s included, is answered without a traceback.
    assert "Traceback" not in log, log


def send(server: Server, method: str, path: str, body: bytes | Iterator[bytes] | None = None, headers: dict[str, str] | None = None) -> tuple[int, str, Any]:
    """Raw HTTP: the body's bytes as given (an iterator is sent chunked)."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        chunked = body is not None and not isinstance(body, bytes)
        connection.request(method, f"/v1/{TENANT}{path}", body=body, headers={"Content-Type": "application/json", **(headers or {})}, encode_chunked=chunked)
        response = connection.getresponse()
        raw = response.read()
        return response.status, response.getheader("Content-Type") or "", json.loads(raw) if raw else None
    finally:
        connection.close()


def post_text(server: Server, path: str, text: str) -> tuple[int, Any]:
    """A JSON body given as text: what ``json.dumps`` cannot write (NaN spelled as
    the client likes, \\ud800 escapes)."""
    status, _, body = send(server, "POST", path, text.encode())
    return status, body


def assert_fault(status: int, body: Any, code: int, *words: str) -> None:
    """Heat's fault body: code, title, error type and message (naming the field)."""
    assert status == code, body
    assert body["code"] == code and body["title"] and body["error"]["traceback"] is None
    for word in words:
        assert word in body["error"]["message"], body["error"]["message"]


def create_body(name: str, **fields: Any) -> str:
    return json.dumps({"stack_name": name, "template": TEMPLATE, **fields})


def nested(levels: int) -> Any:
    """``levels`` collections, one inside the other."""
    value: Any = "x"
    for _ in range(levels):
        value = {"a": value}
    return value


def names(server: Server) -> set[str]:
    status, body = server.request("GET", "/stacks?show_deleted=true")
    assert status == 200, body
    return {stack["stack_name"] for stack in body["stacks"]}


def test_api_input_timeout_mins_must_be_a_bounded_integer(server):
    for text in ("1e400", "Infinity", "-Infinity", "NaN", str(10**30), "1.5", "true", '"1.5"', "-1", '"ten"', "[]"):
        status, body = post_text(server, "/stacks", create_body("timeouts")[:-1] + f', "timeout_mins": {text}}}')
        assert_fault(status, body, 400)
        assert "timeout_mins" in body["error"]["message"] or "not a JSON number" in body["error"]["message"], (text, body)
    assert "timeouts" not in names(server)
    status, body = post_text(server, "/stacks", create_body("timeouts", timeout_mins="7"))
    assert status == 201, body


def test_api_input_fields_of_the_wrong_type_are_refused(server):
    cases = [
        ({"stack_name": "envs", "template": TEMPLATE, "environment_files": [["a"]], "files": {"a": "{}"}}, "environment_files"),
        ({"stack_name": "envs", "template": TEMPLATE, "files": {"a": 5}}, "files.a"),
        ({"stack_name": ["envs"], "template": TEMPLATE}, "stack_name"),
        ({"stack_name": "envs", "template": TEMPLATE, "clear_parameters": [{}]}, "clear_parameters"),
        ({"stack_name": "l", "template": None, "adopt_stack_data": None}, "No template specified"),
        ({"stack_name": "l", "template": None, "adopt_stack_data": "[1]"}, "adopt data"),
        ({"stack_name": "trailing\n", "template": TEMPLATE}, "Invalid stack name"),
    ]
    for request, words in cases:
        status, body = server.request("POST", "/stacks", request)
        assert_fault(status, body, 400, words)
    assert not {"envs", "l", "trailing\n"} & names(server)


def test_api_input_snapshot_name_must_be_text(server):
    status, body = server.request("POST", "/stacks", {"stack_name": "snapped", "template": TEMPLATE})
    assert status == 201, body
    found = server.wait_for(body["stack"]["id"])
    path = f"/stacks/snapped/{found['id']}/snapshots"
    for name in (["a"], {"a": 1}, 5, "n" * 256):
        status, body = server.request("POST", path, {"name": name})
        assert_fault(status, body, 400, "name")
    status, body = server.request("GET", path)
    assert status == 200 and body["snapshots"] == [], body


def test_api_input_parameter_constraints_not_a_list_is_a_template_error(server):
    template = {**TEMPLATE, "parameters": {"n": {"type": "number", "default": 1, "constraints": -6.7e-303}}}
    status, body = server.request("POST", "/stacks", {"stack_name": "constrained", "template": template})
    assert_fault(status, body, 400, "parameters.n.constraints", "expected a list")
    text = "heat_template_version: 2021-04-16\nparameters:\n  n:\n    type: number\n    constraints: -6.7e-303\nresources: {}\n"
    status, body = server.request("POST", "/validate", {"template": text})
    assert_fault(status, body, 400, "template:5:18", "expected a list")
    # Found by the fuzz test: a bound of the wrong kind, compared with the default.
    template = {**TEMPLATE, "parameters": {"n": {"type": "string", "default": 0, "constraints": [{"range": {"min": ""}}], "tags": 5}}}
    status, body = server.request("POST", "/stacks", {"stack_name": "constrained", "template": template})
    assert_fault(status, body, 400, "parameters.n.constraints[0]", "range min/max must be numeric", "parameters.n.tags")


def test_api_input_template_objects_nest_no_deeper_than_text(server):
    # The loader refuses text nested more than 200 levels: the template's own mapping,
    # outputs and o count, then the value's levels.
    for levels, accepted in ((197, True), (198, False), (250, False), (400, False)):
        template = {**TEMPLATE, "outputs": {"o": {"value": nested(levels)}}}
        as_object = json.dumps({"stack_name": f"deep{levels}", "template": template})
        as_text = json.dumps({"stack_name": f"deep{levels}", "template": json.dumps(template)})
        for body_text in (as_object, as_text):
            status, body = post_text(server, "/stacks/preview", body_text)
            if accepted:
                assert status == 200, body
            else:
                assert_fault(status, body, 400, "nested more than")
    # Far past any limit the parser itself would recurse: still a 400.
    for text in ("[" * 100_000 + "]" * 100_000, '{"stack_name": "x", "template": ' + '{"a": ' * 900 + "1" + "}" * 901):
        status, body = post_text(server, "/stacks", text)
        assert_fault(status, body, 400, "nested more than")


def test_api_input_lone_surrogates_are_refused_before_storing(server):
    cases = [
        create_body("surrogate-tags")[:-1] + ', "tags": ["ok", "bad\\ud800"]}',
        create_body("surrogate-parameters")[:-1] + ', "parameters": {"word": "\\udfff"}}',
        create_body("surrogate-keys")[:-1] + ', "parameters": {"\\ud800": "x"}}',
    ]
    for text in cases:
        status, body = post_text(server, "/stacks", text)
        assert_fault(status, body, 400, "not valid Unicode", "lone surrogate")
    # An error message that would quote the surrogate: JSON, with the surrogate escaped.
    status, body = post_text(server, "/stacks", json.dumps({"stack_name": "x", "template": TEMPLATE})[:-1] + ', "template_url": "\\ud800"}')
    assert_fault(status, body, 400)
    # Raw bytes that are not UTF-8 at all.
    status, _, body = send(server, "POST", "/stacks", b'{"stack_name": "\xed\xa0\x80", "template": {}}')
    assert_fault(status, body, 400)
    assert not {name for name in names(server) if name.startswith("surrogate")}
    status, body = server.request("GET", "/stacks")
    assert status == 200, body


def test_api_input_json_parameter_nested_deeper_than_a_template_is_refused(server):
    status, body = server.request("POST", "/stacks", {"stack_name": "deep-json", "template": TEMPLATE, "parameters": {"blob": nested(450)}})
    assert_fault(status, body, 400, "parameters.blob", "nested more than")
    status, body = server.request("POST", "/stacks", {"stack_name": "deep-json", "template": TEMPLATE, "parameters": {"blob": nested(201)}})
    assert_fault(status, body, 400, "parameter blob", "nested more than 200")
    # As deep as a template may nest: stored, and the stack, its outputs and the lists read.
    status, body = server.request("POST", "/stacks", {"stack_name": "deep-json", "template": TEMPLATE, "parameters": {"blob": nested(200)}})
    assert status == 201, body
    found = server.wait_for(body["stack"]["id"])
    assert found["stack_status"] == "CREATE_COMPLETE", found
    for path in ("/stacks/deep-json", f"/stacks/deep-json/{found['id']}", f"/stacks/deep-json/{found['id']}/outputs/blob", "/stacks?show_deleted=true"):
        status, body = server.request("GET", path)
        assert status == 200, (path, body)


def test_api_input_numeric_query_parameters_are_bounded(server):
    status, body = server.request("POST", "/stacks", {"stack_name": "listed", "template": TEMPLATE})
    assert status == 201, body
    stack = f"/stacks/listed/{server.wait_for(body['stack']['id'])['id']}"
    huge = "1" + "0" * 30
    started = time.monotonic()
    for path in (f"{stack}/resources?nested_depth={huge}", f"{stack}/events?nested_depth={huge}", f"/stacks?limit={huge}", f"{stack}/events?limit={huge}"):
        status, body = server.request("GET", path, timeout=10)
        assert_fault(status, body, 400, "largest acceptable value")
    for path in (f"{stack}/resources?nested_depth=1.5", f"{stack}/events?limit=1e3", "/stacks?limit=-1", "/stacks?limit=%20%37"):
        status, body = server.request("GET", path, timeout=10)
        assert_fault(status, body, 400)
    # Within bounds but past any stack's depth: capped, as Heat caps it, and quick.
    for path in (f"{stack}/resources?nested_depth=2147483647", f"{stack}/events?nested_depth=2147483647"):
        status, body = server.request("GET", path, timeout=10)
        assert status == 200, body
    assert time.monotonic() - started < 10


def test_api_input_body_over_the_limit_is_413_without_traceback(server):
    limit = 1024 * 1024 * 3 // 2  # 3 x STOKER_MAX_TEMPLATE_BYTES (512 KiB): more than Heat's 1 MiB
    padding = b" " * (limit + 1)
    status, content_type, body = send(server, "POST", "/stacks", padding)
    assert content_type == "application/json"
    assert_fault(status, body, 413, "exceeds maximum allowed size")

    def chunks() -> Iterator[bytes]:
        for _ in range(limit // 65536 + 2):
            yield b" " * 65536

    status, content_type, body = send(server, "POST", "/stacks", chunks())
    assert content_type == "application/json"
    assert_fault(status, body, 413, "exceeds maximum allowed size")
    # The server carries on.
    status, body = server.request("GET", "/stacks")
    assert status == 200, body


def test_api_input_stored_lone_surrogate_still_reads(server):
    # Data stored before the API refused lone surrogates (or by another way in): the
    # lists and the stack answer with the surrogate escaped, not a 500 for everyone.
    service = Service(Settings(database_url=server.database_url))
    try:
        # In the API's project: another project's stack is not found there.
        stack = service.create_stack("stored-surrogate", Source(TEMPLATE, "template"), tags=["bad\ud800"], parameters={"word": "\udfff"}, project_id=TENANT)
    finally:
        service.close()
    for path in ("/stacks", "/stacks?show_deleted=true", f"/stacks/stored-surrogate/{stack.id}"):
        status, _, body = send(server, "GET", path)
        assert status == 200, (path, body)
    status, _, body = send(server, "GET", "/stacks?name=stored-surrogate")
    assert body["stacks"][0]["tags"] == ["bad\ud800"]
