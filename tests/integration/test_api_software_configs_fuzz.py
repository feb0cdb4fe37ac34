"""The software_configs API never answers 5xx, whatever the create body or list query:
hypothesis drives the real ASGI app (in-process, over a real SQLite file). A config
that was accepted shows back exactly as created, and the list still lists."""

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

_text = st.one_of(st.text(max_size=10), st.sampled_from(["", "0", "1.5", "nan", "inf", "1e999", "true", "a,b", "\x00", "\ud800", "x" * 300]))
_scalars = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(allow_nan=False, allow_infinity=False), _text)
_json = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_text, inner, max_size=3)), max_leaves=10)


def _mostly(sane: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually ``sane``, sometimes any JSON at all."""
    return st.sampled_from(range(10)).flatmap(lambda pick: _json if pick == 9 else sane)


_types = _mostly(st.sampled_from(["String", "Number", "CommaDelimitedList", "Json", "Boolean", "Float"]))
_input = _mostly(
    st.fixed_dictionaries(
        {"name": _mostly(st.text(max_size=8))},
        optional={"type": _types, "default": _json, "description": _mostly(_text), "replace_on_change": _mostly(st.booleans()), "value": _json},
    )
)
_output = _mostly(
    st.fixed_dictionaries(
        {"name": _mostly(st.text(max_size=8))},
        optional={"type": _types, "description": _mostly(_text), "error_output": _mostly(st.booleans())},
    )
)
_body = _mostly(
    st.fixed_dictionaries(
        {},
        optional={
            "name": _mostly(st.text(max_size=20)),
            "group": _mostly(st.sampled_from(["script", "Heat::Ungrouped", "puppet"])),
            "config": _json,
            "inputs": _mostly(st.lists(_input, max_size=3)),
            "outputs": _mostly(st.lists(_output, max_size=3)),
            "options": _mostly(st.dictionaries(st.text(max_size=5), _json, max_size=2)),
        },
    )
)


@pytest.fixture(scope="module")
def client(tmp_path_factory) -> Iterator[TestClient]:
    database = tmp_path_factory.mktemp("fuzz") / "configs.sqlite"
    with TestClient(create_app(Settings(database_url=f"sqlite:///{database}")), raise_server_exceptions=False) as running:
        yield running


def _assert_answered(response: Any) -> None:
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        body = response.json()
        assert body["code"] == response.status_code and body["error"]["message"]


@FUZZ
@given(body=_body)
def test_api_fuzz_software_config_create_never_5xx(client, body):
    response = client.post(f"{TENANT}/software_configs", content=json.dumps(body), headers={"Content-Type": "application/json"})
    _assert_answered(response)
    if response.status_code == 200:
        created = response.json()["software_config"]
        shown = client.get(f"{TENANT}/software_configs/{created['id']}")
        assert shown.status_code == 200 and shown.json() == {"software_config": created}
    assert client.get(f"{TENANT}/software_configs").status_code == 200


@FUZZ
@given(limit=st.one_of(st.none(), _text, st.integers(min_value=-5, max_value=2**40).map(str)), marker=st.one_of(st.none(), _text))
def test_api_fuzz_software_config_list_query_never_5xx(client, limit, marker):
    # A lone surrogate goes out as the bytes a client would send (not valid UTF-8).
    query = "&".join(f"{key}={quote(value.encode('utf-8', 'surrogatepass'))}" for key, value in (("limit", limit), ("marker", marker)) if value is not None)
    _assert_answered(client.get(f"{TENANT}/software_configs?{query}"))
