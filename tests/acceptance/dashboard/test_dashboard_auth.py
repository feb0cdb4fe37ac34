"""The dashboard on a server that authenticates (auth mode token), in a real browser:
signing in with a token (a wrong one refused, saying why), the token's project and user
shown, a page asked for before signing in reached after it, the API's policy applied to
what the page does (Heat lets a project's readers signal; with an operator's policy that
keeps signals to members, a reader's hook clear is refused with the API's reason and a
member's goes through), another project's stack out of reach, and signing out."""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator

import pytest
import yaml
from playwright.sync_api import expect

from tests.acceptance.dashboard.conftest import PAGE_WAIT_MS, Project, sign_in
from tests.support.browser import screenshot
from tests.support.server import Server

pytestmark = pytest.mark.slow

READER = "reader-token-5b1e0c7d3a"
MEMBER = "member-token-2f9a6d4c8e"
OTHER = "other-token-7c3d9e1f0b"
TOKENS = {
    "tokens": {
        READER: {"project_id": "proj-a", "user_id": "rita", "roles": ["reader"]},
        MEMBER: {"project_id": "proj-a", "user_id": "mike", "roles": ["member"]},
        OTHER: {"project_id": "proj-b", "user_id": "bea", "roles": ["member"]},
    }
}
HELD = "heat_template_version: 2021-04-16\nresources:\n  only:\n    type: OS::Heat::TestResource\n    properties: {value: one}\n"
HOOKED = {"resource_registry": {"resources": {"only": {"hooks": ["pre-create"]}}}}
# An operator's policy: only members signal resources (Heat lets readers too).
POLICY = '"resource:signal": "role:member and project_id:%(project_id)s"\n'


@pytest.fixture(scope="module")
def token_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("dashboard-token")
    tokens = directory / "tokens.yaml"
    tokens.write_text(yaml.safe_dump(TOKENS))
    policy = directory / "policy.yaml"
    policy.write_text(POLICY)
    running = Server(
        f"sqlite:///{directory / 'stoker.sqlite'}",
        directory / "serve.log",
        STOKER_AUTH_MODE="token",
        STOKER_AUTH_TOKENS_FILE=str(tokens),
        STOKER_POLICY_FILE=str(policy),
    ).start()
    yield running
    log = running.stop()
    assert "Traceback" not in log, log
    assert READER not in log and MEMBER not in log, log


def test_dashboard_token_mode_refuses_a_wrong_token_and_signs_in_with_a_right_one(
    browser, token_server
):
    page = browser.page()
    page.goto(token_server.url + "/dashboard/")
    page.wait_for_url("**/dashboard/login?next=**")
    expect(page.locator(".hint")).to_contain_text("auth mode token")
    page.fill("#token", "not-a-token-anyone-has")
    page.click("#login button[type=submit]")
    expect(page.locator("#message")).to_have_text(re.compile("The token is not valid"))
    assert "/dashboard/login" in page.url
    screenshot(page, "login-refused")
    page.fill("#token", READER)
    page.click("#login button[type=submit]")
    page.wait_for_url(token_server.url + "/dashboard/")
    # The token's own project and user, with no project typed in.
    expect(page.locator("#who-label")).to_have_text("rita in proj-a")
    page.click("#sign-out")
    page.wait_for_url("**/dashboard/login")
    page.goto(token_server.url + "/dashboard/")
    page.wait_for_url("**/dashboard/login?next=**")


def test_dashboard_token_mode_applies_the_api_policy_to_the_hook_button(browser, token_server):
    member = Project(token_server, "proj-a", MEMBER)
    name = f"held-{uuid.uuid4().hex[:8]}"
    stack_id = member.create(name, HELD, environment=HOOKED)
    stack_page = f"/dashboard/stacks/{name}/{stack_id}"

    # A reader reaches the stack page it asked for before signing in, and may look...
    reader_page = browser.page()
    sign_in(reader_page, token_server, "", token=READER, then=stack_page + "#hooks")
    expect(reader_page.locator("#tab-hooks")).to_have_attribute("aria-selected", "true")
    button = reader_page.locator('button.clear-hook[data-key="only"]')
    expect(button).to_be_visible(timeout=PAGE_WAIT_MS)
    # ...but not clear a hook: the API refuses it (403), and the page says why.
    button.click()
    status, body = Project(token_server, "proj-a", READER).request(
        "POST", f"/stacks/{name}/{stack_id}/resources/only/signal", {"unset_hook": "pre-create"}
    )
    assert status == 403, body
    expect(reader_page.locator(".hook-status.error")).to_have_text(
        f"Not cleared: {body['error']['message']}", timeout=PAGE_WAIT_MS
    )
    expect(button).to_be_enabled()
    screenshot(reader_page, "hooks-refused-for-a-reader")
    # A change through its dialog (issue 33) is refused alike, with the API's words.
    status, body = Project(token_server, "proj-a", READER).request(
        "POST", f"/stacks/{name}/{stack_id}/actions", {"suspend": None}
    )
    assert status == 403, body
    reader_page.click("#action-suspend")
    reader_page.click("#action-confirm")
    expect(reader_page.locator("#action-error")).to_have_text(
        body["error"]["message"], timeout=PAGE_WAIT_MS
    )
    screenshot(reader_page, "suspend-refused-for-a-reader")
    reader_page.keyboard.press("Escape")
    expect(reader_page.locator("#action-dialog")).to_have_count(0)
    assert member.stack(name)["stack_status"] == "CREATE_IN_PROGRESS"

    # A member clears it, and the stack completes.
    member_page = browser.page()
    sign_in(member_page, token_server, "", token=MEMBER, then=stack_page + "#hooks")
    member_page.click('button.clear-hook[data-key="only"]')
    expect(member_page.locator("#summary .badge")).to_have_text(
        "CREATE_COMPLETE", timeout=PAGE_WAIT_MS
    )
    expect(member_page.locator("#panel-hooks")).to_contain_text("No resource is waiting at a hook.")
    # The reader's page follows it live too.
    expect(reader_page.locator("#summary .badge")).to_have_text(
        "CREATE_COMPLETE", timeout=PAGE_WAIT_MS
    )

    # Another project's member does not reach the stack at all.
    other_page = browser.page()
    sign_in(other_page, token_server, "", token=OTHER, then=stack_page)
    expect(other_page.locator("#message")).to_have_text(
        "This stack does not exist (or is not in your project).", timeout=PAGE_WAIT_MS
    )
    expect(other_page.locator("svg.topology g.node")).to_have_count(0)
