"""The OpenAPI document against the running server: a schemathesis run.

A real ``stoker serve`` (uvicorn on 127.0.0.1, SQLite in a temporary directory, auth
mode ``none``) serves ``/openapi.json``; schemathesis loads it from there and, for every
operation in it, sends requests it generates from the document, valid ones and invalid
ones, and checks each answer: never a 5xx, a status the operation documents, the content
type documented for it, and a body (and headers) that match the documented schema.

Generated names and ids mostly find nothing (404), and generated templates are never
valid (400), so the stacks, snapshots, software config and deployment and capability URLs
made first give the run real values to use: each request takes the real path parameters
(and, where a generated body is always refused, a real body) or generated ones. The
routes that delete get their own stack or snapshot and run last, so that the others
keep theirs; and every operation must answer with success at least once, or the run
would prove little.

Bounded for CI: a few examples per operation (``EXAMPLES``), no shrinking, and
``derandomize`` so that every run sends the same requests (about 25 s on two cores).
"""

from __future__ import annotations

import json
import os
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import hypothesis
import hypothesis.errors
import pytest
import schemathesis
from hypothesis import strategies as st
from keystoneclient.contrib.ec2.utils import Ec2Signer
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import FailureGroup
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support.server import TENANT, Server

pytestmark = pytest.mark.slow

# Examples per operation and generation mode (~80 operations, two modes). Raise it to
# explore: 30 takes about two minutes.
EXAMPLES = 6
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_headers_conformance, response_schema_conformance]
# Seconds a request may take before it counts as hung (an event stream that never ends).
REQUEST_TIMEOUT_S = 30

TEMPLATE = """
heat_template_version: 2021-04-16
description: A stack for the OpenAPI run.
parameters:
  greeting: {type: string, default: hello}
  secret: {type: string, default: s3cret, hidden: true}
resources:
  first:
    type: OS::Heat::TestResource
    properties: {value: {get_param: greeting}}
  second:
    type: OS::Heat::RandomString
    depends_on: [first]
    properties: {length: 8}
  handle:
    type: AWS::CloudFormation::WaitConditionHandle
  server:
    type: OS::Heat::DeployedServer
    properties: {software_config_transport: POLL_TEMP_URL}
  cfn_server:
    type: OS::Heat::DeployedServer
    properties: {software_config_transport: POLL_SERVER_CFN}
  config:
    type: OS::Heat::SoftwareConfig
    properties: {group: script, config: "#!/bin/sh", inputs: [{name: foo}], outputs: [{name: result}]}
  deployment:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: config}
      server: {get_resource: server}
      signal_transport: NO_SIGNAL
      input_values: {foo: bar}
outputs:
  said: {description: What first holds., value: {get_attr: [first, output]}}
  url: {value: {get_resource: handle}}
  collect: {value: {get_attr: [server, os_collect_config]}}
  cfn: {value: {get_attr: [cfn_server, os_collect_config]}}
"""

# A stack a create in the run makes: one resource, quick.
SMALL = """
heat_template_version: 2021-04-16
resources:
  word: {type: OS::Heat::RandomString, properties: {length: 4}}
"""
CFN_SIGNAL = {"Status": "SUCCESS", "Reason": "done", "UniqueId": "1", "Data": "ready"}

# Seed 003: two candidates for one type, chosen by the environment's requires, and a
# file that is no template (skipped): answers with every field of the capabilities bodies.
CAPABILITY_FILES = {
    "puppet.yaml": "heat_template_version: 2015-10-15\ncapabilities:\n  deployment: puppet\n  resource_type: OS::TripleO::Controller\n",
    "docker.yaml": "heat_template_version: 2015-10-15\ncapabilities:\n  deployment: docker\n  resource_type: OS::TripleO::Controller\n",
    "broken.yaml": "heat_template_version: [2015-10-15\n",
}
CAPABILITY_ENVIRONMENT = {
    "requires": {"deployment": "puppet", "region": ["north", "south"]},
    "resource_registry": {"OS::TripleO::Controller": ["puppet.yaml", "docker.yaml"]},
}
CAPABILITIES_FIND = {"files": CAPABILITY_FILES, "capabilities": {"deployment": "puppet"}}
TEMPLATE_CAPABILITIES = {"files": CAPABILITY_FILES, "templates": sorted(CAPABILITY_FILES), "environment": CAPABILITY_ENVIRONMENT}

