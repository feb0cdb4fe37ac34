"""The dashboard on ``stoker serve --auth-mode keystone`` against the test cloud's real
Keystone, in a real browser: signing in with a user name and password (a wrong password
refused, saying so; a user with one project signed in to it at once; a user with two
asked to choose), or with a Keystone token; then the project's stacks."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from playwright.sync_api import expect

from tests.cloud import identity
from tests.support.browser import Browser, chromium_path, screenshot
from tests.support.server import Server

PASSWORD = "dashboard-keystone-secret"
VALUE = "heat_template_version: 2021-04-16\nresources:\n  value:\n    type: OS::Heat::Value\n    properties: {value: hello}\n"
PAGE_WAIT_MS = 60_000


@dataclass
class Deployment:
    server: Server
    keystone_url: str
    suffix: str
    projects: dict[str, dict]


@pytest.fixture(scope="module")
def deployment(openstack_cloud, tmp_path_factory) -> Iterator[Deployment]:
    """Projects a and b; ``one`` is a member of a, ``two`` of a and b; stoker's service user."""
    suffix = secrets.token_hex(3)
    url = openstack_cloud.keystone_url
    admin = identity.Keystone(url)
    roles = {role: admin.ensure("roles", "role", role)["id"] for role in ("member", "service")}
    projects = {
        name: admin.call(
            "POST",
            "/projects",
            body={"project": {"name": f"dash-{name}-{suffix}", "domain_id": "default"}},
        )["project"]
        for name in ("a", "b")
    }
    service_project = admin.ensure("projects", "project", "service", domain_id="default")
    users = []

    def user(name: str, role: str, *granted: dict) -> dict:
        made = admin.call(
            "POST",
            "/users",
            body={
                "user": {"name": f"{name}-{suffix}", "password": PASSWORD, "domain_id": "default"}
            },
        )["user"]
        users.append(made)
        for project in granted:
            admin.grant(project["id"], made["id"], roles[role])
        return made

    user("one", "member", projects["a"])
    user("two", "member", projects["a"], projects["b"])
    stoker_user = user("stoker", "service", service_project)
    directory = tmp_path_factory.mktemp("dashboard-keystone")
    server = Server(
        f"sqlite:///{directory / 'stoker.sqlite'}",
        directory / "serve.log",
        start_timeout_s=60,
        STOKER_AUTH_MODE="keystone",
        STOKER_KEYSTONE_AUTH_URL=url,
        STOKER_KEYSTONE_USERNAME=stoker_user["name"],
        STOKER_KEYSTONE_PASSWORD=PASSWORD,
        STOKER_KEYSTONE_PROJECT_NAME="service",
        STOKER_KEYSTONE_USER_DOMAIN_NAME="Default",
        STOKER_KEYSTONE_PROJECT_DOMAIN_NAME="Default",
        STOKER_KEYSTONE_REGION_NAME=identity.REGION,
        **identity.STACK_DOMAIN_ENVIRONMENT,
    )
    try:
        server.start()
        yield Deployment(server, url, suffix, projects)
    finally:
        if server.process is not None:
            log = server.stop()
            assert "Traceback" not in log, log
            assert PASSWORD not in log, log
        for made in users:
            admin.call("DELETE", f"/users/{made['id']}")
        for project in projects.values():
            admin.call("DELETE", f"/projects/{project['id']}")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    opened = Browser(chromium_path())
    yield opened
    opened.check_pages()
    opened.close()


def password_sign_in(page, deployment: Deployment, name: str, password: str = PASSWORD) -> None:
    page.goto(deployment.server.url + "/dashboard/")
    page.wait_for_url("**/dashboard/login?next=**")
    page.fill("#username", f"{name}-{deployment.suffix}")
    page.fill("#password", password)
    page.click("#password-login button[type=submit]")


def test_dashboard_keystone_password_sign_in(browser, deployment):
    page = browser.page()
    password_sign_in(page, deployment, "one", "not-the-password")
    expect(page.locator("#message")).to_have_text(
        "Keystone refused the sign-in: the user name, domain or password is wrong",
        timeout=PAGE_WAIT_MS,
    )
    screenshot(page, "login-keystone-refused")

    # One project: signed in to it at once, and its stacks listed.
    scoped = identity.Keystone(
        deployment.keystone_url,
        username=f"one-{deployment.suffix}",
        password=PASSWORD,
        project=deployment.projects["a"]["name"],
    )
    body = {"stack_name": "in-a", "template": VALUE}
    answer = identity.request(
        "POST",
        f"{deployment.server.url}/v1/{scoped.project_id}/stacks",
        token=scoped.token,
        body=body,
    )
    assert answer.status == 201, answer
    password_sign_in(page, deployment, "one")
    page.wait_for_url(deployment.server.url + "/dashboard/", timeout=PAGE_WAIT_MS)
    expect(page.locator("#stacks tbody a", has_text="in-a")).to_be_visible(timeout=PAGE_WAIT_MS)
    assert deployment.projects["a"]["id"] in page.locator("#who-label").inner_text()

    # Two projects: asked to choose, then signed in to the one chosen.
    page = browser.page()
    password_sign_in(page, deployment, "two")
    choice = page.locator("#project-choice")
    expect(choice).to_be_visible(timeout=PAGE_WAIT_MS)
    names = choice.locator("option").all_inner_texts()
    assert names == sorted([deployment.projects["a"]["name"], deployment.projects["b"]["name"]])
    screenshot(page, "login-keystone-choose-project")
    choice.select_option(label=deployment.projects["b"]["name"])
    page.click("#password-login button[type=submit]")
    page.wait_for_url(deployment.server.url + "/dashboard/", timeout=PAGE_WAIT_MS)
    expect(page.locator("#who-label")).to_contain_text(deployment.projects["b"]["id"])
    expect(page.locator("#stacks tbody td.empty")).to_have_text(
        "No stacks in this project yet.", timeout=PAGE_WAIT_MS
    )


def test_dashboard_keystone_token_sign_in(browser, deployment):
    scoped = identity.Keystone(
        deployment.keystone_url,
        username=f"two-{deployment.suffix}",
        password=PASSWORD,
        project=deployment.projects["a"]["name"],
    )
    page = browser.page()
    page.goto(deployment.server.url + "/dashboard/login")
    page.fill("#token", scoped.token)
    page.click("#login button[type=submit]")
    page.wait_for_url(deployment.server.url + "/dashboard/", timeout=PAGE_WAIT_MS)
    expect(page.locator("#who-label")).to_contain_text(deployment.projects["a"]["id"])
