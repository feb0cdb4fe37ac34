"""POLL_SERVER_CFN without Keystone: a real ``stoker serve`` (none and token modes) gives an
OS::Heat::DeployedServer an EC2 keypair it issued itself, and the real agents read the
server's metadata from stoker's CFN API with it: os-collect-config's ``cfn`` collector
(signature version 2, XML answer), which hands the deployment to heat-agents' hooks, whose
signal completes it; and heat-cfntools' ``cfn-get-metadata`` (boto 2, signature version 4,
JSON answer). Refusals are Heat's AWS error shapes: a wrong signature, another server's
resource, an unknown or deleted keypair, an unsigned or expired request.

The agents live in their own cached venv (``tests/support/agents.py``); heat-cfntools is
a test dependency of stoker's (``tests/support/cfntools.py``).
"""

from __future__ import annotations

import json
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from typing import Any
from xml.etree import ElementTree

import pytest
import yaml
from keystoneclient.contrib.ec2.utils import Ec2Signer

from tests.support import cfntools
from tests.support.agents import AgentEnvironment, require_agents, run_agents
from tests.support.server import TENANT, Server

AGENT_TEST_TIMEOUT_S = 900
TOKEN = "cfn-" + "x" * 24

TEMPLATE = """
heat_template_version: 2021-04-16
resources:
  server:
    type: OS::Heat::DeployedServer
    description: the server the deployment targets
    metadata:
      AWS::CloudFormation::Init:
        config: {files: {/tmp/from-cfn-init: {content: read over the CFN API}}}
    properties: {software_config_transport: POLL_SERVER_CFN}
  other:
    type: OS::Heat::DeployedServer
    properties: {software_config_transport: POLL_SERVER_CFN}
  config:
    type: OS::Heat::SoftwareConfig
    properties:
      group: script
      outputs: [{name: result}]
      config: |
        #!/bin/sh
        echo -n over-cfn > $heat_outputs_path.result
  deployment:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: config}
      server: {get_resource: server}
      signal_transport: CFN_SIGNAL
outputs:
  result: {value: {get_attr: [deployment, result]}}
"""


@pytest.fixture(scope="module", params=["none", "token"])
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp(f"cfn-{request.param}")
    environment: dict[str, str] = {}
    if request.param == "token":
        tokens = directory / "tokens.yaml"
        tokens.write_text(
            yaml.safe_dump(
                {"tokens": {TOKEN: {"project_id": TENANT, "user_id": "ci", "roles": ["member"]}}}
            )
        )
        environment = {"STOKER_AUTH_MODE": "token", "STOKER_AUTH_TOKENS_FILE": str(tokens)}
    running = Server(
        f"sqlite:///{directory / 'stoker.sqlite'}", directory / "serve.log", **environment
    )
    running.environment["STOKER_PUBLIC_URL"] = running.url
    running.start()
    yield running
    log = running.stop()
    assert "Traceback" not in log, log


