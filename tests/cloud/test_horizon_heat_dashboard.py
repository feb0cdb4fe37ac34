"""Horizon with heat-dashboard in front of stoker (issue 33): a user who keeps Horizon keeps it.

Horizon 27 and heat-dashboard 16 from PyPI (their own venv, tests/support/horizon.py) run with
a minimal local_settings against the test cloud's real Keystone, whose catalog names a
``stoker serve --auth-mode keystone`` as the ``orchestration`` service, as Heat would be. A
real user logs in through Horizon's login form (CSRF and all, with ``requests``) and, on one
Horizon and one stack: the stack list shows a stack made through stoker's API, its detail page
and its topology, resources and events tabs show it, and heat-dashboard's two-step launch form
creates a second stack, which stoker then holds. What the pages show is asserted, not only
their status: Horizon turns a failed API call into a 200 page with an error message.
"""

from __future__ import annotations

import html
import json
import re
import secrets
import time
from pathlib import Path

import requests

from tests.cloud import identity
from tests.cloud.cloud import free_port
from tests.support.horizon import Horizon, require_horizon
from tests.support.server import Server

PASSWORD = "horizon-secret"
TEMPLATE = """
heat_template_version: 2021-04-16
description: made for Horizon
parameters:
  greeting: {type: string, default: hello}
resources:
  first:
    type: OS::Heat::Value
    properties: {value: {get_param: greeting}}
  second:
    type: OS::Heat::Value
    properties: {value: {get_attr: [first, value]}}
outputs:
  said: {value: {get_attr: [second, value]}}
"""


def _hidden(page: str, name: str) -> str:
    found = re.search(rf'<input[^>]*name="{re.escape(name)}"[^>]*value="([^"]*)"', page) or re.search(rf'<input[^>]*value="([^"]*)"[^>]*name="{re.escape(name)}"', page)
    assert found, f"no {name} field in:\n{page[:3000]}"
    return html.unescape(found.group(1))


def _no_error(page: str) -> None:
    # Horizon shows a failed API call as an alert on a 200 page.
    errors = re.findall(r'alert-(?:danger|warning) alert-dismissable.*?</div>', page, re.S)
    assert not errors, errors


def test_horizon_heat_dashboard_against_stoker(openstack_cloud, tmp_path: Path):
    horizon_environment = require_horizon(tmp_path / "horizon-build.log")
    suffix = secrets.token_hex(3)
    admin = identity.Keystone(openstack_cloud.keystone_url)
    roles = {role: admin.ensure("roles", "role", role)["id"] for role in ("member", "service")}
    project = admin.call("POST", "/projects", body={"project": {"name": f"horizon-{suffix}", "domain_id": "default"}})["project"]
    service_project = admin.ensure("projects", "project", "service", domain_id="default")
    users = []
    for name, granted_in, role in (("horizon", project, "member"), ("stoker-horizon", service_project, "service")):
        users.append(admin.call("POST", "/users", body={"user": {"name": f"{name}-{suffix}", "password": PASSWORD, "domain_id": "default"}})["user"])
        admin.grant(granted_in["id"], users[-1]["id"], roles[role])
    server = Server(
        f"sqlite:///{tmp_path / 'stoker.sqlite'}",
        tmp_path / "serve.log",
        STOKER_AUTH_MODE="keystone",
        STOKER_KEYSTONE_AUTH_URL=openstack_cloud.keystone_url,
        STOKER_KEYSTONE_USERNAME=users[1]["name"],
        STOKER_KEYSTONE_PASSWORD=PASSWORD,
        STOKER_KEYSTONE_PROJECT_NAME="service",
        STOKER_KEYSTONE_USER_DOMAIN_NAME="Default",
        STOKER_KEYSTONE_PROJECT_DOMAIN_NAME="Default",
        STOKER_KEYSTONE_REGION_NAME=identity.REGION,
        **identity.STACK_DOMAIN_ENVIRONMENT,
    )
    service = admin.call("POST", "/services", body={"service": {"name": f"stoker-{suffix}", "type": "orchestration"}})["service"]
    horizon = Horizon(horizon_environment, openstack_cloud.keystone_url, tmp_path / "horizon", free_port())
    try:
        server.start()
        # The catalog entry heat-dashboard finds stoker by, as Heat's own: the project in the path.
        admin.call("POST", "/endpoints", body={"endpoint": {"service_id": service["id"], "interface": "public", "region_id": identity.REGION, "url": server.url + "/v1/%(tenant_id)s"}})
        horizon.start()
        _drive(horizon, server, openstack_cloud.keystone_url, users[0]["name"], project)
    finally:
        log = horizon.stop()
        if server.process is not None:
            serve_log = server.stop()
            assert "Traceback" not in serve_log, serve_log
        admin.call("DELETE", f"/services/{service['id']}")
        for made in users:
            admin.call("DELETE", f"/users/{made['id']}")
        admin.call("DELETE", f"/projects/{project['id']}")
    assert "Traceback" not in log, log


