"""What a stack user of Heat's stack user domain may do through the API (the real ASGI
app in-process, in token mode, over a SQLite file): with a token scoped to a stack's
stack_user_project_id it reads that stack's resource metadata and signals its resources
at ``/v1/<stack_user_project_id>/stacks/<name>/<id>/...``, as Heat's identify_stack and
_get_stack allow, and nothing else: the policy's stack user rules decide (the stack
show, resource list and template are 403; another stack user project's token finds no
stack). The stack's users are made on a stand-in Keystone (tests/support/fake_keystone.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml
from starlette.testclient import TestClient

from stoker.api.app import create_app
from tests.support.fake_keystone import FakeKeystone, domain_keystone_plugin
from tests.support.stacks import from_data

ADMIN_PASSWORD = "domain-admin-secret-7"
OWNER = "owner-project"
TOKENS = {
    "member-token-0123456789": {"project_id": OWNER, "user_id": "owner", "roles": ["member"]},
    # Filled in with the stack's stack_user_project_id once it exists.
    "stack-user-token-0123456789": None,
    "other-stack-user-token-0123": {"project_id": "another-user-project", "user_id": "other", "roles": ["heat_stack_user"]},
}
TEMPLATE = {
    "heat_template_version": "2021-04-16",
    "resources": {
        "handle": {"type": "OS::Heat::WaitConditionHandle", "properties": {"signal_transport": "HEAT_SIGNAL"}},
        "server": {"type": "OS::Heat::None", "metadata": {"config": "for the agent"}},
    },
}


@pytest.fixture
def served(make_service, tmp_path) -> Iterator[tuple[TestClient, str, str]]:
    """A stack of the owner's whose handle's user is in the stack domain; the app, the
    stack's id and its stack_user_project_id."""
    tokens_file = tmp_path / "tokens.yaml"
    tokens_file.write_text(yaml.safe_dump({"tokens": {t: e for t, e in TOKENS.items() if e}}))
    service = make_service(
        auth_mode="token", auth_tokens_file=str(tokens_file),
        stack_user_domain="heat", stack_domain_admin="heat_domain_admin", stack_domain_admin_password=ADMIN_PASSWORD,
    )  # fmt: skip
    service.registry.clients.register("keystone", domain_keystone_plugin(FakeKeystone(), ADMIN_PASSWORD))
    stack = service.create_stack("web", from_data(TEMPLATE), project_id=OWNER)
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    user_project = service.store.get_stack(stack.id).stack_user_project_id
    assert user_project
    tokens = dict(TOKENS, **{"stack-user-token-0123456789": {"project_id": user_project, "user_id": "agent", "roles": ["heat_stack_user"]}})
    tokens_file.write_text(yaml.safe_dump({"tokens": tokens}))
    with TestClient(create_app(service.settings, service), raise_server_exceptions=False) as client:
        yield client, stack.id, user_project


def call(client: TestClient, token: str, method: str, path: str, body: object = None):
    return client.request(method, path, json=body, headers={"X-Auth-Token": token}, follow_redirects=False)


def test_a_stack_user_reads_metadata_and_signals_through_its_stack_user_project(served):
    client, stack_id, user_project = served
    token = "stack-user-token-0123456789"
    base = f"/v1/{user_project}/stacks/web/{stack_id}"
    metadata = call(client, token, "GET", f"{base}/resources/server/metadata")
    assert metadata.status_code == 200, metadata.text
    assert metadata.json() == {"metadata": {"config": "for the agent"}}
    signalled = call(client, token, "POST", f"{base}/resources/handle/signal", {"status": "SUCCESS", "reason": "up", "data": "1", "id": "1"})
    assert signalled.status_code == 200, signalled.text
    # heatclient's lookup of a stack by name alone.
    lookup = call(client, token, "GET", f"/v1/{user_project}/stacks/web")
    assert lookup.status_code == 302 and lookup.headers["location"].endswith(f"/v1/{user_project}/stacks/web/{stack_id}")
    # Nothing else: the policy gives the heat_stack_user role no more.
    for path in (base, f"{base}/resources", f"{base}/template", f"{base}/events", "/stacks"):
        refused = call(client, token, "GET", path if path.startswith("/v1") else f"/v1/{user_project}{path}")
        assert refused.status_code == 403, (path, refused.text)
    assert call(client, token, "DELETE", base).status_code == 403
    # The owner still reaches it at the stack's own project.
    assert call(client, "member-token-0123456789", "GET", f"/v1/{OWNER}/stacks/web/{stack_id}").status_code == 200


def test_another_projects_stack_user_finds_no_stack(served):
    client, stack_id, user_project = served
    token = "other-stack-user-token-0123"
    found = call(client, token, "GET", f"/v1/another-user-project/stacks/web/{stack_id}/resources/server/metadata")
    assert found.status_code == 404, found.text
    # The path's project must be the token's, whatever stack it names.
    assert call(client, token, "GET", f"/v1/{user_project}/stacks/web/{stack_id}/resources/server/metadata").status_code == 403