def call(server: Server, method: str, path: str, body: Any = None) -> tuple[int, Any]:
    """The orchestration API, with the token mode's token (none mode ignores it)."""
    request = urllib.request.Request(
        server.endpoint + path,
        data=None if body is None else json.dumps(body).encode(),
        method=method,
        headers={"Content-Type": "application/json", "X-Auth-Token": TOKEN},
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


def create_waiting(server: Server) -> tuple[str, str, dict[str, Any]]:
    """A new stack whose deployment waits for its signal; its name, id and the server's
    metadata (with the deployment's config)."""
    name = f"cfn-{secrets.token_hex(3)}"
    status, body = call(server, "POST", "/stacks", {"stack_name": name, "template": TEMPLATE})
    assert status == 201, body
    stack_id = body["stack"]["id"]
    deadline = time.monotonic() + 60
    while True:
        status, body = call(server, "GET", f"/stacks/{name}/{stack_id}/resources/server/metadata")
        if (
            status == 200
            and body["metadata"].get("deployments")
            and "cfn" in body["metadata"]["os-collect-config"]
        ):
            return name, stack_id, body["metadata"]
        assert time.monotonic() < deadline, body
        time.sleep(0.1)


def wait_settled(server: Server, name: str, stack_id: str) -> dict[str, Any]:
    """The stack once its action has ended (with the token: token mode needs one)."""
    deadline = time.monotonic() + 120
    while True:
        status, body = call(server, "GET", f"/stacks/{name}/{stack_id}")
        if status == 404:
            return {"stack_status": "DELETE_COMPLETE"}
        assert status == 200, body
        if not body["stack"]["stack_status"].endswith("IN_PROGRESS"):
            return body["stack"]
        assert time.monotonic() < deadline, body
        time.sleep(0.1)


def keypair_of(server: Server, name: str, stack_id: str, resource: str) -> dict[str, str]:
    status, body = call(server, "GET", f"/stacks/{name}/{stack_id}/resources/{resource}/metadata")
    assert status == 200, body
    return body["metadata"]["os-collect-config"]["cfn"]


def describe(
    url: str, access: str, secret: str, stack: str, resource: str, **extra: str
) -> tuple[int, str]:
    """DescribeStackResource signed (version 2) as os-collect-config's cfn collector signs."""
    params = {
        "Action": "DescribeStackResource",
        "StackName": stack,
        "LogicalResourceId": resource,
        "AWSAccessKeyId": access,
        "SignatureVersion": "2",
        **extra,
    }
    where = urllib.parse.urlparse(url)
    params["Signature"] = Ec2Signer(secret).generate(
        {"params": params, "verb": "GET", "host": where.netloc, "path": where.path}
    )
    return fetch(url + "?" + urllib.parse.urlencode(params))


def fetch(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def aws_error(text: str) -> tuple[str, str, str]:
    """Heat's ErrorResponse: (Type, Code, Message)."""
    root = ElementTree.fromstring(text)
    assert root.tag == "ErrorResponse", text
    error = root.find("Error")
    assert error is not None, text
    return (
        error.findtext("Type") or "",
        error.findtext("Code") or "",
        error.findtext("Message") or "",
    )


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> AgentEnvironment:
    return require_agents(tmp_path_factory.mktemp("agents") / "install.log")


@pytest.mark.slow
@pytest.mark.timeout(AGENT_TEST_TIMEOUT_S)
def test_cfn_agents_read_the_servers_metadata_and_deploy(server, agents, tmp_path):
    name, stack_id, metadata = create_waiting(server)
    occ = metadata["os-collect-config"]
    assert occ["collectors"] == ["cfn", "local"]
    cfn = occ["cfn"]
    assert cfn["metadata_url"] == f"{server.url}/cfn/v1/"
    assert (cfn["stack_name"], cfn["path"]) == (name, "server.Metadata")

    # heat-cfntools' cfn-get-metadata (boto 2: signature version 4, ContentType=JSON) at
    # <host>:<port>/v1/, as Heat's user data points the tools there.
    got = cfntools.cfn_get_metadata(
        tmp_path / "cfntools",
        server.url,
        name,
        "server",
        cfn["access_key_id"],
        cfn["secret_access_key"],
    )
    assert got.returncode == 0, got
    read = json.loads(got.stdout)
    assert (
        read["AWS::CloudFormation::Init"]["config"]["files"]["/tmp/from-cfn-init"]["content"]
        == "read over the CFN API"
    )
    assert [config["id"] for config in read["deployments"]] == [
        config["id"] for config in metadata["deployments"]
    ]

    # os-collect-config's cfn collector (signature version 2, the XML answer), then
    # heat-agents' hook and heat-config-notify, whose signal completes the deployment.
    run = run_agents(agents, None, tmp_path / "agent", collector={"cfn": cfn})
    assert run.returncode == 0, run
    collected = json.loads(
        (tmp_path / "agent" / "os-collect-config" / "cache" / "cfn.json").read_text()
    )
    assert (
        collected["AWS::CloudFormation::Init"]["config"]["files"]["/tmp/from-cfn-init"]["content"]
        == "read over the CFN API"
    )
    assert run.notifications()[metadata["deployments"][0]["id"]]["result"] == "over-cfn", run
    stack = wait_settled(server, name, stack_id)
    assert stack["stack_status"] == "CREATE_COMPLETE", f"{stack['stack_status_reason']}\n{run}"
    status, body = call(server, "GET", f"/stacks/{name}/{stack_id}/outputs/result")
    assert status == 200 and body["output"]["output_value"] == "over-cfn", body
    assert cfn["secret_access_key"] not in server.log_path.read_text()


def test_cfn_api_answers_heats_shapes_and_refuses_what_is_not_the_keypairs(server):
    name, stack_id, _metadata = create_waiting(server)
    mine, theirs = (
        keypair_of(server, name, stack_id, "server"),
        keypair_of(server, name, stack_id, "other"),
    )
    url = mine["metadata_url"]

    # Heat's DescribeStackResourceResponse, the metadata as JSON text inside the XML.
    status, text = describe(url, mine["access_key_id"], mine["secret_access_key"], name, "server")
    assert status == 200, text
    root = ElementTree.fromstring(text)
    assert root.tag == "DescribeStackResourceResponse"
    detail = root.find("DescribeStackResourceResult/StackResourceDetail")
    assert detail is not None, text
    assert (
        detail.findtext("LogicalResourceId"),
        detail.findtext("StackName"),
        detail.findtext("ResourceType"),
    ) == ("server", name, "OS::Heat::DeployedServer")
    assert detail.findtext("StackId") == f"arn:openstack:heat::{TENANT}:stacks/{name}/{stack_id}"
    assert detail.findtext("ResourceStatus") == "CREATE_COMPLETE"
    assert detail.findtext("Description") == "the server the deployment targets"
    assert "AWS::CloudFormation::Init" in json.loads(detail.findtext("Metadata") or "")
    # The stack by its ARN, and the JSON answer boto asks for.
    arn = detail.findtext("StackId") or ""
    status, text = describe(
        url, mine["access_key_id"], mine["secret_access_key"], arn, "server", ContentType="JSON"
    )
    assert status == 200, text
    shown = json.loads(text)["DescribeStackResourceResponse"]["DescribeStackResourceResult"][
        "StackResourceDetail"
    ]
    assert (
        shown["LogicalResourceId"] == "server" and "AWS::CloudFormation::Init" in shown["Metadata"]
    )

    # A wrong signature, another server's resource, an unknown keypair.
    status, text = describe(url, mine["access_key_id"], "not-the-secret", name, "server")
    assert (status, aws_error(text)[:2]) == (403, ("Sender", "SignatureDoesNotMatch")), text
    status, text = describe(
        url, theirs["access_key_id"], theirs["secret_access_key"], name, "server"
    )
    assert (status, aws_error(text)) == (
        403,
        ("Sender", "AccessDenied", "User is not authorized to perform action"),
    ), text
    status, text = describe(
        url, theirs["access_key_id"], theirs["secret_access_key"], "another-stack", "other"
    )
    assert (status, aws_error(text)[1]) == (403, "AccessDenied"), text
    status, text = describe(url, "AKIA-unknown", "whatever", name, "server")
    assert (status, aws_error(text)[1:]) == (
        403,
        ("InvalidClientTokenId", "The certificate or AWS Key ID provided does not exist"),
    ), text
    # Unsigned; signed too long ago (Keystone's 15 minutes); errors in JSON when asked.
    status, text = fetch(
        url
        + "?"
        + urllib.parse.urlencode(
            {"Action": "DescribeStackResource", "StackName": name, "LogicalResourceId": "server"}
        )
    )
    assert (status, aws_error(text)[1]) == (400, "IncompleteSignature"), text
    old = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600))
    status, text = describe(
        url, mine["access_key_id"], mine["secret_access_key"], name, "server", Timestamp=old
    )
    assert (status, aws_error(text)[1]) == (400, "RequestExpired"), text
    status, text = describe(
        url, mine["access_key_id"], "not-the-secret", name, "server", ContentType="JSON"
    )
    assert (
        status == 403
        and json.loads(text)["ErrorResponse"]["Error"]["Code"] == "SignatureDoesNotMatch"
    ), text
    status, text = describe(
        url, mine["access_key_id"], mine["secret_access_key"], name, "server", Action="ListStacks"
    )
    assert (status, aws_error(text)[1]) == (400, "InvalidAction"), text

    # The keypair goes with its server.
    assert call(server, "DELETE", f"/stacks/{name}/{stack_id}")[0] == 204
    assert wait_settled(server, name, stack_id)["stack_status"] == "DELETE_COMPLETE"
    status, text = describe(url, mine["access_key_id"], mine["secret_access_key"], name, "server")
    assert (status, aws_error(text)[1]) == (403, "InvalidClientTokenId"), text


