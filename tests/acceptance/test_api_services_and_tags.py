"""Heat's service list, stack tags on update, and hidden stacks, through a real
``stoker serve`` (plain HTTP, and the ``openstack`` command for the service list)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.server import Server
from tests.support.waiting import settled, wait_until

OPENSTACK = str(Path(sys.executable).with_name("openstack"))

TEMPLATE = {"heat_template_version": "2021-04-16", "resources": {"value": {"type": "OS::Heat::Value", "properties": {"value": "v"}}}}

# Heat's service table as its format_service answers it (heat/common/service_utils.py).
SERVICE_KEYS = {"id", "host", "hostname", "binary", "topic", "engine_id", "report_interval", "created_at", "updated_at", "deleted_at", "status"}


def _services(server: Server) -> list[dict]:
    status, body = server.request("GET", "/services")
    assert status == 200, body
    return body["services"]


def test_api_services_list_the_engines_serving_as_heat(tmp_path):
    url = f"sqlite:///{tmp_path / 'services.sqlite'}"
    first = Server(url, tmp_path / "first.log", STOKER_SERVICE_REPORT_INTERVAL_S="1").start()
    try:
        [only] = _services(first)
        assert set(only) == SERVICE_KEYS
        assert (only["binary"], only["topic"], only["status"], only["report_interval"], only["deleted_at"]) == ("heat-engine", "engine", "up", 1, None)
        assert only["host"] and only["hostname"] and only["engine_id"] and only["created_at"]
        # Reported alive every interval: updated_at moves on, and it stays up.
        wait_until(lambda: _services(first)[0]["updated_at"] != only["updated_at"], "the engine's next report")
        assert _services(first)[0]["status"] == "up"

        second = Server(url, tmp_path / "second.log", STOKER_SERVICE_REPORT_INTERVAL_S="1").start()
        both = _services(first)
        assert len(both) == 2 and {s["status"] for s in both} == {"up"}
        assert len({s["engine_id"] for s in both}) == 2
        second.stop()  # a clean stop deletes its service
        assert [s["engine_id"] for s in _services(first)] == [only["engine_id"]]

        third = Server(url, tmp_path / "third.log", STOKER_SERVICE_REPORT_INTERVAL_S="1").start()
        third.stop(kill=True)
        # A dead engine stops reporting: down after two intervals, pruned after three
        # by an engine of the same host.
        wait_until(lambda: any(s["status"] == "down" for s in _services(first)) or len(_services(first)) == 1, "the stopped engine down or gone")
        wait_until(lambda: len(_services(first)) == 1, "the stopped engine gone")
        assert _services(first)[0]["engine_id"] == only["engine_id"]

        base = [OPENSTACK, "--os-auth-type", "none", "--os-endpoint", first.endpoint]
        listed = subprocess.run([*base, "orchestration", "service", "list", "-f", "json"], capture_output=True, text=True, timeout=60)
        assert listed.returncode == 0, listed.stderr
        [row] = json.loads(listed.stdout)
        assert (row["Binary"], row["Engine ID"], row["Topic"], row["Status"]) == ("heat-engine", only["engine_id"], "engine", "up")
    finally:
        first.stop()


def _finished(server: Server, name: str) -> str:
    """Poll the stack by name until no action is in progress; returns its status."""

    def ended() -> str | None:
        status, body = server.request("GET", f"/stacks/{name}")
        assert status == 200, body
        return body["stack"]["stack_status"] if settled(body["stack"]["stack_status"]) else None

    return wait_until(ended, f"stack {name}", interval_s=0.1)


def _tags(server: Server, name: str) -> list[str] | None:
    status, body = server.request("GET", f"/stacks/{name}")
    assert status == 200, body
    return body["stack"]["tags"]


def _update(server: Server, method: str, identity: str, body: dict) -> None:
    status, answer = server.request(method, f"/stacks/{identity}", body)
    assert status == 202, answer
    assert _finished(server, identity) == "UPDATE_COMPLETE"


def test_api_update_tags_as_heat(tmp_path):
    server = Server(f"sqlite:///{tmp_path / 'tags.sqlite'}", tmp_path / "tags.log").start()
    try:
        status, body = server.request("POST", "/stacks", {"stack_name": "tagged", "template": TEMPLATE, "tags": "one,two"})
        assert status == 201, body
        identity = f"tagged/{body['stack']['id']}"
        _finished(server, "tagged")
        assert _tags(server, "tagged") == ["one", "two"]
        # PATCH keeps the tags unless given; null is the same as absent (Heat's extract_args).
        _update(server, "PATCH", identity, {})
        assert _tags(server, "tagged") == ["one", "two"]
        _update(server, "PATCH", identity, {"tags": None})
        assert _tags(server, "tagged") == ["one", "two"]
        _update(server, "PATCH", identity, {"tags": "three"})
        assert _tags(server, "tagged") == ["three"]
        # PUT makes the stack anew from what is sent: no tags (absent or null) clears them.
        _update(server, "PUT", identity, {"template": TEMPLATE, "tags": "four"})
        assert _tags(server, "tagged") == ["four"]
        _update(server, "PUT", identity, {"template": TEMPLATE, "tags": None})
        assert _tags(server, "tagged") is None
        _update(server, "PUT", identity, {"template": TEMPLATE, "tags": "five"})
        _update(server, "PUT", identity, {"template": TEMPLATE})
        assert _tags(server, "tagged") is None
    finally:
        server.stop()


def _listed(server: Server, query: str = "") -> set[str]:
    status, body = server.request("GET", "/stacks" + query)
    assert status == 200, body
    return {stack["stack_name"] for stack in body["stacks"]}


def _create(server: Server, name: str, tags: str | None) -> None:
    body = {"stack_name": name, "template": TEMPLATE, **({"tags": tags} if tags is not None else {})}
    status, answer = server.request("POST", "/stacks", body)
    assert status == 201, answer
    assert _finished(server, name) == "CREATE_COMPLETE"


def test_api_hidden_stack_tags_leave_stacks_out_of_lists(tmp_path):
    configured = Server(f"sqlite:///{tmp_path / 'hidden.sqlite'}", tmp_path / "hidden.log", STOKER_HIDDEN_STACK_TAGS="hide_me,me_too").start()
    try:
        _create(configured, "plain", None)
        _create(configured, "hidden", "keep,me_too")
        _create(configured, "other", "data-processing-cluster")
        assert _listed(configured) == {"plain", "other"}
        assert _listed(configured, "?show_hidden=false") == {"plain", "other"}
        assert _listed(configured, "?show_hidden=true") == {"plain", "hidden", "other"}
        # Hidden from lists only: the stack itself answers, and tag filters apply on top.
        status, _ = configured.request("GET", "/stacks/hidden")
        assert status == 200
        assert _listed(configured, "?show_hidden=true&tags=keep") == {"hidden"}
        assert _listed(configured, "?tags=keep") == set()
    finally:
        configured.stop()
    # The default hides Heat's data-processing-cluster tag.
    default = Server(f"sqlite:///{tmp_path / 'hidden.sqlite'}", tmp_path / "default.log").start()
    try:
        assert _listed(default) == {"plain", "hidden"}
        assert _listed(default, "?show_hidden=True") == {"plain", "hidden", "other"}
    finally:
        default.stop()


INNER_WITH_ERRORS = """heat_template_version: 2021-04-16
resources:
  a:
    type: OS::Heat::Value
    properties:
      nope: 1
  b:
    type: OS::Heat::Nope
