"""Keystone stack users on the test cloud's real Keystone (issues 28 and 29):
AWS::IAM::User and AWS::IAM::AccessKey make a user and an EC2 credential Keystone
verifies (``/v3/ec2tokens``), the secrets appear in no event or resource show; a
HEAT_SIGNAL wait condition handle's user signals through stoker's API; the real
os-collect-config ``heat`` collector reads a POLL_SERVER_HEAT server's metadata from
``stoker serve --auth-mode keystone`` as the server's stack user, and heat-config-notify
signals the HEAT_SIGNAL deployment back the same way; the ``stoker`` command SIGKILLed
at each commit of a create leaves no stack user behind once the next command finishes.
Without a stack user domain, a member's stack whose user Keystone refused still deletes,
and in keystone mode an access key of the stack's own user is made as that user. With
Heat's stack user domain (the cloud's ``heat``), a member's stack users are made there,
in the stack's project of the domain, and reach the API through it.
openstacksdk, as the cloud's admin, is the witness."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from stoker.clouds.source import EnvironmentCloudSource, set_cloud_source
from stoker.service import Service
from stoker.settings import Settings
from tests.cloud import identity
from tests.cloud.test_import_round_trip import round_trip
from tests.support import agents
from tests.support.server import Server
from tests.support.stacks import from_data

STOKER = str(Path(sys.executable).with_name("stoker"))
WAIT_S = 300
SERVICE_PASSWORD = "stack-users-secret"

IAM = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "user": {
            "type": "AWS::IAM::User",
            "properties": {"LoginProfile": {"Password": "login-secret-1"}},
        },
        "key": {
            "type": "AWS::IAM::AccessKey",
            "properties": {"UserName": {"get_resource": "user"}},
        },
        "handle": {
            "type": "OS::Heat::WaitConditionHandle",
            "properties": {"signal_transport": "HEAT_SIGNAL"},
        },
    },
    "outputs": {
        "user_name": {"value": {"get_resource": "user"}},
        "access": {"value": {"get_resource": "key"}},
        "secret": {"value": {"get_attr": ["key", "SecretAccessKey"]}},
        "signal": {"value": {"get_attr": ["handle", "signal"]}},
    },
}


@pytest.fixture
def admin_cloud(openstack_cloud):
    set_cloud_source(EnvironmentCloudSource(openstack_cloud.cloud_environ("admin")))
    yield openstack_cloud
    set_cloud_source(None)


def users_named(keystone, prefix: str) -> list[Any]:
    return [user for user in keystone.users() if (user.name or "").startswith(prefix)]


def ec2_token(keystone_url: str, access: str, secret: str) -> int:
    """Keystone's answer to an EC2-signed (version 2) request made with the keypair, asked
    as a service asks it (Keystone lets only services and admins validate a signature)."""
    host, path = "127.0.0.1:8000", "/v1/"
    params = {
        "Action": "DescribeStackResource",
        "AWSAccessKeyId": access,
        "SignatureMethod": "HmacSHA256",
        "SignatureVersion": "2",
        "Timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    from keystoneclient.contrib.ec2.utils import Ec2Signer

    signature = Ec2Signer(secret).generate(
        {"params": params, "verb": "GET", "host": host, "path": path}
    )
    body = {
        "credentials": {
            "access": access,
            "signature": signature,
            "host": host,
            "verb": "GET",
            "path": path,
            "params": params,
        }
    }
    return identity.request(
        "POST", f"{keystone_url}/ec2tokens", token=identity.Keystone(keystone_url).token, body=body
    ).status


def test_stack_users_iam_user_access_key_and_heat_signal_handle(admin_cloud, tmp_path):
    keystone = admin_cloud.connect("admin").identity
    service = Service(Settings(database_url=f"sqlite:///{tmp_path / 'stoker.sqlite'}"))
    name = f"iam-{secrets.token_hex(3)}"
    stack = service.create_stack(name, from_data(IAM))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    outputs = {o["output_key"]: o["output_value"] for o in service.outputs(name)}
    users = {user.name: user for user in users_named(keystone, f"{name}-")}
    assert (
        set(users) == {outputs["user_name"], *(n for n in users if n.startswith(f"{name}-handle-"))}
        and len(users) == 2
    )
    iam_user = users[outputs["user_name"]]
    project_id = admin_cloud.connect("admin").current_project_id
    assert iam_user.default_project_id == project_id
    granted = {
        assignment.role["id"] for assignment in keystone.role_assignments(user_id=iam_user.id)
    }
    assert keystone.find_role("heat_stack_user").id in granted
    # The access key is a real EC2 credential: Keystone verifies a request signed with it.
    credential = keystone.get_credential(hashlib.sha256(outputs["access"].encode()).hexdigest())
    assert (credential.user_id, json.loads(credential.blob)) == (
        iam_user.id,
        {"access": outputs["access"], "secret": outputs["secret"]},
    )
    assert ec2_token(admin_cloud.keystone_url, outputs["access"], outputs["secret"]) == 200
    assert ec2_token(admin_cloud.keystone_url, outputs["access"], "wrong") == 401
    # The login password is the user's: Keystone gives it a token.
    assert identity.Keystone(
        admin_cloud.keystone_url, username=iam_user.name, password="login-secret-1", project="admin"
    ).token
    # The handle's user signals it through the resource-signal call's credentials.
    signal = json.loads(outputs["signal"])
    assert signal["resource_name"] == "handle" and signal["project_id"] == project_id
    assert identity.Keystone(
        admin_cloud.keystone_url,
        username=signal["username"],
        password=signal["password"],
        project="admin",
    ).token
    # Secrets are in no event, and resource show masks SecretAccessKey.
    events = json.dumps([e.resource_status_reason for e in service.list_events(name)])
    for secret in (outputs["secret"], "login-secret-1", signal["password"]):
        assert secret not in events
    # Delete removes the users and the credential; a user already gone is tolerated.
    keystone.delete_user(users[next(n for n in users if n.startswith(f"{name}-handle-"))].id)
    service.delete_stack(name)
    assert users_named(keystone, f"{name}-") == []
    with pytest.raises(Exception, match="(?i)not found|could not find"):
        keystone.get_credential(credential.id)


# -- the real agents against stoker serve in keystone mode ---------------------------------------------

DEPLOYED = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "server": {
            "type": "OS::Heat::DeployedServer",
            "properties": {"software_config_transport": "POLL_SERVER_HEAT"},
        },
        "config": {
            "type": "OS::Heat::SoftwareConfig",
            "properties": {
                "group": "script",
                "outputs": [{"name": "result"}],
                "config": "#!/bin/sh\necho -n stack-user > $heat_outputs_path.result\n",
            },
        },
        "deployment": {
            "type": "OS::Heat::SoftwareDeployment",
            "properties": {
                "config": {"get_resource": "config"},
                "server": {"get_resource": "server"},
                "signal_transport": "HEAT_SIGNAL",
            },
        },
    },
    "outputs": {"result": {"value": {"get_attr": ["deployment", "result"]}}},
}


@dataclass
class Served:
    server: Server
    token: str
    project_id: str

    def call(self, method: str, path: str, body: object = None) -> tuple[int, Any]:
        request = urllib.request.Request(
            f"{self.server.url}/v1/{self.project_id}{path}",
            data=None if body is None else json.dumps(body).encode(),
            method=method,
            headers={"Content-Type": "application/json", "X-Auth-Token": self.token},
        )
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")


@pytest.fixture
def served(openstack_cloud, tmp_path) -> Iterator[Served]:
    """stoker serving in keystone mode with the cloud's stack user domain, in the catalog
    as the orchestration service; as the cloud's admin."""
    with serving(openstack_cloud, tmp_path, stack_domain=True) as running:
        yield running


