"""POLL_SERVER_CFN on the test cloud's real Keystone, with ``stoker serve --auth-mode
keystone`` (stacks act through trusts): the server's stack user makes its own EC2
credential (authenticated with its password: Keystone gives a trust-scoped token no
credential), stoker's CFN API has Keystone verify each signature (``/v3/ec2tokens``, as
the service user), and the real os-collect-config ``cfn`` collector and heat-cfntools'
``cfn-get-metadata`` read the server's metadata with it; the deployment they find
completes when signalled. Refusals are Heat's AWS errors; deleting the stack deletes the
keypair and the user. openstacksdk, as the cloud's admin, is the witness."""

from __future__ import annotations

import hashlib
import json
import secrets
import time
import urllib.error
import urllib.parse
import urllib.request
from xml.etree import ElementTree

import pytest
from keystoneclient.contrib.ec2.utils import Ec2Signer

from tests.cloud.test_stack_users import WAIT_S, served, users_named, wait_state  # noqa: F401 - served: a fixture
from tests.support import agents, cfntools

TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "server": {
            "type": "OS::Heat::DeployedServer",
            "metadata": {
                "AWS::CloudFormation::Init": {
                    "config": {"files": {"/tmp/stack-user-cfn": {"content": "from cfn-init"}}}
                }
            },
            "properties": {"software_config_transport": "POLL_SERVER_CFN"},
        },
        "other": {
            "type": "OS::Heat::DeployedServer",
            "properties": {"software_config_transport": "POLL_SERVER_CFN"},
        },
        "config": {
            "type": "OS::Heat::SoftwareConfig",
            "properties": {
                "group": "script",
                "outputs": [{"name": "result"}],
                "config": "#!/bin/sh\necho -n over-cfn > $heat_outputs_path.result\n",
            },
        },
        "deployment": {
            "type": "OS::Heat::SoftwareDeployment",
            "properties": {
                "config": {"get_resource": "config"},
                "server": {"get_resource": "server"},
                "signal_transport": "CFN_SIGNAL",
            },
        },
    },
    "outputs": {"result": {"value": {"get_attr": ["deployment", "result"]}}},
}


def describe(url: str, access: str, secret: str, stack: str, resource: str) -> tuple[int, str]:
    params = {
        "Action": "DescribeStackResource",
        "StackName": stack,
        "LogicalResourceId": resource,
        "AWSAccessKeyId": access,
        "SignatureVersion": "2",
    }
    where = urllib.parse.urlparse(url)
    params["Signature"] = Ec2Signer(secret).generate(
        {"params": params, "verb": "GET", "host": where.netloc, "path": where.path}
    )
    try:
        with urllib.request.urlopen(
            url + "?" + urllib.parse.urlencode(params), timeout=60
        ) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def error_code(text: str) -> str:
    return ElementTree.fromstring(text).findtext("Error/Code") or text


