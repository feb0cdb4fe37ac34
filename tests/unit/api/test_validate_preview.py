"""stoker's query parameters of Heat's validate and create preview (docs/api.md):
``with_notes`` adds what a create would still need, ``with_plan`` the create's plan;
without them the bodies are Heat's, key for key. The real ASGI app, in-process, over
a SQLite file."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from stoker.api.app import create_app
from stoker.settings import Settings

TENANT = "/v1/demo"

NEEDS_A_VALUE = """
heat_template_version: 2021-04-16
parameters:
  name: {type: string}
  secret: {type: string, hidden: true, constraints: [{length: {min: 40}}]}
resources:
  holder: {type: OS::Heat::Value, properties: {value: {get_param: name}}}
"""

# Template order is not the create's: ``last`` needs ``middle``, which needs ``first``.
CHAIN = """
heat_template_version: 2021-04-16
parameters:
  secret: {type: string, hidden: true}
resources:
  last: {type: OS::Heat::Value, properties: {value: {get_attr: [middle, value]}}}
  middle: {type: OS::Heat::Value, properties: {value: {get_resource: first}}}
  first: {type: OS::Heat::Value, properties: {value: {get_param: secret}}}
"""

CANDIDATES = {
    "a.yaml": "heat_template_version: 2021-04-16\ncapabilities: {flavour: a}\nresources: {}\n",
    "b.yaml": "heat_template_version: 2021-04-16\ncapabilities: {flavour: b}\nresources: {}\n",
}
CHOOSING = {
    "template": "heat_template_version: 2021-04-16\nresources:\n  node: {type: Demo::Node}\n",
    "files": CANDIDATES,
    "environment": {"requires": {"flavour": "b"}, "resource_registry": {"Demo::Node": ["a.yaml", "b.yaml"]}},
}


# A type whose rule follows every door, which the template never says.
PLUGIN = """
from stoker.sdk import resource


class Door(resource.Resource):
    \"\"\"A door.\"\"\"


class Key(resource.Resource):
    \"\"\"A key: after every door.\"\"\"

    @classmethod
    def implicit_dependencies(cls, me, stack):
        return [door.name for door in stack.of_type("Demo::Door")]


def resource_mapping():
    return {"Demo::Door": Door, "Demo::Key": Key}
"""


@pytest.fixture
def client(tmp_path) -> Iterator[TestClient]:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "house.py").write_text(textwrap.dedent(PLUGIN))
    settings = Settings(database_url=f"sqlite:///{tmp_path / 'stoker.sqlite'}", plugin_dirs=[str(plugins)])
    with TestClient(create_app(settings)) as client:
        yield client


def test_validate_with_notes_says_what_a_create_would_need_heats_body_otherwise(client):
    body = {"template": NEEDS_A_VALUE, "template_name": "needs.yaml", "parameters": {"secret": "Short-Secret-1"}}
    plain = client.post(f"{TENANT}/validate", json=body)
    assert plain.status_code == 200, plain.text
    assert "Notes" not in plain.json()
    noted = client.post(f"{TENANT}/validate", params={"with_notes": "true"}, json=body)
    assert noted.status_code == 200, noted.text
    assert {key: value for key, value in noted.json().items() if key != "Notes"} == plain.json()
    notes = noted.json()["Notes"]
    assert notes[0] == (
        "needs.yaml:4:9: parameters.name: The Parameter (name) was not provided. "
        "(pass --parameter name=VALUE or set it in an environment file)"
    )
    assert notes[1] == "needs.yaml:5:11: parameters.secret: Parameter 'secret' is invalid: length (14) must be at least 40"
    assert len(notes) == 2
    assert "Short-Secret-1" not in noted.text  # a hidden value is masked in a note too
    # Nothing missing: an empty list, so a client knows the server was asked.
    given = client.post(f"{TENANT}/validate", params={"with_notes": "1"}, json={"template": CHAIN, "parameters": {"secret": "x"}})
    assert given.json()["Notes"] == []
    refused = client.post(f"{TENANT}/validate", params={"with_notes": "maybe"}, json=body)
    assert refused.status_code == 400 and refused.json()["error"]["type"] == "HTTPBadRequest"


def test_create_preview_with_plan_adds_the_create_order_beside_heats_stack(client):
    body = {"stack_name": "chain", "template": CHAIN, "parameters": {"secret": "Secret-Value-1"}}
    plain = client.post(f"{TENANT}/stacks/preview", json=body)
    assert plain.status_code == 200, plain.text
    assert list(plain.json()) == ["stack"]
    planned = client.post(f"{TENANT}/stacks/preview", params={"with_plan": "true"}, json=body)
    assert planned.status_code == 200, planned.text
    answer = planned.json()
    assert list(answer) == ["stack", "resource_changes"]  # no candidate lists: no implementations
    assert answer["stack"]["stack_name"] == "chain" and len(answer["stack"]["resources"]) == 3
    assert answer["resource_changes"] == {
        "added": [{"resource_name": name, "resource_type": "OS::Heat::Value", "reason": "new resource"} for name in ("first", "middle", "last")],
        "deleted": [],
        "replaced": [],
        "updated": [],
        "unchanged": [],
    }
    assert "Secret-Value-1" not in planned.text
    refused = client.post(f"{TENANT}/stacks/preview", params={"with_plan": "sometimes"}, json=body)
    assert refused.status_code == 400


def test_create_preview_with_plan_names_the_candidate_template_chosen(client):
    planned = client.post(f"{TENANT}/stacks/preview", params={"with_plan": "true"}, json={"stack_name": "chosen", **CHOOSING})
    assert planned.status_code == 200, planned.text
    assert planned.json()["implementations"] == [{"resource_name": "node", "resource_type": "Demo::Node", "template": "b.yaml", "requires": "flavour=b"}]
    assert "implementations" not in client.post(f"{TENANT}/stacks/preview", json={"stack_name": "chosen", **CHOOSING}).json()


def test_create_preview_with_plan_orders_what_the_types_infer_as_the_create_does(client):
    # Stated, the key is a root listed last: without its rule's edges it would come first.
    house = "heat_template_version: 2021-04-16\nresources:\n  front: {type: Demo::Door}\n  key: {type: Demo::Key}\n"
    planned = client.post(f"{TENANT}/stacks/preview", params={"with_plan": "true"}, json={"stack_name": "house", "template": house})
    assert planned.status_code == 200, planned.text
    assert [change["resource_name"] for change in planned.json()["resource_changes"]["added"]] == ["front", "key"]
