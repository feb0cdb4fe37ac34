"""The API never answers 5xx, whatever the body or query: hypothesis drives the real
ASGI app (starlette's TestClient, in-process, over a real SQLite file) with stack
create, update (PUT) and PATCH bodies, and the query strings of the stack, resource
and event lists. Every refusal must be Heat's fault body with a 4xx, and whatever a
request stored must still read back (the stack shows, the lists list).

The bodies are built around the shape of a real request (a template with parameters,
resources and outputs, an environment, files, tags, ...) with any JSON at any leaf,
lone surrogates, numbers past every bound and nesting past every limit, so that most
examples get past the first check and reach the ones behind it.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from stoker.api.app import create_app
from stoker.settings import Settings

TENANT = "/v1/fuzz"
FUZZ = settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

SEED_TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "parameters": {"word": {"type": "string", "default": "one"}},
    "resources": {
        "random": {"type": "OS::Heat::RandomString", "properties": {"length": 4}},
        "value": {"type": "OS::Heat::Value", "properties": {"value": {"get_param": "word"}}},
    },
    "outputs": {"said": {"value": {"get_attr": ["value", "value"]}}},
}

# -- strategies --------------------------------------------------------------------------

_LONE_SURROGATES = st.sampled_from(["\ud800", "a\udfffb", "\udc00\ud800"])
_text = st.one_of(st.text(max_size=12), st.text(max_size=12), st.text(max_size=12), _LONE_SURROGATES, st.sampled_from(["", "0", "-1", "1.5", "true", "9" * 40, "a,b", "%s", "\x00"]))
_numbers = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0, 1, -1, 2**31, 2**63, 10**30, 1e308, -6.7e-303, 1.5]),
)
_scalars = st.one_of(st.none(), st.booleans(), _numbers, _text)
_json = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_text, inner, max_size=4)), max_leaves=12)


def _nested(depth: int, leaf: Any = "x") -> Any:
    value = leaf
    for level in range(depth):
        value = {"a": value} if level % 2 else [value]
    return value


# Values nested around every depth limit (the template's 200, the body's 203).
_deep = st.integers(min_value=195, max_value=260).map(_nested)
_value = st.one_of(_json, _json, _json, _deep)



def _mostly(sane: st.SearchStrategy[Any], wild: st.SearchStrategy[Any] = _value) -> st.SearchStrategy[Any]:
    """Usually ``sane``, sometimes anything: a body with every field wild would be
    refused at its first field, and never reach the checks behind it."""
    # one_of would weigh them equally (it folds repeated branches into one).
    return st.sampled_from(range(12)).flatmap(lambda pick: wild if pick == 11 else sane)


# Text without lone surrogates, for the places a body is meant to get past.
_words = st.text(max_size=12)
_small = st.one_of(st.integers(min_value=-5, max_value=100), st.text(max_size=6))
_constraint = _mostly(
    st.one_of(
        st.fixed_dictionaries({"range": _mostly(st.fixed_dictionaries({}, optional={"min": _mostly(_small), "max": _mostly(_small)}))}),
        st.fixed_dictionaries({"length": _mostly(st.fixed_dictionaries({}, optional={"min": _mostly(_small), "max": _mostly(_small)}))}),
        st.fixed_dictionaries({"modulo": _mostly(st.fixed_dictionaries({}, optional={"step": _mostly(_small), "offset": _mostly(_small)}))}),
        st.fixed_dictionaries({"allowed_values": _mostly(st.lists(_small, max_size=3))}),
        st.fixed_dictionaries({"allowed_pattern": st.one_of(_words, st.sampled_from(["(", "[a-", "(a+)+$", "\\", "[0-9]*"]))}),
        st.fixed_dictionaries({"custom_constraint": _mostly(st.sampled_from(["nova.flavor", "no.such"]))}),
    )
)
_parameter = _mostly(
    st.fixed_dictionaries(
        {"type": _mostly(st.sampled_from(["string", "number", "json", "comma_delimited_list", "boolean"]))},
        optional={
            "default": _mostly(_small),
            "hidden": _mostly(st.booleans()),
            "constraints": _mostly(st.lists(_constraint, max_size=3)),
            "tags": _mostly(st.lists(_words, max_size=2)),
            "label": _mostly(_words),
            "immutable": _mostly(st.booleans()),
        },
    )
)
_names = st.sampled_from(["p0", "p1", "r0", "r1", "word"])
_function = _mostly(st.one_of(
    _small,
    st.builds(lambda name: {"get_param": name}, _mostly(_names)),
    st.builds(lambda name, attribute: {"get_attr": [name, attribute]}, _mostly(_names), _mostly(st.sampled_from(["value", "output"]))),
    st.builds(lambda args: {"str_replace": args}, _mostly(st.fixed_dictionaries({"template": _mostly(_words), "params": _mostly(st.dictionaries(_words, _small, max_size=2))}))),
    st.builds(lambda args: {"list_join": args}, _mostly(st.tuples(_words, st.lists(_words, max_size=3)).map(list))),
))
_properties = _mostly(
    st.fixed_dictionaries(
        {},
        optional={"length": _mostly(_function), "value": _function, "type": _mostly(st.sampled_from(["string", "json", "number"])), "salt": _function},
    )
)
_resource = _mostly(
    st.fixed_dictionaries(
        {"type": _mostly(st.sampled_from(["OS::Heat::None", "OS::Heat::RandomString", "OS::Heat::Value"]))},
        optional={"properties": _properties, "depends_on": _mostly(st.lists(_names, max_size=2)), "metadata": _mostly(_small), "deletion_policy": _mostly(st.sampled_from(["Retain", "Delete"]))},
    )
)
_template = st.fixed_dictionaries(
    {"heat_template_version": _mostly(st.sampled_from(["2021-04-16", "2013-05-23", "2018-08-31"]))},
    optional={
        "description": _mostly(_words),
        "parameters": _mostly(st.dictionaries(_names, _parameter, max_size=3)),
        "resources": _mostly(st.dictionaries(_names, _resource, max_size=3)),
        "outputs": _mostly(st.dictionaries(_names, st.fixed_dictionaries({"value": _function}), max_size=2)),
        "conditions": _mostly(st.just({})),
    },
)
# As an object, as JSON text, or as anything at all.
_template_field = _mostly(st.one_of(_template, _template.map(json.dumps)))
_environment = _mostly(
    st.fixed_dictionaries({}, optional={"parameters": _mostly(st.dictionaries(_names, _small, max_size=2)), "parameter_defaults": _mostly(st.dictionaries(_names, _value, max_size=2)), "resource_registry": _mostly(st.just({}))}),
)
_parameters = _mostly(st.dictionaries(_names, _mostly(_small), max_size=3))


def _body(template_required: bool) -> st.SearchStrategy[Any]:
    fields = {
        "template": _template_field,
        "parameters": _parameters,
        "environment": _environment,
        "environment_files": _mostly(st.just(["env.yaml"])),
        "files": _mostly(st.fixed_dictionaries({"env.yaml": _mostly(st.just("parameters: {}"))})),
        "timeout_mins": _mostly(st.integers(min_value=0, max_value=60), _scalars),
        "disable_rollback": _mostly(st.booleans(), _scalars),
        "tags": _mostly(st.lists(_words, max_size=3)),
        "clear_parameters": _mostly(st.lists(_names, max_size=2)),
        "adopt_stack_data": _mostly(st.none(), _scalars),
        "template_url": st.one_of(st.none(), _scalars),
    }
    required = {"template": fields.pop("template")} if template_required else {}
    return _mostly(st.fixed_dictionaries(required, optional=fields), _json)


_fresh = itertools.count()
_stack_names = st.one_of(st.just("fresh"), st.just("fresh"), st.just("fresh"), _json).map(lambda name: f"fuzz{next(_fresh)}" if name == "fresh" else name)


# -- the app -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(tmp_path_factory) -> Iterator[TestClient]:
    database = tmp_path_factory.mktemp("fuzz") / "fuzz.sqlite"
    app = create_app(Settings(database_url=f"sqlite:///{database}"))
    with TestClient(app, raise_server_exceptions=False) as running:
        yield running


@pytest.fixture(scope="module")
def seed(client: TestClient) -> str:
    """A stack to update and to list: the path ``{name}/{id}``."""
    response = client.post(f"{TENANT}/stacks", json={"stack_name": "seed", "template": SEED_TEMPLATE})
    assert response.status_code == 201, response.text
    return f"seed/{response.json()['stack']['id']}"


def _assert_answered(response: Any) -> None:
    """Never a 5xx; every refusal is Heat's fault body."""
    # --hypothesis-show-statistics: how far the examples get (201/202 vs refusals).
    event(f"{response.status_code} {response.json()['error']['message'][:45] if response.status_code >= 400 else ''}")
    assert response.status_code < 500, response.text
    if response.status_code >= 400:
        body = response.json()
        assert body["code"] == response.status_code and body["error"]["traceback"] is None
        assert isinstance(body["error"]["message"], str) and body["error"]["message"]