@pytest.fixture
def served_without_stack_domain(openstack_cloud, tmp_path) -> Iterator[Served]:
    """The same without a stack user domain: stack users in the stack's own project, made
    with the stack's credentials (Heat's legacy placement)."""
    with serving(openstack_cloud, tmp_path, stack_domain=False) as running:
        yield running


@contextlib.contextmanager
def serving(openstack_cloud, tmp_path: Path, stack_domain: bool) -> Iterator[Served]:
    suffix = secrets.token_hex(3)
    url = openstack_cloud.keystone_url
    admin = identity.Keystone(url)
    service_role = admin.ensure("roles", "role", "service")["id"]
    service_project = admin.ensure("projects", "project", "service", domain_id="default")
    stoker_user = admin.call(
        "POST",
        "/users",
        body={
            "user": {
                "name": f"stoker-su-{suffix}",
                "password": SERVICE_PASSWORD,
                "domain_id": "default",
            }
        },
    )["user"]
    admin.grant(service_project["id"], stoker_user["id"], service_role)
    server = Server(
        f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        tmp_path / "serve.log",
        start_timeout_s=120,
        STOKER_AUTH_MODE="keystone",
        STOKER_KEYSTONE_AUTH_URL=url,
        STOKER_KEYSTONE_USERNAME=stoker_user["name"],
        STOKER_KEYSTONE_PASSWORD=SERVICE_PASSWORD,
        STOKER_KEYSTONE_PROJECT_NAME="service",
        STOKER_KEYSTONE_USER_DOMAIN_NAME="Default",
        STOKER_KEYSTONE_PROJECT_DOMAIN_NAME="Default",
        STOKER_KEYSTONE_REGION_NAME=identity.REGION,
        **(identity.STACK_DOMAIN_ENVIRONMENT if stack_domain else {}),
    )
    catalog = admin.call(
        "POST",
        "/services",
        body={"service": {"name": f"stoker-su-{suffix}", "type": "orchestration"}},
    )["service"]
    admin.call(
        "POST",
        "/endpoints",
        body={
            "endpoint": {
                "service_id": catalog["id"],
                "interface": "public",
                "region_id": identity.REGION,
                "url": server.url + "/v1/%(tenant_id)s",
            }
        },
    )
    scoped = identity.Keystone(
        url, username="admin", password=identity.ADMIN_PASSWORD, project="admin"
    )
    try:
        server.start()
        yield Served(server, scoped.token, scoped.project_id)
    finally:
        if server.process is not None:
            log = server.stop()
            assert "Traceback" not in log, log
            assert identity.STACK_DOMAIN_ADMIN_PASSWORD not in log
        admin.call("DELETE", f"/services/{catalog['id']}")
        admin.call("DELETE", f"/users/{stoker_user['id']}")


