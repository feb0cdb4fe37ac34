"""``stoker serve --auth-mode keystone`` against the test cloud's real Keystone (issue 15):
two projects, users with Keystone's reader, member and admin roles, real tokens. Tokens
are validated by keystonemiddleware as every OpenStack API validates them; a garbage,
revoked or expired token is a 401 (with Keystone's challenge); a reader cannot write; a
member of one project cannot name the other's in a path; the cloud admin lists every
project's stacks; and the real ``openstack stack ...`` command with password
authentication (no ``--os-auth-type none``) finds stoker through an ``orchestration``
endpoint in the catalog, as it finds Heat."""

from __future__ import annotations

import datetime
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.cloud import identity
from tests.support.server import Server

OPENSTACK = str(Path(sys.executable).with_name("openstack"))
PASSWORD = "keystone-auth-secret"

VALUE = """
heat_template_version: 2021-04-16
resources:
  value:
    type: OS::Heat::Value
    properties: {value: hello}
"""


@dataclass
class User:
    name: str
    project: str
    project_id: str
    token: str
    id: str = ""


@dataclass
class Deployment:
    server: Server
    keystone: identity.Keystone
    users: dict[str, User]


def _token(keystone_url: str, user: str, password: str, project: str) -> tuple[str, str]:
    scoped = identity.Keystone(keystone_url, username=user, password=password, project=project)
    return scoped.token, scoped.project_id


def call(deployment: Deployment, method: str, path: str, token: str | None, body: object = None, project_id: str | None = None) -> tuple[int, dict, Any]:
    url = f"{deployment.server.url}/v1/{project_id}{path}"
    headers = {"Content-Type": "application/json", **({"X-Auth-Token": token} if token is not None else {})}
    request = urllib.request.Request(url, data=None if body is None else json.dumps(body).encode(), method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"null"), response.headers
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null"), error.headers


@pytest.fixture(scope="module")
def deployment(openstack_cloud, tmp_path_factory) -> Iterator[Deployment]:
    """Projects A and B, their users, a service user for stoker, and stoker serving in
    keystone mode, registered in the catalog as the orchestration service."""
    suffix = secrets.token_hex(3)
    url = openstack_cloud.keystone_url
    admin = identity.Keystone(url)
    roles = {role: admin.ensure("roles", "role", role)["id"] for role in ("admin", "member", "reader", "service")}
    projects = {name: admin.call("POST", "/projects", body={"project": {"name": f"{name}-{suffix}", "domain_id": "default"}})["project"] for name in ("a", "b")}
    service_project = admin.ensure("projects", "project", "service", domain_id="default")
    created_users = []

    def user(name: str, project: dict, *granted: str) -> dict:
        made = admin.call("POST", "/users", body={"user": {"name": f"{name}-{suffix}", "password": PASSWORD, "domain_id": "default"}})["user"]
        created_users.append(made)
        for role in granted:
            admin.grant(project["id"], made["id"], roles[role])
        return made

    # Keystone's roles imply each other (admin -> member -> reader): a member's token lists reader too.
    ids = {name: user(name, projects[name[0]], name[2:])["id"] for name in ("a-reader", "a-member", "b-member")}
    stoker_user = user("stoker", service_project, "service")
    directory = tmp_path_factory.mktemp("keystone-auth")
    server = Server(
        f"sqlite:///{directory / 'stoker.sqlite'}",
        directory / "serve.log",
        STOKER_AUTH_MODE="keystone",
        STOKER_KEYSTONE_AUTH_URL=url,
        STOKER_KEYSTONE_USERNAME=stoker_user["name"],
        STOKER_KEYSTONE_PASSWORD=PASSWORD,
        STOKER_KEYSTONE_PROJECT_NAME="service",
        STOKER_KEYSTONE_USER_DOMAIN_NAME="Default",
        STOKER_KEYSTONE_PROJECT_DOMAIN_NAME="Default",
        STOKER_KEYSTONE_REGION_NAME=identity.REGION,
        **identity.STACK_DOMAIN_ENVIRONMENT,
    )
    service = admin.call("POST", "/services", body={"service": {"name": f"stoker-{suffix}", "type": "orchestration"}})["service"]
    admin.call(
        "POST",
        "/endpoints",
        body={"endpoint": {"service_id": service["id"], "interface": "public", "region_id": identity.REGION, "url": server.url + "/v1/%(tenant_id)s"}},
    )
    users = {}
    for name, project in (("a-reader", "a"), ("a-member", "a"), ("b-member", "b")):
        token, project_id = _token(url, f"{name}-{suffix}", PASSWORD, projects[project]["name"])
        users[name] = User(f"{name}-{suffix}", projects[project]["name"], project_id, token, ids[name])
    token, project_id = _token(url, "admin", identity.ADMIN_PASSWORD, "admin")
    users["admin"] = User("admin", "admin", project_id, token)
    try:
        server.start()
        yield Deployment(server, admin, users)
    finally:
        if server.process is not None:
            log = server.stop()
            assert "Traceback" not in log, log
        admin.call("DELETE", f"/services/{service['id']}")  # its endpoints go with it
        for made in created_users:
            admin.call("DELETE", f"/users/{made['id']}")
        for project in projects.values():
            admin.call("DELETE", f"/projects/{project['id']}")


