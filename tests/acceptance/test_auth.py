"""Authentication and policy (issue 15) as a deployment without Keystone has them: a
real ``stoker serve --auth-mode token`` on 127.0.0.1 with a tokens file, plain HTTP
and the real python-heatclient against it. No token or a wrong one is a 401 in Heat's
fault shape; a reader reads and cannot write (403, Heat's policy defaults); a member
writes; a path naming another project is a 403 unless the caller is a cloud admin; an
operator's policy file overrides a rule; the capability URLs and a wait condition
handle's own token need no API token. ``none`` mode refuses an address other than
loopback, and a misconfigured mode does not start."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from heatclient import client as heat_client
from heatclient import exc as heat_exc

from tests.support.server import Server, free_port

STOKER = str(Path(sys.executable).with_name("stoker"))
OPENSTACK = str(Path(sys.executable).with_name("openstack"))

READER = "reader-token-1f4c9a7e2b"
MEMBER = "member-token-8d2e6b1a9c"
OTHER = "member-of-b-4a7c1e9d2f"
ADMIN = "admin-token-6e3b8f0c1d"
TOKENS = {
    "tokens": {
        READER: {"project_id": "proj-a", "user_id": "rita", "roles": ["reader"]},
        MEMBER: {"project_id": "proj-a", "user_id": "mike", "roles": ["member"]},
        OTHER: {"project_id": "proj-b", "user_id": "bea", "roles": ["member"]},
        ADMIN: {"project_id": "cloud-admin", "user_id": "ada", "roles": ["admin"]},
    }
}

VALUE = """
heat_template_version: 2021-04-16
resources:
  value:
    type: OS::Heat::Value
    properties: {value: hello}
outputs:
  said: {value: {get_attr: [value, value]}}
"""

WAITING = """
heat_template_version: 2021-04-16
resources:
  handle:
    type: OS::Heat::WaitConditionHandle
  wait:
    type: OS::Heat::WaitCondition
    properties: {handle: {get_resource: handle}, count: 1, timeout: 600}
outputs:
  endpoint: {value: {get_attr: [handle, endpoint]}}
  token: {value: {get_attr: [handle, token]}}
"""


def call(server: Server, method: str, path: str, token: str | None = None, body: object = None, project: str = "proj-a") -> tuple[int, dict, Any]:
    """One request to ``/v1/{project}{path}`` (``path`` from the root when it starts
    with ``//``): status, JSON body and headers, as sent."""
    url = server.url + path[1:] if path.startswith("//") else f"{server.url}/v1/{project}{path}"
    headers = {"Content-Type": "application/json", **({"X-Auth-Token": token} if token is not None else {})}
    request = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(), method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"null"), response.headers
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null"), error.headers


def wait_complete(server: Server, token: str, name: str, project: str = "proj-a") -> dict:
    deadline = time.monotonic() + 60
    while True:
        status, body, _ = call(server, "GET", f"/stacks?name={name}", token, project=project)
        assert status == 200, body
        stack = body["stacks"][0]
        if not stack["stack_status"].endswith("IN_PROGRESS"):
            return stack
        assert time.monotonic() < deadline, stack
        time.sleep(0.1)


@pytest.fixture(scope="module")
def tokens_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("auth") / "tokens.yaml"
    path.write_text(yaml.safe_dump(TOKENS))
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory, tokens_file) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("auth-server")
    running = Server(f"sqlite:///{directory / 'stoker.sqlite'}", directory / "serve.log", STOKER_AUTH_MODE="token", STOKER_AUTH_TOKENS_FILE=str(tokens_file)).start()
    yield running
    log = running.stop()
    assert "Traceback" not in log, log
    # The tokens never reach the log (the access log shows paths, not headers).
    assert all(token not in log for token in TOKENS["tokens"]), log


def test_auth_token_mode_refuses_a_request_without_a_valid_token(server):
    for token in (None, "", "not-a-token", READER[:-1], READER + "x"):
        status, body, _ = call(server, "GET", "/stacks", token)
        assert status == 401, (token, body)
        assert body["code"] == 401 and body["title"] == "Unauthorized"
        assert body["error"]["type"] == "HTTPUnauthorized" and body["error"]["traceback"] is None
    # Writes too, and before the body is looked at.
    assert call(server, "POST", "/stacks", "wrong", {"stack_name": "x", "template": VALUE})[0] == 401
    # The version document needs no token: clients discover the API with it.
    status, body, _ = call(server, "GET", "//", None)
    assert status == 300 and body["versions"], body


