"""Changes with a plan first on a stack's page, in a real browser against a real
``stoker serve``: an update's plan (old -> new) applied exactly through the saved-plan
route, a dialog cancelled changing nothing, a stale plan refused with the API's words,
check, suspend, resume, snapshot, restore, cancel of a slow update and delete each
through its dialog, and the drift panel after an out-of-band edit (``Test::LiveFile``)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.acceptance.dashboard.conftest import PAGE_WAIT_MS, sign_in
from tests.support.browser import PHONE, screenshot
from tests.support.server import Server

pytestmark = pytest.mark.slow

NOTES = """
heat_template_version: 2021-04-16
parameters:
  path: {type: string}
  content: {type: string, default: hello}
resources:
  notes:
    type: Test::LiveFile
    properties: {path: {get_param: path}, content: {get_param: content}}
"""
# ``slow`` takes its time to update, long enough to cancel.
SLOW = """
heat_template_version: 2021-04-16
parameters:
  value: {type: string, default: first}
resources:
  slow:
    type: OS::Heat::TestResource
    properties:
      value: {get_param: value}
      action_wait_secs: {update: 30}
  other:
    type: OS::Heat::None
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The dashboard's server, with the test plugins (Test::LiveFile) loaded."""
    directory = tmp_path_factory.mktemp("dashboard-changes")
    running = Server(
        f"sqlite:///{directory / 'stoker.sqlite'}",
        directory / "serve.log",
        STOKER_AUTH_MODE="none",
        STOKER_PLUGIN_DIRS=str(Path(__file__).resolve().parents[2] / "support" / "plugins"),
    ).start()
    yield running
    log = running.stop()
    assert "Traceback" not in log, log


def parameter(project, name: str, key: str) -> str:
    status, body = project.request("GET", f"/stacks/{name}")
    assert status == 200, body
    return body["stack"]["parameters"][key]


def open_stack(browser, server, project, name: str, stack_id: str, viewport=None, state="CREATE_COMPLETE"):
    page = browser.page(viewport) if viewport else browser.page()
    sign_in(page, server, project.name, then=f"/dashboard/stacks/{name}/{stack_id}")
    expect(page.locator("#summary .badge")).to_have_text(state, timeout=PAGE_WAIT_MS)
    return page


def test_dashboard_update_with_its_plan_stale_plan_and_drift(browser, server, project, tmp_path):
    live = tmp_path / "notes.txt"
    stack_id = project.create("notes", NOTES, parameters={"path": str(live)})
    project.wait("notes")
    page = open_stack(browser, server, project, "notes", stack_id)

    # A dialog closed with Escape changes nothing.
    before = project.stack("notes")
    page.click("#action-update")
    expect(page.locator("#update-dialog")).to_be_visible()
    page.fill('#update-dialog [data-parameter="content"]', "never")
    page.keyboard.press("Escape")
    expect(page.locator("#update-dialog")).to_have_count(0)
    assert project.stack("notes") == before
    assert live.read_text() == "hello"

    # Parameters changed: the plan shows old -> new, and applying it updates the stack.
    page.click("#action-update")
    page.fill('#update-dialog [data-parameter="content"]', "news")
    page.click("#update-preview")
    row = page.locator('#plan tr[data-resource="notes"]')
    expect(row).to_have_attribute("data-action", "update", timeout=PAGE_WAIT_MS)
    expect(row.locator(".change-line")).to_contain_text("properties.content: hello -> news")
    screenshot(page, "stack-update-plan")
    page.click("#update-apply")
    expect(page.locator("#update-dialog")).to_have_count(0)
    expect(page.locator("#summary .badge")).to_have_text("UPDATE_COMPLETE", timeout=PAGE_WAIT_MS)
    assert parameter(project, "notes", "content") == "news"
    assert live.read_text() == "news"

    # A plan made stale by an update through the API is refused with the API's message.
    page.click("#action-update")
    page.fill('#update-dialog [data-parameter="content"]', "third")
    page.click("#update-preview")
    expect(page.locator("#update-apply")).to_be_enabled(timeout=PAGE_WAIT_MS)
    status, body = project.request("PATCH", f"/stacks/notes/{stack_id}", {"parameters": {"content": "other"}})
    assert status == 202, body
    project.wait("notes", lambda state: state == "UPDATE_COMPLETE" and live.read_text() == "other")
    page.click("#update-apply")
    expect(page.locator("#update-error")).to_contain_text("The plan is stale: stack notes changed since the plan was made", timeout=PAGE_WAIT_MS)
    screenshot(page, "stack-update-stale-plan")
    page.click("#dialog-cancel")
    assert parameter(project, "notes", "content") == "other"

    # A new template (the parameters kept): the plan adds its resource. An environment
    # that is not JSON is named before anything is asked of the API.
    page.click("#action-update")
    page.click("#update-dialog details summary")
    page.fill("#update-environment", "{not json")
    page.click("#update-preview")
    expect(page.locator("#update-error")).to_contain_text("The environment is not JSON")
    page.fill("#update-environment", "")
    page.fill("#update-template", NOTES + "  extra:\n    type: OS::Heat::None\n")
    page.click("#update-preview")
    expect(page.locator('#plan tr[data-resource="extra"]')).to_have_attribute("data-action", "create", timeout=PAGE_WAIT_MS)
    page.click("#update-apply")
    expect(page.locator("#update-dialog")).to_have_count(0)
    project.wait("notes", lambda state: state == "UPDATE_COMPLETE" and "extra" in str(project.request("GET", f"/stacks/notes/{stack_id}/resources")[1]))
    assert parameter(project, "notes", "content") == "other"

    # Drift: none yet, then the out-of-band edit is MODIFIED with expected vs actual.
    live.write_text("edited")
    page.click("#tab-drift")
    expect(page.locator("#drift-message")).to_have_text("No drift detection has run on this stack yet.", timeout=PAGE_WAIT_MS)
    page.click("#drift-detect")
    row = page.locator('#drift-table tr[data-resource="notes"]')
    expect(row).to_contain_text("MODIFIED", timeout=PAGE_WAIT_MS)
    expect(row).to_contain_text('content: expected "other", actual "edited"')
    expect(page.locator("#drift-summary")).to_contain_text("DRIFTED")
    screenshot(page, "stack-drift")


