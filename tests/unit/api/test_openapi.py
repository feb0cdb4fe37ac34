"""The OpenAPI document (api.openapi) against the app's own routes: every route of the
app is documented, every documented operation is a route, each with the policy rule
the app enforces; and the document is valid OpenAPI 3.1."""

from __future__ import annotations

import json
import re

import jsonschema_rs
import pytest
import schemathesis
from starlette.routing import Route
from starlette.testclient import TestClient

from stoker.api import errors, openapi, policy, routes
from stoker.api.app import create_app
from stoker.settings import Settings


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    return create_app(Settings(database_url=f"sqlite:///{tmp_path_factory.mktemp('openapi') / 'stoker.sqlite'}"))


def app_operations(app) -> set[tuple[str, str]]:
    # Starlette answers HEAD on every GET route by itself: a HEAD is its GET. The
    # dashboard's HTML pages (/dashboard/...) are not API and not in the document.
    return {
        (method, route.path)
        for route in app.routes
        if isinstance(route, Route) and not route.path.startswith("/dashboard/")
        for method in route.methods
        if method != "HEAD"
    }


def documented_operations(document) -> set[tuple[str, str]]:
    return {(method.upper(), path) for path, operations in document["paths"].items() for method in operations}


def test_openapi_documents_every_route_of_the_app_and_nothing_else(app):
    routes, documented = app_operations(app), documented_operations(openapi.document())
    assert routes - documented == set(), "routes the document does not describe"
    assert documented - routes == set(), "operations in the document that are no route"


def test_openapi_operations_name_the_rule_the_app_enforces(app):
    for path, operations in openapi.document()["paths"].items():
        for method, spec in operations.items():
            key = (method.upper(), path)
            if key in routes.PUBLIC or path in ("/", openapi.OPENAPI_PATH):
                assert spec["security"] == [], f"{key} needs no token"
                assert "x-policy-rule" not in spec
            elif key == routes.SIGNAL:
                assert {} in spec["security"] and {"token": []} in spec["security"], "a signal's token is optional"
            else:
                rule = routes.ROUTES[key]
                expected = "actions:<action>" if rule == policy.ACTIONS else rule
                assert spec["x-policy-rule"] == expected, key
                assert spec.get("security", openapi.document()["security"]) == [{"token": []}], key


def test_openapi_declares_each_path_parameter_and_a_fault_for_each_4xx():
    for path, operations in openapi.document()["paths"].items():
        names = set(re.findall(r"{(\w+)}", path))
        for method, spec in operations.items():
            declared = {p["name"] for p in spec.get("parameters", []) if p["in"] == "path"}
            assert declared == names, (method, path)
            for status, response in spec["responses"].items():
                if status.startswith("4") and path in openapi.CFN_PATHS:
                    # The CFN API answers AWS's ErrorResponse (XML, or JSON when asked), as Heat's heat-api-cfn.
                    assert set(response["content"]) == {"application/xml", "application/json"}, (method, path, status)
                elif status.startswith("4"):
                    assert response["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Fault"}, (method, path, status)


@pytest.mark.parametrize("status", sorted(errors._TITLES))
def test_openapi_fault_schema_is_the_shape_errors_answer(status):
    validator = jsonschema_rs.Draft202012Validator(openapi.document()["components"]["schemas"]["Fault"])
    for details in (None, "template.yaml:3:5: the problem, where it is"):
        response = errors.fault(status, "SomeError", "the message", details)
        validator.validate(json.loads(response.body))
    assert not validator.is_valid({"code": status, "title": "t", "explanation": "e", "error": {"type": "T", "message": "m", "traceback": "Traceback..."}})


def test_openapi_document_is_valid_openapi_3_1():
    loaded = schemathesis.openapi.from_dict(openapi.document("http://127.0.0.1:8004"))
    loaded.validate()  # against the OpenAPI 3.1 meta-schema
    operations = list(loaded.get_all_operations())
    assert all(result.ok() for result in operations)
    assert len(operations) == len(documented_operations(openapi.document()))


def test_openapi_is_served_without_a_token_with_the_server_url(tmp_path):
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'stoker.sqlite'}", auth_mode="token", auth_tokens_file=str(tmp_path / "tokens.yaml"))
    (tmp_path / "tokens.yaml").write_text("tokens:\n  'a-token-of-sixteen-chars': {project_id: demo}\n")
    with TestClient(create_app(settings), base_url="http://stoker.example:8004") as client:
        assert client.get("/v1/demo/stacks").status_code == 401
        response = client.get("/openapi.json")
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    served = response.json()
    assert served["servers"] == [{"url": "http://stoker.example:8004"}]
    assert json.dumps(served["paths"], sort_keys=True) == json.dumps(openapi.document()["paths"], sort_keys=True)
