"""A hidden parameter given in an environment file (``stoker stack create -e env.yaml``
against a real ``stoker serve``, which sends it as heatclient does: ``environment_files``
and ``files``) and fed to a software config and a deployment (issue 26): every route and
command that reads the stack, its files, its configs, its deployments or its server's
metadata shows ``******``; the database holds the value in no column a copy would
reveal; and the server's agent, at its own metadata URL, still gets the value it needs.

Runs on SQLite and on PostgreSQL (``database_url``).
"""

from __future__ import annotations

import json
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
import yaml
from cryptography.fernet import Fernet

from tests.acceptance.conftest import client_environment
from tests.support.server import STOKER, TENANT, Server

SECRET = "Zebra-S3cret-77"  # the hidden parameter's value, given in the environment file
MASK = "******"

TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  db_password: {type: string, hidden: true}
  greeting: {type: string, default: hello}
resources:
  server:
    type: OS::Heat::DeployedServer
    properties:
      software_config_transport: POLL_TEMP_URL
  config:
    type: OS::Heat::SoftwareConfig
    properties:
      group: script
      inputs: [{name: db_password}, {name: greeting}]
      config:
        str_replace:
          template: |
            #!/bin/sh
            mysqladmin password PASSWORD
          params: {PASSWORD: {get_param: db_password}}
  deployment:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: config}
      server: {get_resource: server}
      signal_transport: NO_SIGNAL
      input_values:
        db_password: {get_param: db_password}
        greeting: {get_param: greeting}
  # A group's member is a nested stack whose template holds the resolved properties.
  group:
    type: OS::Heat::SoftwareDeploymentGroup
    properties:
      config: {get_resource: config}
      servers: {member: {get_resource: server}}
      signal_transport: NO_SIGNAL
      name: the-group
      input_values:
        db_password: {get_param: db_password}
        greeting: {get_param: greeting}
"""

ENVIRONMENT = f"""
# The database's password.
parameters:
  db_password: {SECRET}
parameter_defaults:
  greeting: hi
"""

# Columns whose rows a copy of the database reveals.
TABLES = ("raw_templates", "stacks", "resources", "software_config", "software_deployments", "events")


@pytest.fixture
def served(database_url: str, tmp_path: Path) -> Iterator[Server]:
    server = Server(database_url, tmp_path / "server.log", STOKER_AUTH_MODE="none", STOKER_ENCRYPTION_KEY=Fernet.generate_key().decode())
    # The agent reaches the server where it listens: its metadata URL says so.
    server.environment["STOKER_PUBLIC_URL"] = server.url
    server.start()
    yield server
    log = server.stop()
    assert "Traceback" not in log
    assert SECRET not in log


def stoker(server: Server | None, directory: Path, *args: str, **environment: str) -> subprocess.CompletedProcess:
    """The ``stoker`` command against ``server``, or embedded (``environment`` names its database)."""
    if server is not None:
        environment = {"STOKER_URL": f"{server.url}/v1/{TENANT}", "STOKER_DATABASE_URL": f"sqlite:///{directory}/no-such-dir/local.sqlite"}
    env = client_environment(environment)
    result = subprocess.run([STOKER, *args], capture_output=True, text=True, env=env, cwd=directory, timeout=120, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, result.stderr
    return result


def get(server: Server, path: str) -> dict:
    status, body = server.request("GET", path)
    assert status == 200, (path, body)
    return body


def tables_revealing_the_secret(database_url: str) -> set[str]:
    """The tables a row of which holds the secret in clear, read without stoker's types."""
    engine = sa.create_engine(database_url)
    try:
        with engine.connect() as connection:
            stored = {table: [dict(row._mapping) for row in connection.execute(sa.text(f"SELECT * FROM {table}"))] for table in TABLES}
    finally:
        engine.dispose()
    assert stored["raw_templates"] and stored["software_config"] and stored["software_deployments"]
    return {table for table, rows in stored.items() if SECRET in json.dumps(rows, default=str)}


def inputs(config: dict) -> dict:
    return {item["name"]: item.get("value") for item in config["inputs"]}