def wait_state(served: Served, path: str, until: str) -> dict:
    deadline = time.monotonic() + WAIT_S
    while True:
        status, body = served.call("GET", path)
        assert status == 200, body
        if (
            not body["stack"]["stack_status"].endswith("IN_PROGRESS")
            or body["stack"]["stack_status"] == until
        ):
            return body["stack"]
        assert time.monotonic() < deadline, body
        time.sleep(0.5)


def test_iam_user_is_imported_by_the_id_it_had(admin_cloud, make_service):
    """The stack user an AWS::IAM::User made, with its login password, taken over by a new
    stack (round_trip: no second user, no drift, deleted with the stack); then one taken
    over is given an access key by an update: the key is the imported user's."""
    keystone = admin_cloud.connect("admin").identity
    service = make_service(enable_stack_abandon=True)
    name = f"rt-iam-{secrets.token_hex(3)}"
    user = {"type": "AWS::IAM::User", "properties": {"LoginProfile": {"Password": "login-secret-1"}}}
    data = {"heat_template_version": "2021-04-16", "resources": {"user": user}}

    def made() -> list[str]:
        return [found.id for found in keystone.users() if name in (found.description or "")]

    round_trip(service, data, name, lambda: {"users": len(made())})
    assert made() == []

    service.create_stack(f"{name}-first", from_data(data))
    user_id = {r.name: r.physical_resource_id for r in service.list_resources(f"{name}-first")}["user"]
    service.abandon_stack(f"{name}-first")
    stack = service.import_stack(f"{name}-second", from_data(data), {"user": user_id})
    assert stack.state == "ADOPT_COMPLETE", stack.status_reason
    with_key = {**data, "resources": {**data["resources"], "key": {"type": "AWS::IAM::AccessKey", "properties": {"UserName": {"get_resource": "user"}}}}}
    with_key["outputs"] = {"access": {"value": {"get_resource": "key"}}, "user_name": {"value": {"get_resource": "user"}}}
    stack = service.update_stack(f"{name}-second", from_data(with_key))
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    outputs = {o["output_key"]: o["output_value"] for o in service.outputs(f"{name}-second")}
    assert outputs["user_name"] == keystone.get_user(user_id).name
    assert keystone.get_credential(hashlib.sha256(outputs["access"].encode()).hexdigest()).user_id == user_id
    assert service.delete_stack(f"{name}-second").state == "DELETE_COMPLETE"
    assert made() == []