TENANT_PATH = "/v1/{tenant_id}"
STACK = TENANT_PATH + "/stacks/{stack_name}/{stack_id}"
RESOURCE = STACK + "/resources/{resource_name}"

Parameters = dict[str, Any]


@dataclass
class Known:
    """Real values for the run: path parameters by name (``values``, the i-th of each
    list going together), and whole sets of parameters for the operations (by method
    and path) that need their own: a stack of their own to end, a body that works."""

    stack: tuple[str, str] = ("", "")
    values: dict[str, list[str]] = field(default_factory=dict)
    sets: dict[tuple[str, str], list[Parameters]] = field(default_factory=dict)


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("openapi")
    running = Server(
        f"sqlite:///{directory / 'stoker.sqlite'}", directory / "server.log", STOKER_AUTH_MODE="none", STOKER_ENABLE_STACK_ABANDON="true",
        # Test::LiveFile: a type whose live object (a local file) an import can take over.
        STOKER_PLUGIN_DIRS=str(Path(__file__).resolve().parents[1] / "support" / "plugins"),
    )
    running.environment["STOKER_PUBLIC_URL"] = running.url
    running.start()
    yield running
    log = running.stop()
    assert "Traceback" not in log, log[-4000:]


def _ok(server: Server, method: str, path: str, body: Any = None, expected: int = 200) -> Any:
    status, answer = server.request(method, path, body)
    assert status == expected, (method, path, answer)
    return answer


def _create(server: Server, name: str) -> tuple[str, str]:
    stack_id = _ok(server, "POST", "/stacks", {"stack_name": name, "template": TEMPLATE}, 201)["stack"]["id"]
    stack = server.wait_for(stack_id)
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    return name, stack_id


def _snapshot(server: Server, stack: str) -> str:
    snapshot = _ok(server, "POST", stack + "/snapshots", {"name": "taken"})
    deadline = time.monotonic() + 30
    while _ok(server, "GET", f"{stack}/snapshots/{snapshot['id']}")["snapshot"]["status"] == "IN_PROGRESS":
        assert time.monotonic() < deadline
        time.sleep(0.1)
    return snapshot["id"]


def _importable(tmp_path_factory) -> dict[str, Any]:
    """An import's body: a stack of one Test::LiveFile, taking over a file made here."""
    existing = tmp_path_factory.mktemp("importable") / "notes.txt"
    existing.write_text("hello")
    os.chmod(existing, 0o644)
    existing.with_name("notes.txt.labels").write_text("")
    template = {
        "heat_template_version": "2018-08-31",
        "resources": {"notes": {"type": "Test::LiveFile", "properties": {"path": str(existing), "content": "hello"}}},
    }
    return {"stack_name": "imported", "template": template, "resources": {"notes": str(existing)}}


