"""Software deployments applied by the real agents: a real ``stoker serve`` on 127.0.0.1
gives an OS::Heat::DeployedServer its metadata URL, and the real os-collect-config (PyPI)
polls it, the real os-apply-config renders heat-agents' heat-config file, and heat-agents'
own 55-heat-config, script hook and heat-config-notify run the config and signal the
OS::Heat::SoftwareDeployment back, as on a server built with heat-agents' elements.

The agents live in their own cached venv (``tests/support/agents.py``); a machine that
cannot reach the package index skips these tests, saying what could not be installed.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.agents import AgentEnvironment, AgentRun, require_agents, run_agents
from tests.support.server import Server

# Seconds a test may take: the first one also builds the agents' venv on a machine that
# never did (about a minute here, longer on a slow network).
AGENT_TEST_TIMEOUT_S = 900

pytestmark = [pytest.mark.slow, pytest.mark.timeout(AGENT_TEST_TIMEOUT_S)]

TEMPLATE = """
heat_template_version: 2016-10-14
parameters:
  transport: {type: string, default: TEMP_URL_SIGNAL}
resources:
  server:
    type: OS::Heat::DeployedServer
    properties:
      software_config_transport: POLL_TEMP_URL
  config:
    type: OS::Heat::SoftwareConfig
    properties:
      group: script
      inputs: [{name: foo}]
      outputs: [{name: result}]
      config: |
        #!/bin/sh
        echo "deploying $foo during $deploy_action"
        echo -n "$foo on $deploy_server_id" > $heat_outputs_path.result
  deployment:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: config}
      server: {get_resource: server}
      signal_transport: {get_param: transport}
      input_values: {foo: fooooo}
outputs:
  result: {value: {get_attr: [deployment, result]}}
  stdout: {value: {get_attr: [deployment, deploy_stdout]}}
  status_code: {value: {get_attr: [deployment, deploy_status_code]}}
"""

FAILING = TEMPLATE.replace(
    "> $heat_outputs_path.result\n",
    '> $heat_outputs_path.result\n        echo "giving up" >&2\n        exit 3\n',
)


@pytest.fixture(scope="module")
def agents(tmp_path_factory: pytest.TempPathFactory) -> AgentEnvironment:
    return require_agents(tmp_path_factory.mktemp("agents") / "install.log")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, agents: AgentEnvironment) -> Iterator[Server]:
    database = tmp_path_factory.mktemp("agent-deployments") / "stoker.sqlite"
    running = Server(f"sqlite:///{database}", database.with_suffix(".log"))
    # The agents reach this server where it listens: the metadata and signal URLs say so.
    running.environment["STOKER_PUBLIC_URL"] = running.url
    running.start()
    yield running
    log = running.stop()
    assert "Traceback" not in log


def create(server: Server, name: str, template: str, parameters: dict | None = None) -> str:
    status, body = server.request(
        "POST",
        "/stacks",
        {"stack_name": name, "template": template, "parameters": parameters or {}},
    )
    assert status == 201, body
    return body["stack"]["id"]


def resource(server: Server, name: str, stack_id: str, resource_name: str) -> dict:
    status, body = server.request("GET", f"/stacks/{name}/{stack_id}/resources/{resource_name}")
    assert status == 200, body
    return body["resource"]


def outputs(server: Server, name: str, stack_id: str) -> dict:
    status, body = server.request("GET", f"/stacks/{name}/{stack_id}")
    assert status == 200, body
    return {output["output_key"]: output["output_value"] for output in body["stack"]["outputs"]}


def inputs(config: dict) -> dict:
    return {item["name"]: item.get("value") for item in config["inputs"]}


def wait_for_deployment(
    server: Server, name: str, stack_id: str, action: str, timeout: float = 60
) -> dict:
    """Until the deployment waits for its signal at ``action`` and the server's metadata
    (read through the API, as an operator would) holds the derived config for it; returns
    that metadata."""
    deadline = time.monotonic() + timeout
    while True:
        status, body = server.request("GET", f"/stacks/{name}/{stack_id}/resources/deployment")
        assert status in (200, 404), body
        waiting = status == 200 and (
            body["resource"].get("resource_action"),
            body["resource"]["resource_status"],
        ) in (
            (action, "IN_PROGRESS"),
            (None, f"{action}_IN_PROGRESS"),
        )
        if waiting:
            status, metadata = server.request(
                "GET", f"/stacks/{name}/{stack_id}/resources/server/metadata"
            )
            assert status == 200, metadata
            metadata = metadata["metadata"]
            if any(
                inputs(config).get("deploy_action") == action
                for config in metadata.get("deployments", [])
            ):
                return metadata
        assert time.monotonic() < deadline, f"the deployment never waited at {action}: {body}"
        time.sleep(0.1)


def run_agent_once(
    server: Server, metadata: dict, directory: Path, agents: AgentEnvironment
) -> AgentRun:
    """The server's agent: os-collect-config polls the URL its metadata names."""
    agent_config = metadata["os-collect-config"]
    assert "request" in agent_config["collectors"], agent_config
    metadata_url = agent_config["request"]["metadata_url"]
    assert metadata_url.startswith(server.url + "/"), metadata_url
    return run_agents(agents, metadata_url, directory)