def test_stack_users_poll_server_heat_and_heat_signal_with_the_real_agents(
    served, openstack_cloud, tmp_path
):
    environment = agents.require_agents(tmp_path / "agents-build.log")
    keystone = openstack_cloud.connect("admin").identity
    name = f"occ-{secrets.token_hex(3)}"
    status, body = served.call("POST", "/stacks", {"stack_name": name, "template": DEPLOYED})
    assert status == 201, body
    path = f"/stacks/{name}/{body['stack']['id']}"
    # The deployment waits for its signal; the server's metadata has the heat collector's settings.
    # The resource shows CREATE_IN_PROGRESS before its handler puts the deployment in the server's
    # metadata, so wait for the deployment itself: an agent run before it finds nothing to do.
    deadline = time.monotonic() + WAIT_S
    while True:
        status, body = served.call("GET", f"{path}/resources/deployment")
        if status == 200 and body["resource"]["resource_status"] == "CREATE_IN_PROGRESS":
            status, body = served.call("GET", f"{path}/resources/server/metadata")
            if status == 200 and body["metadata"].get("deployments"):
                break
        assert time.monotonic() < deadline, body
        time.sleep(0.5)
    occ = body["metadata"]["os-collect-config"]
    assert occ["collectors"] == ["heat", "local"]
    heat = occ["heat"]
    # The server's stack user is the stack domain's, in the stack's project there.
    user_project = served.call("GET", path)[1]["stack"]["stack_user_project_id"]
    assert user_project and user_project != served.project_id
    assert heat["resource_name"] == "server" and heat["project_id"] == user_project
    assert keystone.get_user(heat["user_id"]).name.startswith(f"{name}-server-")
    run = agents.run_agents(environment, None, tmp_path / "server", collector={"heat": heat})
    assert run.returncode == 0, run
    stack = wait_state(served, path, "CREATE_COMPLETE")
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    assert {o["output_key"]: o["output_value"] for o in stack["outputs"]}["result"] == "stack-user"
    users = users_named(keystone, f"{name}-")
    assert sorted(u.name.split("-")[2] for u in users) == ["deployment", "server"]
    # The stack user may read and signal, and nothing else: it cannot list the project's stacks.
    agent = identity.user_token(heat["auth_url"], heat["user_id"], heat["password"], user_project)
    as_agent = Served(served.server, agent, user_project)
    assert as_agent.call("GET", f"{path}/resources/server/metadata")[0] == 200
    assert as_agent.call("GET", "/stacks")[0] == 403
    assert served.call("DELETE", path)[0] == 204
    deadline = time.monotonic() + WAIT_S
    # One read a round: the stack may go between two (a 404 has no "stack").
    while (shown := served.call("GET", path))[0] == 200 and shown[1]["stack"]["stack_status"] != "DELETE_COMPLETE":
        assert time.monotonic() < deadline
        time.sleep(0.5)
    assert users_named(keystone, f"{name}-") == []