"""


def test_api_nested_template_errors_are_a_list_naming_the_nested_file(tmp_path):
    server = Server(f"sqlite:///{tmp_path / 'nested.sqlite'}", tmp_path / "nested.log").start()
    try:
        parents = {
            "provider": "heat_template_version: 2021-04-16\nresources:\n  child:\n    type: inner.yaml\n",
            "stack": "heat_template_version: 2021-04-16\nresources:\n  child:\n    type: OS::Heat::Stack\n    properties:\n      template: {get_file: inner.yaml}\n",
        }
        for kind, parent in parents.items():
            status, body = server.request("POST", "/stacks", {"stack_name": f"broken-{kind}", "template": parent, "files": {"inner.yaml": INNER_WITH_ERRORS}})
            assert status == 400, body
            assert body["error"]["type"] == "StackValidationFailed"
            if kind == "stack":
                # OS::Heat::Stack validates through "the Heat endpoint": Heat's words, which
                # its clients match; the problems with their places are in ``details``.
                assert body["error"]["message"].startswith('Failed validating stack template using Heat endpoint at region "RegionOne" due to "ERROR: ')
                lines = body["error"]["details"].splitlines()
                assert "resources.child" in lines[0], lines
                assert [line.strip()[:15] for line in lines[1:]] == ["- inner.yaml:6:", "- inner.yaml:6:", "- inner.yaml:8:"], lines
                continue
            lines = body["error"]["message"].splitlines()
            # The parent's place on the first line, then one line per problem of the
            # nested file, each with the file's name and line.
            assert "resources.child" in lines[0] and "3 problems:" in lines[0], lines
            problems = lines[1:]
            assert len(problems) == 3, lines
            assert problems[0].strip().startswith("- inner.yaml:6:")
            assert problems[1].strip().startswith("- inner.yaml:6:") and "Unknown Property nope" in problems[1]
            assert problems[2].strip().startswith("- inner.yaml:8:") and "OS::Heat::Nope" in problems[2]
    finally:
        server.stop()


def test_api_pre_update_hook_with_the_openstack_command(tmp_path):
    """``openstack stack update --pre-update``, ``stack hook poll`` and ``stack hook clear``:
    the hook stops an update that changes nothing, with the resource in its old state."""
    server = Server(f"sqlite:///{tmp_path / 'hooks.sqlite'}", tmp_path / "hooks.log").start()
    base = [OPENSTACK, "--os-auth-type", "none", "--os-endpoint", server.endpoint]

    def openstack(*arguments: str) -> str:
        done = subprocess.run([*base, *arguments], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    try:
        _create(server, "hooked", None)
        openstack("stack", "update", "hooked", "--existing", "--pre-update", "value")
        pending = wait_until(lambda: json.loads(openstack("stack", "hook", "poll", "hooked", "-f", "json")), "the update to stop at its hook")
        [hook] = pending
        assert (hook["Resource Name"], hook["Resource Status"], hook["Resource Status Reason"]) == ("value", "CREATE_COMPLETE", "UPDATE paused until Hook pre-update is cleared")
        status, body = server.request("GET", "/stacks/hooked")
        assert body["stack"]["stack_status"] == "UPDATE_IN_PROGRESS"
        openstack("stack", "hook", "clear", "hooked", "value", "--pre-update")
        assert _finished(server, "hooked") == "UPDATE_COMPLETE"
        stack_id = server.request("GET", "/stacks/hooked")[1]["stack"]["id"]
        status, body = server.request("GET", f"/stacks/hooked/{stack_id}/resources/value/events")
        assert status == 200, body
        cleared = body["events"][-1]
        assert (cleared["resource_status"], cleared["resource_status_reason"]) == ("CREATE_COMPLETE", "Hook pre-update is cleared")
    finally:
        server.stop()
