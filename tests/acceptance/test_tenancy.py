"""Another project's objects at every route (issue 26), through a real ``stoker serve``
on 127.0.0.1 in auth mode token, on SQLite and on PostgreSQL, with a member token for project A, one for project B
and a cloud admin's.

Project A owns a stack whose DeployedServer has a software deployment its agent polls
for (the server's capability URL), a nested stack, a snapshot, events, outputs, wait
condition handles, and a software config and deployment made through the API. Project
B then sends, at every route of the OpenAPI document (the routes are read from the
document, so a new route is swept too, and a route that takes a body must say here
what its body may name), A's ids in the path and bodies that name A's objects:

* in A's path (``/v1/proj-a/...``) with B's token: 403 before anything is looked up;
* in B's own path: what another project owns is answered as what does not exist (the
  same status, type and message, but for the id), a body naming A's server or project
  is refused (404 for the server, 403 for the project), and nothing A owns shows in any
  answer;
* afterwards A's stack, resources, events, snapshots, configs, deployments and the
  metadata A's agent reads from the capability URL are exactly as before.

The exploit that found this: B's deployment naming A's server (and A's project as its
``stack_user_project_id``) was served to A's agent through A's metadata URL.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
import sqlalchemy as sa
import yaml

from stoker.api.openapi import document
from tests.support.server import Server
from tests.support.waiting import settled, wait_until

MEMBER_A = "member-token-of-project-a-0001"
MEMBER_B = "member-token-of-project-b-0002"
CLOUD_ADMIN = "admin-token-of-the-cloud-0003"
TOKENS = {
    "tokens": {
        MEMBER_A: {"project_id": "proj-a", "user_id": "alice", "roles": ["member"]},
        MEMBER_B: {"project_id": "proj-b", "user_id": "bob", "roles": ["member"]},
        CLOUD_ADMIN: {"project_id": "ops", "user_id": "root", "roles": ["admin"]},
    }
}

# What only A's objects hold: none of it may appear in an answer to B.
A_SECRET_SCRIPT = "echo only-project-a-runs-this"
A_SECRET_WORD = "project-a-secret-word"

TEMPLATE = """
heat_template_version: 2016-10-14
parameters:
  word: {type: string, default: plain-word, hidden: true}
  script: {type: string, default: "echo hello"}
resources:
  box:
    type: OS::Heat::DeployedServer
    properties:
      software_config_transport: POLL_TEMP_URL
  setup:
    type: OS::Heat::SoftwareConfig
    properties:
      group: script
      config: {list_join: ["", ["#!/bin/sh\\n", {get_param: script}, "\\n"]]}
  applied:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: setup}
      server: {get_resource: box}
      signal_transport: NO_SIGNAL
  handle:
    type: OS::Heat::WaitConditionHandle
  cfn_handle:
    type: AWS::CloudFormation::WaitConditionHandle
  child:
    type: inner.yaml
outputs:
  said: {value: {get_param: word}}
  cfn_url: {value: {get_resource: cfn_handle}}
"""

INNER = """
heat_template_version: 2016-10-14
resources:
  leaf:
    type: OS::Heat::Value
    properties: {value: leaf}
"""


def deploying_to(server_id: str) -> str:
    """A template of B's own whose deployment names ``server_id`` (A's server)."""
    return f"""
heat_template_version: 2016-10-14
resources:
  setup:
    type: OS::Heat::SoftwareConfig
    properties: {{group: script, config: "#!/bin/sh\\necho pwned-by-b\\n"}}
  applied:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {{get_resource: setup}}
      server: "{server_id}"
      signal_transport: NO_SIGNAL
"""


@dataclass
class Project:
    """One project's caller and the objects it made."""

    tenant: str
    token: str
    stack_name: str = ""
    stack_id: str = ""
    nested_name: str = ""
    nested_id: str = ""
    snapshot_id: str = ""
    event_id: str = ""
    server_id: str = ""
    metadata_url: str = ""
    cfn_url: str = ""
    config_id: str = ""
    deployment_id: str = ""
    stack_config_id: str = ""
    stack_deployment_id: str = ""


def send(server: Server, method: str, path: str, token: str | None = None, body: Any = None, params: dict | None = None) -> httpx.Response:
    """One request as sent, redirects not followed (a lookup's 302 is an answer)."""
    headers = {"X-Auth-Token": token} if token else {}
    content = json.dumps(body) if body is not None else None
    if content is not None:
        headers["Content-Type"] = "application/json"
    with httpx.Client(base_url=server.url, follow_redirects=False, timeout=60) as client:
        return client.request(method, path, content=content, headers=headers, params=params)


