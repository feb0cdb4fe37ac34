"""A stack's page in a real browser against a real ``stoker serve``: the topology and
the event timeline following a create live (a slow resource, a hook cleared with the
page's button), a failure highlighted with its reason, a group expanded in place, a
resource's detail, hidden values kept out of every tab, outputs, template, environment
and files, the keyboard, and a phone's width."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.acceptance.dashboard.conftest import PAGE_WAIT_MS, sign_in
from tests.support.browser import PHONE, screenshot

pytestmark = pytest.mark.slow

# ``slow`` waits at a hook, then takes its time to create; ``after`` needs it.
SLOW = """
heat_template_version: 2021-04-16
resources:
  slow:
    type: OS::Heat::TestResource
    properties:
      value: first-value
      action_wait_secs: {create: 4}
  after:
    type: OS::Heat::TestResource
    properties:
      value: {get_attr: [slow, output]}
outputs:
  result:
    description: what after made
    value: {get_attr: [after, output]}
"""
HOOKED = {"resource_registry": {"resources": {"slow": {"hooks": ["pre-create"]}}}}
SECRET = "s3cr3t-value-42"
# A group, a nested template, a hidden parameter and a resource that fails.
MIXED = """
heat_template_version: 2021-04-16
parameters:
  password: {type: string, hidden: true}
resources:
  members:
    type: OS::Heat::ResourceGroup
    properties:
      count: 2
      resource_def: {type: OS::Heat::RandomString}
  inner:
    type: inner.yaml
  broken:
    type: OS::Heat::TestResource
    depends_on: [members]
    properties: {value: {get_param: password}, fail: true}