# -- crash safety -------------------------------------------------------------------------------------


@pytest.mark.parametrize("stack_domain", [False, True], ids=["own-project", "stack-user-domain"])
def test_stack_users_create_killed_at_each_commit_leaves_no_user(openstack_cloud, tmp_path, stack_domain):
    """With a stack user domain, the stack's project there too: made once (a create cut
    short after Keystone made it, before the stack recorded it, finds it by its name),
    and gone with the stack."""
    keystone = openstack_cloud.connect("admin").identity
    template = tmp_path / "iam.yaml"
    template.write_text(yaml.safe_dump(IAM))
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith(("OS_", "STOKER_"))
    }
    environment.update(
        OS_CLIENT_CONFIG_FILE=str(openstack_cloud.clouds_yaml),
        STOKER_DATABASE_URL=f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        **(identity.STACK_DOMAIN_ENVIRONMENT if stack_domain else {}),
    )
    heat_domain = keystone.find_domain(identity.STACK_USER_DOMAIN)
    made_for: list[str] = []  # the ids of the stacks a killed create left

    def projects_of(stack_id: str) -> list[Any]:
        # The embedded engine's stacks are in project "default" (STOKER_PROJECT).
        return list(keystone.projects(domain_id=heat_domain.id, name=f"default-{stack_id}"[:64]))

    def run(*command: str, kill_after: int | None = None) -> subprocess.CompletedProcess:
        extra = (
            {"STOKER_FAULT_KILL_AFTER_COMMITS": str(kill_after)} if kill_after is not None else {}
        )
        return subprocess.run(
            [STOKER, "--os-cloud", openstack_cloud.cloud("admin"), "stack", *command],
            env={**environment, **extra},
            capture_output=True,
            text=True,
            timeout=WAIT_S,
            check=False,
        )

    suffix = secrets.token_hex(3)
    crashes = 0
    for commits in range(2, 40, 3):
        name = f"su{commits}-{suffix}"
        created = run("create", name, "-t", str(template), "--wait", kill_after=commits)
        if created.returncode == 0:
            break
        assert created.returncode == -9, created.stderr
        crashes += 1
        shown = run("show", name, "-f", "json")
        if shown.returncode != 0:
            assert users_named(keystone, f"{name}-") == []
            continue
        stack_id = json.loads(shown.stdout)["id"]
        made_for.append(stack_id)
        if crashes % 2:
            retried = run("update", name, "-t", str(template), "--wait")
            assert retried.returncode == 0, retried.stderr
            # Exactly one user per resource that has one: none made twice.
            assert len(users_named(keystone, f"{name}-user-")) == 1
            assert len(users_named(keystone, f"{name}-handle-")) == 1
            if stack_domain:
                [project] = projects_of(stack_id)
                assert json.loads(run("show", name, "-f", "json").stdout)["stack_user_project_id"] == project.id
                assert {user.default_project_id for user in users_named(keystone, f"{name}-")} == {project.id}
        deleted = run("delete", name, "--yes", "--wait")
        assert deleted.returncode == 0, deleted.stderr
        assert users_named(keystone, f"{name}-") == [], commits
        assert projects_of(stack_id) == [], commits
    else:
        raise AssertionError("the create never completed")
    assert crashes >= 3
    if stack_domain:
        stack_id = json.loads(run("show", name, "-f", "json").stdout)["id"]
        assert len(projects_of(stack_id)) == 1
        assert all(user.domain_id == heat_domain.id for user in users_named(keystone, f"{name}-"))
    assert run("delete", name, "--yes", "--wait").returncode == 0
    assert users_named(keystone, f"{name}-") == []
    assert [stack_id for stack_id in made_for if projects_of(stack_id)] == []