def test_keystone_auth_tokens_are_validated_by_keystone(deployment):
    a_member = deployment.users["a-member"]
    status, body, _ = call(deployment, "GET", "/stacks", a_member.token, project_id=a_member.project_id)
    assert (status, body) == (200, {"stacks": []})
    for token in (None, "garbage", "gAAAAAB" + "x" * 180):
        status, body, headers = call(deployment, "GET", "/stacks", token, project_id=a_member.project_id)
        assert status == 401 and body["error"]["type"] == "HTTPUnauthorized", (token, body)
        # Keystone's challenge, as keystonemiddleware sends it: where to get a token.
        assert headers["WWW-Authenticate"] == f'Keystone uri="{deployment.keystone.url}"'
    # A real token Keystone has revoked (never seen before, so never cached).
    revoked, project_id = _token(deployment.keystone.url, a_member.name, PASSWORD, a_member.project)
    answer = identity.request("DELETE", f"{deployment.keystone.url}/auth/tokens", token=deployment.keystone.token, headers={"X-Subject-Token": revoked})
    assert answer.status == 204, answer
    assert call(deployment, "GET", "/stacks", revoked, project_id=project_id)[0] == 401


def test_keystone_auth_expired_token_is_refused(deployment):
    """A token that expires while cached by keystonemiddleware is refused at once. A
    token from a trust expires with the trust, so one lives for seconds here."""
    member, trustee = deployment.users["a-member"], deployment.users["b-member"]
    url = deployment.keystone.url
    expires = datetime.datetime.now(datetime.UTC) + datetime.timedelta(seconds=8)
    trust = identity.request(
        "POST",
        f"{url}/OS-TRUST/trusts",
        token=member.token,
        body={"trust": {"trustor_user_id": member.id, "trustee_user_id": trustee.id, "project_id": member.project_id, "roles": [{"name": "member"}], "impersonation": True, "expires_at": expires.strftime("%Y-%m-%dT%H:%M:%S.000000Z")}},
    )
    assert trust.status == 201, trust.body
    scope = {"OS-TRUST:trust": {"id": trust.body["trust"]["id"]}}
    password = {"user": {"name": trustee.name, "domain": {"id": "default"}, "password": PASSWORD}}
    answer = identity.request("POST", f"{url}/auth/tokens", body={"auth": {"identity": {"methods": ["password"], "password": password}, "scope": scope}})
    assert answer.status == 201, answer.body
    token = answer.headers.get("X-Subject-Token") or answer.headers.get("x-subject-token")
    ends = datetime.datetime.fromisoformat(answer.body["token"]["expires_at"].replace("Z", "+00:00"))
    assert ends <= expires + datetime.timedelta(seconds=1), ends
    # Valid now (and so in keystonemiddleware's cache), acting as the trustor in A.
    assert call(deployment, "GET", "/stacks", token, project_id=member.project_id)[:2] == (200, {"stacks": []})
    time.sleep(max(0.0, (ends - datetime.datetime.now(datetime.UTC)).total_seconds()) + 1)
    status, body, _ = call(deployment, "GET", "/stacks", token, project_id=member.project_id)
    assert status == 401 and body["error"]["type"] == "HTTPUnauthorized", body