def test_cfn_api_is_public_in_the_openapi_document(server):
    status, text = fetch(server.url + "/openapi.json")
    assert status == 200
    paths = json.loads(text)["paths"]
    for path in ("/cfn/v1/", "/v1/"):
        assert paths[path]["get"]["security"] == [] and paths[path]["post"]["security"] == []


def test_cfn_api_takes_a_signed_form_post(server):
    name, _stack_id, _metadata = create_waiting(server)
    cfn = keypair_of(server, name, _stack_id, "server")
    where = urllib.parse.urlparse(cfn["metadata_url"])
    params = {
        "Action": "DescribeStackResource",
        "StackName": name,
        "LogicalResourceId": "server",
        "AWSAccessKeyId": cfn["access_key_id"],
        "SignatureVersion": "2",
    }
    params["Signature"] = Ec2Signer(cfn["secret_access_key"]).generate(
        {"params": params, "verb": "POST", "host": where.netloc, "path": where.path}
    )
    request = urllib.request.Request(
        cfn["metadata_url"], data=urllib.parse.urlencode(params).encode(), method="POST"
    )
    request.add_header("Content-Type", "application/x-www-form-urlencoded")
    with urllib.request.urlopen(request, timeout=60) as response:
        assert response.status == 200
        assert (
            ElementTree.fromstring(response.read())
            .find("DescribeStackResourceResult/StackResourceDetail/LogicalResourceId")
            .text
            == "server"
        )
