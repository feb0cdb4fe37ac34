"""Projects kept apart (issue 15), through a real ``stoker serve`` on 127.0.0.1 and the
real python-heatclient with two tenant endpoints: project B cannot see or touch
project A's stacks, resources, events, outputs, templates, environments, files,
snapshots, software configs or deployments by any route; each answer is the 404 a
missing stack gets, word for word, never a 403 that would confirm it exists. The same
stack name may be used in both projects. A signal's own credential still reaches its
resource, and the capability URLs work without a project."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator

import pytest
from heatclient import client as heat_client
from heatclient import exc as heat_exc

from tests.support.server import Server
from tests.support.waiting import wait_for_stack, wait_until

OUTER = """
heat_template_version: 2021-04-16
parameters:
  word: {type: string, default: secret-word}
resources:
  first:
    type: OS::Heat::TestResource
    metadata: {owner: project-a}
    properties: {value: {get_param: word}}
  child:
    type: inner.yaml
outputs:
  said: {value: {get_attr: [first, output]}}
"""

INNER = """
heat_template_version: 2021-04-16
resources:
  leaf:
    type: OS::Heat::Value
    properties: {value: leaf}
"""

WAITING = """
heat_template_version: 2021-04-16
resources:
  handle:
    type: OS::Heat::WaitConditionHandle
  wait:
    type: OS::Heat::WaitCondition
    properties:
      handle: {get_resource: handle}
      count: 1
      timeout: 600
outputs:
  endpoint: {value: {get_attr: [handle, endpoint]}}
  token: {value: {get_attr: [handle, token]}}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    database = tmp_path_factory.mktemp("projects") / "projects.sqlite"
    running = Server(f"sqlite:///{database}", database.with_suffix(".log"), STOKER_ENABLE_STACK_ABANDON="true")
    running.environment["STOKER_PUBLIC_URL"] = running.url
    running.start()
    yield running
    log = running.stop()
    assert "Traceback" not in log


def client(server: Server, project: str):
    return heat_client.Client("1", endpoint=f"{server.url}/v1/{project}", token="any-token")