def test_hidden_deployment_values_are_masked_everywhere_but_the_agents_url(served: Server, database_url: str, tmp_path: Path) -> None:
    (tmp_path / "template.yaml").write_text(TEMPLATE)
    (tmp_path / "env.yaml").write_text(ENVIRONMENT)
    created = stoker(served, tmp_path, "stack", "create", "app", "-t", "template.yaml", "-e", "env.yaml", "--wait", "-f", "json")
    stack = json.loads(created.stdout)
    assert stack["stack_status"] == "CREATE_COMPLETE", created.stderr
    path = f"/stacks/app/{stack['id']}"

    # What the API answers.
    responses: dict[str, dict] = {}
    responses["files"] = get(served, path + "/files")
    responses["environment"] = get(served, path + "/environment")
    responses["server metadata"] = get(served, path + "/resources/server/metadata")
    for name in ("server", "config", "deployment", "group"):
        responses[f"resource {name}"] = get(served, path + f"/resources/{name}")
    responses["resources"] = get(served, path + "/resources?with_detail=true")
    deployment_id = responses["resource deployment"]["resource"]["physical_resource_id"]
    config_id = responses["resource config"]["resource"]["physical_resource_id"]
    server_id = responses["resource server"]["resource"]["physical_resource_id"]
    responses["deployment"] = get(served, f"/software_deployments/{deployment_id}")
    responses["deployments"] = get(served, f"/software_deployments?server_id={server_id}")
    group_stack = responses["resource group"]["resource"]["physical_resource_id"]
    group_stack_name = next(link["href"] for link in responses["resource group"]["resource"]["links"] if link["rel"] == "nested").split("/stacks/")[1]
    responses["group template"] = get(served, f"/stacks/{group_stack_name}/template")
    responses["group resources"] = get(served, f"/stacks/{group_stack_name}/resources?with_detail=true")
    responses["deployment metadata"] = get(served, f"/software_deployments/metadata/{server_id}")
    derived_id = responses["deployment"]["software_deployment"]["config_id"]
    responses["derived config"] = get(served, f"/software_configs/{derived_id}")
    responses["config"] = get(served, f"/software_configs/{config_id}")
    responses["events"] = get(served, path + "/events")
    assert {name for name, body in responses.items() if SECRET in json.dumps(body)} == set()

    # ... masked where the value was, by name in the environment file.
    environment_file = yaml.safe_load(responses["files"]["env.yaml"])
    assert environment_file == {"parameters": {"db_password": MASK}, "parameter_defaults": {"greeting": "hi"}}
    assert responses["environment"]["parameters"] == {"db_password": MASK}
    assert responses["deployment"]["software_deployment"]["input_values"] == {"db_password": MASK, "greeting": "hi"}
    assert [item["input_values"]["db_password"] for item in responses["deployments"]["software_deployments"]] == [MASK, MASK]
    assert group_stack in group_stack_name
    derived = responses["derived config"]["software_config"]
    assert inputs(derived)["db_password"] == MASK and inputs(derived)["greeting"] == "hi"
    assert derived["config"] == f"#!/bin/sh\nmysqladmin password {MASK}\n"
    assert responses["config"]["software_config"]["config"] == derived["config"]
    shown_deployments = responses["server metadata"]["metadata"]["deployments"]
    assert [inputs(config)["db_password"] for config in shown_deployments] == [MASK, MASK]
    assert [inputs(config)["db_password"] for config in responses["deployment metadata"]["metadata"]] == [MASK, MASK]

    # What the CLI prints (through the same server).
    printed = {
        "stack file list": stoker(served, tmp_path, "stack", "file", "list", "app", "-f", "json"),
        "stack environment show": stoker(served, tmp_path, "stack", "environment", "show", "app", "-f", "json"),
        "stack resource metadata": stoker(served, tmp_path, "stack", "resource", "metadata", "app", "server", "-f", "json"),
        "stack resource show": stoker(served, tmp_path, "stack", "resource", "show", "app", "deployment", "-f", "json"),
        "stack show": stoker(served, tmp_path, "stack", "show", "app", "-f", "json"),
    }
    assert {name for name, result in printed.items() if SECRET in result.stdout + result.stderr} == set()
    assert yaml.safe_load(json.loads(printed["stack file list"].stdout)["env.yaml"])["parameters"] == {"db_password": MASK}
    metadata = json.loads(printed["stack resource metadata"].stdout)
    assert [inputs(config)["db_password"] for config in metadata["deployments"]] == [MASK, MASK]

    # A copy of the database reveals nothing: every column of every row, as stored.
    assert tables_revealing_the_secret(database_url) == set()

    # The agent, at the URL it polls, gets the value to run the config with.
    url = responses["server metadata"]["metadata"]["os-collect-config"]["request"]["metadata_url"]
    with urllib.request.urlopen(url, timeout=30) as answer:
        agent = json.loads(answer.read())
    assert [inputs(deployed)["db_password"] for deployed in agent["deployments"]] == [SECRET, SECRET]
    assert [deployed["config"] for deployed in agent["deployments"]] == [f"#!/bin/sh\nmysqladmin password {SECRET}\n"] * 2


