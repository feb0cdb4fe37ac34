"""The software_deployments API never answers 5xx, whatever the body, path or query:
hypothesis drives the real ASGI app (in-process, over a SQLite file and over
PostgreSQL, whose JSON and text refuse what SQLite keeps). A deployment that was
accepted shows back exactly as created or updated, and the list still lists."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from stoker.api.app import create_app
from stoker.settings import Settings

TENANT = "/v1/fuzz"
FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

_text = st.one_of(
    st.text(max_size=10),
    st.sampled_from(["", "0", "1", "-1", "nan", "2024-01-01T00:00:00Z", "2024-13-01", "IN_PROGRESS", "\x00", "\ud800", "x" * 300]),
)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=False, allow_infinity=False), _text)
_json = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_text, inner, max_size=3)), max_leaves=10)


def _mostly(sane: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually ``sane``, sometimes any JSON at all."""
    return st.sampled_from(range(10)).flatmap(lambda pick: _json if pick == 9 else sane)


_map = _mostly(st.dictionaries(st.text(max_size=5), _json, max_size=3))
_state = _mostly(st.sampled_from(["CREATE", "UPDATE", "IN_PROGRESS", "COMPLETE", "FAILED", ""]))
_fields = {
    "input_values": _map,
    "action": _state,
    "status": _state,
    "status_reason": _mostly(_text),
}


@pytest.fixture
def client(database_url: str) -> Iterator[TestClient]:
    with TestClient(create_app(Settings(database_url=database_url)), raise_server_exceptions=False) as running:
        yield running


@pytest.fixture
def config_id(client) -> str:
    response = client.post(f"{TENANT}/software_configs", json={"name": "fuzz", "group": "script", "config": "x", "outputs": [{"name": "result"}]})
    return response.json()["software_config"]["id"]


def _assert_answered(response: Any) -> None:
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        body = response.json()
        assert body["code"] == response.status_code and body["error"]["message"]


def _send(client: TestClient, method: str, path: str, body: Any) -> Any:
    return client.request(method, f"{TENANT}/software_deployments{path}", content=json.dumps(body), headers={"Content-Type": "application/json"})


@FUZZ
@given(data=st.data())
def test_api_fuzz_software_deployment_create_never_5xx(client, config_id, data):
    config = data.draw(_mostly(st.sampled_from([config_id, "ddee7aca-aa32-4335-8265-d436b20db4f1"])))
    body = data.draw(
        _mostly(
            st.fixed_dictionaries(
                {"config_id": st.just(config), "server_id": _mostly(_text)},
                optional={**_fields, "id": _mostly(st.uuids().map(str)), "stack_user_project_id": _mostly(_text)},
            )
        )
    )
    response = _send(client, "POST", "", body)
    _assert_answered(response)
    if response.status_code == 200:
        created = response.json()["software_deployment"]
        shown = client.get(f"{TENANT}/software_deployments/{quote(created['id'], safe='')}")
        assert shown.status_code == 200 and shown.json() == {"software_deployment": created}
        _assert_answered(client.get(f"{TENANT}/software_deployments/metadata/{quote(created['server_id'], safe='')}"))
    assert client.get(f"{TENANT}/software_deployments").status_code == 200


@FUZZ
@given(data=st.data())
def test_api_fuzz_software_deployment_update_never_5xx(client, config_id, data):
    created = _send(client, "POST", "", {"config_id": config_id, "server_id": "fuzzed", "status": "IN_PROGRESS"}).json()["software_deployment"]
    body = data.draw(
        _mostly(
            st.fixed_dictionaries(
                {},
                optional={**_fields, "config_id": _mostly(st.just(config_id)), "output_values": _map, "updated_at": _mostly(_text)},
            )
        )
    )
    response = _send(client, "PUT", f"/{created['id']}", body)
    _assert_answered(response)
    shown = client.get(f"{TENANT}/software_deployments/{created['id']}")
    assert shown.status_code == 200
    if response.status_code == 200:
        assert shown.json() == response.json()
    else:
        assert shown.json() == {"software_deployment": created}
    assert _send(client, "DELETE", f"/{created['id']}", None).status_code == 204


@FUZZ
@given(text=_text, where=st.sampled_from(["show", "delete", "metadata", "list"]))
def test_api_fuzz_software_deployment_ids_and_query_never_5xx(client, text, where):
    # A lone surrogate goes out as the bytes a client would send (not valid UTF-8).
    quoted = quote(text.encode("utf-8", "surrogatepass"), safe="")
    if where == "list":
        response = client.get(f"{TENANT}/software_deployments?server_id={quoted}")
    elif where == "metadata":
        response = client.get(f"{TENANT}/software_deployments/metadata/{quoted}")
    else:
        response = client.request("GET" if where == "show" else "DELETE", f"{TENANT}/software_deployments/{quoted}")
    _assert_answered(response)
