"""The software_configs API as users drive it: a real ``stoker serve`` on 127.0.0.1 over
a SQLite file, python-heatclient, the ``openstack software config`` commands, and raw
HTTP for the exact status codes and bodies of Heat's api-ref."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from heatclient import client as heat_client
from heatclient import exc as heat_exc

from tests.support.server import Server

OPENSTACK = str(Path(sys.executable).with_name("openstack"))
UNKNOWN = "ddee7aca-aa32-4335-8265-d436b20db4f1"

# The api-ref's sample request (config-create-request.json).
SAMPLE = {
    "inputs": [
        {"default": None, "type": "String", "name": "foo", "description": None},
        {"default": None, "type": "String", "name": "bar", "description": None},
    ],
    "group": "script",
    "name": "a-config-we5zpvyu7b5o",
    "outputs": [{"type": "String", "name": "result", "error_output": False, "description": None}],
    "config": "#!/bin/sh -x\necho \"Writing to /tmp/$bar\"\necho $foo > /tmp/$bar\n",
    "options": None,
}


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("software_configs")
    running = Server(f"sqlite:///{directory / 'api.sqlite'}", directory / "server.log").start()
    yield running
    log = running.stop()
    assert "Traceback" not in log, log


@pytest.fixture
def heat(server):
    return heat_client.Client("1", endpoint=server.endpoint, token="any-token")


def test_software_config_create_answers_heat_shape(server):
    status, body = server.request("POST", "/software_configs", SAMPLE)
    assert status == 200, body
    created = body["software_config"]
    assert sorted(created) == ["config", "creation_time", "group", "id", "inputs", "name", "options", "outputs"]
    assert created["name"] == SAMPLE["name"] and created["group"] == "script" and created["config"] == SAMPLE["config"]
    # Nulls given are read as Heat reads them: the empty value of the key's type.
    assert created["inputs"] == [
        {"name": "foo", "description": "", "type": "String", "default": ""},
        {"name": "bar", "description": "", "type": "String", "default": ""},
    ]
    assert created["outputs"] == [{"name": "result", "description": "", "type": "String", "error_output": False}]
    assert created["options"] == {}
    assert time.strptime(created["creation_time"], "%Y-%m-%dT%H:%M:%SZ")
    status, shown = server.request("GET", f"/software_configs/{created['id']}")
    assert (status, shown) == (200, {"software_config": created})


def test_software_config_list_pages_newest_first(server):
    made = []
    for index in range(3):
        status, body = server.request("POST", "/software_configs", {"name": f"page-{index}", "group": "script", "config": "x"})
        assert status == 200, body
        made.append(body["software_config"])
        time.sleep(0.01)
    status, listed = server.request("GET", "/software_configs")
    assert status == 200
    summaries = listed["software_configs"]
    assert all(sorted(summary) == ["creation_time", "group", "id", "name"] for summary in summaries)
    ids = [summary["id"] for summary in summaries]
    newest_first = [config["id"] for config in reversed(made)]
    assert ids[:3] == newest_first
    status, page = server.request("GET", f"/software_configs?limit=1&marker={newest_first[0]}")
    assert (status, [summary["id"] for summary in page["software_configs"]]) == (200, [newest_first[1]])
    status, page = server.request("GET", "/software_configs?limit=0")
    assert (status, page) == (200, {"software_configs": []})
    status, page = server.request("GET", f"/software_configs?marker={UNKNOWN}")
    assert [summary["id"] for summary in page["software_configs"]] == ids


def test_software_config_delete_then_404(server):
    status, body = server.request("POST", "/software_configs", {"name": "doomed", "config": "x"})
    config_id = body["software_config"]["id"]
    assert server.request("DELETE", f"/software_configs/{config_id}") == (204, None)
    for method in ("GET", "DELETE"):
        status, fault = server.request(method, f"/software_configs/{config_id}")
        assert status == 404
        assert fault["code"] == 404 and fault["error"]["type"] == "NotFound"
        assert fault["error"]["message"] == f"Software config with id {config_id} not found"


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ([1, 2], "must be a JSON object"),
        ({"name": "x", "inputs": "foo"}, "Software Config I/O Schema must be in a list"),
        ({"name": "x", "inputs": ["foo"]}, "Software Config I/O Schema must be a dict"),
        ({"name": "x", "inputs": [{"name": "a", "bogus": 1}]}, "inputs[0]: Unknown Property bogus"),
        ({"name": "x", "inputs": [{"type": "String"}]}, "inputs[0]: Property name not assigned"),
        ({"name": "x", "inputs": [{"name": "a", "type": "Float"}]}, '"Float" is not an allowed value'),
        ({"name": "x", "inputs": [{"name": "a", "type": "Number", "default": "ten"}]}, "Value 'ten' is not a number"),
        ({"name": "x", "outputs": [{"name": "a", "error_output": "sometimes"}]}, "outputs[0].error_output"),
        ({"name": "x", "options": ["a"]}, '"options" must be a map'),
        ({"name": 7}, '"name" must be a string'),
        ({"name": "x", "group": "g" * 256}, '"group" is longer than 255 characters'),
        ({"name": "x", "config": "a\x00b"}, "NUL character"),
        ({"name": "x", "options": {"k\x00": 1}}, "NUL character"),
    ],
)
def test_software_config_create_refuses_bad_input_with_400(server, body, words):
    before = server.request("GET", "/software_configs")[1]["software_configs"]
    status, fault = server.request("POST", "/software_configs", body)
    assert status == 400, fault
    assert fault["code"] == 400 and words in fault["error"]["message"]
    assert server.request("GET", "/software_configs")[1]["software_configs"] == before


@pytest.mark.parametrize("query", ["limit=-1", "limit=two"])
def test_software_config_list_refuses_bad_limit(server, query):
    status, fault = server.request("GET", f"/software_configs?{query}")
    assert status == 400 and "limit" in fault["error"]["message"]


def test_software_config_list_refuses_a_global_tenant_that_is_not_a_boolean(server):
    # Found by the schemathesis run (tests/acceptance/test_openapi.py): it was ignored.
    status, fault = server.request("GET", "/software_configs?global_tenant=null")
    assert status == 400 and "global_tenant" in fault["error"]["message"]
    assert server.request("GET", "/software_configs?global_tenant=false")[0] == 200
    # Heat's default policy denies every caller the list of every project's.
    status, fault = server.request("GET", "/software_configs?global_tenant=true")
    assert status == 403 and "software_configs:global_index" in fault["error"]["message"]


def test_software_config_list_of_every_project_once_the_policy_allows_it(tmp_path):
    policy = tmp_path / "policy.yaml"
    policy.write_text('"software_configs:global_index": ""\n')
    running = Server(f"sqlite:///{tmp_path / 'api.sqlite'}", tmp_path / "server.log", STOKER_POLICY_FILE=str(policy)).start()
    try:
        created = running.request("POST", "/software_configs", {"name": "of-demo", "config": "x"})[1]["software_config"]
        other = running.endpoint.replace("/v1/demo", "/v1/other")
        assert running.request("GET", "/software_configs")[1]["software_configs"][0]["id"] == created["id"]
        running.endpoint = other
        assert running.request("GET", "/software_configs")[1]["software_configs"] == []
        status, body = running.request("GET", "/software_configs?global_tenant=true")
        assert status == 200 and [config["id"] for config in body["software_configs"]] == [created["id"]]
    finally:
        assert "Traceback" not in running.stop()


def test_software_configs_with_heatclient(heat):
    created = heat.software_configs.create(name="hc", group="puppet", config="class {}", inputs=[{"name": "mode"}], outputs=[{"name": "endpoint"}], options={})
    assert created.name == "hc"
    shown = heat.software_configs.get(config_id=created.id)
    assert shown.to_dict() == created.to_dict()
    assert shown.inputs == [{"name": "mode", "type": "String"}]
    assert shown.outputs == [{"name": "endpoint", "type": "String", "error_output": False}]
    assert created.id in [config.id for config in heat.software_configs.list()]
    assert [config.id for config in heat.software_configs.list(limit=1)] == [created.id]
    heat.software_configs.delete(config_id=created.id)
    with pytest.raises(heat_exc.HTTPNotFound):
        heat.software_configs.get(config_id=created.id)


def test_software_config_made_by_a_stack_is_served(heat):
    template = {
        "heat_template_version": "2021-04-16",
        "resources": {"boot": {"type": "OS::Heat::CloudConfig", "properties": {"cloud_config": {"runcmd": ["ls"]}}}},
    }
    heat.stacks.create(stack_name="cloudy", template=template)
    deadline = time.monotonic() + 30
    while (stack := heat.stacks.get("cloudy")).stack_status.endswith("IN_PROGRESS"):
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert stack.stack_status == "CREATE_COMPLETE", stack.stack_status_reason
    config_id = heat.resources.get("cloudy", "boot").physical_resource_id
    config = heat.software_configs.get(config_id=config_id)
    assert config.config == "#cloud-config\nruncmd:\n- ls\n"
    assert config.group == "Heat::Ungrouped" and config.name.startswith("cloudy-boot-")
    heat.stacks.delete("cloudy")
    deadline = time.monotonic() + 30
    while True:
        try:
            heat.software_configs.get(config_id=config_id)
        except heat_exc.HTTPNotFound:
            break
        assert time.monotonic() < deadline, "the stack's delete left its config"
        time.sleep(0.1)


def test_openstack_software_config_commands(server, tmp_path):
    base = [OPENSTACK, "--os-auth-type", "none", "--os-endpoint", server.endpoint]

    def run(*arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run([*base, *arguments], capture_output=True, text=True, timeout=60)

    script = tmp_path / "script.sh"
    script.write_text("#!/bin/sh\necho $foo\n")
    definition = tmp_path / "definition.yaml"
    definition.write_text(yaml.safe_dump({"inputs": [{"name": "foo", "default": "bar"}], "outputs": [{"name": "result"}], "options": {"k": "v"}}))
    created = run("software", "config", "create", "osc-config", "--config-file", str(script), "--definition-file", str(definition), "--group", "script", "-f", "json")
    assert created.returncode == 0, created.stderr
    config = json.loads(created.stdout)
    assert config["name"] == "osc-config" and config["group"] == "script"
    assert config["config"] == "#!/bin/sh\necho $foo\n"
    assert config["inputs"] == [{"name": "foo", "type": "String", "default": "bar"}]
    assert config["options"] == {"k": "v"}

    listed = run("software", "config", "list", "-f", "json")
    assert listed.returncode == 0, listed.stderr
    row = next(row for row in json.loads(listed.stdout) if row["id"] == config["id"])
    assert row == {"id": config["id"], "name": "osc-config", "group": "script", "creation_time": config["creation_time"]}

    shown = run("software", "config", "show", config["id"], "-f", "json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["outputs"] == [{"name": "result", "type": "String", "error_output": False}]
    only = run("software", "config", "show", config["id"], "--config-only")
    assert only.returncode == 0 and only.stdout == "#!/bin/sh\necho $foo\n\n"

    deleted = run("software", "config", "delete", config["id"])
    assert deleted.returncode == 0, deleted.stderr
    again = run("software", "config", "delete", config["id"])
    assert again.returncode != 0
    assert f"Software config with ID {config['id']} not found" in again.stdout + again.stderr
    missing = run("software", "config", "show", config["id"])
    assert missing.returncode != 0 and f"Configuration not found: {config['id']}" in missing.stderr


def test_software_configs_api_on_each_database(database_url, tmp_path):
    """The same requests against a server over SQLite and over PostgreSQL."""
    running = Server(database_url, tmp_path / "server.log").start()
    try:
        status, body = running.request("POST", "/software_configs", {"name": "db", "group": "json-file", "config": {"deep": [1, {"ü": None}]}, "inputs": [{"name": "a", "type": "Json", "default": [1]}]})
        assert status == 200, body
        created = body["software_config"]
        assert created["inputs"] == [{"name": "a", "type": "Json", "default": "[1]"}]
        assert running.request("GET", f"/software_configs/{created['id']}") == (200, {"software_config": created})
        status, fault = running.request("POST", "/software_configs", {"name": "nul", "config": "a\x00b"})
        assert status == 400 and "NUL character" in fault["error"]["message"]
        status, listed = running.request("GET", "/software_configs")
        assert [summary["id"] for summary in listed["software_configs"]] == [created["id"]]
        assert running.request("DELETE", f"/software_configs/{created['id']}") == (204, None)
        assert running.request("GET", f"/software_configs/{created['id']}")[0] == 404
    finally:
        log = running.stop()
    assert "Traceback" not in log, log