def call(server: Server, project: str, method: str, path: str, body: object = None, token: str | None = None) -> tuple[int, dict]:
    """A request under ``/v1/{project}`` without a client: status and body as sent."""
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json", **({"X-Auth-Token": token} if token else {})}
    request = urllib.request.Request(f"{server.url}/v1/{project}{path}", data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def wait_until_waiting(heat, stack: str, resource: str) -> None:
    """Until the wait condition waits (the create answers before its resources exist)."""
    wait_until(lambda: heat.resources.get(stack, resource).resource_status == "CREATE_IN_PROGRESS", f"{stack}: {resource} to wait", interval_s=0.1, ignoring=(heat_exc.HTTPNotFound,))


# Every route under /stacks/{name}/{id}: (method, subpath, body). Those that change
# anything are sent with a body that would be accepted for the stack's own project.
def stack_routes(snapshot_id: str, event_id: str) -> list[tuple[str, str, object]]:
    update = {"template": OUTER, "files": {"inner.yaml": INNER}, "parameters": {"word": "changed"}}
    return [
        ("GET", "", None),
        ("GET", "/template", None),
        ("GET", "/environment", None),
        ("GET", "/files", None),
        ("GET", "/outputs", None),
        ("GET", "/outputs/said", None),
        ("GET", "/export", None),
        ("GET", "/resources", None),
        ("GET", "/resources?nested_depth=2", None),
        ("GET", "/resources/first", None),
        ("GET", "/resources/first/metadata", None),
        ("GET", "/events", None),
        ("GET", "/events?nested_depth=2", None),
        ("GET", f"/events/{event_id}", None),
        ("GET", "/resources/first/events", None),
        ("GET", f"/resources/first/events/{event_id}", None),
        ("GET", "/snapshots", None),
        ("GET", f"/snapshots/{snapshot_id}", None),
        ("GET", "/drift", None),
        ("POST", "/drift", None),
        ("PUT", "/preview", update),
        ("PATCH", "/preview", {"parameters": {"word": "changed"}}),
        ("PUT", "", update),
        ("PATCH", "", {"parameters": {"word": "changed"}}),
        ("POST", "/actions", {"suspend": None}),
        ("POST", "/actions", {"check": None}),
        ("POST", "/actions", {"cancel_update": None}),
        ("POST", "/snapshots", {"name": "theirs"}),
        ("POST", f"/snapshots/{snapshot_id}/restore", None),
        ("DELETE", f"/snapshots/{snapshot_id}", None),
        ("PATCH", "/resources/first", {"mark_unhealthy": True, "resource_status_reason": "theirs"}),
        ("POST", "/resources/first/signal", {"anything": 1}),
        ("DELETE", "/abandon", None),
        ("DELETE", "", None),
    ]


def test_projects_another_projects_stack_is_not_found_by_any_route(server):
    heat_a, heat_b = client(server, "proj-a"), client(server, "proj-b")
    stack_id = heat_a.stacks.create(stack_name="alpha", template=OUTER, files={"inner.yaml": INNER})["stack"]["id"]
    assert wait_for_stack(heat_a, "alpha").stack_status == "CREATE_COMPLETE"
    snapshot_id = heat_a.stacks.snapshot("alpha", name="mine")["id"]
    assert wait_for_stack(heat_a, "alpha").stack_status == "SNAPSHOT_COMPLETE"
    event_id = next(e.id for e in heat_a.events.list("alpha", resource_name="first"))
    nested = [s for s in heat_a.stacks.list(show_nested=True) if s.id != stack_id]
    assert [s.parent for s in nested] == [stack_id]
    nested_path = f"/stacks/{nested[0].stack_name}/{nested[0].id}"
    assert call(server, "proj-a", "POST", f"/stacks/alpha/{stack_id}/drift")[0] == 200  # so that GET .../drift has one

    # Project A reaches every read route (so B's 404s below are not broken routes).
    for method, path, _ in stack_routes(snapshot_id, event_id):
        if method == "GET":
            status, body = call(server, "proj-a", method, f"/stacks/alpha/{stack_id}{path}")
            assert status == 200, (path, body)
    assert call(server, "proj-a", "GET", nested_path)[0] == 200
    resource_state = heat_a.resources.get("alpha", "first").resource_status

    # Project B: the list does not hold it, in any of its forms.
    for query in ({}, {"show_nested": True}, {"show_deleted": True}, {"show_hidden": True}, {"filters": {"name": "alpha"}}):
        assert stack_id not in [s.id for s in heat_b.stacks.list(**query)], query
    status, body = call(server, "proj-b", "GET", f"/stacks?id={stack_id}&show_nested=true&show_deleted=true")
    assert (status, body["stacks"]) == (200, [])
    # Listing every project's stacks is an admin's (there is none without authentication).
    status, body = call(server, "proj-b", "GET", "/stacks?global_tenant=true")
    assert status == 403 and body["error"]["type"] == "Forbidden"
    assert call(server, "proj-b", "GET", f"/stacks?marker={stack_id}")[0] == 404

    # Show by name and by id, and every lookup redirect: 404 as for no stack at all.
    for name_or_id in ("alpha", stack_id):
        with pytest.raises(heat_exc.HTTPNotFound):
            heat_b.stacks.get(name_or_id)
        for subpath in ("", "/resources", "/events", "/template", "/outputs", "/snapshots", "/environment", "/files"):
            status, body = call(server, "proj-b", "GET", f"/stacks/{name_or_id}{subpath}")
            assert status == 404 and body["error"]["type"] == "EntityNotFound", (subpath, body)
    for fetch in (
        lambda: heat_b.stacks.template(stack_id),
        lambda: heat_b.stacks.environment(stack_id),
        lambda: heat_b.stacks.files(stack_id),
        lambda: heat_b.stacks.output_list(stack_id),
        lambda: heat_b.stacks.snapshot_list(stack_id),
        lambda: heat_b.resources.list(stack_id),
        lambda: heat_b.resources.get(stack_id, "first"),
        lambda: heat_b.events.list(stack_id),
        lambda: heat_b.stacks.delete(stack_id),
    ):
        with pytest.raises(heat_exc.HTTPNotFound):
            fetch()

    # Every route of the stack's own URL (and of its nested stack's): the body a stack
    # that does not exist gets, but for the id it names.
    missing = str(uuid.uuid4())
    for method, path, body in stack_routes(snapshot_id, event_id):
        status, theirs = call(server, "proj-b", method, f"/stacks/alpha/{stack_id}{path}", body)
        absent_status, absent = call(server, "proj-b", method, f"/stacks/alpha/{missing}{path}", body)
        assert (status, absent_status) == (404, 404), (method, path, theirs)
        assert json.dumps(theirs).replace(stack_id, missing) == json.dumps(absent), (method, path)
    for method in ("GET", "DELETE"):
        assert call(server, "proj-b", method, nested_path)[0] == 404
    assert call(server, "proj-b", "GET", nested_path + "/resources")[0] == 404

    # Nor through a stack of B's own: A's snapshot, event and nested stack are not its.
    beta_id = heat_b.stacks.create(stack_name="beta", template=OUTER, files={"inner.yaml": INNER})["stack"]["id"]
    assert wait_for_stack(heat_b, "beta").stack_status == "CREATE_COMPLETE"
    for method, path in (
        ("GET", f"/snapshots/{snapshot_id}"),
        ("POST", f"/snapshots/{snapshot_id}/restore"),
        ("DELETE", f"/snapshots/{snapshot_id}"),
        ("GET", f"/events/{event_id}"),
        ("GET", f"/resources/first/events/{event_id}"),
    ):
        assert call(server, "proj-b", method, f"/stacks/beta/{beta_id}{path}")[0] == 404, path
    assert stack_id not in [r.physical_resource_id for r in heat_b.resources.list("beta", nested_depth=2)]

    # Nothing B sent changed A's stack.
    stack = heat_a.stacks.get("alpha")
    assert stack.stack_status == "SNAPSHOT_COMPLETE" and stack.parameters["word"] == "secret-word"
    assert [s["name"] for s in heat_a.stacks.snapshot_list("alpha")["snapshots"]] == ["mine"]
    assert heat_a.resources.get("alpha", "first").resource_status == resource_state != "CHECK_FAILED"
    reasons = [e.resource_status_reason for e in heat_a.events.list("alpha")]
    assert reasons and not [reason for reason in reasons if reason.startswith("Signal") or "theirs" in reason]
    assert heat_a.resources.metadata("alpha", "first") == {"owner": "project-a"}


def test_projects_software_configs_and_deployments_are_the_projects_own(server):
    heat_a, heat_b = client(server, "proj-a"), client(server, "proj-b")
    config = heat_a.software_configs.create(name="a-config", group="script", config="#!/bin/sh\necho a")
    deployment = heat_a.software_deployments.create(config_id=config.id, server_id="server-a", action="CREATE", status="COMPLETE")
    theirs = heat_b.software_configs.create(name="b-config", group="script", config="#!/bin/sh\necho b")

    assert config.id not in [c.id for c in heat_b.software_configs.list()]
    assert [c.id for c in heat_b.software_configs.list()] == [theirs.id]
    assert deployment.id not in [d.id for d in heat_b.software_deployments.list()]
    assert heat_b.software_deployments.list(server_id="server-a") == []
    assert heat_b.software_deployments.metadata("server-a") == []
    for attempt in (
        lambda: heat_b.software_configs.get(config.id),
        lambda: heat_b.software_configs.delete(config.id),
        lambda: heat_b.software_deployments.get(deployment.id),
        lambda: heat_b.software_deployments.update(deployment.id, status="FAILED", status_reason="theirs"),
        lambda: heat_b.software_deployments.delete(deployment.id),
    ):
        with pytest.raises(heat_exc.HTTPNotFound):
            attempt()
    # Another project's config cannot be deployed, as one that does not exist cannot.
    status, body = call(server, "proj-b", "POST", "/software_deployments", {"config_id": config.id, "server_id": "server-b"})
    assert status == 400 and body["error"]["type"] == "Invalid", body
    # A's marker does not page B's list.
    status, body = call(server, "proj-b", "GET", f"/software_configs?marker={config.id}")
    assert status == 200 and [c["id"] for c in body["software_configs"]] == [theirs.id]

    # A still has both, unchanged.
    assert heat_a.software_configs.get(config.id).config == "#!/bin/sh\necho a"
    shown = heat_a.software_deployments.get(deployment.id)
    assert (shown.status, shown.server_id) == ("COMPLETE", "server-a")
    assert [c.id for c in heat_a.software_configs.list()] == [config.id]
    assert [item["name"] for item in heat_a.software_deployments.metadata("server-a")] == ["a-config"]


def test_projects_same_stack_name_in_two_projects(server):
    heat_a, heat_b = client(server, "proj-a"), client(server, "proj-b")
    first = heat_a.stacks.create(stack_name="twin", template=INNER)["stack"]["id"]
    second = heat_b.stacks.create(stack_name="twin", template=INNER)["stack"]["id"]
    assert first != second
    assert wait_for_stack(heat_a, "twin").id == first
    assert wait_for_stack(heat_b, "twin").id == second
    # Still unique within a project.
    with pytest.raises(heat_exc.HTTPConflict):
        heat_a.stacks.create(stack_name="twin", template=INNER)
    status, body = call(server, "proj-b", "POST", "/stacks/preview", {"stack_name": "twin", "template": INNER})
    assert status == 409, body
    status, body = call(server, "proj-c", "POST", "/stacks/preview", {"stack_name": "twin", "template": INNER})
    assert status == 200, body
    heat_b.stacks.delete("twin")
    # By its id a deleted stack is still found (Heat's identify_stack, show_deleted),
    # by its owner only; by its name it is gone.
    wait_for_stack(heat_b, second, lambda s: s == "DELETE_COMPLETE")
    with pytest.raises(heat_exc.HTTPNotFound):
        heat_a.stacks.get(second)
    with pytest.raises(heat_exc.HTTPNotFound):
        heat_b.stacks.get("twin")
    assert heat_a.stacks.get("twin").stack_status == "CREATE_COMPLETE"


def test_projects_signals_reach_a_resource_by_its_credential_only(server):
    heat_a = client(server, "proj-a")
    stack_id = heat_a.stacks.create(stack_name="waiting", template=WAITING)["stack"]["id"]
    wait_until_waiting(heat_a, "waiting", "wait")
    outputs = {o["output_key"]: o["output_value"] for o in heat_a.stacks.get("waiting").outputs}
    endpoint, token = outputs["endpoint"], outputs["token"]
    assert endpoint == f"{server.url}/v1/proj-a/stacks/waiting/{stack_id}/resources/handle/signal"
    path = f"/stacks/waiting/{stack_id}/resources/handle/signal"
    # From another project: without the handle's token, or with a wrong one, there is
    # no such stack; in its own project a wrong token is refused as Heat refuses it.
    assert call(server, "proj-b", "POST", path, {"status": "SUCCESS"})[0] == 404
    assert call(server, "proj-b", "POST", path, {"status": "SUCCESS"}, token="wrong")[0] == 404
    assert call(server, "proj-a", "POST", path, {"status": "SUCCESS"}, token="wrong")[0] == 403
    # The handle's token reaches it whatever the path's project: the agent's credential.
    status, body = call(server, "proj-b", "POST", path, {"status": "SUCCESS", "data": "done"}, token=token)
    assert status in (200, 204), body
    assert wait_for_stack(heat_a, "waiting").stack_status == "CREATE_COMPLETE"
    # The token is its resource's only: another resource of the stack is not reached.
    status, _ = call(server, "proj-b", "POST", f"/stacks/waiting/{stack_id}/resources/wait/signal", {}, token=token)
    assert status == 404


CFN = """
AWSTemplateFormatVersion: 2010-09-09
Resources:
  Handle:
    Type: AWS::CloudFormation::WaitConditionHandle
  Wait:
    Type: AWS::CloudFormation::WaitCondition
    Properties:
      Handle: {Ref: Handle}
      Timeout: 600
Outputs:
  Url:
    Value: {Ref: Handle}
"""


def put(url: str, body: object) -> int:
    request = urllib.request.Request(url, data=json.dumps(body).encode(), method="PUT", headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def test_projects_capability_urls_need_no_project_and_reach_their_resource_only(server):
    heats = {project: client(server, project) for project in ("proj-a", "proj-b")}
    urls = {}
    for project, heat in heats.items():
        heat.stacks.create(stack_name="cfn", template=CFN)
        wait_until_waiting(heat, "cfn", "Wait")
        urls[project] = heat.stacks.get("cfn").outputs[0]["output_value"]
        assert urls[project].startswith(f"{server.url}/v1/waitcondition/")
    (a_id, a_secret), (b_id, b_secret) = (urls[p].split("/v1/waitcondition/")[1].split("?secret=") for p in ("proj-a", "proj-b"))
    signal = {"Status": "SUCCESS", "Reason": "r", "UniqueId": "1", "Data": "d"}
    # One handle's secret does not open another's URL.
    assert put(f"{server.url}/v1/waitcondition/{a_id}?secret={b_secret}", signal) == 403
    assert heats["proj-a"].stacks.get("cfn").stack_status == "CREATE_IN_PROGRESS"
    assert put(urls["proj-a"], signal) == 200
    assert wait_for_stack(heats["proj-a"], "cfn").stack_status == "CREATE_COMPLETE"
    assert heats["proj-b"].stacks.get("cfn").stack_status == "CREATE_IN_PROGRESS"
    assert put(f"{server.url}/v1/waitcondition/{b_id}?secret={b_secret}", signal) == 200
    assert wait_for_stack(heats["proj-b"], "cfn").stack_status == "CREATE_COMPLETE"
