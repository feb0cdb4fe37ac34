"""A NUL character (U+0000) sent to a real ``stoker serve`` on 127.0.0.1, on SQLite and
on PostgreSQL (whose text cannot hold one): in every path parameter, query parameter
and body field of every route of the server's own OpenAPI document (so a new route is
covered the day it is documented), the capability URLs included. Each is a 400 with
Heat's fault body naming the field, the same on both databases; no answer shows SQL or
the database driver, and the server logs no traceback. Templates and environments sent
as text with a NUL escape are refused at their line and column.
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, urlencode
from xml.etree import ElementTree

import pytest

from tests.support.server import TENANT, Server

TEMPLATE = """
heat_template_version: 2021-04-16
resources:
  first:
    type: OS::Heat::TestResource
    properties: {value: one}
  handle:
    type: AWS::CloudFormation::WaitConditionHandle
  server:
    type: OS::Heat::DeployedServer
    properties: {software_config_transport: POLL_TEMP_URL}
outputs:
  said: {value: {get_attr: [first, output]}}
  url: {value: {get_resource: handle}}
  collect: {value: {get_attr: [server, os_collect_config]}}
"""
NUL = "\x00"
# What a database error's text would show: none of it may reach a client.
LEAKS = ("SQL", "SELECT", "INSERT", "psycopg", "sqlalchemy", "sqlite", "Traceback")


@pytest.fixture
def server(database_url: str, tmp_path) -> Iterator[Server]:
    running = Server(database_url, tmp_path / "server.log", STOKER_AUTH_MODE="none")
    running.environment["STOKER_PUBLIC_URL"] = running.url
    running.start()
    yield running
    log = running.stop()
    assert "Traceback" not in log, log[-4000:]


def send(server: Server, method: str, path: str, query: list[tuple[str, str]] | None = None, body: Any = None) -> tuple[int, str]:
    """Raw HTTP: ``path`` already quoted, the query and the body encoded here."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    try:
        target = path + ("?" + urlencode(query) if query else "")
        data = json.dumps(body).encode() if body is not None else None
        connection.request(method, target, body=data, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read().decode("utf-8", "replace")
    finally:
        connection.close()


def known_values(server: Server) -> dict[str, Any]:
    """Real values of every path parameter the document names, and the capability URLs'
    secrets: a NUL then reaches exactly as far as it would in real use."""
    status, body = server.request("POST", "/stacks", {"stack_name": "kept", "template": TEMPLATE})
    assert status == 201, body
    stack = server.wait_for(body["stack"]["id"])
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    path = f"/stacks/kept/{stack['id']}"
    status, snapshot = server.request("POST", path + "/snapshots", {"name": "taken"})
    assert status == 200, snapshot
    assert server.wait_for(stack["id"])["stack_status"] == "SNAPSHOT_COMPLETE"
    status, config = server.request("POST", "/software_configs", {"name": "c", "group": "script", "config": "#!/bin/sh"})
    assert status == 200, config
    status, deployment = server.request("POST", "/software_deployments", {"config_id": config["software_config"]["id"], "server_id": "server-1"})
    assert status == 200, deployment
    status, shown = server.request("GET", path)
    outputs = {output["output_key"]: output["output_value"] for output in shown["stack"]["outputs"]}
    status, events = server.request("GET", path + "/events")
    secrets = {}
    values = {
        "tenant_id": TENANT,
        "stack_name": "kept",
        "stack_id": stack["id"],
        "resource_name": "first",
        "event_id": events["events"][0]["id"],
        "output_key": "said",
        "snapshot_id": snapshot["id"],
        "type_name": "OS::Heat::TestResource",
        "template_version": "2021-04-16",
        "config_id": config["software_config"]["id"],
        "deployment_id": deployment["software_deployment"]["id"],
        "server_id": "server-1",
    }
    for route, url in (("waitcondition", outputs["url"]), ("server_metadata", outputs["collect"]["request"]["metadata_url"])):
        credential, secret = url.split(f"/v1/{route}/")[1].split("?secret=")
        values[f"{route}:credential_id"] = credential
        secrets[route] = secret
    return {"path": values, "secrets": secrets}


def stacks(server: Server) -> list[tuple[str, str]]:
    status, listed = server.request("GET", "/stacks?show_deleted=true")
    assert status == 200, listed
    return [(stack["stack_name"], stack["stack_status"]) for stack in listed["stacks"]]


def body_fields(document: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """The top-level fields a request body's schema names ($ref and allOf followed)."""
    if "$ref" in schema:
        return body_fields(document, document["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]])
    fields = list(schema.get("properties", {}))
    for part in schema.get("allOf", []) + schema.get("anyOf", []) + schema.get("oneOf", []):
        fields += [name for name in body_fields(document, part) if name not in fields]
    return fields


def cases(document: dict[str, Any], known: dict[str, Any]) -> Iterator[tuple[str, str, str, str, list[tuple[str, str]], Any]]:
    """(what, the field's name, method, path, query, body) with one NUL each."""
    for template, operations in document["paths"].items():
        route = template.split("/")[2] if template.startswith("/v1/") else ""
        for method, operation in operations.items():
            parameters = operation.get("parameters", [])
            names = [parameter["name"] for parameter in parameters if parameter["in"] == "path"]
            real = {name: known["path"].get(f"{route}:{name}", known["path"].get(name, "x")) for name in names}
            secret = [("secret", known["secrets"][route])] if route in known["secrets"] else []

            def filled(values: dict[str, str], template: str = template) -> str:
                for name, value in values.items():
                    template = template.replace("{" + name + "}", quote(value, safe=""))
                return template

            for name in names:
                yield "path", name, method.upper(), filled({**real, name: real[name] + NUL}), secret, None
            for parameter in parameters:
                if parameter["in"] == "query":
                    name = parameter["name"]
                    query = [(key, value) for key, value in secret if key != name] + [(name, f"a{NUL}b")]
                    yield "query", name, method.upper(), filled(real), query, None
            if "requestBody" in operation:
                schema = operation["requestBody"]["content"]["application/json"]["schema"]
                for field in body_fields(document, schema) or ["anything"]:
                    yield "body", field, method.upper(), filled(real), secret, {field: f"a{NUL}b"}
                # In a key, deep down.
                yield "body", "deep", method.upper(), filled(real), secret, {"deep": [{"key" + NUL: 1}]}


def test_api_nul_refused_in_every_parameter_and_body_field_of_every_route(server):
    known = known_values(server)
    before = stacks(server)
    status, text = send(server, "GET", "/openapi.json")
    assert status == 200, text
    document = json.loads(text)
    covered: set[tuple[str, str]] = set()
    for what, name, method, path, query, body in cases(document, known):
        status, text = send(server, method, path, query, body)
        assert status == 400, (what, name, method, path, text)
        if path.split("?")[0] in ("/cfn/v1/", "/v1/"):
            # The CFN API answers Heat's AWS error (XML), naming the parameter.
            error = ElementTree.fromstring(text).find("Error")
            assert error is not None and error.findtext("Code") == "InvalidParameterValue", text
            message = error.findtext("Message") or ""
            assert name in message and "NUL" in message and "remove" in message, (what, name, method, path, message)
            covered.add((method, path.split("?")[0]))
            continue
        fault = json.loads(text)
        assert fault["code"] == 400 and fault["error"]["traceback"] is None, text
        message = fault["error"]["message"]
        assert name in message and "NUL" in message and "remove" in message, (what, name, method, path, message)
        for leak in LEAKS:
            assert leak not in text, (leak, method, path, text)
        covered.add((method, path.split("?")[0]))
    # Every documented route with a parameter or a body was tried, the capability URLs too.
    assert any("/v1/waitcondition/" in path for _, path in covered)
    assert any("/v1/server_metadata/" in path for _, path in covered)
    assert ("GET", "/cfn/v1/") in covered and ("POST", "/v1/") in covered
    # Nothing was stored or changed: the kept stack is as it was, and the only one.
    assert stacks(server) == before == [("kept", "SNAPSHOT_COMPLETE")]


def test_api_nul_escape_in_template_or_environment_text_is_refused_at_its_place(server):
    template = "heat_template_version: 2021-04-16\nresources:\n  v:\n    type: OS::Heat::Value\n    properties:\n      value: \"a\\0b\"\n"
    status, body = server.request("POST", "/stacks", {"stack_name": "escaped", "template": template})
    assert status == 400, body
    assert "template:6:14" in body["error"]["message"] and "NUL" in body["error"]["message"], body
    status, body = server.request("POST", "/validate", {"template": '{"heat_template_version": "2021-04-16", "resources": {}, "description": "a\\u0000"}'})
    assert status == 400 and "description" in body["error"]["message"] and "NUL" in body["error"]["message"], body
    environment = 'parameter_defaults:\n  word: "\\x00"\n'
    plain = "heat_template_version: 2021-04-16\nparameters:\n  word: {type: string, default: x}\nresources: {}\n"
    status, body = server.request("POST", "/stacks", {"stack_name": "escaped", "template": plain, "environment_files": ["env.yaml"], "files": {"env.yaml": environment}})
    assert status == 400, body
    assert "env.yaml:2:9" in body["error"]["message"] and "parameter_defaults.word" in body["error"]["message"], body
    status, body = server.request("GET", "/stacks")
    assert status == 200 and body["stacks"] == [], body