def ok(response: httpx.Response, *statuses: int) -> Any:
    assert response.status_code in (statuses or (200,)), (response.request.method, response.request.url, response.status_code, response.text)
    return response.json() if response.content else None


def capability(url: str) -> tuple[str, str]:
    """(credential id, secret) of a capability URL."""
    parts = urlsplit(url)
    return parts.path.rsplit("/", 1)[1], parse_qs(parts.query)["secret"][0]


def wait_for_project_stack(server: Server, project: Project, name: str) -> dict:
    """The stack ``name`` of ``project`` (asked as the project) once its action ended."""

    def ended() -> dict | None:
        stacks = ok(send(server, "GET", f"/v1/{project.tenant}/stacks", project.token, params={"name": name, "show_deleted": "true"}))["stacks"]
        return stacks[0] if stacks and settled(stacks[0]["stack_status"]) else None

    return wait_until(ended, f"stack {name} of {project.tenant}", interval_s=0.1)


def make_objects(server: Server, project: Project, stack_name: str, script: str) -> Project:
    """The stack (its snapshot, events, server and deployments) and the API-made config
    and deployment of ``project``."""
    root = f"/v1/{project.tenant}"
    token = project.token
    body = {"stack_name": stack_name, "template": TEMPLATE, "files": {"inner.yaml": INNER}, "parameters": {"word": A_SECRET_WORD if project.tenant == "proj-a" else "b-word", "script": script}}
    project.stack_id = ok(send(server, "POST", root + "/stacks", token, body), 201)["stack"]["id"]
    project.stack_name = stack_name
    assert wait_for_project_stack(server, project, stack_name)["stack_status"] == "CREATE_COMPLETE"
    stack = f"{root}/stacks/{stack_name}/{project.stack_id}"
    project.snapshot_id = ok(send(server, "POST", stack + "/snapshots", token, {"name": "mine"}))["id"]
    assert wait_for_project_stack(server, project, stack_name)["stack_status"] == "SNAPSHOT_COMPLETE"
    project.event_id = ok(send(server, "GET", stack + "/resources/box/events", token))["events"][0]["id"]
    nested = [s for s in ok(send(server, "GET", root + "/stacks", token, params={"show_nested": "true"}))["stacks"] if s["id"] != project.stack_id]
    project.nested_name, project.nested_id = nested[0]["stack_name"], nested[0]["id"]
    resources = {r["resource_name"]: r["physical_resource_id"] for r in ok(send(server, "GET", stack + "/resources", token))["resources"]}
    project.server_id = resources["box"]
    project.stack_config_id, project.stack_deployment_id = resources["setup"], resources["applied"]
    metadata = ok(send(server, "GET", stack + "/resources/box/metadata", token))["metadata"]
    project.metadata_url = metadata["os-collect-config"]["request"]["metadata_url"]
    outputs = ok(send(server, "GET", stack + "/outputs/cfn_url", token))["output"]
    project.cfn_url = outputs["output_value"]
    config = {"name": f"{project.tenant}-config", "group": "script", "config": f"#!/bin/sh\n{script}\n"}
    project.config_id = ok(send(server, "POST", root + "/software_configs", token, config))["software_config"]["id"]
    deployment = {"config_id": project.config_id, "server_id": project.server_id, "action": "CREATE", "status": "COMPLETE"}
    project.deployment_id = ok(send(server, "POST", root + "/software_deployments", token, deployment))["software_deployment"]["id"]
    return project


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request, tmp_path_factory) -> Iterator[str]:
    """The sweep runs once on SQLite and once on PostgreSQL (a schema of its own on the
    suite's server, tests/conftest.py), the whole module against each."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('tenancy-sqlite') / 'stoker.sqlite'}"
        return
    postgres_server = request.getfixturevalue("postgres_server")
    schema = f"stoker_tenancy_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(postgres_server)
    with admin.begin() as connection:
        connection.execute(sa.text(f'CREATE SCHEMA "{schema}"'))
    separator = "&" if "?" in postgres_server else "?"
    yield f"{postgres_server}{separator}options=-csearch_path%3D{schema}"
    with admin.begin() as connection:
        connection.execute(sa.text(f'DROP SCHEMA "{schema}" CASCADE'))
    admin.dispose()


@pytest.fixture(scope="module")
def server(database: str, tmp_path_factory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("tenancy")
    tokens = directory / "tokens.yaml"
    tokens.write_text(yaml.safe_dump(TOKENS))
    running = Server(
        database, directory / "serve.log",
        STOKER_AUTH_MODE="token", STOKER_AUTH_TOKENS_FILE=str(tokens), STOKER_ENABLE_STACK_ABANDON="true", STOKER_ENABLE_STACK_ADOPT="true",
    )  # fmt: skip
    running.environment["STOKER_PUBLIC_URL"] = running.url
    running.start()
    yield running
    log = running.stop()
    assert "Traceback" not in log, log


@pytest.fixture(scope="module")
def projects(server: Server) -> tuple[Project, Project]:
    alpha = make_objects(server, Project("proj-a", MEMBER_A), "alpha", A_SECRET_SCRIPT)
    beta = make_objects(server, Project("proj-b", MEMBER_B), "beta", "echo b-runs-this")
    return alpha, beta


def agent_metadata(server: Server, project: Project) -> dict:
    """What the project's agent reads: its server's capability URL, no token."""
    credential_id, secret = capability(project.metadata_url)
    return ok(send(server, "GET", f"/v1/server_metadata/{credential_id}", params={"secret": secret}))


def state_of(server: Server, project: Project) -> dict:
    """Everything the project may read of what it owns (and its agent reads)."""
    root, token = f"/v1/{project.tenant}", project.token
    stack = f"{root}/stacks/{project.stack_name}/{project.stack_id}"
    reads = {
        "stacks": f"{root}/stacks?show_nested=true&show_deleted=true",
        "stack": stack,
        "template": stack + "/template",
        "environment": stack + "/environment",
        "files": stack + "/files",
        "outputs": stack + "/outputs/said",
        "resources": stack + "/resources?nested_depth=2&with_detail=true",
        "box": stack + "/resources/box",
        "box_metadata": stack + "/resources/box/metadata",
        "events": stack + "/events?nested_depth=2",
        "snapshots": stack + "/snapshots",
        "configs": root + "/software_configs",
        "config": f"{root}/software_configs/{project.config_id}",
        "deployments": root + "/software_deployments",
        "deployment": f"{root}/software_deployments/{project.deployment_id}",
        "server_deployments": f"{root}/software_deployments/metadata/{project.server_id}",
    }
    state = {name: ok(send(server, "GET", path, token)) for name, path in reads.items()}
    state["agent"] = agent_metadata(server, project)
    return state


# -- what each path parameter is filled with --------------------------------------------

# A path parameter that names an object some project owns: A's value, and a value that
# names nothing (the twin whose answer B's must equal). A new route with a parameter
# that is in neither table fails the sweep until it is added to one of them.
def owned_values(alpha: Project, path: str) -> dict[str, tuple[str, str | None]]:
    absent = uuid.uuid4().hex
    credential = capability(alpha.metadata_url if "server_metadata" in path else alpha.cfn_url)[0]
    return {
        "stack_name": (alpha.stack_name, f"absent-{absent[:8]}"),
        "stack_id": (alpha.stack_id, str(uuid.uuid4())),
        "resource_name": ("box", "absent_resource"),
        "snapshot_id": (alpha.snapshot_id, str(uuid.uuid4())),
        "event_id": (alpha.event_id, str(uuid.uuid4())),
        "output_key": ("said", "absent_output"),
        "config_id": (alpha.config_id, str(uuid.uuid4())),
        "deployment_id": (alpha.deployment_id, str(uuid.uuid4())),
        # No twin: a server no stack holds is one made outside stoker, which may be
        # deployed to (as in Heat); another project's is a 404 by decision (issue 26).
        "server_id": (alpha.server_id, None),
        "credential_id": (credential, str(uuid.uuid4())),
    }


# Path parameters that name no project's object: the same for every caller.
SHARED_VALUES = {"type_name": "OS::Heat::None", "template_version": "heat_template_version.2016-10-14", "constraint_name": "nova.flavor"}


def the_path(template: str, values: dict[str, str]) -> str:
    def fill(match: re.Match) -> str:
        name = match.group(1)
        assert name in values, f"{template}: no value for {{{name}}}: add it to owned_values or SHARED_VALUES"
        return values[name]

    return re.sub(r"\{(\w+)\}", fill, template)


def operations() -> list[tuple[str, str, dict]]:
    """Every (method, path, operation) of the OpenAPI document."""
    return [(method.upper(), path, spec) for path, methods in document()["paths"].items() for method, spec in methods.items()]


# -- what each route's body may name ---------------------------------------------------

@dataclass
class Attempt:
    """A request B makes with a body naming A's objects. ``expect``: the status it must
    get, or a check of the response; None where any answer will do as long as nothing
    of A's shows in it and nothing of A's changes. ``path``: values for the path
    parameters other than A's (B's own objects)."""

    body: Any
    expect: int | Callable[[httpx.Response], None] | None
    path: dict[str, str] = field(default_factory=dict)
    absent_body: Any = None  # the same request naming nothing: its answer equals B's


def update_body() -> dict:
    return {"template": TEMPLATE, "files": {"inner.yaml": INNER}, "parameters": {"script": "echo changed-by-b"}}


def plan_naming(server: Server, beta: Project, alpha: Project) -> dict:
    """A saved plan B made of an update of its own stack, edited to name A's stack."""
    path = f"/v1/{beta.tenant}/stacks/{beta.stack_name}/{beta.stack_id}/preview"
    plan = ok(send(server, "PUT", path, beta.token, update_body(), {"plan": "true"}))["plan"]
    plan["stack"] = {**plan["stack"], "name": alpha.stack_name, "id": alpha.stack_id}
    return plan