@pytest.mark.parametrize(
    ("transport", "verb"), [("TEMP_URL_SIGNAL", "PUT"), ("CFN_SIGNAL", "POST")]
)
def test_agents_deploy_a_script_to_a_deployed_server_and_signal_it(
    server, agents, tmp_path, transport, verb
):
    name = f"agent-{transport.lower().replace('_', '-')}"
    stack_id = create(server, name, TEMPLATE, {"transport": transport})
    metadata = wait_for_deployment(server, name, stack_id, "CREATE")
    server_id = resource(server, name, stack_id, "server")["physical_resource_id"]
    (config,) = metadata["deployments"]
    assert config["group"] == "script"
    assert inputs(config)["deploy_signal_verb"] == verb
    assert inputs(config)["deploy_server_id"] == server_id

    run = run_agent_once(server, metadata, tmp_path, agents)
    assert run.returncode == 0, run
    assert f"via {verb}" in run.output, run
    # What os-apply-config rendered from stoker's metadata with heat-agents' templates: the
    # deployments for 55-heat-config, and the agent's own configuration as on a real server.
    rendered = json.loads((run.root / "var/run/heat-config/heat-config").read_text())
    assert [deployed["id"] for deployed in rendered] == [config["id"]]
    metadata_url = metadata["os-collect-config"]["request"]["metadata_url"]
    assert f"metadata_url = {metadata_url}" in (run.root / "etc/os-collect-config.conf").read_text()
    # The hook's result, as heat-config-notify sent it.
    assert run.notifications()[config["id"]]["result"] == f"fooooo on {server_id}", run

    stack = server.wait_for(stack_id)
    assert stack["stack_status"] == "CREATE_COMPLETE", f"{stack['stack_status_reason']}\n{run}"
    shown = outputs(server, name, stack_id)
    assert shown["result"] == f"fooooo on {server_id}"
    assert "deploying fooooo during CREATE" in shown["stdout"]
    assert int(shown["status_code"]) == 0
    # The secrets in the metadata and signal URLs stay out of the server's log.
    for url in (metadata_url, inputs(config)["deploy_signal_id"]):
        assert url.split("?", 1)[1] not in server.log_path.read_text()


def test_a_script_that_exits_non_zero_fails_the_deployment(server, agents, tmp_path):
    stack_id = create(server, "agent-failing", FAILING)
    metadata = wait_for_deployment(server, "agent-failing", stack_id, "CREATE")

    run = run_agent_once(server, metadata, tmp_path, agents)
    assert run.returncode == 0, run
    (notification,) = run.notifications().values()
    assert notification["deploy_status_code"] == 3, run

    stack = server.wait_for(stack_id)
    assert stack["stack_status"] == "CREATE_FAILED", run
    assert "Deployment exited with non-zero status code: 3" in stack["stack_status_reason"], stack[
        "stack_status_reason"
    ]
    deployment = resource(server, "agent-failing", stack_id, "deployment")
    assert (
        "Deployment exited with non-zero status code: 3" in deployment["resource_status_reason"]
    ), deployment


def test_an_update_deploys_the_new_input_values_on_the_next_poll(server, agents, tmp_path):
    stack_id = create(server, "agent-update", TEMPLATE)
    created = wait_for_deployment(server, "agent-update", stack_id, "CREATE")
    (first_config,) = created["deployments"]
    first = run_agent_once(server, created, tmp_path, agents)
    stack = server.wait_for(stack_id)
    assert stack["stack_status"] == "CREATE_COMPLETE", f"{stack['stack_status_reason']}\n{first}"
    server_id = resource(server, "agent-update", stack_id, "server")["physical_resource_id"]

    # PATCH keeps the parameters (the transport) and takes the new template.
    status, body = server.request(
        "PATCH",
        f"/stacks/agent-update/{stack_id}",
        {"template": TEMPLATE.replace("{foo: fooooo}", "{foo: barrr}")},
    )
    assert status == 202, body
    metadata = wait_for_deployment(server, "agent-update", stack_id, "UPDATE")
    # As in Heat, the deployment now points at a new derived config, which replaces the
    # first in the server's metadata.
    (config,) = metadata["deployments"]
    assert config["id"] != first_config["id"]
    assert inputs(config)["foo"] == "barrr"

    # The same server polls again: 55-heat-config deploys the config it has not seen.
    second = run_agent_once(server, metadata, tmp_path, agents)
    assert second.returncode == 0, second
    assert set(second.notifications()) == {first_config["id"], config["id"]}, second
    stack = server.wait_for(
        stack_id,
        done=lambda status: status.startswith("UPDATE_") and not status.endswith("IN_PROGRESS"),
    )
    assert stack["stack_status"] == "UPDATE_COMPLETE", f"{stack['stack_status_reason']}\n{second}"
    shown = outputs(server, "agent-update", stack_id)
    assert shown["result"] == f"barrr on {server_id}"
    assert "deploying barrr during UPDATE" in shown["stdout"]
    assert int(shown["status_code"]) == 0

    # Polling once more deploys nothing again.
    third = run_agent_once(server, metadata, tmp_path, agents)
    assert third.returncode == 0, third
    assert "Signaling to" not in third.output, third
    assert third.notifications() == second.notifications()


def test_the_metadata_url_answers_head_without_last_modified(server, tmp_path):
    # os-collect-config's request collector sends HEAD first and skips the GET when
    # Last-Modified is not newer than the last one it saw (whole seconds): stoker sends
    # none, so a deployment made in the same second as a poll still reaches the server.
    import urllib.request

    stack_id = create(server, "agent-head", TEMPLATE)
    metadata = wait_for_deployment(server, "agent-head", stack_id, "CREATE")
    metadata_url = metadata["os-collect-config"]["request"]["metadata_url"]
    with urllib.request.urlopen(urllib.request.Request(metadata_url, method="HEAD"), timeout=10) as answer:
        assert answer.status == 200
        assert answer.headers.get("Last-Modified") is None
        assert answer.read() == b""
    with urllib.request.urlopen(metadata_url, timeout=10) as answer:
        assert answer.headers.get("Last-Modified") is None
        assert [d["id"] for d in json.loads(answer.read())["deployments"]] == [d["id"] for d in metadata["deployments"]]