def test_keystone_auth_roles_and_projects(deployment):
    reader, member, other, admin = (deployment.users[name] for name in ("a-reader", "a-member", "b-member", "admin"))
    project = member.project_id
    status, body, _ = call(deployment, "POST", "/stacks", reader.token, {"stack_name": "by-reader", "template": VALUE}, project_id=project)
    assert (status, body["error"]["message"]) == (403, "You are not authorized to complete stacks:create action."), body
    status, body, _ = call(deployment, "POST", "/stacks", member.token, {"stack_name": "by-member", "template": VALUE}, project_id=project)
    assert status == 201, body
    stack_id = body["stack"]["id"]
    deadline = time.monotonic() + 60
    while (stack := call(deployment, "GET", f"/stacks/by-member/{stack_id}", reader.token, project_id=project)[1]["stack"])["stack_status"].endswith("IN_PROGRESS"):
        assert time.monotonic() < deadline, stack
        time.sleep(0.2)
    assert stack["stack_status"] == "CREATE_COMPLETE"
    # The stack belongs to the token's project, by its Keystone id.
    assert call(deployment, "DELETE", f"/stacks/by-member/{stack_id}", reader.token, project_id=project)[0] == 403
    # B's member names A's project: refused before any lookup.
    status, body, _ = call(deployment, "GET", "/stacks", other.token, project_id=project)
    assert status == 403 and body["error"]["type"] == "Forbidden", body
    assert call(deployment, "GET", "/stacks", other.token, project_id=other.project_id)[1] == {"stacks": []}
    # The cloud admin (admin role; Keystone names no admin project, so every project is
    # one) lists every project's stacks; a member may not.
    assert call(deployment, "GET", "/stacks?global_tenant=true", member.token, project_id=project)[0] == 403
    status, body, _ = call(deployment, "GET", "/stacks?global_tenant=true", admin.token, project_id=admin.project_id)
    assert status == 200 and stack_id in [s["id"] for s in body["stacks"]], body
    assert call(deployment, "DELETE", f"/stacks/by-member/{stack_id}", member.token, project_id=project)[0] == 204