def attempts(server: Server, alpha: Project, beta: Project) -> dict[tuple[str, str], list[Attempt]]:
    """Per route with a request body: what B sends. A route whose path names A's
    objects is answered 404 before its body matters; its body is one the owner could
    send. Every route of the document with a body must be here (checked)."""
    stacks = "/v1/{tenant_id}/stacks"
    stack = stacks + "/{stack_name}/{stack_id}"
    resource = stack + "/resources/{resource_name}"
    deployments = "/v1/{tenant_id}/software_deployments"
    cfn_signal = {"Status": "SUCCESS", "Reason": "b", "UniqueId": "b", "Data": "pwned-by-b"}
    template_naming_a = {"template": deploying_to(alpha.server_id)}

    def b_stack_fails(name: str) -> Callable[[httpx.Response], None]:
        def check(response: httpx.Response) -> None:
            ok(response, 201)
            found = wait_for_project_stack(server, beta, name)
            assert found["stack_status"] in ("CREATE_FAILED", "ADOPT_FAILED"), found
            assert f"The Server ({alpha.server_id}) could not be found." in found["stack_status_reason"], found

        return check

    # B's stack adopting A's server's id: B's record of it comes second, so the server
    # stays A's (the deployments below to it are still refused).
    adopt_data = {
        "template": {"heat_template_version": "2016-10-14", "resources": {"box": {"type": "OS::Heat::DeployedServer"}}},
        "action": "CREATE", "status": "COMPLETE",
        "resources": {"box": {"resource_id": alpha.server_id, "action": "CREATE", "status": "COMPLETE", "type": "OS::Heat::DeployedServer"}},
    }  # fmt: skip

    def b_adopted(response: httpx.Response) -> None:
        ok(response, 201)
        assert wait_for_project_stack(server, beta, "b-adopts-a")["stack_status"] == "ADOPT_COMPLETE"
    multipart = f"""
heat_template_version: 2016-10-14
resources:
  parts:
    type: OS::Heat::MultipartMime
    properties: {{parts: [{{config: "{alpha.config_id}"}}, {{config: "{alpha.stack_config_id}"}}]}}
"""

    def b_multipart_holds_ids_only(response: httpx.Response) -> None:
        ok(response, 201)
        assert wait_for_project_stack(server, beta, "b-multipart")["stack_status"] == "CREATE_COMPLETE"
        stack_id = response.json()["stack"]["id"]
        config_id = ok(send(server, "GET", f"/v1/proj-b/stacks/b-multipart/{stack_id}/resources/parts", beta.token))["resource"]["physical_resource_id"]
        message = ok(send(server, "GET", f"/v1/proj-b/software_configs/{config_id}", beta.token))["software_config"]["config"]
        assert alpha.config_id in message and A_SECRET_SCRIPT not in message, message

    return {
        ("POST", stacks): [
            # B's multipart config naming A's configs: their ids stand for themselves.
            Attempt({"stack_name": "b-multipart", "template": multipart}, b_multipart_holds_ids_only),
            # B's stack deploying to A's server: its deployment is refused, A's server not found.
            Attempt({"stack_name": "b-deploys-to-a", **template_naming_a}, b_stack_fails("b-deploys-to-a")),
            Attempt({"stack_name": "b-adopts-a", "adopt_stack_data": json.dumps(adopt_data)}, b_adopted),
        ],
        # A preview, a validation and capabilities read the template; nothing is made.
        ("POST", stacks + "/preview"): [Attempt({"stack_name": "b-preview", **template_naming_a}, None)],
        ("POST", "/v1/{tenant_id}/validate"): [Attempt(template_naming_a, None)],
        # B's own plan of its own stack, made to name A's stack instead: A's stack is not
        # B's to update, whatever the document says.
        ("POST", "/v1/{tenant_id}/plans/apply"): [Attempt(plan_naming(server, beta, alpha), None)],
        # B's import of A's server: nothing of A's is taken over.
        ("POST", "/v1/{tenant_id}/imports"): [
            Attempt({"stack_name": "b-imports-a", "template": {"heat_template_version": "2016-10-14", "resources": {"box": {"type": "OS::Heat::DeployedServer"}}}, "resources": {"box": alpha.server_id}}, None)
        ],
        ("POST", "/v1/{tenant_id}/imports/preview"): [
            Attempt({"stack_name": "b-imports-a", "template": {"heat_template_version": "2016-10-14", "resources": {"box": {"type": "OS::Heat::DeployedServer"}}}, "resources": {"box": alpha.server_id}}, None)
        ],
        ("POST", "/v1/{tenant_id}/capabilities/find"): [Attempt({"templates": {"t.yaml": deploying_to(alpha.server_id)}, "capabilities": {}}, None)],
        ("POST", "/v1/{tenant_id}/template_capabilities"): [Attempt({"templates": {"t.yaml": deploying_to(alpha.server_id)}}, None)],
        ("PUT", stack): [Attempt(update_body(), 404)],
        ("PATCH", stack): [Attempt({"parameters": {"script": "echo changed-by-b"}}, 404)],
        ("PUT", stack + "/preview"): [Attempt(update_body(), 404)],
        ("PATCH", stack + "/preview"): [Attempt({"parameters": {"script": "echo changed-by-b"}}, 404)],
        ("POST", stack + "/snapshots"): [Attempt({"name": "theirs"}, 404)],
        ("POST", stack + "/actions"): [Attempt({action: None}, 404) for action in ("suspend", "resume", "check", "cancel_update", "cancel_without_rollback")],
        ("POST", stack + "/actions/preview"): [Attempt({action: None}, 404) for action in ("suspend", "resume", "check", "delete", "snapshot")]
        + [Attempt({"restore": alpha.snapshot_id}, 404)],
        ("PATCH", resource): [Attempt({"mark_unhealthy": True, "resource_status_reason": "pwned-by-b"}, 404)],
        ("POST", resource + "/signal"): [Attempt({"status": "SUCCESS", "data": "pwned-by-b"}, 404)],
        ("PUT", "/v1/waitcondition/{credential_id}"): [Attempt(cfn_signal, 403)],
        ("POST", "/v1/waitcondition/{credential_id}"): [Attempt(cfn_signal, 403)],
        # B's own config: a config names nothing.
        ("POST", "/v1/{tenant_id}/software_configs"): [Attempt({"name": "b", "group": "script", "config": "#!/bin/sh\necho b"}, 200)],
        ("POST", deployments): [
            # A's config: as one that does not exist (400, Heat's Invalid).
            Attempt({"config_id": alpha.config_id, "server_id": beta.server_id}, 400, absent_body={"config_id": str(uuid.uuid4()), "server_id": beta.server_id}),
            Attempt({"config_id": alpha.stack_config_id, "server_id": beta.server_id}, 400, absent_body={"config_id": str(uuid.uuid4()), "server_id": beta.server_id}),
            # A's server: not found.
            Attempt({"config_id": beta.config_id, "server_id": alpha.server_id}, 404),
            Attempt({"config_id": beta.config_id, "server_id": alpha.server_id, "action": "CREATE", "status": "IN_PROGRESS"}, 404),
            # A's project as the deployment's stack user project: refused.
            Attempt({"config_id": beta.config_id, "server_id": beta.server_id, "stack_user_project_id": alpha.tenant}, 403),
            Attempt({"config_id": beta.config_id, "server_id": str(uuid.uuid4()), "stack_user_project_id": alpha.tenant}, 403),
            # The exploit: both at once.
            Attempt({"config_id": beta.config_id, "server_id": alpha.server_id, "stack_user_project_id": alpha.tenant, "action": "CREATE", "status": "COMPLETE"}, 403),
        ],
        ("PUT", deployments + "/{deployment_id}"): [
            Attempt({"status": "FAILED", "status_reason": "pwned-by-b"}, 404),
            Attempt({"config_id": beta.config_id}, 404),
            # B's own deployment, moved to A's config: as a config that does not exist.
            Attempt({"config_id": alpha.config_id}, 400, path={"deployment_id": beta.deployment_id}, absent_body={"config_id": str(uuid.uuid4())}),
        ],
    }