def _send(client: TestClient, method: str, path: str, body: Any) -> Any:
    # ensure_ascii: a lone surrogate travels as its \\udXXX escape, as a client sends it.
    return client.request(method, f"{TENANT}/{path}", content=json.dumps(body), headers={"Content-Type": "application/json"})


def _assert_readable(client: TestClient, path: str) -> None:
    for url in (f"{TENANT}/stacks/{path}", f"{TENANT}/stacks", f"{TENANT}/stacks?show_deleted=true", f"{TENANT}/stacks/{path}/resources"):
        response = client.get(url)
        assert response.status_code == 200, f"GET {url}: {response.status_code} {response.text[:300]}"


# -- the tests ---------------------------------------------------------------------------


@FUZZ
@given(body=_body(template_required=True), name=_stack_names)
def test_api_fuzz_stack_create_never_5xx(client, body, name):
    if isinstance(body, dict):
        body["stack_name"] = name
    response = _send(client, "POST", "stacks", body)
    _assert_answered(response)
    if response.status_code == 201:
        _assert_readable(client, f"{body['stack_name']}/{response.json()['stack']['id']}")


@FUZZ
@given(body=_body(template_required=False), method=st.sampled_from(["PUT", "PATCH"]))
def test_api_fuzz_stack_update_and_patch_never_5xx(client, seed, body, method):
    response = _send(client, method, f"stacks/{seed}", body)
    _assert_answered(response)
    _assert_readable(client, seed)