def test_auth_token_mode_reader_reads_member_writes(server):
    template = VALUE
    status, body, _ = call(server, "POST", "/stacks", READER, {"stack_name": "by-reader", "template": template})
    assert status == 403, body
    assert body["error"] == {"type": "Forbidden", "message": "You are not authorized to complete stacks:create action.", "traceback": None}
    assert call(server, "POST", "/validate", READER, {"template": template})[0] == 403  # Heat: validate is a member's
    status, body, _ = call(server, "POST", "/stacks", MEMBER, {"stack_name": "by-member", "template": template})
    assert status == 201, body
    stack_id = body["stack"]["id"]
    assert wait_complete(server, MEMBER, "by-member")["stack_status"] == "CREATE_COMPLETE"

    # The reader lists, shows and reads what the member made.
    status, body, _ = call(server, "GET", "/stacks", READER)
    assert status == 200 and [s["id"] for s in body["stacks"]] == [stack_id]
    for path in ("", "/resources", "/events", "/template", "/outputs", "/environment"):
        status, body, _ = call(server, "GET", f"/stacks/by-member/{stack_id}{path}", READER)
        assert status == 200, (path, body)
    # A check changes nothing: Heat lets a reader run it. Everything else is a member's.
    assert call(server, "POST", f"/stacks/by-member/{stack_id}/actions", READER, {"check": None})[0] == 200
    for method, path, body, rule in (
        ("PATCH", "", {"timeout_mins": 5}, "stacks:update_patch"),
        ("PATCH", "", {"parameters": {}}, "stacks:update_no_change"),  # asks for nothing new
        ("DELETE", "", None, "stacks:delete"),
        ("POST", "/actions", {"suspend": None}, "actions:suspend"),
        ("POST", "/snapshots", {"name": "s"}, "stacks:snapshot"),
        ("PATCH", "/resources/value", {"mark_unhealthy": True}, "resource:mark_unhealthy"),
        ("GET", "/export", None, "stacks:export"),
        ("POST", "/drift", None, "stacks:drift"),
    ):
        status, answer, _ = call(server, method, f"/stacks/by-member/{stack_id}{path}", READER, body)
        assert (status, answer["error"]["message"]) == (403, f"You are not authorized to complete {rule} action."), (method, path, answer)
    assert call(server, "GET", f"/stacks/by-member/{stack_id}", READER)[1]["stack"]["stack_status"] == "CHECK_COMPLETE"
    # Listing every project's stacks, and the engines, are a cloud admin's.
    assert call(server, "GET", "/stacks?global_tenant=true", MEMBER)[0] == 403
    assert call(server, "GET", "/services", MEMBER)[0] == 403
    status, body, _ = call(server, "GET", "/stacks?global_tenant=true", ADMIN, project="cloud-admin")
    assert status == 200 and stack_id in [s["id"] for s in body["stacks"]], body
    assert call(server, "GET", "/services", ADMIN, project="cloud-admin")[0] == 200

    assert call(server, "DELETE", f"/stacks/by-member/{stack_id}", MEMBER)[0] == 204


def test_auth_token_mode_path_must_name_the_tokens_project(server):
    template = VALUE
    status, body, _ = call(server, "POST", "/stacks", OTHER, {"stack_name": "b-stack", "template": template}, project="proj-b")
    assert status == 201, body
    stack_id = body["stack"]["id"]
    # A member of A naming B's project in the path: 403 before anything is looked up.
    for method, path in (("GET", "/stacks"), ("GET", f"/stacks/b-stack/{stack_id}"), ("DELETE", f"/stacks/b-stack/{stack_id}")):
        status, body, _ = call(server, method, path, MEMBER, project="proj-b")
        assert status == 403 and body["error"]["type"] == "Forbidden", (method, path, body)
    # The stack is still there, and its own project's member sees it.
    assert wait_complete(server, OTHER, "b-stack", project="proj-b")["id"] == stack_id
    # A cloud admin may name any project (Heat's is_admin).
    status, body, _ = call(server, "GET", f"/stacks/b-stack/{stack_id}", ADMIN, project="proj-b")
    assert status == 200 and body["stack"]["id"] == stack_id, body