def assert_nothing_of(alpha: Project, response: httpx.Response, what: str) -> None:
    text = response.text
    for secret in (A_SECRET_SCRIPT, A_SECRET_WORD, capability(alpha.metadata_url)[1], capability(alpha.cfn_url)[1]):
        assert secret not in text, (what, response.status_code, text)


def comparable(response: httpx.Response, replacements: dict[str, str]) -> tuple[int, Any]:
    """Status and fault of an answer, A's values replaced by the absent twin's."""
    text = response.text
    for theirs, absent in replacements.items():
        text = text.replace(theirs, absent)
    try:
        body = json.loads(text)
    except ValueError:
        return response.status_code, text
    return response.status_code, body.get("error") if isinstance(body, dict) else body


def test_tenancy_another_projects_objects_are_absent_at_every_route(server, projects):
    alpha, beta = projects
    before = state_of(server, alpha)
    assert [item["config"] for item in before["agent"]["deployments"]] == [f"#!/bin/sh\n{A_SECRET_SCRIPT}\n", f"#!/bin/sh\n{A_SECRET_SCRIPT}\n"]
    bodies = attempts(server, alpha, beta)
    swept: set[tuple[str, str]] = set()
    twinned: set[tuple[str, str]] = set()  # answered exactly as the same route naming nothing

    for method, template, spec in operations():
        if "{tenant_id}" not in template and "{credential_id}" not in template:
            continue  # the version document and the OpenAPI document: nothing of anyone's
        has_body = "requestBody" in spec
        if has_body:
            assert (method, template) in bodies, f"{method} {template} takes a body: say in attempts() what it may name"
        owned = owned_values(alpha, template)
        names = set(re.findall(r"\{(\w+)\}", template)) - {"tenant_id"}
        for name in names - set(SHARED_VALUES):
            assert name in owned, f"{method} {template}: no value for {{{name}}}: add it to owned_values or SHARED_VALUES"
        params = {"secret": capability(beta.metadata_url if "server_metadata" in template else beta.cfn_url)[1]} if "{credential_id}" in template else None
        refusal = 403 if "{credential_id}" in template else 404  # a capability's secret is refused as a wrong one
        tries = bodies.get((method, template)) or [Attempt(None, refusal if names - set(SHARED_VALUES) else None)]
        for attempt in tries:
            theirs = {name: owned[name][0] for name in names if name in owned}
            theirs.update(attempt.path)
            twin = {name: owned[name][1] for name in names if name in owned and name not in attempt.path}
            if None in twin.values():
                twin = {}
            values = {**SHARED_VALUES, "tenant_id": beta.tenant}
            # In A's path with B's token: refused before anything is looked up.
            if "{tenant_id}" in template:
                refused = send(server, method, the_path(template, {**values, **theirs, "tenant_id": alpha.tenant}), beta.token, attempt.body)
                assert refused.status_code == 403, (method, template, refused.text)
                assert_nothing_of(alpha, refused, f"{method} {template} in A's path")
            # In B's own path, naming A's objects.
            response = send(server, method, the_path(template, {**values, **theirs}), beta.token, attempt.body, params)
            what = f"{method} {template} {json.dumps(attempt.body)[:200]}"
            assert response.status_code < 500, (what, response.text)
            assert_nothing_of(alpha, response, what)
            if callable(attempt.expect):
                attempt.expect(response)
            elif attempt.expect is not None:
                assert response.status_code == attempt.expect, (what, response.text)
            if attempt.expect in (400, 403, 404) and (twin or attempt.absent_body is not None):
                # ... answered as the same request naming nothing at all.
                absent_body = attempt.absent_body if attempt.absent_body is not None else attempt.body
                absent = send(server, method, the_path(template, {**values, **theirs, **twin}), beta.token, absent_body, params)
                replacements = {theirs[name]: twin[name] for name in twin}
                if attempt.absent_body is not None:
                    replacements.update({value: attempt.absent_body[key] for key, value in attempt.body.items() if attempt.absent_body.get(key) != value})
                assert comparable(response, replacements) == comparable(absent, {}), (what, response.text, absent.text)
                twinned.add((method, template))
        swept.add((method, template))

    assert set(bodies) <= swept, set(bodies) - swept
    # Every route whose path names an object of A's (but a server: see owned_values) was
    # answered as for an object that does not exist.
    naming = {(m, p) for m, p, _ in operations() if set(re.findall(r"\{(\w+)\}", p)) - {"tenant_id", "server_id", *SHARED_VALUES}}
    assert naming and naming <= twinned, naming - twinned
    # Every route of the document under a project was swept.
    assert {(m, p) for m, p, _ in operations() if "{tenant_id}" in p} <= swept

    # A's nested stack, at every route that names a stack alone: as absent.
    for method, template, spec in operations():
        if set(re.findall(r"\{(\w+)\}", template)) != {"tenant_id", "stack_name", "stack_id"} or spec.get("requestBody", {}).get("required"):
            continue
        nested = send(server, method, the_path(template, {"tenant_id": beta.tenant, "stack_name": alpha.nested_name, "stack_id": alpha.nested_id}), beta.token)
        absent_id = str(uuid.uuid4())
        absent = send(server, method, the_path(template, {"tenant_id": beta.tenant, "stack_name": alpha.nested_name, "stack_id": absent_id}), beta.token)
        assert nested.status_code == 404 and comparable(nested, {alpha.nested_id: absent_id}) == comparable(absent, {}), (method, template, nested.text)

    # B's own stack, naming A's snapshot or event under it: as absent.
    for method, template, spec in operations():
        names = set(re.findall(r"\{(\w+)\}", template))
        foreign = names - {"tenant_id", "stack_name", "stack_id", "resource_name", "output_key"}
        if not {"stack_name", "stack_id"} <= names or not foreign or spec.get("requestBody", {}).get("required"):
            continue
        owned = owned_values(alpha, template)
        own = {"tenant_id": beta.tenant, "stack_name": beta.stack_name, "stack_id": beta.stack_id, "resource_name": "box", "output_key": "said"}
        theirs = send(server, method, the_path(template, {**own, **{name: owned[name][0] for name in foreign}}), beta.token)
        twin = {name: owned[name][1] for name in foreign}
        absent = send(server, method, the_path(template, {**own, **twin}), beta.token)
        replacements = {owned[name][0]: twin[name] for name in foreign}
        assert theirs.status_code == 404 and comparable(theirs, replacements) == comparable(absent, {}), (method, template, theirs.text)

    # B's own stack, the plan of a restore to A's snapshot: as one to no snapshot.
    stack_path = f"/v1/{beta.tenant}/stacks/{beta.stack_name}/{beta.stack_id}/actions/preview"
    theirs = send(server, "POST", stack_path, beta.token, {"restore": alpha.snapshot_id})
    absent_id = str(uuid.uuid4())
    absent = send(server, "POST", stack_path, beta.token, {"restore": absent_id})
    assert theirs.status_code == 404 and comparable(theirs, {alpha.snapshot_id: absent_id}) == comparable(absent, {}), theirs.text

    # B's lists, with A's ids as filters and markers, show nothing of A's.
    root = f"/v1/{beta.tenant}"
    for path, params in (
        ("/stacks", {"id": alpha.stack_id, "show_nested": "true", "show_deleted": "true"}),
        ("/stacks", {"name": alpha.stack_name}),
        ("/software_deployments", {"server_id": alpha.server_id}),
        ("/software_configs", {"marker": alpha.config_id}),
    ):
        response = send(server, "GET", root + path, beta.token, params=params)
        assert response.status_code in (200, 404), response.text
        for value in (alpha.stack_id, alpha.nested_id, alpha.config_id, alpha.stack_config_id, alpha.deployment_id, alpha.stack_deployment_id):
            assert value not in response.text, (path, params, response.text)

    # Nothing B sent changed anything A owns, nor what A's agent is given to run.
    after = state_of(server, alpha)
    assert after == before
    assert "pwned-by-b" not in json.dumps(after)


