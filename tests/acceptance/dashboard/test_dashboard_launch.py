"""The dashboard's launch wizard in a real browser against a real ``stoker serve``: a
folder of templates and environments uploaded, the implementations of each resource type
with what ``requires`` chooses, the user's pick, the whole tree's parameters as a form
(groups as sections, hidden ones as password fields, constraints checked as the user
types, a nested template's own parameter), the preview, and the create landing on the
live stack page."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.acceptance.dashboard.conftest import PAGE_WAIT_MS, sign_in
from tests.support.browser import PHONE, screenshot

pytestmark = pytest.mark.slow

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "capabilities"

PARENT = """
heat_template_version: 2021-04-16
description: An app whose implementation the environment's requires chooses.
parameter_groups:
  - label: Access
    description: How to reach the app.
    parameters: [admin_password]
  - label: Size
    parameters: [replicas, flavor]
parameters:
  admin_password:
    type: string
    hidden: true
    constraints: [{length: {min: 8}, description: eight characters or more}]
  replicas:
    type: number
    default: 2
    constraints: [{range: {min: 1, max: 5}}]
  flavor:
    type: string
    default: small
    constraints: [{allowed_values: [small, large]}]
  app_name:
    type: string
    constraints: [{allowed_pattern: "[a-z]+"}]
resources:
  app:
    type: My::App
    properties:
      name: {get_param: app_name}
      password: {get_param: admin_password}
outputs:
  app:
    value: {get_attr: [app, summary]}
"""
IMPLEMENTATION = """
heat_template_version: 2021-04-16
capabilities:
  speed: {speed}
  resource_type: My::App
parameters:
  name: {{type: string}}
  password: {{type: string, hidden: true}}
  greeting:
    type: string
    default: hello
resources:
  value:
    type: OS::Heat::Value
    properties:
      value: {{list_join: [" ", [{speed}, {{get_param: greeting}}, {{get_param: name}}]]}}
outputs:
  summary:
    value: {{get_attr: [value, value]}}
"""
ENVIRONMENT = """
requires:
  speed: careful
resource_registry:
  My::App: [impl/quick.yaml, impl/careful.yaml]