def test_auth_token_mode_signals_by_a_handles_own_token(server):
    status, body, _ = call(server, "POST", "/stacks", MEMBER, {"stack_name": "waiting", "template": WAITING})
    assert status == 201, body
    stack_id = body["stack"]["id"]
    deadline = time.monotonic() + 30
    while True:
        status, body, _ = call(server, "GET", f"/stacks/waiting/{stack_id}/outputs/token", MEMBER)
        if status == 200 and body["output"].get("output_value"):
            break
        assert time.monotonic() < deadline, body
        time.sleep(0.1)
    handle_token = body["output"]["output_value"]
    path = f"/stacks/waiting/{stack_id}/resources/handle/signal"
    # Without a token or with a wrong one the resource is not found, as for anyone.
    assert call(server, "POST", path, None, {"status": "SUCCESS"})[0] == 404
    assert call(server, "POST", path, "not-the-handle-token", {"status": "SUCCESS"})[0] == 404
    # The handle's token is no API token: it opens nothing else.
    assert call(server, "GET", "/stacks", handle_token)[0] == 401
    # With it, the agent's signal arrives with no API token at all (curl_cli's way).
    status, body, _ = call(server, "POST", path, handle_token, {"status": "SUCCESS", "id": "1"})
    assert status == 200, body
    assert wait_complete(server, MEMBER, "waiting")["stack_status"] == "CREATE_COMPLETE"


def test_auth_token_mode_heatclient_with_a_token(server):
    endpoint = f"{server.url}/v1/proj-a"
    member = heat_client.Client("1", endpoint=endpoint, token=MEMBER)
    created = member.stacks.create(stack_name="from-heatclient", template=VALUE)
    assert wait_complete(server, MEMBER, "from-heatclient")["stack_status"] == "CREATE_COMPLETE"
    reader = heat_client.Client("1", endpoint=endpoint, token=READER)
    assert reader.stacks.get("from-heatclient").id == created["stack"]["id"]
    assert reader.stacks.output_show("from-heatclient", "said")["output"]["output_value"] == "hello"
    with pytest.raises(heat_exc.HTTPForbidden):
        reader.stacks.delete("from-heatclient")
    with pytest.raises(heat_exc.HTTPUnauthorized):
        list(heat_client.Client("1", endpoint=endpoint, token="guessed-token-0000").stacks.list())
    # The openstack command with a token and no Keystone (keystoneauth's admin_token plugin).
    environment = {name: value for name, value in os.environ.items() if not name.startswith("OS_")}
    arguments = ["--os-auth-type", "admin_token", "--os-endpoint", endpoint, "stack", "list", "-f", "json"]
    listed = subprocess.run([OPENSTACK, "--os-token", READER, *arguments], env=environment, capture_output=True, text=True, timeout=120)
    assert "from-heatclient" in [s["Stack Name"] for s in json.loads(listed.stdout)], listed.stderr
    refused = subprocess.run([OPENSTACK, "--os-token", "guessed-token-0000", *arguments], env=environment, capture_output=True, text=True, timeout=120)
    assert refused.returncode == 1 and "requires authentication" in refused.stderr, refused
    member.stacks.delete("from-heatclient")


def test_auth_policy_file_overrides_a_default(tmp_path, tokens_file):
    policy = tmp_path / "policy.yaml"
    # An operator who lets readers create, and keeps deleting to cloud admins.
    policy.write_text('"stacks:create": "role:reader and project_id:%(project_id)s"\n"stacks:delete": "rule:context_is_admin"\n')
    server = Server(f"sqlite:///{tmp_path / 'stoker.sqlite'}", tmp_path / "serve.log", STOKER_AUTH_MODE="token", STOKER_AUTH_TOKENS_FILE=str(tokens_file), STOKER_POLICY_FILE=str(policy)).start()
    try:
        status, body, _ = call(server, "POST", "/stacks", READER, {"stack_name": "by-reader", "template": VALUE})
        assert status == 201, body
        stack_id = body["stack"]["id"]
        wait_complete(server, READER, "by-reader")
        status, body, _ = call(server, "DELETE", f"/stacks/by-reader/{stack_id}", MEMBER)
        assert (status, body["error"]["message"]) == (403, "You are not authorized to complete stacks:delete action."), body
        # Rules the file does not name keep Heat's defaults.
        assert call(server, "PATCH", f"/stacks/by-reader/{stack_id}", READER, {"parameters": {}})[0] == 403
        assert call(server, "DELETE", f"/stacks/by-reader/{stack_id}", ADMIN, project="proj-a")[0] == 204
    finally:
        server.stop()