def test_dashboard_actions_each_through_its_dialog(browser, server, project):
    stack_id = project.create("acts", SLOW)
    project.wait("acts")
    page = open_stack(browser, server, project, "acts", stack_id)

    def act(key: str, state: str) -> None:
        page.click(f"#action-{key}")
        expect(page.locator('#action-dialog #plan tr[data-resource="slow"]')).to_be_visible()
        page.click("#action-confirm")
        expect(page.locator("#action-dialog")).to_have_count(0, timeout=PAGE_WAIT_MS)
        expect(page.locator("#summary .badge")).to_have_text(state, timeout=PAGE_WAIT_MS)

    # Check, by keyboard alone: Tab to the button, Enter opens, Enter confirms.
    page.focus("#action-check")
    page.keyboard.press("Enter")
    expect(page.locator("#action-dialog")).to_be_visible()
    # The server's plan of the check: what it does to each resource, and why.
    expect(page.locator('#action-dialog #plan tr[data-resource="other"]')).to_have_attribute("data-action", "check")
    expect(page.locator('#action-dialog #plan tr[data-resource="other"]')).to_contain_text("it completes without a check")
    screenshot(page, "stack-check-dialog")
    page.focus("#action-confirm")
    page.keyboard.press("Enter")
    expect(page.locator("#summary .badge")).to_have_text("CHECK_COMPLETE", timeout=PAGE_WAIT_MS)

    act("suspend", "SUSPEND_COMPLETE")
    act("resume", "RESUME_COMPLETE")

    page.click("#action-snapshot")
    # The server's plan of the snapshot, and below of the restore to it (the update it
    # runs: nothing changed since, so no resource changes).
    expect(page.locator('#action-dialog #plan tr[data-resource="slow"]')).to_have_attribute("data-action", "snapshot")
    page.fill("#snapshot-name", "before")
    page.click("#action-confirm")
    expect(page.locator("#action-dialog")).to_have_count(0, timeout=PAGE_WAIT_MS)
    expect(page.locator("#summary .badge")).to_have_text("SNAPSHOT_COMPLETE", timeout=PAGE_WAIT_MS)
    page.click("#action-restore")
    expect(page.locator("#restore-snapshot option")).to_have_count(1, timeout=PAGE_WAIT_MS)
    expect(page.locator("#restore-snapshot option")).to_contain_text("before")
    expect(page.locator('#action-dialog #plan tr[data-resource="slow"]')).to_have_attribute("data-action", "no-change")
    page.click("#action-confirm")
    expect(page.locator("#summary .badge")).to_have_text("RESTORE_COMPLETE", timeout=PAGE_WAIT_MS)

    # A slow update (through the API) cancelled through the dialog rolls back.
    status, body = project.request("PATCH", f"/stacks/acts/{stack_id}", {"parameters": {"value": "second"}})
    assert status == 202, body
    expect(page.locator("#summary .badge")).to_have_text("UPDATE_IN_PROGRESS", timeout=PAGE_WAIT_MS)
    act("cancel", "ROLLBACK_COMPLETE")
    assert parameter(project, "acts", "value") == "first"

    # Delete, at a phone's width: the dialog fits, and the stack goes.
    phone = open_stack(browser, server, project, "acts", stack_id, viewport=PHONE, state="ROLLBACK_COMPLETE")
    phone.click("#action-delete")
    expect(phone.locator('#action-dialog #plan tr[data-resource="slow"]')).to_contain_text("deletes acts-slow-")
    screenshot(phone, "stack-delete-dialog-phone")
    phone.click("#action-confirm")
    expect(phone.locator("#live")).to_have_text("The stack was deleted: no more events.", timeout=PAGE_WAIT_MS)
    status, body = project.request("GET", "/stacks?name=acts")
    assert status == 200 and body["stacks"] == [], body