"""


def test_dashboard_launch_wizard_builds_the_seed_example_with_the_users_choice(
    browser, server, project
):
    page = browser.page()
    sign_in(page, server, project.name, then="/dashboard/launch")
    page.set_input_files("#folder", str(EXAMPLE))
    rows = page.locator("#file-list tbody tr")
    expect(rows).to_have_count(9, timeout=PAGE_WAIT_MS)
    # The folder's paths are the names the registry uses; the one template without
    # capabilities is the parent; the files without heat_template_version environments.
    row = page.locator('#file-list tr[data-file="deployment.yaml"] select')
    expect(row).to_have_value("parent")
    expect(page.locator('#file-list tr[data-file="puppet/controller.yaml"] select')).to_have_value(
        "template"
    )
    expect(page.locator('#file-list tr[data-file="registry.yaml"] select')).to_have_value(
        "environment"
    )
    # docker.yaml's requires is not wanted: puppet.yaml's is.
    page.locator('#file-list tr[data-file="docker.yaml"] button.remove').click()
    expect(rows).to_have_count(8)
    # Sorted by name; environments merge in the list's order, which the user can change.
    expect(rows.nth(4)).to_have_attribute("data-file", "puppet.yaml")
    for _ in range(3):
        page.locator('#file-list tr[data-file="registry.yaml"] button.up').click()
    expect(rows.nth(4)).to_have_attribute("data-file", "registry.yaml")
    expect(rows.nth(5)).to_have_attribute("data-file", "puppet.yaml")
    screenshot(page, "launch-files")

    page.click("#inspect")
    controller = page.locator('fieldset.choices[data-type="OS::Example::Controller"]')
    expect(controller.locator("label.choice")).to_have_count(2, timeout=PAGE_WAIT_MS)
    expect(page.locator("#capabilities")).to_contain_text(
        re.compile("deployment: (docker, puppet|puppet, docker)")
    )
    expect(page.locator("#capabilities")).to_contain_text("require deployment=puppet")
    # What requires chooses is marked and picked; the user picks docker for the controller.
    expect(controller.locator("label.choice", has_text="requires chooses this")).to_contain_text(
        "puppet/controller.yaml"
    )
    expect(controller.locator('input[value="puppet/controller.yaml"]')).to_be_checked()
    controller.locator('input[value="docker/controller.yaml"]').check()
    compute = page.locator('fieldset.choices[data-type="OS::Example::Compute"]')
    expect(compute.locator('input[value="puppet/compute.yaml"]')).to_be_checked()
    screenshot(page, "launch-choices")

    page.click("#to-parameters")
    cluster = page.locator('.field[data-param="cluster_name"][data-scope=""] input')
    expect(cluster).to_have_value("overcloud", timeout=PAGE_WAIT_MS)
    # The nested templates' parameters are listed too, under their resource.
    expect(page.locator('fieldset.nested[data-nested="controller"]')).to_contain_text(
        "OS::Example::Controller"
    )
    expect(page.locator('fieldset.nested[data-nested="controller"]')).to_contain_text(
        "configured by docker"
    )
    # A value its parent passes is shown, and not editable.
    expect(
        page.locator('.field[data-param="node_name"][data-scope="controller"] input')
    ).to_be_disabled()
    cluster.fill("demo")
    page.fill("#stack-name", "composed")
    page.click("#preview")
    expect(page.locator("#preview-resources")).to_contain_text(
        "composed-controller", timeout=PAGE_WAIT_MS
    )
    expect(page.locator("#preview-parameters")).to_contain_text('"cluster_name": "demo"')
    screenshot(page, "launch-preview")

    page.click("#create")
    page.wait_for_url("**/dashboard/stacks/composed/*", timeout=PAGE_WAIT_MS)
    stack = project.wait("composed")
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    expect(page.locator("#summary .badge")).to_have_text("CREATE_COMPLETE", timeout=PAGE_WAIT_MS)
    status, body = project.request("GET", f"/stacks/composed/{stack['id']}/outputs/controller")
    assert status == 200, body
    assert (
        body["output"]["output_value"]
        == "post-deployment done: demo-controller configured by docker"
    )
    status, body = project.request("GET", f"/stacks/composed/{stack['id']}/outputs/compute")
    assert (
        body["output"]["output_value"] == "post-deployment done: demo-compute configured by puppet"
    )
    screenshot(page, "launch-created")


def test_dashboard_launch_wizard_form_checks_constraints_and_hides_secrets(
    browser, server, project, tmp_path
):
    tree = tmp_path / "app"
    (tree / "impl").mkdir(parents=True)
    (tree / "app.yaml").write_text(PARENT)
    (tree / "env.yaml").write_text(ENVIRONMENT)
    for speed in ("quick", "careful"):
        (tree / "impl" / f"{speed}.yaml").write_text(IMPLEMENTATION.format(speed=speed))
    page = browser.page()
    sign_in(page, server, project.name, then="/dashboard/launch")
    page.set_input_files("#folder", str(tree))
    expect(page.locator('#file-list tr[data-file="app.yaml"] select')).to_have_value(
        "parent", timeout=PAGE_WAIT_MS
    )
    page.click("#inspect")
    app = page.locator('fieldset.choices[data-type="My::App"]')
    expect(app.locator('input[value="impl/careful.yaml"]')).to_be_checked(timeout=PAGE_WAIT_MS)
    expect(app).to_contain_text("speed is quick, not careful")
    page.click("#to-parameters")

    # parameter_groups are the sections, in order; the rest follow.
    legends = page.locator("#parameter-fields > fieldset.group:not(.nested) > legend")
    expect(legends).to_have_text(["Access", "Size", "Other parameters"], timeout=PAGE_WAIT_MS)
    password = page.locator('.field[data-param="admin_password"][data-scope=""] input')
    assert password.get_attribute("type") == "password"
    flavor = page.locator('.field[data-param="flavor"] select')
    expect(flavor.locator("option")).to_have_count(3)

    # Constraints are checked as the user types.
    error = page.locator('.field[data-param="admin_password"] .field-error')
    password.type("short")
    expect(error).to_have_text("must be at least 8 long (eight characters or more)")
    password.fill("long-enough")
    expect(error).to_have_text("")
    name = page.locator('.field[data-param="app_name"] input')
    name.fill("App1")
    expect(page.locator('.field[data-param="app_name"] .field-error')).to_have_text(
        "must match [a-z]+"
    )
    replicas = page.locator('.field[data-param="replicas"] input')
    replicas.fill("9")
    expect(page.locator('.field[data-param="replicas"] .field-error')).to_have_text(
        "must be at most 5"
    )
    screenshot(page, "launch-parameters-invalid")
    page.fill("#stack-name", "checked")
    page.click("#preview")
    # The first problem in the form's order is named (and focused).
    expect(page.locator("#message")).to_have_text(
        "replicas: must be at most 5", timeout=PAGE_WAIT_MS
    )
    expect(replicas).to_be_focused()
    assert page.locator("#step-preview").is_hidden()

    name.fill("shop")
    replicas.fill("3")
    # The chosen implementation's own parameter, which the parent does not pass.
    greeting = page.locator('.field[data-param="greeting"][data-scope="app"] input')
    expect(greeting).to_have_value("hello")
    greeting.fill("welcome")
    screenshot(page, "launch-parameters")
    page.click("#preview")
    expect(page.locator("#preview-resources")).to_contain_text(
        "OS::Heat::Value", timeout=PAGE_WAIT_MS
    )
    # The preview shows hidden values masked, never the password typed.
    expect(page.locator("#preview-parameters")).not_to_contain_text("long-enough")

    page.click("#create")
    page.wait_for_url("**/dashboard/stacks/checked/*", timeout=PAGE_WAIT_MS)
    stack = project.wait("checked")
    assert stack["stack_status"] == "CREATE_COMPLETE", stack
    status, body = project.request("GET", f"/stacks/checked/{stack['id']}/outputs/app")
    assert status == 200, body
    assert body["output"]["output_value"] == "careful welcome shop"
    status, body = project.request("GET", f"/stacks/checked/{stack['id']}")
    assert body["stack"]["parameters"]["replicas"] == "3"
    assert body["stack"]["parameters"]["admin_password"] == "******"


def test_dashboard_launch_wizard_says_what_is_wrong_with_the_templates(
    browser, server, project, tmp_path
):
    parent = tmp_path / "parent.yaml"
    parent.write_text(
        "heat_template_version: 2021-04-16\nresources:\n  thing:\n    type: My::Missing\n"
    )
    page = browser.page()
    sign_in(page, server, project.name, then="/dashboard/launch")
    page.set_input_files("#files", [str(parent)])
    expect(page.locator('#file-list tr[data-file="parent.yaml"] select')).to_have_value(
        "parent", timeout=PAGE_WAIT_MS
    )
    page.click("#inspect")
    expect(page.locator("#choices")).to_contain_text("nothing to choose", timeout=PAGE_WAIT_MS)
    page.click("#to-parameters")
    message = page.locator("#message")
    expect(message).to_contain_text("The chosen templates are not valid: ", timeout=PAGE_WAIT_MS)
    expect(message).to_contain_text("My::Missing")
    assert page.locator("#step-parameters").is_hidden()
    screenshot(page, "launch-invalid-template")


def test_dashboard_launch_wizard_asks_for_a_pick_when_nothing_requires_one(
    browser, server, project
):
    page = browser.page(PHONE)
    sign_in(page, server, project.name, then="/dashboard/launch")
    page.set_input_files("#folder", str(EXAMPLE))
    rows = page.locator("#file-list tbody tr")
    expect(rows).to_have_count(9, timeout=PAGE_WAIT_MS)
    for name in ("docker.yaml", "puppet.yaml"):
        page.locator(f'#file-list tr[data-file="{name}"] button.remove').click()
    expect(rows).to_have_count(7)
    page.click("#inspect")
    expect(page.locator("#capabilities")).to_contain_text(
        "no requires section", timeout=PAGE_WAIT_MS
    )
    expect(page.locator("fieldset.choices input:checked")).to_have_count(0)
    page.click("#to-parameters")
    expect(page.locator("#message")).to_contain_text("Choose an implementation of OS::Example::")
    assert page.locator("#step-parameters").is_hidden()
    page.locator('fieldset.choices input[value="docker/compute.yaml"]').check()
    page.locator('fieldset.choices input[value="docker/controller.yaml"]').check()
    page.click("#to-parameters")
    expect(page.locator('fieldset.nested[data-nested="compute"]')).to_contain_text(
        "configured by docker", timeout=PAGE_WAIT_MS
    )
    screenshot(page, "launch-phone")
