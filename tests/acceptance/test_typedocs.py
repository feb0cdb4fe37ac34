"""The resource type reference as a user gets it: ``stoker docs build DIR`` run as a
real command (embedded, and ``--url`` against a real ``stoker serve``), its files read
back as a browser would follow them, and ``/dashboard/types/`` fetched over real HTTP
from that server in token mode. Every page is checked against the resource type API's
own answer (``stoker resource type show``, ``GET /v1/{project}/resource_types/{type}``)."""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
import yaml

from tests.acceptance.conftest import client_environment
from tests.support.server import Server

STOKER = str(Path(sys.executable).with_name("stoker"))

READER = "typedocs-reader-token-5e1d"
ADMIN = "typedocs-admin-token-93ac"
TOKENS = {
    "tokens": {
        READER: {"project_id": "proj-a", "user_id": "rita", "roles": ["reader"]},
        ADMIN: {"project_id": "proj-a", "user_id": "ada", "roles": ["admin"]},
    }
}

# A plugin whose documentation is full of markup, and a HIDDEN one.
PLUGIN = '''
from stoker.sdk import attributes, constraints, properties, resource, support


class Greeting(resource.Resource):
    """Says <script>alert("hi")</script> & more.

    A second paragraph, with "quotes".
    """

    support_status = support.SupportStatus(version="1.0")
    properties_schema = {
        "name": properties.Schema(
            properties.Schema.STRING, "Who <b>is</b> greeted.", required=True,
            constraints=[constraints.AllowedPattern("^<[a-z]+>$")],
        ),
        "count": properties.Schema(
            properties.Schema.INTEGER, "How many.", default=2, update_allowed=True,
            constraints=[constraints.Range(1, 5)],
        ),
        "tag": properties.Schema(properties.Schema.STRING, "A tag.", immutable=True, default='"><img src=x onerror=alert(1)>'),
    }
    attributes_schema = {"text": attributes.Schema("The <i>greeting</i>.", type=attributes.Schema.STRING)}

    def handle_create(self):
        self.resource_id_set("greeting")


class Retired(resource.Resource):
    """Kept for old stacks."""

    support_status = support.SupportStatus(
        status=support.HIDDEN, version="2.0", message="retired",
        previous_status=support.SupportStatus(status=support.DEPRECATED, version="1.5", previous_status=support.SupportStatus(version="1.0")),
    )

    def handle_create(self):
        self.resource_id_set("retired")


def resource_mapping():
    return {"Demo::Greeting": Greeting, "Demo::Retired": Retired}
'''

# Types whose pages are compared with the API's answer, field by field: plugins of
# several kinds, a template type of the global environment, and the plugin above.
COMPARED = (
    "OS::Heat::RandomString",
    "OS::Nova::Server",
    "AWS::EC2::Instance",
    "AWS::CloudWatch::Alarm",
    "Demo::Greeting",
)
HIDDEN = ("OS::Monasca::Notification", "OS::Designate::Domain", "Demo::Retired")