"""
INNER = "heat_template_version: 2021-04-16\nresources:\n  leaf:\n    type: OS::Heat::None\n"


def node(page, key: str):
    return page.locator(f'svg.topology g.node[data-key="{key}"]')


def open_stack(browser, server, project, name: str, stack_id: str, viewport=None):
    page = browser.page(viewport) if viewport else browser.page()
    sign_in(page, server, project.name, then=f"/dashboard/stacks/{name}/{stack_id}")
    return page


def test_dashboard_stack_follows_a_create_live_and_clears_its_hook(browser, server, project):
    stack_id = project.create("live", SLOW, environment=HOOKED)
    page = open_stack(browser, server, project, "live", stack_id)
    expect(node(page, "slow")).to_be_visible(timeout=PAGE_WAIT_MS)
    expect(node(page, "after")).to_be_visible()
    # The dependency is an edge from slow to after.
    expect(page.locator('svg.topology path.edge[data-from="slow"][data-to="after"]')).to_have_count(
        1
    )
    expect(page.locator("#tab-hooks")).to_have_text("Hooks (1)", timeout=PAGE_WAIT_MS)
    screenshot(page, "stack-topology-hooked")

    page.click("#tab-hooks")
    expect(page.locator(".hooks tbody tr")).to_have_count(1)
    screenshot(page, "stack-hooks")
    page.click('button.clear-hook[data-key="slow"]')
    # Cleared: the resource creates (slowly), then after; all seen without a reload.
    page.click("#tab-topology")
    expect(node(page, "slow")).to_have_class("node st-progress", timeout=PAGE_WAIT_MS)
    expect(node(page, "slow").locator(".status")).to_have_text("CREATE_IN_PROGRESS")
    screenshot(page, "stack-topology-in-progress")
    expect(node(page, "slow")).to_have_class("node st-complete", timeout=PAGE_WAIT_MS)
    expect(node(page, "after")).to_have_class("node st-complete", timeout=PAGE_WAIT_MS)
    expect(page.locator("#summary .badge")).to_have_text("CREATE_COMPLETE", timeout=PAGE_WAIT_MS)
    expect(page.locator("#tab-hooks")).to_have_text("Hooks")
    screenshot(page, "stack-topology")

    # The timeline has the whole story, newest first, as the API's event list has it.
    page.click("#tab-events")
    status, body = project.request("GET", f"/stacks/live/{stack_id}/events?sort_dir=asc")
    assert status == 200
    expect(page.locator("#timeline li")).to_have_count(len(body["events"]), timeout=PAGE_WAIT_MS)
    shown = page.locator("#timeline li").evaluate_all(
        "items => items.map(item => item.dataset.eventId)"
    )
    assert shown == [event["id"] for event in reversed(body["events"])]
    expect(
        page.locator("#timeline li .reason", has_text=re.compile(r"^Hook pre-create is cleared$"))
    ).to_have_count(1)
    screenshot(page, "stack-events")

    page.click("#tab-outputs")
    expect(page.locator(".outputs dt")).to_contain_text("result")
    expect(page.locator(".outputs dd pre")).to_have_text("first-value")
    screenshot(page, "stack-outputs")


def test_dashboard_stack_shows_failures_groups_details_and_never_a_hidden_value(
    browser, server, project
):
    stack_id = project.create(
        "mixed",
        MIXED,
        files={"inner.yaml": INNER},
        parameters={"password": SECRET},
        disable_rollback=True,
    )
    project.wait("mixed")
    page = open_stack(browser, server, project, "mixed", stack_id)
    expect(node(page, "broken")).to_have_class("node st-failed", timeout=PAGE_WAIT_MS)
    status, body = project.request("GET", f"/stacks/mixed/{stack_id}/resources/broken")
    assert status == 200
    reason = body["resource"]["resource_status_reason"]
    assert reason

    # A group expands in place: its members are drawn inside it.
    expect(node(page, "members.0")).to_have_count(0)
    page.click('svg.topology g.node[data-key="members"] .expander')
    expect(node(page, "members.0")).to_be_visible(timeout=PAGE_WAIT_MS)
    expect(node(page, "members.1")).to_be_visible()
    expect(node(page, "members.0").locator(".type")).to_have_text("OS::Heat::RandomString")
    expect(page.locator('svg.topology g.node[data-key="members"] .expander')).to_have_attribute(
        "aria-expanded", "true"
    )
    screenshot(page, "stack-group-expanded")

    # The failure, highlighted in the timeline with its reason.
    page.click("#tab-events")
    failed = page.locator(
        "#timeline li.failed", has=page.locator(".path", has_text=re.compile(r"^broken$"))
    )
    expect(failed.first).to_be_visible(timeout=PAGE_WAIT_MS)
    expect(failed.first.locator(".reason")).to_have_text(reason)
    page.check("#only-failures")
    expect(page.locator("#timeline li:not(.failed)").first).to_be_hidden()
    screenshot(page, "stack-events-failed")

    # A resource's detail, from the resources table: declared properties, attributes, physical id.
    page.click("#tab-resources")
    page.click('#resources-table tr[data-key="members"]')
    expect(page.locator("#detail-title")).to_have_text("members", timeout=PAGE_WAIT_MS)
    status, body = project.request("GET", f"/stacks/mixed/{stack_id}/resources/members")
    expect(page.locator("#detail-physical")).to_have_text(body["resource"]["physical_resource_id"])
    expect(page.locator("#detail-properties")).to_contain_text('"count": 2')
    expect(page.locator("#detail-attributes")).to_contain_text("refs")
    page.click('#resources-table tr[data-key="broken"]')
    expect(page.locator("#detail-title")).to_have_text("broken")
    expect(page.locator("#detail-properties")).to_contain_text('"get_param": "password"')
    screenshot(page, "stack-resource-detail")

    # The hidden parameter's value is on no tab.
    for tab in ("topology", "events", "resources", "outputs", "template", "environment", "files"):
        page.click(f"#tab-{tab}")
        expect(page.locator(f"#panel-{tab}")).to_be_visible()
        if tab in ("template", "environment"):
            expect(page.locator(f"#{tab}-text")).to_be_visible(timeout=PAGE_WAIT_MS)
        assert SECRET not in page.content(), tab
    expect(page.locator("#summary details.parameters dd")).to_have_text("******")
    page.click("#tab-files")
    expect(page.locator("#panel-files details.file summary")).to_have_text(
        "inner.yaml", timeout=PAGE_WAIT_MS
    )
    page.click("#tab-template")
    expect(page.locator("#template-text")).to_contain_text("OS::Heat::ResourceGroup")
    screenshot(page, "stack-template")

    # A nested stack's page, from its resource's detail; it links back to its parent.
    page.click("#tab-resources")
    page.click('#resources-table tr[data-key="inner"]')
    expect(page.locator("#detail-title")).to_have_text("inner", timeout=PAGE_WAIT_MS)
    page.click("#detail a[href^='/dashboard/stacks/']")
    expect(node(page, "leaf")).to_have_class("node st-complete", timeout=PAGE_WAIT_MS)
    expect(page.locator("#parent-link")).to_have_text("mixed", timeout=PAGE_WAIT_MS)
    screenshot(page, "stack-nested")
    page.click("#parent-link")
    expect(node(page, "broken")).to_be_visible(timeout=PAGE_WAIT_MS)


def test_dashboard_stack_works_from_the_keyboard(browser, server, project):
    stack_id = project.create("keys", SLOW)
    project.wait("keys")
    page = open_stack(browser, server, project, "keys", stack_id)
    expect(node(page, "after")).to_have_class("node st-complete", timeout=PAGE_WAIT_MS)
    # Arrow keys move between the tabs.
    page.focus("#tab-topology")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#tab-events")).to_be_focused()
    expect(page.locator("#tab-events")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#panel-events")).to_be_visible()
    page.keyboard.press("Home")
    expect(page.locator("#tab-topology")).to_have_attribute("aria-selected", "true")
    # Tab reaches a resource; Enter shows it.
    page.keyboard.press("Tab")
    for _ in range(10):
        if page.evaluate("document.activeElement.closest('g.node') !== null"):
            break
        page.keyboard.press("Tab")
    key = page.evaluate("document.activeElement.closest('g.node').dataset.key")
    page.keyboard.press("Enter")
    expect(page.locator("#detail-title")).to_have_text(key, timeout=PAGE_WAIT_MS)
    expect(page.locator("#detail-title")).to_be_focused()


def test_dashboard_stack_fits_a_phone(browser, server, project):
    stack_id = project.create("phone", SLOW)
    project.wait("phone")
    page = open_stack(browser, server, project, "phone", stack_id, PHONE)
    expect(node(page, "after")).to_have_class("node st-complete", timeout=PAGE_WAIT_MS)
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    screenshot(page, "stack-phone")
    page.click("#tab-events")
    expect(page.locator("#timeline li").first).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    screenshot(page, "stack-events-phone")


def test_dashboard_stack_page_reconnects_after_a_server_restart_and_misses_nothing(
    browser, server, project
):
    template = "heat_template_version: 2021-04-16\nparameters:\n  word: {type: string, default: one}\nresources:\n  only:\n    type: OS::Heat::TestResource\n    properties: {value: {get_param: word}}\n"
    stack_id = project.create("again", template)
    project.wait("again")
    page = open_stack(browser, server, project, "again", stack_id)
    page.click("#tab-events")
    expect(page.locator("#timeline li")).to_have_count(
        len(project.request("GET", f"/stacks/again/{stack_id}/events")[1]["events"]),
        timeout=PAGE_WAIT_MS,
    )

    # The server goes away and comes back on the same address: the page reconnects and
    # resumes after the last event it had (Last-Event-ID), so an update made then shows,
    # every event once.
    server.stop()
    expect(page.locator("#live")).to_have_text("Reconnecting…", timeout=PAGE_WAIT_MS)
    server.start()
    status, body = project.request(
        "PATCH", f"/stacks/again/{stack_id}", {"parameters": {"word": "two"}}
    )
    assert status == 202, body
    project.wait("again", lambda status: status == "UPDATE_COMPLETE")
    events = project.request("GET", f"/stacks/again/{stack_id}/events?sort_dir=asc")[1]["events"]
    expect(page.locator("#timeline li")).to_have_count(len(events), timeout=PAGE_WAIT_MS)
    shown = page.locator("#timeline li").evaluate_all(
        "items => items.map(item => item.dataset.eventId)"
    )
    assert shown == [event["id"] for event in reversed(events)]
    expect(page.locator("#summary .badge")).to_have_text("UPDATE_COMPLETE", timeout=PAGE_WAIT_MS)
    expect(page.locator("#live")).to_have_text("Live")