def test_keystone_auth_openstack_command_with_password_authentication(deployment, openstack_cloud, tmp_path):
    member = deployment.users["a-member"]
    environment = {name: value for name, value in os.environ.items() if not name.startswith(("OS_", "STOKER_"))}
    environment.update(
        OS_AUTH_URL=deployment.keystone.url,
        OS_AUTH_TYPE="password",
        OS_USERNAME=member.name,
        OS_PASSWORD=PASSWORD,
        OS_PROJECT_NAME=member.project,
        OS_USER_DOMAIN_NAME="Default",
        OS_PROJECT_DOMAIN_NAME="Default",
        OS_REGION_NAME=identity.REGION,
        OS_IDENTITY_API_VERSION="3",
    )
    template = tmp_path / "value.yaml"
    template.write_text(VALUE)

    def openstack(*arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run([OPENSTACK, *arguments], env=environment, capture_output=True, text=True, timeout=120, check=False)

    created = openstack("stack", "create", "from-osc", "-t", str(template), "--wait", "-f", "json")
    assert created.returncode == 0, created.stderr
    # --wait prints the events first, then the stack.
    assert json.loads(created.stdout[created.stdout.index("{\n"):])["stack_status"] == "CREATE_COMPLETE"
    listed = openstack("stack", "list", "-f", "json")
    assert listed.returncode == 0, listed.stderr
    assert [s["Stack Name"] for s in json.loads(listed.stdout)] == ["from-osc"]
    # The reader's password gets a token that reads and cannot delete.
    reader = deployment.users["a-reader"]
    environment.update(OS_USERNAME=reader.name)
    assert json.loads(openstack("stack", "show", "from-osc", "-f", "json").stdout)["stack_name"] == "from-osc"
    refused = openstack("stack", "delete", "from-osc", "--yes")
    # heatclient's HTTPForbidden, as the command reports it for Heat.
    assert (refused.returncode, refused.stdout) == (1, "Forbidden: from-osc\n"), refused
    assert json.loads(openstack("stack", "show", "from-osc", "-f", "json").stdout)["stack_status"] == "CREATE_COMPLETE"
    environment.update(OS_USERNAME=member.name)
    deleted = openstack("stack", "delete", "from-osc", "--yes", "--wait")
    assert deleted.returncode == 0, deleted.stderr


NET = """
heat_template_version: 2021-04-16
parameters:
  net_name: {type: string}
resources:
  net:
    type: OS::Neutron::Net
    properties: {name: {get_param: net_name}}
outputs:
  net_id: {value: {get_resource: net}}
"""


def _wait(deployment: Deployment, user: User, token: str, path: str, timeout: float = 120) -> dict:
    """The stack once its action has ended (or the 404 of a deleted one, as {})."""
    deadline = time.monotonic() + timeout
    while True:
        status, body, _ = call(deployment, "GET", path, token, project_id=user.project_id)
        if status == 404:
            return {}
        assert status == 200, body
        if not body["stack"]["stack_status"].endswith("IN_PROGRESS"):
            return body["stack"]
        assert time.monotonic() < deadline, body
        time.sleep(0.5)


def stokers_trusts(deployment: Deployment, trustor: User) -> list[dict]:
    """The trustor's trusts but the one another test makes for user b-member."""
    trusts = deployment.keystone.call("GET", f"/OS-TRUST/trusts?trustor_user_id={trustor.id}")["trusts"]
    return [trust for trust in trusts if trust["trustee_user_id"] != deployment.users["b-member"].id]


def _stored_credentials(deployment: Deployment) -> list[str]:
    import sqlalchemy as sa

    engine = sa.create_engine(deployment.server.database_url)
    try:
        with engine.connect() as connection:
            return [str(row[0]) for row in connection.execute(sa.text("SELECT credential FROM stack_credentials"))]
    finally:
        engine.dispose()


def test_keystone_mode_acts_for_the_user_through_a_trust_after_the_token_is_gone(deployment, openstack_cloud):
    """A member's stack creates its network as that member, in their project. Then the
    token it was created with is revoked and the server restarts: an update and a
    delete asked later (with a new token) still act for the user, through the Keystone
    trust stoker made at create (stored sealed, never shown). The delete really deletes
    the network, and the trust and its stored credential go with the stack."""
    member = deployment.users["a-member"]
    url = deployment.keystone.url
    first, _ = _token(url, member.name, PASSWORD, member.project)
    name = f"acting-{secrets.token_hex(3)}"
    status, body, _ = call(deployment, "POST", "/stacks", first, {"stack_name": name, "template": NET, "parameters": {"net_name": f"{name}-net"}}, project_id=member.project_id)
    assert status == 201, body
    path = f"/stacks/{name}/{body['stack']['id']}"
    stack = _wait(deployment, member, first, path)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
    net_id = {o["output_key"]: o["output_value"] for o in stack["outputs"]}["net_id"]
    admin = openstack_cloud.connect("admin")
    net = admin.network.get_network(net_id)
    assert (net.name, net.project_id) == (f"{name}-net", member.project_id)

    trusts = stokers_trusts(deployment, member)
    assert len(trusts) == 1, trusts
    trust = trusts[0]
    assert (trust["project_id"], trust["impersonation"], trust["expires_at"]) == (member.project_id, True, None)
    # The trust's id is stored sealed, and no response shows it.
    stored = _stored_credentials(deployment)
    assert len(stored) == 1 and "$sealed" in stored[0] and trust["id"] not in stored[0]
    shown = json.dumps([call(deployment, "GET", f"{path}{sub}", first, project_id=member.project_id)[1] for sub in ("", "/environment", "/resources", "/events")])
    assert trust["id"] not in shown

    # The user's token is gone, and the server restarts (no memory of anything).
    answer = identity.request("DELETE", f"{url}/auth/tokens", token=deployment.keystone.token, headers={"X-Subject-Token": first})
    assert answer.status == 204, answer
    deployment.server.stop()
    deployment.server.start()

    later, _ = _token(url, member.name, PASSWORD, member.project)
    status, body, _ = call(deployment, "PATCH", path, later, {"parameters": {"net_name": f"{name}-renamed"}}, project_id=member.project_id)
    assert status == 202, body
    # The update's own token goes too, at once: the action acts through the trust.
    answer = identity.request("DELETE", f"{url}/auth/tokens", token=deployment.keystone.token, headers={"X-Subject-Token": later})
    assert answer.status == 204, answer
    later, _ = _token(url, member.name, PASSWORD, member.project)
    stack = _wait(deployment, member, later, path)
    assert stack["stack_status"] == "UPDATE_COMPLETE", stack["stack_status_reason"]
    assert admin.network.get_network(net_id).name == f"{name}-renamed"

    status, body, _ = call(deployment, "DELETE", path, later, project_id=member.project_id)
    assert status == 204, body
    assert _wait(deployment, member, later, path).get("stack_status", "DELETE_COMPLETE") == "DELETE_COMPLETE"
    assert admin.network.find_network(net_id) is None
    assert stokers_trusts(deployment, member) == []
    assert _stored_credentials(deployment) == []


def test_keystone_mode_with_workers_acts_through_the_trust_on_a_worker(deployment, openstack_cloud, postgres_url, tmp_path):
    """The same, with the API and the actions apart: ``stoker serve --job-queue
    procrastinate`` on PostgreSQL only validates tokens, makes the trust and enqueues; a
    ``stoker worker`` (keystone configuration, no user token ever) creates and deletes
    the network as the member, through the trust; the API server deletes the trust once
    the worker has finished the delete."""
    from cryptography.fernet import Fernet

    from tests.support.server import STOKER

    environment = {key: value for key, value in deployment.server.environment.items() if key.startswith("STOKER_")}
    environment.update(
        STOKER_JOB_QUEUE="procrastinate",
        STOKER_ENCRYPTION_KEY=Fernet.generate_key().decode(),
        STOKER_LOCK_LEASE_S="6",
    )
    database_url = postgres_url.replace("postgresql+psycopg://", "postgresql://", 1)
    server = Server(database_url, tmp_path / "serve.log", **environment)
    worker_log = tmp_path / "worker.log"
    server.start()
    worker = subprocess.Popen(
        [STOKER, "worker", "--concurrency", "4"],
        env={**os.environ, "STOKER_DATABASE_URL": database_url, **environment},
        stdout=worker_log.open("w"),
        stderr=subprocess.STDOUT,
    )
    member = deployment.users["a-member"]
    on_workers = Deployment(server, deployment.keystone, deployment.users)
    try:
        token, _ = _token(deployment.keystone.url, member.name, PASSWORD, member.project)
        name = f"workers-{secrets.token_hex(3)}"
        status, body, _ = call(on_workers, "POST", "/stacks", token, {"stack_name": name, "template": NET, "parameters": {"net_name": f"{name}-net"}}, project_id=member.project_id)
        assert status == 201, body
        path = f"/stacks/{name}/{body['stack']['id']}"
        stack = _wait(on_workers, member, token, path)
        assert stack["stack_status"] == "CREATE_COMPLETE", stack["stack_status_reason"]
        net_id = {o["output_key"]: o["output_value"] for o in stack["outputs"]}["net_id"]
        admin = openstack_cloud.connect("admin")
        assert admin.network.get_network(net_id).project_id == member.project_id
        assert len(stokers_trusts(deployment, member)) == 1
        assert "Starting job stoker.stack_job" in worker_log.read_text()  # the worker acted, not the server

        status, body, _ = call(on_workers, "DELETE", path, token, project_id=member.project_id)
        assert status == 204, body
        assert _wait(on_workers, member, token, path).get("stack_status", "DELETE_COMPLETE") == "DELETE_COMPLETE"
        assert admin.network.find_network(net_id) is None
        deadline = time.monotonic() + 30
        while stokers_trusts(deployment, member):
            assert time.monotonic() < deadline, "the API server never deleted the trust"
            time.sleep(0.5)
    finally:
        worker.terminate()
        worker.wait(timeout=60)
        log = server.stop()
        assert "Traceback" not in log, log
        assert "Traceback" not in worker_log.read_text(), worker_log.read_text()
