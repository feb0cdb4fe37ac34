"""The Orchestration API v1 as a user drives it: a real ``stoker serve`` process on
127.0.0.1 over a SQLite file, and the real python-heatclient (and the ``openstack``
command) against it. Actions run in the background: the tests poll the stack's state
with a deadline, as a client does."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from heatclient import client as heat_client
from heatclient import exc as heat_exc

from tests.support import server as server_process
from tests.support.waiting import wait_for_stack, wait_until

STOKER = str(Path(sys.executable).with_name("stoker"))
OPENSTACK = str(Path(sys.executable).with_name("openstack"))
TENANT = "demo"

SLOW = """
heat_template_version: 2021-04-16
parameters:
  greeting:
    type: string
    default: hello
  wait:
    type: number
    default: 0.5
resources:
  first:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: greeting}
      wait_secs: {get_param: wait}
  second:
    type: OS::Heat::RandomString
    depends_on: [first]
    properties:
      length: 8
outputs:
  said:
    description: What the first resource holds.
    value: {get_attr: [first, output]}
"""


class Server(server_process.Server):
    """``stoker serve`` over a SQLite file, with abandon enabled; a clean stop leaves no
    traceback in its log."""

    def __init__(self, database: Path):
        super().__init__(f"sqlite:///{database}", database.with_suffix(f".{time.monotonic_ns()}.log"), STOKER_ENABLE_STACK_ABANDON="true")
        self.database = database

    def stop(self, kill: bool = False) -> None:
        log = super().stop(kill=kill)
        if not kill:
            assert "Traceback" not in log

    def client(self):
        return heat_client.Client("1", endpoint=self.endpoint, token="any-token")


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("api") / "api.sqlite").start()
    yield running
    running.stop()


@pytest.fixture
def heat(server):
    return server.client()


def raw(server: Server, method: str, path: str, body: object = None) -> tuple[int, dict]:
    """A request without a client, to see status and body as sent."""
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(server.endpoint + path, data=data, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def test_api_stack_lifecycle_with_heatclient(heat):
    created = heat.stacks.create(stack_name="life", template=yaml.safe_load(SLOW), parameters={"greeting": "hi", "wait": 1}, tags="a,b")
    stack_id = created["stack"]["id"]
    assert created["stack"]["links"][0]["href"].endswith(f"/v1/{TENANT}/stacks/life/{stack_id}")
    # The request returned while the job runs: the store shows it IN_PROGRESS, then COMPLETE.
    assert heat.stacks.get("life").stack_status == "CREATE_IN_PROGRESS"
    stack = wait_for_stack(heat, "life")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert stack.parameters["greeting"] == "hi" and stack.tags == ["a", "b"]
    assert {o["output_key"]: o["output_value"] for o in stack.outputs} == {"said": "hi"}

    assert [s.stack_name for s in heat.stacks.list(filters={"stack_status": "CREATE_COMPLETE"})] == ["life"]
    assert list(heat.stacks.list(filters={"name": "other"})) == []
    resources = {r.resource_name: r for r in heat.resources.list("life")}
    assert resources["first"].resource_status == "CREATE_COMPLETE"
    assert resources["first"].required_by == ["second"]
    assert heat.resources.get("life", "first").attributes["output"] == "hi"
    events = list(heat.events.list("life"))
    assert events[0].resource_status == "CREATE_IN_PROGRESS" and events[0].resource_name == "life"
    assert events[-1].resource_status == "CREATE_COMPLETE" and events[-1].resource_name == "life"
    page = list(heat.events.list("life", limit=2, marker=events[0].id))
    assert [e.id for e in page] == [e.id for e in events[1:3]]
    newest = list(heat.events.list("life", sort_dir="desc", limit=1))
    assert newest[0].id == events[-1].id
    first_events = list(heat.events.list("life", resource_name="first"))
    assert {e.resource_status for e in first_events} == {"CREATE_IN_PROGRESS", "CREATE_COMPLETE"}
    one = heat.events.get("life", "first", first_events[0].id)
    assert one.resource_type == "OS::Heat::TestResource"
    assert heat.stacks.output_show("life", "said") == {"output": {"output_key": "said", "description": "What the first resource holds.", "output_value": "hi"}}
    assert heat.stacks.output_list("life") == {"outputs": [{"output_key": "said", "description": "What the first resource holds."}]}
    assert heat.stacks.template("life")["resources"]["first"]["type"] == "OS::Heat::TestResource"
    assert "parameters" in heat.stacks.environment("life")
    assert heat.stacks.files("life") == {}

    # Update (PUT): a new template value; the preview first says what would change.
    changes = heat.stacks.preview_update("life", template=SLOW, parameters={"greeting": "hello again"})["resource_changes"]
    assert [r["resource_name"] for r in changes["updated"]] == ["first"]
    heat.stacks.update("life", template=SLOW, parameters={"greeting": "hello again", "wait": 0})
    stack = wait_for_stack(heat, "life", lambda s: s == "UPDATE_COMPLETE" or s.endswith("FAILED"))
    assert stack.stack_status == "UPDATE_COMPLETE", stack.stack_status_reason
    assert stack.parameters["greeting"] == "hello again"
    # PATCH (existing): keep the template and the other parameters; then clear one.
    heat.stacks.update("life", existing=True, parameters={"greeting": "patched"})
    stack = wait_for_stack(heat, "life", lambda s: s == "UPDATE_COMPLETE" and heat.stacks.get("life").parameters["greeting"] == "patched")
    assert stack.parameters["wait"] == "0"
    heat.stacks.update("life", existing=True, clear_parameters=["greeting"])
    stack = wait_for_stack(heat, "life", lambda s: s == "UPDATE_COMPLETE" and heat.stacks.get("life").parameters["greeting"] == "hello")
    # An update's settings replace the stack's own when given.
    assert stack.disable_rollback is True and stack.timeout_mins is None
    heat.stacks.update("life", existing=True, tags="x,y", disable_rollback=False, timeout_mins=5)
    stack = wait_for_stack(heat, "life", lambda s: s == "UPDATE_COMPLETE" and heat.stacks.get("life").tags == ["x", "y"])
    assert stack.disable_rollback is False and stack.timeout_mins == 5

    heat.stacks.delete("life")

    def gone_by_name() -> bool:
        try:
            heat.stacks.get("life")
        except heat_exc.HTTPNotFound:
            return True
        return False

    wait_until(gone_by_name, "stack life gone by name", interval_s=0.1)
    gone = heat.stacks.get(f"life/{stack_id}")  # by id a deleted stack still shows (Heat)
    assert gone.stack_status == "DELETE_COMPLETE"


def test_api_preview_validate_and_catalog(heat):
    preview = heat.stacks.preview(stack_name="preview-only", template=SLOW, parameters={"greeting": "x"})
    assert sorted(r["resource_name"] for r in preview.resources) == ["first", "second"]
    assert next(r for r in preview.resources if r["resource_name"] == "first")["required_by"] == ["second"]
    with pytest.raises(heat_exc.HTTPNotFound):
        heat.stacks.get("preview-only")

    result = heat.stacks.validate(template=SLOW)
    assert result["Parameters"]["greeting"]["Default"] == "hello"
    nested = {"heat_template_version": "2021-04-16", "resources": {"child": {"type": "inner.yaml"}}}
    inner = "heat_template_version: 2021-04-16\nparameters:\n  size: {type: number, default: 2}\n"
    shown = heat.stacks.validate(template=nested, files={"inner.yaml": inner}, show_nested=True)
    assert shown["NestedParameters"]["child"]["Parameters"]["size"]["Default"] == 2

    names = [t.resource_type for t in heat.resource_types.list()]
    assert "OS::Heat::RandomString" in names
    described = heat.resource_types.list(filters={"name": "Random"}, with_description=True)
    assert [t.resource_type for t in described] == ["OS::Heat::RandomString"] and described[0].description
    schema = heat.resource_types.get("OS::Heat::RandomString")
    assert schema["properties"]["length"]["type"] == "integer" and "value" in schema["attributes"]
    generated = heat.resource_types.generate_template("OS::Heat::RandomString", template_type="hot")
    # Heat names the resource after the type's class (its last part), outputs and description too.
    assert list(generated["resources"]) == ["RandomString"]
    assert generated["resources"]["RandomString"] == {"type": "OS::Heat::RandomString", "properties": generated["resources"]["RandomString"]["properties"]}
    assert generated["resources"]["RandomString"]["properties"]["length"] == {"get_param": "length"}
    assert generated["description"] == "Initial template of RandomString"
    assert generated["outputs"]["value"]["value"] == {"get_attr": ["RandomString", "value"]}
    cfn = heat.resource_types.generate_template("OS::Heat::TestResource", template_type="cfn")
    assert list(cfn["Resources"]) == ["TestResource"] and cfn["Resources"]["TestResource"]["Type"] == "OS::Heat::TestResource"
    assert cfn["HeatTemplateFormatVersion"] == "2012-12-12" and cfn["Description"] == "Initial template of TestResource"
    assert cfn["Outputs"]["OS::stack_id"] == {"Value": {"Ref": "TestResource"}}
    assert generated["outputs"]["OS::stack_id"] == {"value": {"get_resource": "RandomString"}}
    with pytest.raises(heat_exc.HTTPNotFound):
        heat.resource_types.get("OS::Heat::Nope")

    versions = [v.version for v in heat.template_versions.list()]
    assert "heat_template_version.2021-04-16" in versions and "AWSTemplateFormatVersion.2010-09-09" in versions
    functions = [f.functions for f in heat.template_versions.get("heat_template_version.2021-04-16")]
    assert "get_attr" in functions and "if" in functions
    with_conditions = [f.functions for f in heat.template_versions.get("heat_template_version.2021-04-16", with_condition_func=True)]
    assert "equals" in with_conditions
    assert set(heat.build_info.build_info()) == {"api", "engine"}


def test_api_actions_snapshots_and_resources(heat):
    heat.stacks.create(stack_name="acts", template=SLOW, parameters={"wait": 0})
    assert wait_for_stack(heat, "acts").stack_status == "CREATE_COMPLETE"
    heat.actions.suspend("acts")
    assert wait_for_stack(heat, "acts").stack_status == "SUSPEND_COMPLETE"
    heat.actions.resume("acts")
    assert wait_for_stack(heat, "acts").stack_status == "RESUME_COMPLETE"
    heat.actions.check("acts")
    assert wait_for_stack(heat, "acts").stack_status == "CHECK_COMPLETE"

    snapshot = heat.stacks.snapshot("acts", name="before")
    assert snapshot["name"] == "before"
    wait_for_stack(heat, "acts")
    shown = heat.stacks.snapshot_show("acts", snapshot["id"])["snapshot"]
    assert shown["status"] == "COMPLETE"
    assert [s["name"] for s in heat.stacks.snapshot_list("acts")["snapshots"]] == ["before"]
    heat.stacks.update("acts", existing=True, parameters={"greeting": "changed"})
    wait_for_stack(heat, "acts", lambda s: s == "UPDATE_COMPLETE")
    heat.stacks.restore("acts", snapshot["id"])
    stack = wait_for_stack(heat, "acts", lambda s: s.startswith("RESTORE") and not s.endswith("IN_PROGRESS"))
    assert stack.stack_status == "RESTORE_COMPLETE" and stack.parameters["greeting"] == "hello"
    heat.stacks.snapshot_delete("acts", snapshot["id"])
    assert heat.stacks.snapshot_list("acts")["snapshots"] == []

    heat.resources.mark_unhealthy("acts", "second", True, "disk errors")
    marked = heat.resources.get("acts", "second")
    assert (marked.resource_status, marked.resource_status_reason) == ("CHECK_FAILED", "disk errors")

    exported = heat.stacks.export("acts")
    assert set(exported["resources"]) == {"first", "second"}
    abandoned = heat.stacks.abandon("acts")
    assert abandoned["name"] == "acts"
    with pytest.raises(heat_exc.HTTPNotFound):
        heat.stacks.get("acts")


def test_api_mark_unhealthy_by_physical_id(heat):
    """Heat's mark unhealthy finds a resource by its physical id too: an alarm's workflow
    knows the server it watched, not the resource's name (heat-templates' autohealing)."""
    heat.stacks.create(stack_name="healing", template=SLOW, parameters={"wait": 0})
    assert wait_for_stack(heat, "healing").stack_status == "CREATE_COMPLETE"
    second = heat.resources.get("healing", "second")
    heat.resources.mark_unhealthy("healing", second.physical_resource_id, True, "by its id")
    marked = heat.resources.get("healing", "second")
    assert (marked.resource_status, marked.resource_status_reason) == ("CHECK_FAILED", "by its id")
    with pytest.raises(heat_exc.HTTPNotFound):
        heat.resources.mark_unhealthy("healing", "no-such-id", True, "")
    heat.stacks.update("healing", existing=True)
    healed = wait_for_stack(heat, "healing", lambda s: s.startswith("UPDATE") and not s.endswith("IN_PROGRESS"))
    assert healed.stack_status == "UPDATE_COMPLETE"
    replaced = heat.resources.get("healing", "second")  # a new resource, created
    assert replaced.resource_status == "CREATE_COMPLETE"
    assert replaced.physical_resource_id != second.physical_resource_id


def test_api_hook_signal_and_cancel(heat):
    environment = {"resource_registry": {"resources": {"first": {"hooks": ["pre-create"]}}}}
    heat.stacks.create(stack_name="hooked", template=SLOW, environment=environment)
    wait_until(lambda: "CREATE paused until Hook pre-create is cleared" in [e.resource_status_reason for e in heat.events.list("hooked", resource_name="first")], "the resource to reach its hook", interval_s=0.1)
    assert heat.stacks.get("hooked").stack_status == "CREATE_IN_PROGRESS"
    heat.resources.signal("hooked", "first", data={"unset_hook": "pre-create"})
    assert wait_for_stack(heat, "hooked").stack_status == "CREATE_COMPLETE"


    # A slow update, cancelled: it rolls back to the previous parameters. (Not on the
    # hooked stack: the rollback replaces the aborted resource, whose create would
    # stop at the hook again.)
    heat.stacks.create(stack_name="cancelled", template=SLOW, parameters={"wait": 0})
    assert wait_for_stack(heat, "cancelled").stack_status == "CREATE_COMPLETE"
    heat.stacks.update("cancelled", existing=True, parameters={"greeting": "slow", "wait": 30})
    wait_for_stack(heat, "cancelled", lambda s: s == "UPDATE_IN_PROGRESS")
    with pytest.raises(heat_exc.HTTPConflict):  # busy: a second update is refused at once
        heat.stacks.update("cancelled", existing=True, parameters={"greeting": "again"})
    heat.actions.cancel_update("cancelled")
    stack = wait_for_stack(heat, "cancelled", lambda s: s.startswith("ROLLBACK") and not s.endswith("IN_PROGRESS"))
    assert stack.stack_status == "ROLLBACK_COMPLETE", stack.stack_status_reason
    assert stack.parameters["greeting"] == "hello"


INNER = """
heat_template_version: 2021-04-16
parameters:
  word: {type: string, default: inner}