def test_cfn_keypairs_on_keystone_with_the_real_agents(served, openstack_cloud, tmp_path):  # noqa: F811 - the fixture
    environment = agents.require_agents(tmp_path / "agents-build.log")
    keystone = openstack_cloud.connect("admin").identity
    name = f"cfn-{secrets.token_hex(3)}"
    status, body = served.call("POST", "/stacks", {"stack_name": name, "template": TEMPLATE})
    assert status == 201, body
    path = f"/stacks/{name}/{body['stack']['id']}"
    deadline = time.monotonic() + WAIT_S
    while True:
        status, body = served.call("GET", f"{path}/resources/deployment")
        # In progress is shown before the handler puts the deployment in the server's
        # metadata: an agent run before that would find nothing to signal.
        if status == 200 and body["resource"]["resource_status"] == "CREATE_IN_PROGRESS":
            metadata = served.call("GET", f"{path}/resources/server/metadata")[1]["metadata"]
            if metadata.get("deployments"):
                break
        # 404 until the create's job has stored the stack's resources.
        assert status == 404 or status == 200 and body["resource"]["resource_status"] != "CREATE_FAILED", body
        stack = served.call("GET", path)[1]["stack"]
        assert stack["stack_status"] != "CREATE_FAILED", stack["stack_status_reason"]
        assert time.monotonic() < deadline, body
        time.sleep(0.5)
    occ = served.call("GET", f"{path}/resources/server/metadata")[1]["metadata"][
        "os-collect-config"
    ]
    assert occ["collectors"] == ["cfn", "local"]
    cfn = occ["cfn"]
    assert (
        cfn["metadata_url"] == f"{served.server.url}/cfn/v1/" and cfn["path"] == "server.Metadata"
    )
    # The keypair is the stack user's own EC2 credential in Keystone.
    credential = keystone.get_credential(hashlib.sha256(cfn["access_key_id"].encode()).hexdigest())
    assert json.loads(credential.blob) == {
        "access": cfn["access_key_id"],
        "secret": cfn["secret_access_key"],
    }
    assert keystone.get_user(credential.user_id).name.startswith(f"{name}-server-")
    other = served.call("GET", f"{path}/resources/other/metadata")[1]["metadata"][
        "os-collect-config"
    ]["cfn"]

    # Keystone refuses a wrong signature; another server's keypair and an unknown one are refused too.
    status, text = describe(
        cfn["metadata_url"], cfn["access_key_id"], "not-the-secret", name, "server"
    )
    assert (status, error_code(text)) == (403, "SignatureDoesNotMatch"), text
    status, text = describe(
        cfn["metadata_url"], other["access_key_id"], other["secret_access_key"], name, "server"
    )
    assert (status, error_code(text)) == (403, "AccessDenied"), text
    status, text = describe(cfn["metadata_url"], "unknown-access", "whatever", name, "server")
    assert (status, error_code(text)) == (403, "InvalidClientTokenId"), text

    # heat-cfntools' cfn-get-metadata (boto 2, signature version 4), verified by Keystone.
    got = cfntools.cfn_get_metadata(
        tmp_path / "cfntools",
        served.server.url,
        name,
        "server",
        cfn["access_key_id"],
        cfn["secret_access_key"],
    )
    assert got.returncode == 0, got
    assert (
        json.loads(got.stdout)["AWS::CloudFormation::Init"]["config"]["files"][
            "/tmp/stack-user-cfn"
        ]["content"]
        == "from cfn-init"
    )
    # os-collect-config's cfn collector, then the hook and its signal.
    run = agents.run_agents(environment, None, tmp_path / "server", collector={"cfn": cfn})
    assert run.returncode == 0, run
    collected = json.loads(
        (tmp_path / "server" / "os-collect-config" / "cache" / "cfn.json").read_text()
    )
    assert (
        collected["AWS::CloudFormation::Init"]["config"]["files"]["/tmp/stack-user-cfn"]["content"]
        == "from cfn-init"
    )
    stack = wait_state(served, path, "CREATE_COMPLETE")
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    assert {o["output_key"]: o["output_value"] for o in stack["outputs"]}["result"] == "over-cfn"

    # Deleting the stack deletes the keypairs and the stack users.
    assert served.call("DELETE", path)[0] == 204
    deadline = time.monotonic() + WAIT_S
    # One read a round: the stack may go between two (a 404 has no "stack").
    while (shown := served.call("GET", path))[0] == 200 and shown[1]["stack"]["stack_status"] != "DELETE_COMPLETE":
        assert time.monotonic() < deadline
        time.sleep(0.5)
    assert users_named(keystone, f"{name}-") == []
    with pytest.raises(Exception, match="(?i)not found|could not find"):
        keystone.get_credential(credential.id)
    status, text = describe(
        cfn["metadata_url"], cfn["access_key_id"], cfn["secret_access_key"], name, "server"
    )
    assert (status, error_code(text)) == (403, "InvalidClientTokenId"), text