_query_keys = st.sampled_from(
    [
        "limit", "marker", "sort_keys", "sort_dir", "show_deleted", "show_nested", "show_hidden", "nested_depth",
        "with_detail", "tags", "tags_any", "not_tags", "not_tags_any", "status", "name", "id", "action",
        "resource_status", "resource_action", "resource_name", "resource_type", "type", "physical_resource_id",
    ]
)  # fmt: skip
_query_values = st.one_of(
    _text,
    st.integers(min_value=-(2**100), max_value=2**100).map(str),
    st.sampled_from(["1" + "0" * 30, "1e3", " 2", "0x10", "٣", "1_000", "-0", "true", "asc", "desc", "name", "5000" * 2000]),
)
_queries = st.lists(st.tuples(_mostly(_query_keys, _text), _query_values), max_size=5)


@FUZZ
# A depth or limit past every bound used to spin a worker thread for ever.
@example(query=[("nested_depth", "1" + "0" * 30)], target="{seed}/resources")
@example(query=[("nested_depth", "1" + "0" * 30)], target="{seed}/events")
@example(query=[("limit", "1" + "0" * 30), ("marker", "\ud800")], target="stacks")
@given(query=_queries, target=st.sampled_from(["stacks", "stacks/detail", "{seed}/resources", "{seed}/events", "{seed}/resources/random/events"]))
def test_api_fuzz_list_query_strings_never_5xx(client, seed, query, target):
    path = target.replace("{seed}", f"stacks/{seed}")
    encoded = "&".join(f"{quote(key, safe='', errors='surrogatepass')}={quote(value, safe='', errors='surrogatepass')}" for key, value in query)
    response = client.get(f"{TENANT}/{path}?{encoded}")
    _assert_answered(response)