def test_hidden_deployment_values_are_masked_by_the_embedded_cli(database_url: str, tmp_path: Path) -> None:
    (tmp_path / "template.yaml").write_text(TEMPLATE)
    (tmp_path / "env.yaml").write_text(ENVIRONMENT)
    embedded = {"STOKER_DATABASE_URL": database_url, "STOKER_ENCRYPTION_KEY": Fernet.generate_key().decode()}
    created = stoker(None, tmp_path, "stack", "create", "app", "-t", "template.yaml", "-e", "env.yaml", "-f", "json", **embedded)
    assert json.loads(created.stdout)["stack_status"] == "CREATE_COMPLETE", created.stderr
    printed = {
        "stack environment show": stoker(None, tmp_path, "stack", "environment", "show", "app", "-f", "json", **embedded),
        "stack resource metadata": stoker(None, tmp_path, "stack", "resource", "metadata", "app", "server", "-f", "json", **embedded),
        "stack file list": stoker(None, tmp_path, "stack", "file", "list", "app", "-f", "json", **embedded),
        "stack resource show": stoker(None, tmp_path, "stack", "resource", "show", "app", "config", "-f", "json", **embedded),
        "stack show": stoker(None, tmp_path, "stack", "show", "app", "-f", "json", **embedded),
    }
    assert {name for name, result in printed.items() if SECRET in result.stdout + result.stderr} == set()
    assert json.loads(printed["stack environment show"].stdout)["parameters"] == {"db_password": MASK}
    deployed = json.loads(printed["stack resource metadata"].stdout)["deployments"]
    assert [inputs(config)["db_password"] for config in deployed] == [MASK, MASK]
    assert [config["config"] for config in deployed] == [f"#!/bin/sh\nmysqladmin password {MASK}\n"] * 2
    assert tables_revealing_the_secret(database_url) == set()


def test_hidden_deployment_values_are_masked_for_heatclient(served: Server, database_url: str) -> None:
    from heatclient import client as heat_client

    heat = heat_client.Client("1", endpoint=served.endpoint, token="any-token")
    # What heatclient sends for ``openstack stack create -e env.yaml``.
    created = heat.stacks.create(stack_name="app", template=TEMPLATE, files={"env.yaml": ENVIRONMENT}, environment_files=["env.yaml"])
    stack_id = created["stack"]["id"]
    served.wait_for(stack_id)
    assert heat.stacks.get(stack_id).stack_status == "CREATE_COMPLETE"
    deployment = heat.software_deployments.get(heat.resources.get(stack_id, "deployment").physical_resource_id)
    shown = {
        "files": heat.stacks.files(stack_id),
        "environment": heat.stacks.environment(stack_id),
        "metadata": heat.resources.metadata(stack_id, "server"),
        "deployment": deployment.to_dict(),
        "derived config": heat.software_configs.get(deployment.config_id).to_dict(),
        "metadata of the server": heat.software_deployments.metadata(deployment.server_id),
    }
    assert {name for name, body in shown.items() if SECRET in json.dumps(body)} == set()
    assert yaml.safe_load(shown["files"]["env.yaml"])["parameters"] == {"db_password": MASK}
    assert deployment.input_values["db_password"] == MASK
    assert inputs(shown["derived config"])["db_password"] == MASK
    assert tables_revealing_the_secret(database_url) == set()