def _serve(tmp_path: Path, *arguments: str, **environment: str) -> subprocess.CompletedProcess:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "STOKER_DATABASE_URL": f"sqlite:///{tmp_path / 's.sqlite'}", **environment}
    return subprocess.run([STOKER, "serve", "--port", str(free_port()), *arguments], env=env, capture_output=True, text=True, timeout=60)


def test_auth_none_mode_refuses_an_address_other_than_loopback(tmp_path):
    # On loopback it serves, today's way (the path names the project), and says so.
    server = Server(f"sqlite:///{tmp_path / 'none.sqlite'}", tmp_path / "none.log", STOKER_AUTH_MODE="none").start()
    try:
        assert call(server, "GET", "/stacks", None, project="anyone")[:2] == (200, {"stacks": []})
    finally:
        log = server.stop()
    assert "auth mode 'none': no authentication" in log, log
    for arguments in (("--host", "0.0.0.0"), ("--host", "::"), ("--host", "192.0.2.1", "--auth-mode", "none")):
        done = _serve(tmp_path, *arguments)
        assert done.returncode == 1, done
        assert done.stderr.startswith(f"ERROR: Refusing to listen on {arguments[1]} without authentication"), done.stderr
        assert "Traceback" not in done.stderr


def test_auth_misconfigured_modes_do_not_start(tmp_path, tokens_file):
    cases = [
        ((), {"STOKER_AUTH_MODE": "token"}, "ERROR: STOKER_AUTH_MODE=token needs STOKER_AUTH_TOKENS_FILE"),
        (("--auth-mode", "token", "--auth-tokens-file", str(tmp_path / "missing.yaml")), {}, "ERROR: The tokens file"),
        (("--auth-mode", "token", "--auth-tokens-file", str(tokens_file), "--policy-file", str(tmp_path / "no.yaml")), {}, "ERROR: The policy file"),
        ((), {"STOKER_AUTH_MODE": "kerberos"}, "ERROR: Unknown auth mode 'kerberos'"),
        (("--auth-mode", "keystone"), {}, "ERROR: STOKER_AUTH_MODE=keystone needs the service user"),
        # Nothing listens on this port: no Keystone, no server.
        (
            ("--auth-mode", "keystone"),
            {"STOKER_KEYSTONE_AUTH_URL": f"http://127.0.0.1:{free_port()}/v3", "STOKER_KEYSTONE_USERNAME": "heat", "STOKER_KEYSTONE_PASSWORD": "x", "STOKER_KEYSTONE_PROJECT_NAME": "service", "STOKER_KEYSTONE_USER_DOMAIN_NAME": "Default", "STOKER_KEYSTONE_PROJECT_DOMAIN_NAME": "Default"},
            "ERROR: Keystone at http://127.0.0.1:",
        ),
    ]
    for arguments, environment, expected in cases:
        done = _serve(tmp_path, *arguments, **environment)
        assert done.returncode == 1, (arguments, environment, done)
        assert done.stderr.startswith(expected), (arguments, done.stderr)
        assert "Traceback" not in done.stderr


RANDOM = """
heat_template_version: 2021-04-16
resources:
  secret: {type: OS::Heat::RandomString, properties: {length: 8}}
"""

NESTED_RANDOM = """
heat_template_version: 2021-04-16
resources:
  inner:
    type: OS::Heat::Stack
    properties:
      template: |
        heat_template_version: 2021-04-16
        resources:
          secret: {type: OS::Heat::RandomString}
"""


