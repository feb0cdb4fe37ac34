"""How ``stoker serve`` serves the dashboard, asked over plain HTTP (no browser): the pages
under /dashboard/ with their security headers, every asset they load shipped inside the
package and served from this origin (nothing from another host), the session check of
auth mode none, and clear answers to addresses that are no page."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from importlib import resources

from tests.support.server import Server


def get(server: Server, path: str, **headers: str) -> tuple[int, dict[str, str], str]:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(
            urllib.request.Request(server.url + path, headers=headers), timeout=30
        ) as response:
            return response.status, dict(response.headers), response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read().decode()


def test_dashboard_pages_are_served_with_their_security_headers(server):
    for path in (
        "/dashboard/",
        "/dashboard/login",
        "/dashboard/launch",
        "/dashboard/stacks/web/0d3c1f6e-0000-4000-8000-000000000000",
    ):
        status, headers, body = get(server, path)
        assert status == 200, (path, body)
        assert headers["content-type"].startswith("text/html")
        policy = headers["content-security-policy"]
        assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
        assert headers["x-content-type-options"] == "nosniff"
        # The navigation, with the slot of the resource type pages.
        assert 'href="/dashboard/types/"' in body and 'href="/dashboard/"' in body
        assert 'href="/dashboard/launch"' in body
        assert 'data-auth-mode="none"' in body


def test_dashboard_assets_ship_in_the_package_and_load_from_this_origin_only(server):
    shipped = {
        path.name: path.read_text()
        for path in resources.files("stoker.web").joinpath("static").iterdir()
        if path.is_file()
    }
    pages = [
        get(server, path)[2]
        for path in (
            "/dashboard/",
            "/dashboard/login",
            "/dashboard/launch",
            "/dashboard/stacks/a/b",
            "/dashboard/nothing-here",
        )
    ]
    loaded = {
        name for page in pages for name in re.findall(r"/dashboard/static/([\w.]+)\?v=", page)
    }
    imported = {
        name for text in shipped.values() for name in re.findall(r'from "\./([\w.]+)"', text)
    }
    assert loaded | imported <= set(shipped), "a page loads an asset the package does not ship"
    assert loaded | imported == set(shipped), "an asset no page uses"
    for name, text in shipped.items():
        # No other host: no CDN, no font or script from the internet (the SVG namespace
        # is a name, never fetched).
        assert not re.search(
            r"""["'(`]\s*(https?:)?//[\w.-]""", text.replace('"http://www.w3.org/2000/svg"', "")
        ), name
        status, headers, body = get(server, f"/dashboard/static/{name}")
        assert status == 200 and body == text, name
        if name.endswith(".js"):
            assert headers["content-type"].startswith("text/javascript"), name


def test_dashboard_session_check_in_auth_mode_none_names_the_project(server):
    status, _, body = get(server, "/dashboard/session")
    assert status == 400
    assert (
        json.loads(body)["error"]["message"]
        == "Name a project: auth mode none takes the project from the request (?project=NAME)"
    )
    status, headers, body = get(server, "/dashboard/session?project=team-a")
    assert status == 200 and headers["cache-control"] == "no-store"
    assert json.loads(body) == {
        "auth_mode": "none",
        "project_id": "team-a",
        "user_id": None,
        "roles": ["admin", "member", "reader"],
        "is_admin": False,
    }


def test_dashboard_answers_what_is_no_page(server):
    status, headers, _ = get(server, "/dashboard")
    assert (status, headers["location"]) == (307, f"{server.url}/dashboard/")
    status, headers, body = get(server, "/dashboard/no/such/page")
    assert status == 404 and headers["content-type"].startswith("text/html")
    assert "The dashboard has no page at /dashboard/no/such/page." in body
    assert get(server, "/dashboard/static/no-such-file.js")[0] == 404
    # Whatever the path holds is text on the page, never markup.
    status, _, body = get(server, "/dashboard/stacks/%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E/x")
    assert (
        status == 200 and "<img src=x" not in body and "&lt;img src=x onerror=alert(1)&gt;" in body
    )
    status, _, body = get(server, "/dashboard/%3Cimg%20src%3Dx%3E")
    assert status == 404 and "<img src=x>" not in body and "&lt;img src=x&gt;" in body


def test_dashboard_password_sign_in_is_keystone_modes_only(server):
    request = urllib.request.Request(
        server.url + "/dashboard/session",
        data=json.dumps({"username": "u", "password": "p"}).encode(),
        method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        urllib.request.urlopen(request, timeout=30)
        raise AssertionError("a password sign-in was taken in auth mode none")
    except urllib.error.HTTPError as error:
        assert error.code == 400
        assert (
            json.loads(error.read())["error"]["message"]
            == "Auth mode none signs in with a token, not a password"
        )