def test_tenancy_a_deployment_naming_another_projects_server_never_reaches_its_agent(server, projects):
    alpha, beta = projects
    before = agent_metadata(server, alpha)
    b_config = ok(send(server, "POST", "/v1/proj-b/software_configs", MEMBER_B, {"name": "evil", "group": "script", "config": "#!/bin/sh\necho pwned-by-b"}))["software_config"]
    root = "/v1/proj-b/software_deployments"
    exploit = {"config_id": b_config["id"], "server_id": alpha.server_id, "stack_user_project_id": alpha.tenant, "action": "CREATE", "status": "COMPLETE"}
    refused = send(server, "POST", root, MEMBER_B, exploit)
    # What A's agent polls and runs holds nothing of B's ...
    assert "pwned-by-b" not in json.dumps(agent_metadata(server, alpha)), refused.text
    # ... because B was refused: A's project is not B's to name.
    assert refused.status_code == 403 and refused.json()["error"]["type"] == "Forbidden", refused.text
    # Without naming A's project: A's server is not found, as one that never existed is
    # not among A's deployments either.
    without_project = {key: value for key, value in exploit.items() if key != "stack_user_project_id"}
    missing = send(server, "POST", root, MEMBER_B, without_project)
    assert missing.status_code == 404, missing.text
    assert missing.json()["error"] == {"type": "EntityNotFound", "message": f"The Server ({alpha.server_id}) could not be found.", "traceback": None}
    # The server's metadata by id is not B's to read either.
    shown = send(server, "GET", f"{root}/metadata/{alpha.server_id}", MEMBER_B)
    assert (shown.status_code, shown.json()["error"]["type"]) == (404, "EntityNotFound"), shown.text
    # B's stack user project, its own: accepted, and still B's alone.
    own = ok(send(server, "POST", root, MEMBER_B, {"config_id": b_config["id"], "server_id": beta.server_id, "stack_user_project_id": beta.tenant}))["software_deployment"]
    assert own["id"] not in send(server, "GET", "/v1/proj-a/software_deployments", MEMBER_A).text

    after = agent_metadata(server, alpha)
    assert after == before and "pwned-by-b" not in json.dumps(after)
    assert [d["id"] for d in ok(send(server, "GET", "/v1/proj-a/software_deployments", MEMBER_A))["software_deployments"]] == sorted(
        [alpha.stack_deployment_id, alpha.deployment_id], key=[alpha.stack_deployment_id, alpha.deployment_id].index
    )
    # A itself still deploys to its server, and its agent sees it.
    a_config = ok(send(server, "POST", "/v1/proj-a/software_configs", MEMBER_A, {"name": "more", "group": "script", "config": "#!/bin/sh\necho more-of-a"}))["software_config"]
    mine = ok(send(server, "POST", "/v1/proj-a/software_deployments", MEMBER_A, {"config_id": a_config["id"], "server_id": alpha.server_id}))["software_deployment"]
    assert "echo more-of-a" in json.dumps(agent_metadata(server, alpha)["deployments"])
    assert send(server, "DELETE", f"/v1/proj-a/software_deployments/{mine['id']}", MEMBER_A).status_code == 204


def test_tenancy_a_cloud_admin_keeps_heats_powers_over_deployments(server, projects):
    alpha, _ = projects
    before = agent_metadata(server, alpha)
    # The admin's own config, deployed to A's server for A's stack users (Heat lets an
    # admin: it may act in any project).
    config = ok(send(server, "POST", "/v1/ops/software_configs", CLOUD_ADMIN, {"name": "by-admin", "group": "script", "config": "#!/bin/sh\necho by-admin"}))["software_config"]
    body = {"config_id": config["id"], "server_id": alpha.server_id, "stack_user_project_id": alpha.tenant}
    made = ok(send(server, "POST", "/v1/ops/software_deployments", CLOUD_ADMIN, body))["software_deployment"]
    assert "echo by-admin" in json.dumps(agent_metadata(server, alpha)["deployments"])
    assert ok(send(server, "GET", f"/v1/ops/software_deployments/metadata/{alpha.server_id}", CLOUD_ADMIN))["metadata"]
    assert send(server, "DELETE", f"/v1/ops/software_deployments/{made['id']}", CLOUD_ADMIN).status_code == 204
    assert agent_metadata(server, alpha) == before