def test_a_stack_user_keystone_refused_a_member_still_deletes_with_its_stack(served_without_stack_domain, openstack_cloud):
    """Without a stack user domain, in keystone mode a member's stack makes its users with
    the member's trust, and Keystone's default policy lets only an admin list or make
    users: the user's create is refused (403), and the stack's delete, which looks for a
    user a create cut short might have made, is refused the same lookup. Nothing was made,
    so the delete completes (it ended DELETE_FAILED with the same 403 before:
    heat-tempest-plugin's CfnInit scenario as the demo user)."""
    demo = identity.Keystone(
        openstack_cloud.keystone_url, username="demo", password=identity.DEMO_PASSWORD, project="demo"
    )
    member = Served(served_without_stack_domain.server, demo.token, demo.project_id)
    keystone = openstack_cloud.connect("admin").identity
    name = f"refused-{secrets.token_hex(3)}"
    template = {"heat_template_version": "2021-04-16", "resources": {"user": IAM["resources"]["user"]}}
    status, body = member.call("POST", "/stacks", {"stack_name": name, "template": template})
    assert status == 201, body
    path = f"/stacks/{name}/{body['stack']['id']}"
    created = wait_state(member, path, "CREATE_FAILED")
    assert created["stack_status"] == "CREATE_FAILED", created
    assert "403" in created["stack_status_reason"] or "not authorized" in created["stack_status_reason"], created
    assert users_named(keystone, name) == []

    status, body = member.call("DELETE", path)
    assert status == 204, body
    deleted = wait_state(member, path, "DELETE_COMPLETE")
    assert deleted["stack_status"] == "DELETE_COMPLETE", deleted["stack_status_reason"]


def test_an_access_key_of_the_stacks_own_user_is_made_as_that_user_in_keystone_mode(served_without_stack_domain, openstack_cloud):
    """Without a stack user domain, in keystone mode a stack acts with a trust-scoped
    token, and Keystone refuses a delegated token credentials ("Delegated tokens cannot
    access credentials directly"): the AccessKey of the stack's own AWS::IAM::User makes
    and deletes its EC2 keypair as that user, with the password the User holds. Keystone
    then verifies a request signed with the key, and the stack's delete leaves neither
    user nor credential."""
    served = served_without_stack_domain
    keystone = openstack_cloud.connect("admin").identity
    name = f"key-{secrets.token_hex(3)}"
    template = {
        "heat_template_version": "2021-04-16",
        "resources": {"user": IAM["resources"]["user"], "key": IAM["resources"]["key"]},
        "outputs": {key: IAM["outputs"][key] for key in ("user_name", "access", "secret")},
    }
    status, body = served.call("POST", "/stacks", {"stack_name": name, "template": template})
    assert status == 201, body
    path = f"/stacks/{name}/{body['stack']['id']}"
    created = wait_state(served, path, "CREATE_COMPLETE")
    assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]
    status, body = served.call("GET", path)
    outputs = {o["output_key"]: o["output_value"] for o in body["stack"]["outputs"]}
    credential_id = hashlib.sha256(outputs["access"].encode()).hexdigest()
    user = next(u for u in users_named(keystone, f"{name}-") if u.name == outputs["user_name"])
    assert keystone.get_credential(credential_id).user_id == user.id
    assert ec2_token(openstack_cloud.keystone_url, outputs["access"], outputs["secret"]) == 200

    status, body = served.call("DELETE", path)
    assert status == 204, body
    deleted = wait_state(served, path, "DELETE_COMPLETE")
    assert deleted["stack_status"] == "DELETE_COMPLETE", deleted["stack_status_reason"]
    assert users_named(keystone, f"{name}-") == []
    assert [c for c in keystone.credentials() if c.id == credential_id] == []


