"""The software_deployments API as users drive it: a real ``stoker serve`` on 127.0.0.1
over a SQLite file, python-heatclient, the ``openstack software deployment`` commands,
and raw HTTP for the exact status codes and bodies of Heat's api-ref."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from heatclient import client as heat_client
from heatclient import exc as heat_exc

from tests.support.server import TENANT, Server

OPENSTACK = str(Path(sys.executable).with_name("openstack"))
UNKNOWN = "ddee7aca-aa32-4335-8265-d436b20db4f1"
KEYS = ["action", "config_id", "creation_time", "id", "input_values", "output_values", "server_id", "status", "status_reason"]


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("software_deployments")
    running = Server(f"sqlite:///{directory / 'api.sqlite'}", directory / "server.log").start()
    yield running
    log = running.stop()
    assert "Traceback" not in log, log


@pytest.fixture
def heat(server):
    return heat_client.Client("1", endpoint=server.endpoint, token="any-token")


def _config(server: Server, name: str = "a-config", outputs: list | None = None) -> dict:
    body = {"name": name, "group": "script", "config": "#!/bin/sh\necho $foo\n", "inputs": [{"name": "foo"}], "outputs": outputs or [{"name": "result"}]}
    status, created = server.request("POST", "/software_configs", body)
    assert status == 200, created
    return created["software_config"]


def _server_id() -> str:
    return str(uuid.uuid4())


def test_software_deployment_create_answers_heat_shape(server):
    config = _config(server)
    server_id = _server_id()
    # The api-ref's sample request (deployment-create-request.json), with this config
    # and the caller's own project as the stack users' (only a cloud admin names
    # another project's, issue 26).
    sample = {
        "status": "IN_PROGRESS",
        "server_id": server_id,
        "config_id": config["id"],
        "stack_user_project_id": TENANT,
        "action": "CREATE",
        "status_reason": "Deploy data available",
    }
    status, body = server.request("POST", "/software_deployments", sample)
    assert status == 200, body
    created = body["software_deployment"]
    assert sorted(created) == KEYS  # no updated_time before an update
    assert {key: created[key] for key in ("status", "server_id", "config_id", "action", "status_reason")} == {
        key: sample[key] for key in ("status", "server_id", "config_id", "action", "status_reason")
    }
    assert (created["input_values"], created["output_values"]) == (None, None)
    assert time.strptime(created["creation_time"], "%Y-%m-%dT%H:%M:%SZ")
    assert server.request("GET", f"/software_deployments/{created['id']}") == (200, {"software_deployment": created})


def test_software_deployment_minimal_create_takes_heats_defaults(server):
    config = _config(server)
    status, body = server.request("POST", "/software_deployments", {"config_id": config["id"], "server_id": _server_id(), "unknown_key": 1})
    assert status == 200, body
    created = body["software_deployment"]
    assert (created["action"], created["status"], created["status_reason"]) == ("INIT", "COMPLETE", "")


def test_software_deployment_create_with_an_id_keeps_it_once(server):
    config = _config(server)
    wanted = str(uuid.uuid4())
    status, body = server.request("POST", "/software_deployments", {"id": wanted, "config_id": config["id"], "server_id": _server_id()})
    assert (status, body["software_deployment"]["id"]) == (200, wanted)
    status, fault = server.request("POST", "/software_deployments", {"id": wanted, "config_id": config["id"], "server_id": _server_id()})
    assert status == 400 and "exists already" in fault["error"]["message"]


def test_software_deployment_list_is_oldest_first_and_filters_by_server(server):
    config = _config(server)
    mine, other = _server_id(), _server_id()
    made = []
    for server_id in (mine, other, mine):
        status, body = server.request("POST", "/software_deployments", {"config_id": config["id"], "server_id": server_id})
        made.append(body["software_deployment"])
        time.sleep(0.01)
    status, listed = server.request("GET", f"/software_deployments?server_id={mine}")
    assert (status, listed) == (200, {"software_deployments": [made[0], made[2]]})
    status, everything = server.request("GET", "/software_deployments")
    ids = [deployment["id"] for deployment in everything["software_deployments"]]
    assert [deployment["id"] for deployment in made] == [i for i in ids if i in {d["id"] for d in made}]
    assert server.request("GET", f"/software_deployments?server_id={UNKNOWN}") == (200, {"software_deployments": []})
    # An empty server_id filters nothing, as in Heat.
    assert server.request("GET", "/software_deployments?server_id=")[1]["software_deployments"] == everything["software_deployments"]


def test_software_deployment_update_as_an_agent_reports(server):
    config = _config(server)
    other = _config(server, "replacement")
    status, body = server.request("POST", "/software_deployments", {"config_id": config["id"], "server_id": _server_id(), "status": "IN_PROGRESS", "input_values": {"foo": "fooooo"}})
    created = body["software_deployment"]
    # The api-ref's sample update (deployment-update-request.json).
    sample = {
        "status": "COMPLETE",
        "output_values": {"deploy_stdout": "Writing to /tmp/baaaaa\n", "deploy_stderr": "+ echo\n", "deploy_status_code": 0, "result": "The file contains fooooo"},
        "status_reason": "Outputs received",
    }
    status, body = server.request("PUT", f"/software_deployments/{created['id']}", sample)
    assert status == 200, body
    updated = body["software_deployment"]
    assert (updated["status"], updated["status_reason"], updated["output_values"]) == ("COMPLETE", "Outputs received", sample["output_values"])
    assert updated["input_values"] == {"foo": "fooooo"} and updated["creation_time"] == created["creation_time"]
    assert time.strptime(updated["updated_time"], "%Y-%m-%dT%H:%M:%SZ")
    # Empty values change nothing (Heat's rule); config_id and updated_at do change.
    status, body = server.request("PUT", f"/software_deployments/{created['id']}", {"input_values": {}, "status_reason": "", "config_id": other["id"], "updated_at": "2030-01-02T03:04:05Z"})
    assert status == 200, body
    again = body["software_deployment"]
    assert (again["input_values"], again["status_reason"], again["config_id"], again["updated_time"]) == ({"foo": "fooooo"}, "Outputs received", other["id"], "2030-01-02T03:04:05Z")
    assert server.request("GET", f"/software_deployments/{created['id']}") == (200, {"software_deployment": again})


def test_software_deployment_delete_then_404(server):
    config = _config(server)
    status, body = server.request("POST", "/software_deployments", {"config_id": config["id"], "server_id": _server_id()})
    deployment_id = body["software_deployment"]["id"]
    assert server.request("DELETE", f"/software_deployments/{deployment_id}") == (204, None)
    for method, body in (("GET", None), ("DELETE", None), ("PUT", {"status": "COMPLETE"})):
        status, fault = server.request(method, f"/software_deployments/{deployment_id}", body)
        assert status == 404, fault
        assert fault["code"] == 404 and fault["error"]["type"] == "NotFound"
        assert fault["error"]["message"] == f"Deployment with id {deployment_id} not found"


def test_software_deployment_metadata_lists_the_servers_configs_by_name(server):
    zed, alpha, elsewhere = _config(server, "zed"), _config(server, "alpha"), _config(server, "elsewhere")
    doomed = _config(server, "doomed")
    server_id = _server_id()
    for config in (zed, alpha, doomed):
        assert server.request("POST", "/software_deployments", {"config_id": config["id"], "server_id": server_id})[0] == 200
    assert server.request("POST", "/software_deployments", {"config_id": elsewhere["id"], "server_id": _server_id()})[0] == 200
    assert server.request("DELETE", f"/software_configs/{doomed['id']}") == (204, None)
    status, body = server.request("GET", f"/software_deployments/metadata/{server_id}")
    assert (status, body) == (200, {"metadata": [alpha, zed]})
    assert server.request("GET", f"/software_deployments/metadata/{UNKNOWN}") == (200, {"metadata": []})


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ([1, 2], "must be a JSON object"),
        ({"server_id": "s"}, '"config_id" is required'),
        ({"config_id": "CONFIG"}, '"server_id" is required'),
        ({"config_id": UNKNOWN, "server_id": "s"}, f"Config with id {UNKNOWN} not found"),
        ({"config_id": "CONFIG", "server_id": 7}, '"server_id" must be a string'),
        ({"config_id": "CONFIG", "server_id": "s" * 256}, '"server_id" should be no more than 255 characters'),
        ({"config_id": "CONFIG", "server_id": "s", "input_values": ["a"]}, '"input_values" must be a map'),
        ({"config_id": "CONFIG", "server_id": "s", "status_reason": {"a": 1}}, '"status_reason" must be a string'),
        ({"config_id": "CONFIG", "server_id": "s", "stack_user_project_id": "p" * 65}, '"stack_user_project_id" should be no more than 64 characters'),
        ({"config_id": "CONFIG", "server_id": "s", "id": "i" * 37}, '"id" should be no more than 36 characters'),
        ({"config_id": "CONFIG", "server_id": "a\x00b"}, "The request body has a NUL character (\\u0000) at server_id"),
        ({"config_id": "CONFIG", "server_id": "s", "input_values": {"k\x00": 1}}, "The request body has a NUL character (\\u0000) in a key at input_values"),
    ],
)
def test_software_deployment_create_refuses_bad_input_with_400(server, body, words):
    config = _config(server)
    if isinstance(body, dict) and body.get("config_id") == "CONFIG":
        body = {**body, "config_id": config["id"]}
    before = server.request("GET", "/software_deployments")[1]["software_deployments"]
    status, fault = server.request("POST", "/software_deployments", body)
    assert status == 400, fault
    assert fault["code"] == 400 and words in fault["error"]["message"]
    assert server.request("GET", "/software_deployments")[1]["software_deployments"] == before


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("COMPLETE", "must be a JSON object"),
        ({"config_id": UNKNOWN}, f"Config with id {UNKNOWN} not found"),
        ({"output_values": "x"}, '"output_values" must be a map'),
        ({"status": 3}, '"status" must be a string'),
        ({"updated_at": "yesterday"}, '"updated_at" must be an ISO 8601 time'),
        ({"status_reason": "a\x00"}, "The request body has a NUL character (\\u0000) at status_reason"),
    ],
)
def test_software_deployment_update_refuses_bad_input_with_400(server, body, words):
    config = _config(server)
    created = server.request("POST", "/software_deployments", {"config_id": config["id"], "server_id": _server_id()})[1]["software_deployment"]
    status, fault = server.request("PUT", f"/software_deployments/{created['id']}", body)
    assert status == 400, fault
    assert words in fault["error"]["message"]
    assert server.request("GET", f"/software_deployments/{created['id']}") == (200, {"software_deployment": created})


def test_software_deployment_nul_in_ids_is_answered_not_a_500(server):
    # Refused before anything is looked up, naming the path segment (issue 26).
    assert server.request("GET", "/software_deployments/a%00b")[0] == 400
    assert server.request("GET", "/software_deployments?server_id=a%00b")[0] == 400
    assert server.request("GET", "/software_deployments/metadata/a%00b")[0] == 400


def test_software_deployments_with_heatclient(heat, server):
    config = heat.software_configs.create(name="hc", group="script", config="#!/bin/sh", inputs=[], outputs=[{"name": "result"}], options={})
    server_id = _server_id()
    created = heat.software_deployments.create(config_id=config.id, server_id=server_id, action="CREATE", status="IN_PROGRESS", status_reason="Deploy data available")
    assert (created.server_id, created.status, created.config_id) == (server_id, "IN_PROGRESS", config.id)
    shown = heat.software_deployments.get(deployment_id=created.id)
    assert shown.to_dict() == created.to_dict()
    assert [d.id for d in heat.software_deployments.list(server_id=server_id)] == [created.id]
    assert heat.software_deployments.metadata(server_id=server_id) == [heat.software_configs.get(config_id=config.id).to_dict()]
    updated = heat.software_deployments.update(deployment_id=created.id, status="COMPLETE", output_values={"result": "ok"})
    assert (updated.status, updated.output_values) == ("COMPLETE", {"result": "ok"})
    heat.software_deployments.delete(deployment_id=created.id)
    with pytest.raises(heat_exc.HTTPNotFound):
        heat.software_deployments.get(deployment_id=created.id)
    with pytest.raises(heat_exc.HTTPBadRequest):
        heat.software_deployments.create(config_id=UNKNOWN, server_id=server_id)


def test_openstack_software_deployment_commands(server):
    base = [OPENSTACK, "--os-auth-type", "none", "--os-endpoint", server.endpoint]

    def run(*arguments: str) -> subprocess.CompletedProcess:
        return subprocess.run([*base, *arguments], capture_output=True, text=True, timeout=60)

    source = _config(server, "osc-source")
    server_id = _server_id()
    created = run(
        "software", "deployment", "create", "osc-deployment", "--config", source["id"], "--server", server_id,
        "--input-value", "foo=bar", "--signal-transport", "NO_SIGNAL", "--action", "CREATE", "-f", "json",
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    deployment = json.loads(created.stdout)
    assert (deployment["server_id"], deployment["action"], deployment["status"]) == (server_id, "CREATE", "IN_PROGRESS")
    # The command made a derived config holding the input's value.
    derived = server.request("GET", f"/software_configs/{deployment['config_id']}")[1]["software_config"]
    assert {"name": "foo", "type": "String", "value": "bar"} in derived["inputs"]

    listed = run("software", "deployment", "list", "--server", server_id, "-f", "json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == [{"id": deployment["id"], "config_id": deployment["config_id"], "server_id": server_id, "action": "CREATE", "status": "IN_PROGRESS"}]

    shown = run("software", "deployment", "show", deployment["id"], "--long", "-f", "json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["status"] == "IN_PROGRESS"

    metadata = run("software", "deployment", "metadata", "show", server_id)
    assert metadata.returncode == 0, metadata.stderr
    assert [config["id"] for config in json.loads(metadata.stdout)] == [deployment["config_id"]]

    assert server.request("PUT", f"/software_deployments/{deployment['id']}", {"status": "COMPLETE", "output_values": {"result": "hello"}})[0] == 200
    output = run("software", "deployment", "output", "show", deployment["id"], "result")
    assert output.returncode == 0, output.stderr
    assert "hello" in output.stdout

    deleted = run("software", "deployment", "delete", deployment["id"])
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr
    # The command deletes the deployment's config too.
    assert server.request("GET", f"/software_configs/{deployment['config_id']}")[0] == 404
    missing = run("software", "deployment", "show", deployment["id"])
    assert missing.returncode != 0 and f"Software Deployment not found: {deployment['id']}" in missing.stderr
    again = run("software", "deployment", "delete", deployment["id"])
    assert again.returncode != 0 and f"Deployment with ID {deployment['id']} not found" in again.stdout


def test_software_deployments_api_on_each_database(database_url, tmp_path):
    """The same requests against a server over SQLite and over PostgreSQL."""
    running = Server(database_url, tmp_path / "server.log").start()
    try:
        config = _config(running, "db")
        server_id = _server_id()
        status, body = running.request("POST", "/software_deployments", {"config_id": config["id"], "server_id": server_id, "input_values": {"deep": [1, {"ü": None}]}, "status": "IN_PROGRESS"})
        assert status == 200, body
        created = body["software_deployment"]
        assert running.request("GET", f"/software_deployments/{created['id']}") == (200, {"software_deployment": created})
        status, body = running.request("PUT", f"/software_deployments/{created['id']}", {"status": "FAILED", "output_values": {"big": 2**70}, "updated_at": "2030-01-01T00:00:00+01:00"})
        assert status == 200, body
        assert (body["software_deployment"]["output_values"], body["software_deployment"]["updated_time"]) == ({"big": 2**70}, "2029-12-31T23:00:00Z")
        status, fault = running.request("POST", "/software_deployments", {"config_id": config["id"], "server_id": "nul\x00"})
        assert status == 400 and "NUL character" in fault["error"]["message"]
        assert running.request("GET", "/software_deployments/a%00b")[0] == 400
        assert running.request("GET", "/software_deployments?server_id=a%00b")[0] == 400
        assert running.request("GET", f"/software_deployments/metadata/{server_id}") == (200, {"metadata": [config]})
        status, listed = running.request("GET", f"/software_deployments?server_id={server_id}")
        assert [d["id"] for d in listed["software_deployments"]] == [created["id"]]
        assert running.request("DELETE", f"/software_deployments/{created['id']}") == (204, None)
        assert running.request("GET", f"/software_deployments/{created['id']}")[0] == 404
    finally:
        log = running.stop()
    assert "Traceback" not in log, log
