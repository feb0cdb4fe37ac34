"""POLL_SERVER_CFN through the engine, without a cloud: a DeployedServer gets an EC2
keypair stoker issues itself (the CFN API finds the server by the access key and signs
with the secret, tests/acceptance/test_agent_cfn.py), its metadata names the ``cfn``
collector's settings, an update to another transport revokes the keypair and back
issues a new one, and deleting the server revokes it."""

from __future__ import annotations

from stoker.resources.server_transport import POLL_SERVER_CFN
from tests.support.stacks import template

SERVER = """
heat_template_version: 2021-04-16
parameters:
  transport: {type: string, default: POLL_SERVER_CFN}
resources:
  server:
    type: OS::Heat::DeployedServer
    properties: {software_config_transport: {get_param: transport}}
outputs:
  occ: {value: {get_attr: [server, os_collect_config]}}
"""


def collect(service, name: str) -> dict:
    return {o["output_key"]: o["output_value"] for o in service.outputs(name)}["occ"]


def test_cfn_transport_keypair_is_issued_switched_and_revoked(service):
    stack = service.create_stack("c", template(SERVER))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    occ = collect(service, "c")
    assert occ["collectors"] == ["cfn", "local"]
    cfn = occ["cfn"]
    assert cfn["metadata_url"].endswith("/cfn/v1/") and (cfn["stack_name"], cfn["path"]) == (
        "c",
        "server.Metadata",
    )
    found = service.keypair_holder(cfn["access_key_id"])
    assert found is not None
    holder_stack, record, secret = found
    assert (holder_stack.name, record.name, secret) == ("c", "server", cfn["secret_access_key"])
    # The secret is not shown where users look: events, the resource's data as shown.
    assert cfn["secret_access_key"] not in str(
        [event.resource_status_reason for event in service.list_events("c")]
    )

    stack = service.update_stack("c", template(SERVER), parameters={"transport": "POLL_TEMP_URL"})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert collect(service, "c")["collectors"] == ["request", "local"]
    assert service.keypair_holder(cfn["access_key_id"]) is None

    stack = service.update_stack("c", template(SERVER), parameters={"transport": POLL_SERVER_CFN})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    again = collect(service, "c")["cfn"]
    assert again["access_key_id"] != cfn["access_key_id"]
    assert service.keypair_holder(again["access_key_id"]) is not None

    service.delete_stack("c")
    assert service.keypair_holder(again["access_key_id"]) is None