@pytest.fixture(scope="module")
def known(server: Server, tmp_path_factory) -> Known:
    name, stack_id = _create(server, "kept")
    found = Known(stack=(name, stack_id))
    stack = f"/stacks/{name}/{stack_id}"
    snapshot, doomed_snapshot = _snapshot(server, stack), _snapshot(server, stack)
    config = _ok(server, "POST", "/software_configs", {"name": "c", "group": "script", "config": "#!/bin/sh"})["software_config"]
    deployment = _ok(server, "POST", "/software_deployments", {"config_id": config["id"], "server_id": "server-1"})["software_deployment"]
    outputs = {o["output_key"]: o["output_value"] for o in _ok(server, "GET", stack)["stack"]["outputs"]}
    first_event = next(e["id"] for e in _ok(server, "GET", stack + "/events")["events"] if e["resource_name"] == "first")
    found.values = {
        "tenant_id": [TENANT],
        "stack_name": [name, stack_id],  # a lookup takes either
        "stack_id": [stack_id],
        "resource_name": ["first", "handle", "server", "deployment"],
        "event_id": [first_event],
        "output_key": ["said", "collect"],
        "snapshot_id": [snapshot],
        "type_name": ["OS::Heat::RandomString", "OS::Heat::TestResource", "AWS::CloudFormation::WaitConditionHandle"],
        "template_version": ["2021-04-16", "heat_template_version.2016-10-14", "AWSTemplateFormatVersion.2010-09-09"],
        "config_id": [config["id"]],
        "deployment_id": [deployment["id"]],
        "server_id": ["server-1", deployment["server_id"]],
        # A custom constraint that lists its values without a cloud (tests/support/plugins).
        "constraint_name": ["test.colour", "nova.flavor"],
    }

    def on(stack: tuple[str, str], **path: str) -> Parameters:
        return {"path": {"tenant_id": TENANT, "stack_name": stack[0], "stack_id": stack[1], **path}}

    kept = on(found.stack)
    for key, url in (("waitcondition", outputs["url"]), ("server_metadata", outputs["collect"]["request"]["metadata_url"])):
        credential, secret = url.split(f"/v1/{key}/")[1].split("?secret=")
        signal = {"body": CFN_SIGNAL} if key == "waitcondition" else {}
        for method in ("PUT", "POST") if key == "waitcondition" else ("GET",):
            found.sets[(method, f"/v1/{key}/{{credential_id}}")] = [{"path": {"credential_id": credential}, "query": {"secret": secret}, **signal}, {"path": {"credential_id": credential}}]
    # The CFN API: requests signed with the CFN server's keypair (each for its method and path).
    keypair = outputs["cfn"]["cfn"]
    for path in ("/cfn/v1/", "/v1/"):
        for method in ("GET", "POST"):
            signed = {
                "Action": "DescribeStackResource", "StackName": name, "LogicalResourceId": "cfn_server", "ContentType": "JSON",
                "AWSAccessKeyId": keypair["access_key_id"], "SignatureVersion": "2", "SignatureMethod": "HmacSHA256",
            }
            host = server.url.split("://", 1)[1]
            signed["Signature"] = Ec2Signer(keypair["secret_access_key"]).generate({"params": dict(signed), "verb": method, "host": host, "path": path})
            found.sets[(method, path)] = [{"query": signed}, {"query": {**signed, "Signature": "forged"}}]
    found.sets.update({
        # The routes that end a stack or a snapshot get their own, so that the others keep theirs.
        ("DELETE", STACK): [on(_create(server, "doomed-delete"))],
        ("DELETE", STACK + "/abandon"): [on(_create(server, "doomed-abandon"))],
        ("DELETE", STACK + "/snapshots/{snapshot_id}"): [on(found.stack, snapshot_id=doomed_snapshot)],
        # Bodies that work, where a generated one would always be refused.
        ("POST", TENANT_PATH + "/stacks"): [{"path": {"tenant_id": TENANT}, "body": {"stack_name": "made", "template": SMALL}}],
        # ...and one of a name taken: 409 StackExists, as Heat's preview answers it.
        ("POST", TENANT_PATH + "/stacks/preview"): [{"path": {"tenant_id": TENANT}, "body": {"stack_name": stack_name, "template": TEMPLATE}} for stack_name in ("previewed", name)],
        ("POST", TENANT_PATH + "/validate"): [{"path": {"tenant_id": TENANT}, "body": {"template": TEMPLATE}}],
        ("PUT", STACK): [{**kept, "body": {"template": TEMPLATE, "parameters": {"greeting": "hi"}}}],
        ("PUT", STACK + "/preview"): [{**kept, "body": {"template": TEMPLATE, "parameters": {"greeting": "hi"}}}],
        ("POST", TENANT_PATH + "/software_deployments"): [{"path": {"tenant_id": TENANT}, "body": {"config_id": config["id"], "server_id": "server-2"}}],
        ("POST", RESOURCE + "/signal"): [{**on(found.stack, resource_name="handle"), "body": CFN_SIGNAL}],
        ("POST", TENANT_PATH + "/capabilities/find"): [{"path": {"tenant_id": TENANT}, "body": CAPABILITIES_FIND}],
        ("POST", TENANT_PATH + "/template_capabilities"): [{"path": {"tenant_id": TENANT}, "body": TEMPLATE_CAPABILITIES}],
        # A file that exists, taken over by an import (201), then its name is taken (409).
        ("POST", TENANT_PATH + "/imports"): [{"path": {"tenant_id": TENANT}, "body": _importable(tmp_path_factory)}],
        # The plan of the same kind of import: the file is read, nothing is made (200).
        ("POST", TENANT_PATH + "/imports/preview"): [{"path": {"tenant_id": TENANT}, "body": {**_importable(tmp_path_factory), "stack_name": "planned-import"}}],
        # A create's plan, saved from a preview: applied once (201), then its name is taken (409).
        ("POST", TENANT_PATH + "/plans/apply"): [
            {"path": {"tenant_id": TENANT}, "body": _ok(server, "POST", "/stacks/preview?plan=true", {"stack_name": "planned", "template": SMALL})["plan"]}
        ],
    })
    return found