resources:
  leaf:
    type: OS::Heat::Value
    properties: {value: {get_param: word}}
outputs:
  word: {value: {get_attr: [leaf, value]}}
"""


def test_api_nested_stacks_environment_files_and_paging(server, heat):
    parent = {
        "heat_template_version": "2021-04-16",
        "parameters": {"word": {"type": "string"}},
        "resources": {"child": {"type": "inner.yaml", "properties": {"word": {"get_param": "word"}}}},
        "outputs": {"word": {"value": {"get_attr": ["child", "word"]}}},
    }
    # The environment comes as a named file in 'files' (what heatclient sends for -e).
    files = {"inner.yaml": INNER, "env.yaml": "parameters:\n  word: from-env\n"}
    heat.stacks.create(stack_name="outer", template=parent, files=files, environment_files=["env.yaml"])
    stack = wait_for_stack(heat, "outer")
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    assert stack.outputs[0]["output_value"] == "from-env"

    top = heat.resources.list("outer")
    assert [r.resource_name for r in top] == ["child"]
    assert [link["rel"] for link in top[0].links] == ["self", "stack", "nested"]
    deep = {r.resource_name: r for r in heat.resources.list("outer", nested_depth=1)}
    assert set(deep) == {"child", "leaf"} and deep["leaf"].parent_resource == "child"
    assert heat.resources.metadata("outer", "child") == {}
    nested_events = list(heat.events.list("outer", nested_depth=1))
    leaf_events = [e for e in nested_events if e.resource_name == "leaf"]
    assert leaf_events and "root_stack" in [link["rel"] for link in leaf_events[0].links]
    assert "leaf" not in [e.resource_name for e in heat.events.list("outer")]
    nested_ids = {s.id for s in heat.stacks.list(show_nested=True)} - {s.id for s in heat.stacks.list()}
    assert len(nested_ids) == 1

    # Paging: newest first, `limit` and `marker` (heatclient follows until its limit).
    for name in ("page-a", "page-b"):
        heat.stacks.create(stack_name=name, template=SLOW, parameters={"wait": 0})
    status, body = raw(server, "GET", "/stacks?limit=1")
    assert status == 200 and body["stacks"][0]["stack_name"] == "page-b" and body["links"][0]["rel"] == "next"
    status, body = raw(server, "GET", f"/stacks?limit=1&marker={body['stacks'][0]['id']}")
    assert [s["stack_name"] for s in body["stacks"]] == ["page-a"]
    assert [s.stack_name for s in heat.stacks.list(limit=2)] == ["page-b", "page-a"]
    status, body = raw(server, "GET", "/stacks?sort_keys=stack_name&sort_dir=asc")
    assert [s["stack_name"] for s in body["stacks"]][:2] == sorted(s["stack_name"] for s in body["stacks"])[:2]
    # A name that does not match the id is not that stack.
    status, body = raw(server, "GET", f"/stacks/page-b/{heat.stacks.get('page-a').id}")
    assert status == 404


def test_api_errors_are_heat_faults(server, heat):
    broken = {"heat_template_version": "2021-04-16", "resources": {"a": {"type": "OS::Heat::Nonee"}}}
    status, body = raw(server, "POST", "/stacks", {"stack_name": "bad", "template": broken})
    assert status == 400
    assert body["code"] == 400 and body["title"] == "Bad Request" and body["error"]["traceback"] is None
    assert body["error"]["type"] == "StackValidationFailed"
    assert "resources.a.type" in body["error"]["message"] and "did you mean 'OS::Heat::None'" in body["error"]["message"]
    # Text keeps its place: file:line:col.
    text = "heat_template_version: 2021-04-16\nresources:\n  a:\n    type: OS::Heat::Nonee\n"
    with pytest.raises(heat_exc.HTTPBadRequest) as raised:
        heat.stacks.create(stack_name="bad", template=text)
    assert "template:4:11: resources.a.type" in str(raised.value)

    status, body = raw(server, "GET", "/stacks/nothing-here")
    assert status == 404 and body["error"]["type"] == "EntityNotFound"
    status, body = raw(server, "POST", "/stacks", {"stack_name": "url", "template_url": "http://example.com/t.yaml"})
    assert status == 400 and "never fetches URLs" in body["error"]["message"]
    status, body = raw(server, "POST", "/stacks", {"template": SLOW})
    assert status == 400 and body["error"]["message"] == "No stack name specified"
    status, body = raw(server, "GET", "/no/such/route")
    assert status == 404 and body["error"]["type"] == "HTTPNotFound"
    status, body = raw(server, "DELETE", "/build_info")
    assert status == 405 and body["error"]["type"] == "HTTPMethodNotAllowed"

    heat.stacks.create(stack_name="twice", template=SLOW, parameters={"wait": 0})
    with pytest.raises(heat_exc.HTTPConflict) as raised:
        heat.stacks.create(stack_name="twice", template=SLOW)
    assert "already exists" in str(raised.value)
    status, body = raw(server, "POST", f"/stacks/twice/{heat.stacks.get('twice').id}/actions", {"dance": None})
    assert status == 400 and "Invalid action dance" in body["error"]["message"]


def test_api_openstack_command(server, tmp_path):
    """``openstack stack ...`` without Keystone: ``--os-auth-type none --os-endpoint``."""
    template = tmp_path / "slow.yaml"
    template.write_text(SLOW)
    base = [OPENSTACK, "--os-auth-type", "none", "--os-endpoint", server.endpoint]
    created = subprocess.run(
        [*base, "stack", "create", "osc", "-t", str(template), "--parameter", "greeting=osc", "--wait", "--poll", "1", "-f", "json"],
        capture_output=True, text=True, timeout=60,
    )
    assert created.returncode == 0, created.stderr
    # --wait prints the events as they come, then the stack (JSON).
    assert "[osc]: CREATE_COMPLETE  Stack CREATE completed successfully" in created.stdout
    assert json.loads(created.stdout[created.stdout.index("{\n"):])["stack_status"] == "CREATE_COMPLETE"
    listed = subprocess.run([*base, "stack", "list", "-f", "json"], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0, listed.stderr
    assert {"Stack Name": "osc", "Stack Status": "CREATE_COMPLETE"}.items() <= next(s for s in json.loads(listed.stdout) if s["Stack Name"] == "osc").items()


@pytest.mark.parametrize("kill", [True, False], ids=["killed", "stopped"])
def test_api_server_start_recovers_a_dead_engines_stacks(tmp_path, kill):
    """A server killed (or stopped: its jobs are cancelled, locks released) mid-create
    leaves the stack IN_PROGRESS; the next server's start finishes it."""
    first = Server(tmp_path / "crash.sqlite").start()
    heat = first.client()
    heat.stacks.create(stack_name="orphan", template=SLOW, parameters={"wait": 2})
    wait_for_stack(heat, "orphan", lambda s: s == "CREATE_IN_PROGRESS")
    first.stop(kill=kill)
    second = Server(tmp_path / "crash.sqlite").start()
    try:
        stack = wait_for_stack(second.client(), "orphan")
        assert stack.stack_status in ("CREATE_COMPLETE", "CREATE_FAILED"), stack.stack_status
    finally:
        second.stop()