class Page(HTMLParser):
    """What the tests read of a page: links, property rows, attribute rows, the example."""

    def __init__(self, text: str):
        super().__init__()
        self.links: list[str] = []
        self.scripts: list[str] = []
        self.properties: dict[str, dict[str, str]] = {}
        self.attributes: dict[str, dict[str, str]] = {}
        self.types: list[str] = []
        self._in: str | None = None
        self.texts: dict[str, str] = {"example": "", "support-status": ""}
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {key: value or "" for key, value in attrs}
        if tag in ("a", "link") and "href" in found:
            self.links.append(found["href"])
        if tag == "script":
            self.scripts.append(found.get("src", ""))
        if tag == "tr" and "data-property" in found:
            self.properties[found["data-property"]] = found
        if tag == "tr" and "data-attribute" in found:
            self.attributes[found["data-attribute"]] = found
        if tag == "li" and "data-type" in found:
            self.types.append(found["data-type"])
        if tag == "pre" and found.get("class") == "example":
            self._in = "example"
        if found.get("id") == "support-status":
            self._in = "support-status"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("pre", "p"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in:
            self.texts[self._in] += data


def update_words(schema: dict[str, Any]) -> str:
    if schema["immutable"]:
        return "immutable: an update that changes it fails"
    return "updated in place" if schema["update_allowed"] else "replaced on update"


def assert_page_says_what_the_api_says(
    page: Page, schema: dict[str, Any], example: dict[str, Any] | None
) -> None:
    top = {name: row for name, row in page.properties.items() if row["class"] == "depth-0"}
    assert sorted(top) == sorted(schema["properties"]), schema["resource_type"]
    for name, expected in schema["properties"].items():
        row = top[name]
        assert row["data-type"] == expected["type"], (schema["resource_type"], name)
        assert row["data-required"] == str(expected["required"]).lower(), (
            schema["resource_type"],
            name,
        )
        assert row["data-update"] == update_words(expected), (schema["resource_type"], name)
        if "default" in expected:
            assert json.loads(row["data-default"]) == expected["default"], (
                schema["resource_type"],
                name,
            )
        else:
            assert "data-default" not in row, (schema["resource_type"], name)
    assert sorted(page.attributes) == sorted(schema["attributes"]), schema["resource_type"]
    for name, expected in schema["attributes"].items():
        assert page.attributes[name]["data-type"] == expected.get("type", ""), (
            schema["resource_type"],
            name,
        )
    assert page.texts["support-status"].startswith(schema["support_status"]["status"])
    if example is None:
        assert page.texts["example"] == ""
    else:
        assert yaml.safe_load(page.texts["example"]) == example


def run(*args: str, env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess:
    result = subprocess.run(
        [STOKER, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in result.stderr, result.stderr
    if check:
        assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def plugins(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("typedocs-plugins")
    (directory / "greeting.py").write_text(PLUGIN)
    return directory


@pytest.fixture(scope="module")
def embedded(tmp_path_factory, plugins) -> dict[str, str]:
    """The environment of an embedded ``stoker`` that loads the plugins."""
    store = tmp_path_factory.mktemp("typedocs-store")
    return client_environment(
        {
            "STOKER_DATABASE_URL": f"sqlite:///{store / 'stoker.sqlite'}",
            "STOKER_PLUGIN_DIRS": str(plugins),
        }
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory, embedded) -> Path:
    directory = tmp_path_factory.mktemp("typedocs-site") / "reference"
    result = run("docs", "build", str(directory), env=embedded)
    assert f"resource type pages and {directory / 'index.html'}" in result.stderr
    return directory


@pytest.fixture(scope="module")
def server(tmp_path_factory, plugins) -> Any:
    directory = tmp_path_factory.mktemp("typedocs-server")
    (directory / "tokens.yaml").write_text(yaml.safe_dump(TOKENS))
    running = Server(
        f"sqlite:///{directory / 'stoker.sqlite'}", directory / "serve.log",
        STOKER_AUTH_MODE="token", STOKER_AUTH_TOKENS_FILE=str(directory / "tokens.yaml"), STOKER_PLUGIN_DIRS=str(plugins),
    ).start()  # fmt: skip
    yield running
    running.stop()


def listed(env: dict[str, str]) -> list[str]:
    return [
        row["Resource Type"]
        for row in json.loads(run("resource", "type", "list", "-f", "json", env=env).stdout)
    ]


def api_schema(env: dict[str, str], type_name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    schema = json.loads(run("resource", "type", "show", type_name, "-f", "json", env=env).stdout)
    example = json.loads(
        run(
            "resource", "type", "show", type_name, "--template-type", "hot", "-f", "json", env=env
        ).stdout
    )
    return schema, example


def test_docs_build_writes_a_page_for_each_listed_type_and_none_for_hidden_ones(site, embedded):
    from stoker.typedocs.pages import file_name

    names = listed(embedded)
    assert "Demo::Greeting" in names and len(names) > 150
    index = Page((site / "index.html").read_text())
    assert sorted(index.types) == sorted(names)
    pages = {path.name for path in site.glob("*.html")} - {"index.html"}
    assert pages == {file_name(name) for name in names}
    for hidden in HIDDEN:
        assert hidden not in names
        assert not (site / file_name(hidden)).exists()
        # HIDDEN as the API says it: its schema is refused.
        refused = run("resource", "type", "show", hidden, env=embedded, check=False)
        assert refused.returncode == 1 and "HIDDEN" in refused.stderr, refused.stderr
    assert sorted(path.name for path in (site / "_static").iterdir()) == [
        "typedocs.css",
        "typedocs.js",
    ]


@pytest.mark.parametrize("type_name", COMPARED)
def test_docs_build_page_says_what_the_type_api_says(site, embedded, type_name):
    from stoker.typedocs.pages import file_name

    schema, example = api_schema(embedded, type_name)
    assert_page_says_what_the_api_says(
        Page((site / file_name(type_name)).read_text()), schema, example
    )


def test_docs_build_escapes_every_value_a_plugin_gives(site):
    text = (site / "Demo.Greeting.html").read_text()
    assert (
        "<script>alert" not in text
        and "<b>is</b>" not in text
        and "<i>greeting" not in text
        and "<img" not in text
    )
    assert "Says &lt;script&gt;alert(&#34;hi&#34;)&lt;/script&gt; &amp; more." in text
    assert "Who &lt;b&gt;is&lt;/b&gt; greeted." in text
    page = Page(text)
    assert page.properties["tag"]["data-default"] == json.dumps('"><img src=x onerror=alert(1)>')
    assert page.properties["tag"]["data-update"] == "immutable: an update that changes it fails"
    assert page.properties["count"]["data-update"] == "updated in place"
    assert (
        "matches the pattern ^&lt;[a-z]+&gt;$" in text and "value at least 1 and at most 5" in text
    )
    assert page.scripts == []  # the type pages run no script at all
    # The index's summary of it is escaped too.
    assert "Says &lt;script&gt;" in (site / "index.html").read_text()


def test_docs_build_links_are_relative_and_each_resolves_to_a_file(site):
    for path in site.glob("*.html"):
        page = Page(path.read_text())
        assert page.links, path.name
        for href in page.links + [src for src in page.scripts if src]:
            parts = urlsplit(href)
            assert not parts.scheme and not parts.netloc and not parts.path.startswith("/"), (
                path.name,
                href,
            )
            target = (path.parent / parts.path).resolve()
            assert target.is_file(), (path.name, href)
    # The index links each type's page and the one CSS file; the search script is beside it.
    index = Page((site / "index.html").read_text())
    assert "_static/typedocs.css" in index.links and index.scripts == ["_static/typedocs.js"]


def test_docs_build_against_a_server_writes_the_same_site(site, server, tmp_path):
    env = client_environment({"STOKER_URL": f"{server.url}/v1/proj-a", "STOKER_TOKEN": ADMIN})
    run("docs", "build", str(tmp_path / "remote"), "--quiet", env=env)
    built = {
        path.relative_to(site): path.read_bytes() for path in site.rglob("*") if path.is_file()
    }
    remote = {
        path.relative_to(tmp_path / "remote"): path.read_bytes()
        for path in (tmp_path / "remote").rglob("*")
        if path.is_file()
    }
    assert sorted(remote) == sorted(built)
    assert [name for name in built if remote[name] != built[name]] == []
    # A reader's site: the types the policy lets a reader see, without the examples a
    # reader may not generate (stacks:generate_template), as the served pages show them.
    env = client_environment({"STOKER_URL": f"{server.url}/v1/proj-a", "STOKER_TOKEN": READER})
    run("docs", "build", str(tmp_path / "reader"), "--quiet", env=env)
    assert not (tmp_path / "reader" / "OS.Nova.Flavor.html").exists()
    page = Page((tmp_path / "reader" / "OS.Heat.RandomString.html").read_text())
    assert "length" in page.properties and page.texts["example"] == ""


def test_docs_build_into_a_file_is_an_error_naming_it(embedded, tmp_path):
    (tmp_path / "taken").write_text("")
    result = run("docs", "build", str(tmp_path / "taken"), env=embedded, check=False)
    assert result.returncode != 0 and "taken" in result.stderr, result.stderr


def fetch(url: str, token: str | None = None) -> tuple[int, str, str]:
    request = urllib.request.Request(url, headers={"X-Auth-Token": token} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.headers["content-type"], response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.headers["content-type"], error.read().decode()


def api(server: Server, path: str, token: str) -> Any:
    status, _, body = fetch(f"{server.url}/v1/proj-a{path}", token)
    assert status == 200, body
    return json.loads(body)


def test_dashboard_types_need_the_api_token(server):
    for path in ("/dashboard/types/", "/dashboard/types/OS::Heat::RandomString"):
        status, _, body = fetch(server.url + path)
        assert status == 401 and json.loads(body)["error"]["type"] == "HTTPUnauthorized", body
        assert fetch(server.url + path, "not-a-token-of-this-server")[0] == 401
    # The stylesheet and the script are the same for everyone: no token.
    status, content_type, css = fetch(server.url + "/dashboard/types/_static/typedocs.css")
    assert status == 200 and content_type.startswith("text/css") and "body" in css
    assert fetch(server.url + "/dashboard/types/_static/nothing.css")[0] == 404


def test_dashboard_types_index_lists_what_the_type_api_lists_for_the_caller(server):
    for token in (READER, ADMIN):
        status, content_type, body = fetch(server.url + "/dashboard/types/", token)
        assert status == 200 and content_type.startswith("text/html"), body
        names = api(server, "/resource_types", token)["resource_types"]
        assert sorted(Page(body).types) == sorted(names)
    # Heat's policy keeps admin-only types from a reader, in the API and on the pages alike.
    assert "OS::Nova::Flavor" not in Page(fetch(server.url + "/dashboard/types/", READER)[2]).types
    assert "OS::Nova::Flavor" in Page(fetch(server.url + "/dashboard/types/", ADMIN)[2]).types
    # A list with descriptions reaches the global environment's template types too.
    described = api(server, "/resource_types?with_description=true", ADMIN)["resource_types"]
    assert {
        "resource_type": "AWS::CloudWatch::Alarm",
        "description": "AWS::CloudWatch::Alarm using Aodh.",
    } in described


@pytest.mark.parametrize("type_name", COMPARED)
def test_dashboard_type_page_says_what_the_type_api_says(server, type_name):
    index_url = server.url + "/dashboard/types/"
    quoted = urllib.parse.quote(type_name, safe="")
    [href] = [link for link in Page(fetch(index_url, READER)[2]).links if link.endswith(quoted)]
    page_url = urljoin(index_url, href)
    for token in (READER, ADMIN):
        status, content_type, body = fetch(page_url, token)
        assert status == 200 and content_type.startswith("text/html"), body
        schema = api(server, f"/resource_types/{quoted}", token)
        status, _, example = fetch(
            f"{server.url}/v1/proj-a/resource_types/{quoted}/template?template_type=hot", token
        )
        # A reader may not generate templates (stacks:generate_template): no example.
        assert status == (403 if token == READER else 200), example
        page = Page(body)
        assert_page_says_what_the_api_says(
            page, schema, json.loads(example) if status == 200 else None
        )
    # Its links lead back to the index and to the stylesheet, relative to the page.
    for link in page.links:
        assert fetch(urljoin(page_url, link), READER)[0] == 200, link


def error_of(server: Server, path: str, token: str) -> tuple[int, str, str]:
    """A refused page: its status, and the message of its page and of the API's answer."""
    status, content_type, body = fetch(server.url + "/dashboard/types/" + path, token)
    assert content_type.startswith("text/html"), body
    [message] = re.findall(r'<p class="error-message">([^<]*)</p>', body)
    api_status, _, api_body = fetch(f"{server.url}/v1/proj-a/resource_types/{path}", token)
    assert api_status == status, api_body
    return status, html.unescape(message), json.loads(api_body)["error"]["message"]


def test_dashboard_type_page_of_a_hidden_unknown_or_forbidden_type_is_the_apis_error(server):
    for hidden in HIDDEN:
        status, message, said = error_of(server, urllib.parse.quote(hidden, safe=""), READER)
        assert status == 400 and "HIDDEN" in message and message == said
    status, message, said = error_of(server, "OS::Heat::RandomStrin", READER)
    assert status == 404 and "did you mean 'OS::Heat::RandomString'?" in message and message == said
    status, message, said = error_of(server, "OS::Nova::Flavor", READER)
    assert status == 403 and message == said
    # What the path names is text on the page, never markup.
    status, message, said = error_of(server, urllib.parse.quote("<script>x", safe=""), READER)
    assert status == 404 and "<script>x" in message and message == said
    assert "<script>x" not in fetch(server.url + "/dashboard/types/%3Cscript%3Ex", READER)[2]


def browser() -> str | None:
    return next(
        (
            found
            for name in ("chromium", "chromium-browser", "google-chrome")
            if (found := shutil.which(name))
        ),
        None,
    )


def shown_in_browser(page: Path, query: str) -> tuple[list[str], bool]:
    """The types the index shows, after its script ran on ``?q=query``, in a real
    headless browser from ``file://``; and whether it says nothing matches."""
    command = [
        browser() or "",
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--dump-dom",
        page.as_uri() + "?q=" + urllib.parse.quote(query),
    ]
    dom = subprocess.run(command, capture_output=True, text=True, timeout=120).stdout
    items = re.findall(r'<li class="type" data-type="([^"]+)"([^>]*)>', dom)
    return [name for name, rest in items if "hidden" not in rest], bool(
        re.search(r'<p id="no-match">', dom)
    )


def test_docs_build_index_search_filters_as_typed_in_a_browser(site):
    if browser() is None:
        pytest.skip("no headless browser (chromium) to run the index's script in")
    assert shown_in_browser(site / "index.html", "random STRING") == (
        ["OS::Heat::RandomString"],
        False,
    )
    shown, nothing = shown_in_browser(site / "index.html", "floating")
    assert (
        "OS::Neutron::FloatingIP" in shown and "OS::Heat::RandomString" not in shown and not nothing
    )
    assert shown_in_browser(site / "index.html", "no-type-is-called-this") == ([], True)


def test_dashboard_types_in_none_mode_need_no_token(cli_server):
    status, _, body = fetch(cli_server.url + "/dashboard/types/")
    assert status == 200 and "OS::Nova::Flavor" in Page(body).types
    status, _, body = fetch(cli_server.url + "/dashboard/types/OS::Heat::RandomString")
    assert status == 200 and "length" in Page(body).properties