def test_auth_resource_type_policies_as_heat_enforces_them(server):
    # Heat's defaults: a flavor (and every Keystone type) is a project admin's to make.
    flavor = "heat_template_version: 2021-04-16\nresources:\n  f: {type: OS::Nova::Flavor, properties: {ram: 64, vcpus: 1}}\n"
    status, body, _ = call(server, "POST", "/stacks", MEMBER, {"stack_name": "flavored", "template": flavor})
    assert (status, body["error"]["type"], body["error"]["message"]) == (403, "Forbidden", "You are not authorized to use OS::Nova::Flavor."), body
    assert call(server, "POST", "/stacks/preview", MEMBER, {"stack_name": "flavored", "template": flavor})[0] == 403
    # A member's list leaves out what they may not use, and its schema is not shown.
    status, body, _ = call(server, "GET", "/resource_types", MEMBER)
    assert status == 200 and "OS::Heat::Value" in body["resource_types"], body
    assert not {"OS::Nova::Flavor", "OS::Cinder::VolumeType"} & set(body["resource_types"])
    assert call(server, "GET", "/resource_types/OS::Nova::Flavor", MEMBER)[0] == 403
    assert call(server, "GET", "/resource_types/OS::Cinder::VolumeType/template", MEMBER)[0] == 403
    status, body, _ = call(server, "GET", "/resource_types", ADMIN, project="cloud-admin")
    assert {"OS::Nova::Flavor", "OS::Cinder::VolumeType"} <= set(body["resource_types"])
    assert call(server, "GET", "/resource_types/OS::Nova::Flavor", ADMIN, project="cloud-admin")[0] == 200


def test_auth_patch_with_no_change_has_its_own_rule(tmp_path, tokens_file):
    # Heat's stacks:update_no_change: an operator lets readers "touch" a stack (a PATCH
    # asking for nothing new, which re-runs the update), but not change it.
    policy = tmp_path / "policy.yaml"
    policy.write_text('"stacks:update_no_change": "role:reader and project_id:%(project_id)s"\n')
    server = Server(f"sqlite:///{tmp_path / 'stoker.sqlite'}", tmp_path / "serve.log", STOKER_AUTH_MODE="token", STOKER_AUTH_TOKENS_FILE=str(tokens_file), STOKER_POLICY_FILE=str(policy)).start()
    try:
        status, body, _ = call(server, "POST", "/stacks", MEMBER, {"stack_name": "touched", "template": VALUE})
        assert status == 201, body
        stack_id = body["stack"]["id"]
        wait_complete(server, MEMBER, "touched")
        assert call(server, "PATCH", f"/stacks/touched/{stack_id}", READER, {})[0] == 202
        assert wait_complete(server, READER, "touched")["stack_status"] == "UPDATE_COMPLETE"
        status, body, _ = call(server, "PATCH", f"/stacks/touched/{stack_id}", READER, {"parameters": {}, "timeout_mins": 5})
        assert (status, body["error"]["message"]) == (403, "You are not authorized to complete stacks:update_patch action."), body
    finally:
        server.stop()


def test_auth_policy_file_restricts_a_resource_type(tmp_path, tokens_file):
    policy = tmp_path / "policy.yaml"
    policy.write_text('"resource_types:OS::Heat::None": "role:admin"\n')
    server = Server(f"sqlite:///{tmp_path / 'stoker.sqlite'}", tmp_path / "serve.log", STOKER_AUTH_MODE="token", STOKER_AUTH_TOKENS_FILE=str(tokens_file), STOKER_POLICY_FILE=str(policy)).start()
    try:
        status, body, _ = call(server, "POST", "/stacks", MEMBER, {"stack_name": "random", "template": RANDOM})
        assert status == 201, body
        stack_id = body["stack"]["id"]
        assert wait_complete(server, MEMBER, "random")["stack_status"] == "CREATE_COMPLETE"
        # The operator restricts the type; oslo.policy reads the file again when it changes.
        policy.write_text('"resource_types:OS::Heat::RandomString": "role:admin"\n')
        os.utime(policy, (time.time() + 5, time.time() + 5))
        refused = "You are not authorized to use OS::Heat::RandomString."
        for template in (RANDOM, NESTED_RANDOM):  # a nested stack's types too
            status, body, _ = call(server, "POST", "/stacks", MEMBER, {"stack_name": "again", "template": template})
            assert (status, body["error"]["message"]) == (403, refused), body
        # The member may no longer act on the stack that has one, but still reads it.
        for method, path, request in (("DELETE", "", None), ("POST", "/actions", {"suspend": None})):
            status, body, _ = call(server, method, f"/stacks/random/{stack_id}{path}", MEMBER, request)
            assert (status, body["error"]["message"]) == (403, refused), (method, path, body)
        assert call(server, "GET", f"/stacks/random/{stack_id}", MEMBER)[0] == 200
        assert call(server, "DELETE", f"/stacks/random/{stack_id}", ADMIN, project="proj-a")[0] == 204
    finally:
        server.stop()
