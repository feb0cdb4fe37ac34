"""The dashboard's stacks list in a real browser against a real ``stoker serve``: signing
in, the list updating live as stacks are made and change state, the status filter and
the search (kept in the URL), nested stacks under their parents, and a phone's width."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.acceptance.dashboard.conftest import PAGE_WAIT_MS, sign_in
from tests.support.browser import PHONE, screenshot

pytestmark = pytest.mark.slow

SIMPLE = "heat_template_version: 2021-04-16\nresources:\n  only:\n    type: OS::Heat::TestResource\n    properties: {value: one}\n"
# ``only`` waits at a hook until the test clears it: the stack is IN_PROGRESS until then.
HOOKED = {"resource_registry": {"resources": {"only": {"hooks": ["pre-create"]}}}}
GROUP = """
heat_template_version: 2021-04-16
resources:
  members:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def: {type: OS::Heat::None}
"""


def row(page, stack_id: str):
    return page.locator(f'#stacks tbody tr[data-stack-id="{stack_id}"]')


def test_dashboard_stacks_list_updates_live_as_a_stack_is_made_and_completes(
    browser, server, project
):
    ready = project.create("ready", SIMPLE)
    project.wait("ready")
    page = browser.page()
    sign_in(page, server, project.name)
    expect(row(page, ready).locator("a")).to_have_text("ready", timeout=PAGE_WAIT_MS)
    expect(row(page, ready).locator(".badge")).to_have_text("CREATE_COMPLETE")
    expect(page.locator("#who-label")).to_have_text(f"project {project.name}")

    # Made after the page loaded: it shows up, IN_PROGRESS, then COMPLETE, with no reload.
    held = project.create("held", SIMPLE, environment=HOOKED)
    expect(row(page, held).locator(".badge")).to_have_text(
        "CREATE_IN_PROGRESS", timeout=PAGE_WAIT_MS
    )
    screenshot(page, "stacks-live-in-progress")
    status, body = project.request(
        "POST", f"/stacks/held/{held}/resources/only/signal", {"unset_hook": "pre-create"}
    )
    assert status == 200, body
    expect(row(page, held).locator(".badge")).to_have_text("CREATE_COMPLETE", timeout=PAGE_WAIT_MS)
    # The row links to the stack's page.
    assert row(page, held).locator("a").get_attribute("href") == f"/dashboard/stacks/held/{held}"
    screenshot(page, "stacks")


def test_dashboard_stacks_list_filters_by_status_and_searches(browser, server, project):
    good = project.create("alpha-good", SIMPLE)
    bad = project.create(
        "beta-bad",
        SIMPLE.replace("{value: one}", "{value: one, fail: true}"),
        disable_rollback=True,
    )
    project.wait("alpha-good")
    project.wait("beta-bad")
    page = browser.page()
    sign_in(page, server, project.name)
    expect(page.locator("#stacks tbody tr[data-stack-id]")).to_have_count(2, timeout=PAGE_WAIT_MS)
    # A failed stack shows its reason under its status.
    expect(row(page, bad).locator(".reason")).to_contain_text("CREATE", timeout=PAGE_WAIT_MS)

    page.select_option("#status", "FAILED")
    expect(page.locator("#stacks tbody tr[data-stack-id]")).to_have_count(1, timeout=PAGE_WAIT_MS)
    expect(row(page, bad)).to_be_visible()
    assert "status=FAILED" in page.url

    page.select_option("#status", "")
    expect(page.locator("#stacks tbody tr[data-stack-id]")).to_have_count(2, timeout=PAGE_WAIT_MS)
    # "/" jumps to the search; the search narrows the list as one types.
    page.keyboard.press("/")
    page.keyboard.type("alpha")
    expect(page.locator("#stacks tbody tr[data-stack-id]")).to_have_count(1)
    expect(row(page, good)).to_be_visible()
    page.fill("#search", "nothing-like-this")
    expect(page.locator("#stacks tbody td.empty")).to_have_text("No stack matches the search.")

    # The filters are in the URL: a reload (or a bookmark) keeps them.
    page.fill("#search", "beta")
    page.reload()
    expect(page.locator("#search")).to_have_value("beta")
    expect(page.locator("#stacks tbody tr[data-stack-id]")).to_have_count(1, timeout=PAGE_WAIT_MS)
    expect(row(page, bad)).to_be_visible()


def test_dashboard_stacks_list_shows_nested_stacks_under_their_parent(browser, server, project):
    parent = project.create("parent", GROUP)
    project.wait("parent")
    page = browser.page()
    sign_in(page, server, project.name)
    expect(page.locator("#stacks tbody tr[data-stack-id]")).to_have_count(1, timeout=PAGE_WAIT_MS)

    page.check("#nested")
    nested = page.locator("#stacks tbody tr.nested")
    expect(nested).to_have_count(1, timeout=PAGE_WAIT_MS)
    child_id = nested.get_attribute("data-stack-id")
    status, body = project.request("GET", "/stacks?show_nested=True")
    assert status == 200
    assert {stack["id"]: stack["parent"] for stack in body["stacks"]}[child_id] == parent
    # The child comes right after its parent, and the parent's toggle hides it.
    ids = page.locator("#stacks tbody tr[data-stack-id]").evaluate_all(
        "rows => rows.map(row => row.dataset.stackId)"
    )
    assert ids == [parent, child_id]
    screenshot(page, "stacks-nested")
    toggle = row(page, parent).locator("button.toggle")
    expect(toggle).to_have_attribute("aria-expanded", "true")
    toggle.click()
    expect(nested).to_have_count(0)
    expect(row(page, parent).locator("button.toggle")).to_have_attribute("aria-expanded", "false")


def test_dashboard_stacks_list_fits_a_phone(browser, server, project):
    project.create("a-stack-with-a-rather-long-name-to-wrap", SIMPLE)
    page = browser.page(PHONE)
    sign_in(page, server, project.name)
    expect(page.locator("#stacks tbody tr[data-stack-id]")).to_have_count(1, timeout=PAGE_WAIT_MS)
    # Nothing wider than the screen: no sideways scrolling of the page.
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    screenshot(page, "stacks-phone")