def _drive(horizon: Horizon, server: Server, keystone_url: str, username: str, project: dict) -> None:
    token = identity.Keystone(keystone_url, username=username, password=PASSWORD, project=project["name"]).token
    api = requests.Session()
    api.trust_env = False  # loopback: never through a machine's HTTP proxy
    api.headers.update({"X-Auth-Token": token})
    base = f"{server.url}/v1/{project['id']}"
    made = api.post(f"{base}/stacks", json={"stack_name": "made-by-api", "template": TEMPLATE}, timeout=30)
    assert made.status_code == 201, made.text
    stack_id = made.json()["stack"]["id"]
    _wait_complete(api, f"{base}/stacks/made-by-api/{stack_id}")

    browser = requests.Session()
    browser.trust_env = False
    login = browser.get(f"{horizon.url}/auth/login/", timeout=60)
    form = {"csrfmiddlewaretoken": _hidden(login.text, "csrfmiddlewaretoken"), "username": username, "password": PASSWORD, "region": _hidden(login.text, "region")}
    landed = browser.post(f"{horizon.url}/auth/login/", data=form, headers={"Referer": f"{horizon.url}/auth/login/"}, timeout=120)
    assert landed.status_code == 200 and "/auth/login/" not in landed.url, (landed.url, landed.text[:2000])

    # The stack list: the stack made through stoker's API, with its status.
    stacks = browser.get(f"{horizon.url}/project/stacks/", timeout=120)
    _no_error(stacks.text)
    assert "made-by-api" in stacks.text and "Create Complete" in stacks.text, stacks.text

    # Its detail page: overview, then the topology JSON and the resources and events tabs.
    detail = browser.get(f"{horizon.url}/project/stacks/stack/{stack_id}/", timeout=120)
    _no_error(detail.text)
    assert "made for Horizon" in detail.text and stack_id in detail.text, detail.text
    topology = browser.get(f"{horizon.url}/project/stacks/get_d3_data/{stack_id}/", timeout=120).json()
    nodes = {node["name"]: node for node in topology["nodes"]}
    assert set(nodes) == {"first", "second"} and topology["stack"]["stack_id"] == stack_id, json.dumps(topology)
    assert topology["stack"]["status"] == nodes["first"]["status"] == "CREATE_COMPLETE", json.dumps(topology)
    # "second" depends on "first": the topology links them.
    assert nodes["second"]["required_by"] == [] and "second" in nodes["first"]["required_by"], topology
    resources = browser.get(f"{horizon.url}/project/stacks/stack/{stack_id}/?tab=stack_details__resources", timeout=120)
    _no_error(resources.text)
    assert re.search(r"first.*OS::Heat::Value", resources.text, re.S) and "second" in resources.text, resources.text
    events = browser.get(f"{horizon.url}/project/stacks/stack/{stack_id}/?tab=stack_details__events", timeout=120)
    _no_error(events.text)
    assert "Create Complete" in events.text and "first" in events.text, events.text

    # heat-dashboard's launch: the template form (validated by stoker), then the stack form
    # with the template's parameters.
    select = browser.get(f"{horizon.url}/project/stacks/select_template", timeout=120)
    chosen = browser.post(
        f"{horizon.url}/project/stacks/select_template",
        data={"csrfmiddlewaretoken": _hidden(select.text, "csrfmiddlewaretoken"), "template_source": "raw", "template_data": TEMPLATE, "environment_source": "raw", "environment_data": ""},
        headers={"Referer": select.url},
        timeout=120,
    )
    _no_error(chosen.text)
    assert 'name="__param_greeting"' in chosen.text, chosen.text
    launched = browser.post(
        f"{horizon.url}/project/stacks/launch",
        data={
            "csrfmiddlewaretoken": _hidden(chosen.text, "csrfmiddlewaretoken"),
            "parameters": _hidden(chosen.text, "parameters"),
            "environment_data": "",
            "stack_name": "launched-in-horizon",
            "timeout_mins": "5",
            "password": PASSWORD,
            "__param_greeting": "from Horizon",
        },
        headers={"Referer": chosen.url},
        timeout=120,
    )
    _no_error(launched.text)
    assert launched.url.rstrip("/").endswith("/project/stacks") and "Stack creation started." in launched.text, (launched.url, launched.text)
    stack = _wait_complete(api, f"{base}/stacks/launched-in-horizon")
    # The parameter typed into the form reached the template.
    assert [output["output_value"] for output in stack["outputs"]] == ["from Horizon"], stack
    listed = browser.get(f"{horizon.url}/project/stacks/", timeout=120)
    assert "launched-in-horizon" in listed.text, listed.text

    # The other two panels: resource types and template versions, as stoker lists them.
    types = browser.get(f"{horizon.url}/project/resource_types/", timeout=120)
    _no_error(types.text)
    assert "OS::Heat::Value" in types.text and "OS::Nova::Server" in types.text, types.text
    versions = browser.get(f"{horizon.url}/project/template_versions/", timeout=120)
    _no_error(versions.text)
    assert "heat_template_version.2021-04-16" in versions.text, versions.text

    # The stack table's delete action deletes the first stack through stoker.
    deleted = browser.post(
        f"{horizon.url}/project/stacks/",
        data={"csrfmiddlewaretoken": _hidden(listed.text, "csrfmiddlewaretoken"), "action": f"stacks__delete__{stack_id}"},
        headers={"Referer": listed.url},
        timeout=120,
    )
    _no_error(deleted.text)
    assert "Deleted Stack: made-by-api" in deleted.text, deleted.text
    deadline = time.monotonic() + 60
    while api.get(f"{base}/stacks/made-by-api/{stack_id}", timeout=30).json()["stack"]["stack_status"] != "DELETE_COMPLETE":
        assert time.monotonic() < deadline
        time.sleep(0.2)


def _wait_complete(api: requests.Session, url: str) -> dict:
    deadline = time.monotonic() + 60
    while True:
        answer = api.get(url, timeout=30)
        assert answer.status_code == 200, answer.text
        stack = answer.json()["stack"]
        if not stack["stack_status"].endswith("IN_PROGRESS"):
            assert stack["stack_status"] == "CREATE_COMPLETE", stack
            return stack
        assert time.monotonic() < deadline, stack
        time.sleep(0.2)