# -- Heat's stack user domain: a member's stack users --------------------------------------------------

DOMAIN_USERS = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "user": IAM["resources"]["user"],
        "key": IAM["resources"]["key"],
        "handle": IAM["resources"]["handle"],
        "server": {
            "type": "OS::Heat::DeployedServer",
            "properties": {"software_config_transport": "POLL_SERVER_HEAT"},
            "metadata": {"for": "the agent"},
        },
    },
    "outputs": {key: IAM["outputs"][key] for key in ("user_name", "access", "secret", "signal")},
}


def delete_and_wait(served: Served, path: str) -> None:
    """Delete the stack at ``path`` and wait until it is gone or DELETE_COMPLETE (never
    DELETE_FAILED)."""
    status, body = served.call("DELETE", path)
    assert status == 204, body
    deadline = time.monotonic() + WAIT_S
    while (shown := served.call("GET", path))[0] == 200 and shown[1]["stack"]["stack_status"] != "DELETE_COMPLETE":
        assert shown[1]["stack"]["stack_status"] != "DELETE_FAILED", shown[1]["stack"]["stack_status_reason"]
        assert time.monotonic() < deadline
        time.sleep(0.5)


def test_a_members_stack_users_live_in_the_stack_user_domain(served, openstack_cloud):
    """Heat's stack user domain in keystone mode: the demo user (a member) has a stack with
    an AWS::IAM::User, its AccessKey, a HEAT_SIGNAL handle's user and a POLL_SERVER_HEAT
    server's user, all made by the domain admin in the stack's project of the ``heat``
    domain (``<project id>-<stack id>``, shown as the stack's stack_user_project_id), with
    the heat_stack_user role there (without the domain, Keystone refuses the member's trust:
    the test above). Keystone verifies the access key; the server's user reads its
    metadata through the API as heatclient does (and os-collect-config's heat collector),
    at /v1/<stack_user_project_id>/..., the handle's user signals it, and neither may do
    more; the stack's delete leaves no user, credential or project."""
    admin = openstack_cloud.connect("admin").identity
    demo = identity.Keystone(openstack_cloud.keystone_url, username="demo", password=identity.DEMO_PASSWORD, project="demo")
    member = Served(served.server, demo.token, demo.project_id)
    name = f"dom-{secrets.token_hex(3)}"
    status, body = member.call("POST", "/stacks", {"stack_name": name, "template": DOMAIN_USERS})
    assert status == 201, body
    stack_id = body["stack"]["id"]
    path = f"/stacks/{name}/{stack_id}"
    created = wait_state(member, path, "CREATE_COMPLETE")
    assert created["stack_status"] == "CREATE_COMPLETE", created["stack_status_reason"]
    outputs = {o["output_key"]: o["output_value"] for o in created["outputs"]}

    # The stack's project in the heat domain, recorded on the stack.
    heat_domain = admin.find_domain(identity.STACK_USER_DOMAIN)
    project = admin.get_project(created["stack_user_project_id"])
    assert (project.name, project.domain_id, project.description) == (f"{demo.project_id}-{stack_id}"[:64], heat_domain.id, "Heat stack user project")
    # Its users: in the domain, in the project, with the stack user role there.
    users = users_named(admin, f"{name}-")
    assert sorted(user.name.split("-")[2] for user in users) == ["handle", "server", "user"]
    role = admin.find_role("heat_stack_user")
    for user in users:
        assert (user.domain_id, user.default_project_id) == (heat_domain.id, project.id)
        granted = {(a.role["id"], (a.scope.get("project") or {}).get("id")) for a in admin.role_assignments(user_id=user.id)}
        assert granted == {(role.id, project.id)}
    # The access key is the IAM user's EC2 credential on the project, and Keystone verifies it.
    credential = admin.get_credential(hashlib.sha256(outputs["access"].encode()).hexdigest())
    iam_user = next(user for user in users if user.name == outputs["user_name"])
    assert (credential.user_id, credential.project_id) == (iam_user.id, project.id)
    assert ec2_token(openstack_cloud.keystone_url, outputs["access"], outputs["secret"]) == 200

    # The server's stack user reads the server's metadata as heatclient does: the catalog's
    # orchestration endpoint for its token's project, the stack by name and id, or by name.
    status, shown = member.call("GET", f"{path}/resources/server/metadata")
    assert status == 200, shown
    agent = shown["metadata"]["os-collect-config"]["heat"]
    assert agent["project_id"] == project.id
    from heatclient import client as heat_client
    from keystoneauth1 import session as keystone_session
    from keystoneauth1.identity import v3

    session = keystone_session.Session(auth=v3.Password(auth_url=agent["auth_url"], user_id=agent["user_id"], password=agent["password"], project_id=agent["project_id"]))
    heat = heat_client.Client("1", session=session, region_name=identity.REGION)
    assert heat.resources.metadata(f"{name}/{stack_id}", "server") == shown["metadata"]
    assert heat.resources.metadata(name, "server") == shown["metadata"]
    # The handle's user signals the handle at its project's path; a stack user may do no more.
    signal = json.loads(outputs["signal"])
    assert signal["project_id"] == project.id
    handle_user = Served(served.server, identity.user_token(signal["auth_url"], signal["user_id"], signal["password"], project.id), project.id)
    status, body = handle_user.call("POST", f"{path}/resources/handle/signal", {"status": "SUCCESS", "reason": "up", "data": "done", "id": "1"})
    assert status == 200, body
    for refused in (path, f"{path}/resources", f"{path}/template", "/stacks"):
        assert handle_user.call("GET", refused)[0] == 403, refused
    # Another project's path is not the token's.
    assert Served(served.server, handle_user.token, demo.project_id).call("GET", f"{path}/resources/server/metadata")[0] == 403

    delete_and_wait(member, path)
    assert users_named(admin, f"{name}-") == []
    assert [c for c in admin.credentials() if c.id == credential.id] == []
    assert admin.find_project(project.id, ignore_missing=True) is None