def real_parameters(operation: schemathesis.APIOperation, known: Known) -> list[Parameters]:
    """Sets of real parameters for the operation: its own (``Known.sets``) or the i-th
    of each known value, and an empty set, which leaves schemathesis to generate all."""
    names = {parameter.name for parameter in operation.path_parameters}
    own = known.sets.get((operation.method.upper(), operation.path))
    if own is not None:
        return [*own, {}]
    if not names:
        return [{}]
    sets = []
    for index in range(2):
        path = {key: known.values[key][index % len(known.values[key])] for key in names}
        if "stack_id" in names:
            path["stack_name"] = known.stack[0]
        sets.append({"path": path})
    return [*sets, {}]


def _strategy(operation: schemathesis.APIOperation, mode: schemathesis.GenerationMode, fixed: Parameters):
    query = dict(fixed.get("query", {}))
    if operation.path.endswith("/events/stream"):
        # Without until=terminal a stream lasts until the client goes: no answer to check.
        query["until"] = "terminal"
    extra = {"body": fixed["body"]} if "body" in fixed else {}
    return operation.as_strategy(mode, path_parameters=fixed.get("path") or None, query=query or None, **extra)


def check_operation(server: Server, operation: schemathesis.APIOperation, mode: schemathesis.GenerationMode, sets: list[Parameters], answered: set[str]) -> None:
    """Up to ``EXAMPLES`` requests of the operation in ``mode``, each checked by
    ``CHECKS``; raises schemathesis' FailureGroup at the first that fails."""
    strategy = st.sampled_from(sets).flatmap(lambda fixed: _strategy(operation, mode, fixed))

    @hypothesis.settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        # No shrinking: a failure's report (with its curl command) is clear enough, and
        # shrinking against a live server takes time the suite does not have.
        phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
        suppress_health_check=list(hypothesis.HealthCheck),
    )
    @hypothesis.given(case=strategy)
    def run(case: schemathesis.Case) -> None:
        # No redirect followed: a lookup's answer is its own 302, as documented.
        response = case.call_and_validate(base_url=server.url, checks=CHECKS, allow_redirects=False, timeout=REQUEST_TIMEOUT_S)
        if response.status_code < 400:
            answered.add(operation.label)

    try:
        run()
    except hypothesis.errors.Unsatisfiable:
        # Nothing of the operation can be made invalid (no body, no parameter with a
        # type narrower than any text): no negative case exists.
        assert mode == schemathesis.GenerationMode.NEGATIVE, operation.label


