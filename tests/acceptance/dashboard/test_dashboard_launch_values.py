"""The launch wizard offers the values of a parameter's custom constraint, read through
``GET .../custom_constraints/{name}/values``: here ``test.colour``, the test plugins'
constraint that lists its values without a cloud, and ``nova.flavor``, which this server
(no cloud) cannot list, so the field stays free text and says why. The cloud's own lists
(flavors, images, networks) are read on the test cloud by tests/cloud/test_constraint_values.py."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.acceptance.dashboard.conftest import PAGE_WAIT_MS, sign_in
from tests.support.browser import screenshot
from tests.support.server import Server

PLUGINS = str(Path(__file__).resolve().parents[2] / "support" / "plugins")

TEMPLATE = """
heat_template_version: 2021-04-16
parameters:
  colour:
    type: string
    constraints: [{custom_constraint: test.colour}]
  flavor:
    type: string
    default: m1.tiny
    constraints: [{custom_constraint: nova.flavor}]
resources:
  paint:
    type: OS::Heat::Value
    properties: {value: {get_param: colour}}
outputs:
  paint: {value: {get_attr: [paint, value]}}
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    directory = tmp_path_factory.mktemp("dashboard-values")
    running = Server(
        f"sqlite:///{directory / 'stoker.sqlite'}",
        directory / "serve.log",
        STOKER_AUTH_MODE="none",
        STOKER_PLUGIN_DIRS=PLUGINS,
    ).start()
    yield running
    log = running.stop()
    assert "Traceback" not in log, log


def test_dashboard_launch_offers_a_custom_constraints_values(browser, server, project, tmp_path):
    tree = tmp_path / "paint"
    tree.mkdir()
    (tree / "paint.yaml").write_text(TEMPLATE)
    page = browser.page()
    sign_in(page, server, project.name, then="/dashboard/launch")
    page.set_input_files("#folder", str(tree))
    expect(page.locator('#file-list tr[data-file="paint.yaml"] select')).to_have_value(
        "parent", timeout=PAGE_WAIT_MS
    )
    page.click("#inspect")
    page.click("#to-parameters")

    colour = page.locator('.field[data-param="colour"]')
    expect(colour).to_have_attribute("data-values", "3", timeout=PAGE_WAIT_MS)
    expect(colour.locator("datalist option")).to_have_count(3)
    assert colour.locator("datalist option").evaluate_all("options => options.map(o => o.value)") == ["blue", "green", "red"]
    expect(colour.locator(".constraint-values")).to_have_text("3 test.colour values in the cloud: type or pick one.")
    flavor = page.locator('.field[data-param="flavor"]')
    expect(flavor).to_have_attribute("data-values", "none", timeout=PAGE_WAIT_MS)
    expect(flavor.locator(".constraint-values")).to_contain_text("The cloud's nova.flavor values could not be listed (")
    expect(flavor.locator(".constraint-values")).to_contain_text("type the value.")
    # Picked as it is typed: the list is the input's suggestions, keyboard and all.
    colour.locator("input").fill("green")
    expect(colour.locator("input")).to_have_value("green")
    expect(colour.locator(".field-error")).to_have_text("")
    screenshot(page, "launch-constraint-values")


def test_constraint_values_route(server, project):
    status, body = project.request("GET", "/custom_constraints/test.colour/values")
    assert (status, body) == (
        200,
        {
            "constraint": "test.colour",
            "values": [
                {"value": "blue", "id": "blue", "label": "Blue"},
                {"value": "green", "id": "green", "label": "Green"},
                {"value": "red", "id": "red", "label": "Red"},
            ],
            "truncated": False,
        },
    )
    status, body = project.request("GET", "/custom_constraints/no.such/values")
    assert status == 404
    assert body["error"]["message"].startswith("No custom constraint named no.such")
    status, body = project.request("GET", "/custom_constraints/ip_addr/values")
    assert (status, body["error"]["message"]) == (400, "The custom constraint ip_addr does not list its values (type the value)")