def test_a_stack_user_project_outside_the_stack_user_domain_is_never_deleted(served, openstack_cloud, tmp_path):
    """The stack's delete deletes its stack user project only if it is one of the stack
    user domain's (Heat's delete_stack_domain_project): a stack whose record names another
    domain's project (the stack's own, as one made before the domain was set up would)
    deletes and leaves that project alone. Two guards hold it on this Keystone: stoker reads
    the project's domain first, and Keystone's default policy lets a domain admin read or
    delete only its domain's projects (so stoker's check matters where an operator's policy
    is wider)."""
    from stoker.store import Store

    admin = openstack_cloud.connect("admin").identity
    demo = identity.Keystone(openstack_cloud.keystone_url, username="demo", password=identity.DEMO_PASSWORD, project="demo")
    member = Served(served.server, demo.token, demo.project_id)
    name = f"own-{secrets.token_hex(3)}"
    template = {"heat_template_version": "2021-04-16", "resources": {"nothing": {"type": "OS::Heat::None"}}}
    status, body = member.call("POST", "/stacks", {"stack_name": name, "template": template})
    assert status == 201, body
    stack_id = body["stack"]["id"]
    path = f"/stacks/{name}/{stack_id}"
    assert wait_state(member, path, "CREATE_COMPLETE")["stack_status"] == "CREATE_COMPLETE"
    store = Store(f"sqlite:///{tmp_path / 'stoker.sqlite'}")
    try:
        store.set_stack_user_project([stack_id], demo.project_id)
    finally:
        store.close()
    assert member.call("GET", path)[1]["stack"]["stack_user_project_id"] == demo.project_id
    delete_and_wait(member, path)
    assert admin.get_project(demo.project_id).id == demo.project_id