def test_openapi_server_answers_as_its_document_says(server: Server, known: Known):
    schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json", config=schemathesis.Config())
    schema.validate()
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) > 70
    # The deletes last, so that every other route meets what they delete.
    operations.sort(key=lambda operation: operation.method.upper() == "DELETE")
    failures: list[str] = []
    # The operations that answered a request with success at least once.
    answered: set[str] = set()
    for operation in operations:
        sets = real_parameters(operation, known)
        for mode in (schemathesis.GenerationMode.POSITIVE, schemathesis.GenerationMode.NEGATIVE):
            try:
                check_operation(server, operation, mode, sets, answered)
            except (FailureGroup, AssertionError) as failure:
                failures.append(f"{operation.label} ({mode}):\n{failure}")
    assert not failures, "\n\n".join(failures)
    # Else the run met only 404s and 400s: the real values no longer reach the routes.
    assert {operation.label for operation in operations} - answered == set(), "operations that never answered with success"


def _untyped(schema: Any, components: dict[str, Any], where: str, seen: frozenset[str] = frozenset()) -> list[str]:
    """The places in ``schema`` a generated client could not type: a value of any shape
    (``{}``), an object that names neither its properties nor its values' schema."""
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[1]
        return [] if name in seen else _untyped(components[name], components, f"{where}<{name}>", seen | {name})
    if not schema:
        return [where]
    found = []
    for key in ("anyOf", "oneOf", "allOf"):
        for index, part in enumerate(schema.get(key, [])):
            found.extend(_untyped(part, components, f"{where}.{key}[{index}]", seen))
    if schema.get("type") == "array":
        found.extend(_untyped(schema.get("items", {}), components, f"{where}[]", seen))
    if schema.get("type") == "object":
        values = schema.get("additionalProperties", True)
        if not schema.get("properties") and not isinstance(values, dict):
            found.append(where)
        for name, part in schema.get("properties", {}).items():
            found.extend(_untyped(part, components, f"{where}.{name}", seen))
        if isinstance(values, dict):
            found.extend(_untyped(values, components, f"{where}.*", seen))
    return found


def test_openapi_capabilities_answers_are_typed_to_their_leaves(server: Server):
    """Seed 003's introspection bodies (resolutions, candidates, skipped, not_considered)
    are typed throughout, so a generated client can read them; the schemathesis run checks
    the server's real answers (the bodies above) against these schemas."""
    with urllib.request.urlopen(f"{server.url}/openapi.json", timeout=60) as response:
        document = json.loads(response.read())
    components = document["components"]["schemas"]
    found = _ok(server, "POST", "/capabilities/find", CAPABILITIES_FIND)
    summary = _ok(server, "POST", "/template_capabilities", TEMPLATE_CAPABILITIES)

    for path in ("/v1/{tenant_id}/capabilities/find", "/v1/{tenant_id}/template_capabilities"):
        answer = document["paths"][path]["post"]["responses"]["200"]["content"]["application/json"]["schema"]
        assert _untyped(answer, components, path) == []
    # The answers the run meets have every field these schemas type.
    assert found["templates"] == ["puppet.yaml"] and found["skipped"][0]["template"] == "broken.yaml"
    [resolution] = summary["resolutions"]
    assert resolution["chosen"] == "puppet.yaml" and resolution["not_considered"] == ["region"]
    assert [(candidate["template"], candidate["matched"]) for candidate in resolution["candidates"]] == [("puppet.yaml", True), ("docker.yaml", False)]
    assert summary["skipped"][0]["template"] == "broken.yaml"
