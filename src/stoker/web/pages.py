"""The dashboard's routes: its pages, its static assets and the session check.

Each page is an HTML shell rendered here (the navigation, the page's regions, the
server's auth mode) that the client in ``static/`` fills from the Orchestration API
with the signed-in user's token. ``routes()`` is a Starlette ``Router`` that
``api/app.py`` mounts at ``/dashboard``; ``request.app`` is then the API's app, whose
``state.authenticator`` the session check asks.

Every page is sent with a Content-Security-Policy that lets it load scripts, styles
and data from this origin only (no inline script, no other host), and may not be
framed by another site.
"""

from __future__ import annotations

import functools
import html
import json
import re
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route, Router
from starlette.staticfiles import StaticFiles

from stoker.web import keystone_login

PREFIX = "/dashboard"
STATIC = Path(__file__).with_name("static")
# The assets' version in their URLs, so a browser never mixes an old script with a new page.
ASSET_VERSION = "2"
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self';"
        " frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
    "Cache-Control": "no-store",
}
_MODE_HINTS = {
    "none": "This server does not authenticate (auth mode none): name the project to work in.",
    "token": "Sign in with one of this server's tokens (auth mode token).",
    "keystone": "Sign in with your Keystone user, or with a Keystone token (auth mode keystone).",
}
# Keystone mode's second way in: the user's name and password, sent to this server, which
# asks Keystone for the token (web.keystone_login).
_PASSWORD_FORM = """<h2>With a user name and password</h2>
<form id="password-login" class="login">
  <label>User name <input type="text" id="username" name="username" autocomplete="username" required></label>
  <label>Password <input type="password" id="password" name="password" autocomplete="current-password" required></label>
  <label>Domain <input type="text" id="user-domain" name="user_domain" value="Default" autocomplete="on"></label>
  <label>Project <input type="text" id="project-name" name="project_name" placeholder="choose after signing in" autocomplete="on"></label>
  <label id="project-choice-label" hidden>Project <select id="project-choice" name="project_id"></select></label>
  <button type="submit">Sign in</button>
</form>"""


_IMPORT = re.compile(r'^import [^;]*? from "\./([\w]+\.js)";', re.MULTILINE)


@functools.cache
def _imports(module: str) -> tuple[str, ...]:
    """The modules ``module`` imports, all the way down, read from their import lines: the
    page names them all at once (modulepreload), so the browser fetches them together
    instead of a level after the other before the page's first API call."""
    found: list[str] = []
    for name in _IMPORT.findall((STATIC / module).read_text()):
        for item in (name, *_imports(name)):
            if item not in found:
                found.append(item)
    return tuple(found)


def _page(request: Request, title: str, page: str, main: str, **data: str) -> HTMLResponse:
    """A page: the shell every page shares around ``main`` (already escaped HTML)."""
    mode = _auth_mode(request)
    attributes = " ".join(
        f'data-{html.escape(name.replace("_", "-"))}="{html.escape(value)}"'
        for name, value in data.items()
    )
    preloads = "\n".join(
        f'<link rel="modulepreload" href="{PREFIX}/static/{name}">' for name in _imports(f"{page}.js")
    )
    body = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)} - stoker</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{PREFIX}/static/dashboard.css?v={ASSET_VERSION}">
<script type="module" src="{PREFIX}/static/{page}.js?v={ASSET_VERSION}"></script>
{preloads}
</head>
<body data-page="{page}" data-auth-mode="{html.escape(mode)}" data-base="{PREFIX}" {attributes}>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="{PREFIX}/">stoker</a>
  <nav aria-label="Main">
    <a href="{PREFIX}/" id="nav-stacks">Stacks</a>
    <a href="{PREFIX}/launch" id="nav-launch">Launch</a>
    <a href="{PREFIX}/types/" id="nav-types">Resource types</a>
  </nav>
  <div class="who" id="who" aria-live="polite"></div>
</header>
<main id="main" tabindex="-1">
{main}
</main>
</body>
</html>
"""
    return HTMLResponse(body, headers=SECURITY_HEADERS)


def _auth_mode(request: Request) -> str:
    authenticator = getattr(request.app.state, "authenticator", None)
    return getattr(authenticator, "mode", "none")


async def stacks_page(request: Request) -> Response:
    main = """<h1>Stacks</h1>
<form class="filters" id="filters" role="search">
  <label>Search <input type="search" id="search" name="search" placeholder="name, status or id" autocomplete="off"></label>
  <label>Status <select id="status" name="status">
    <option value="">any</option><option>IN_PROGRESS</option><option>COMPLETE</option><option>FAILED</option>
  </select></label>
  <label class="check"><input type="checkbox" id="nested" name="nested"> nested stacks</label>
  <span class="live" id="live" aria-live="polite"></span>
</form>
<div id="message" class="message" role="status"></div>
<div class="table-wrap"><table class="stacks" id="stacks">
  <thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Project</th><th scope="col">Created</th><th scope="col">Updated</th><th scope="col">Description</th></tr></thead>
  <tbody></tbody>
</table></div>"""
    return _page(request, "Stacks", "stacks", main)


async def stack_page(request: Request) -> Response:
    name, stack_id = request.path_params["stack_name"], request.path_params["stack_id"]
    tabs = [
        ("topology", "Topology"),
        ("events", "Events"),
        ("resources", "Resources"),
        ("outputs", "Outputs"),
        ("template", "Template"),
        ("environment", "Environment"),
        ("files", "Files"),
        ("hooks", "Hooks"),
        ("drift", "Drift"),
    ]
    buttons = "".join(
        f'<button type="button" role="tab" id="tab-{key}" aria-controls="panel-{key}" aria-selected="false" tabindex="-1">{label}</button>'
        for key, label in tabs
    )
    panels = "".join(
        f'<section role="tabpanel" id="panel-{key}" aria-labelledby="tab-{key}" tabindex="0" hidden></section>'
        for key, _ in tabs
    )
    main = f"""<nav class="crumbs" aria-label="Breadcrumb" id="crumbs"><a href="{PREFIX}/">Stacks</a></nav>
<h1 id="stack-name">{html.escape(name)}</h1>
<div class="summary" id="summary" aria-live="polite"></div>
<div class="toolbar actions" id="actions" aria-label="Change the stack"></div>
<div id="message" class="message" role="status"></div>
<div class="tabs" role="tablist" aria-label="Stack">{buttons}</div>
{panels}"""
    return _page(request, name, "stack", main, stack_name=name, stack_id=stack_id)


async def launch_page(request: Request) -> Response:
    """The launch wizard's shell: its four steps, filled and revealed by ``launch.js``."""
    main = """<h1>Launch a stack</h1>
<div id="message" class="message" role="status"></div>
<section class="step" id="step-files" aria-labelledby="step-files-title">
  <h2 id="step-files-title">1. Templates and environments</h2>
  <p class="hint">Add the parent template, the templates it may use and the environments, as files or a whole folder
  (names keep the folder's paths, as the registry names them). Environments are merged in the order listed.</p>
  <div class="toolbar">
    <label>Files <input type="file" id="files" multiple accept=".yaml,.yml,.json,.template"></label>
    <label>Folder <input type="file" id="folder" webkitdirectory multiple></label>
  </div>
  <div class="table-wrap"><table class="files" id="file-list">
    <thead><tr><th scope="col">Name</th><th scope="col">Role</th><th scope="col"></th></tr></thead>
    <tbody></tbody>
  </table></div>
  <button type="button" id="inspect" disabled>Find the choices</button>
</section>
<section class="step" id="step-choices" aria-labelledby="step-choices-title" hidden>
  <h2 id="step-choices-title">2. Implementations</h2>
  <div id="capabilities" class="facts"></div>
  <div id="choices"></div>
  <button type="button" id="to-parameters">Next: parameters</button>
</section>
<section class="step" id="step-parameters" aria-labelledby="step-parameters-title" hidden>
  <h2 id="step-parameters-title">3. Parameters</h2>
  <form id="parameters" novalidate>
    <label>Stack name <input type="text" id="stack-name" name="stack_name" required pattern="[a-zA-Z][a-zA-Z0-9_.\\-]*" autocomplete="off"></label>
    <div id="parameter-fields"></div>
    <button type="submit" id="preview">Preview</button>
  </form>
</section>
<section class="step" id="step-preview" aria-labelledby="step-preview-title" hidden>
  <h2 id="step-preview-title">4. Preview</h2>
  <div id="preview-result"></div>
  <button type="button" id="create">Create the stack</button>
</section>"""
    return _page(request, "Launch a stack", "launch", main)


async def login_page(request: Request) -> Response:
    mode = _auth_mode(request)
    token_field = (
        ""
        if mode == "none"
        else '<label>Token <input type="password" id="token" name="token" autocomplete="off" required></label>'
    )
    project_field = (
        '<label>Project <input type="text" id="project" name="project" autocomplete="on" required></label>'
        if mode == "none"
        else '<label>Project <input type="text" id="project" name="project" placeholder="the token\'s own" autocomplete="on"></label>'
    )
    main = f"""<h1>Sign in</h1>
<p class="hint">{html.escape(_MODE_HINTS.get(mode, ""))}</p>
{"<h2>With a token</h2>" if mode == "keystone" else ""}
<form id="login" class="login">
  {token_field}
  {project_field}
  <button type="submit">Sign in</button>
</form>
{_PASSWORD_FORM if mode == "keystone" else ""}
<div id="message" class="message" role="alert"></div>"""
    return _page(request, "Sign in", "login", main)


async def session(request: Request) -> Response:
    """``GET /dashboard/session``: who the X-Auth-Token is (its project, user and roles), by
    the server's own authenticator; in auth mode none, the ``project`` asked for."""
    return await _whoami(
        request, request.headers.get("x-auth-token"), request.query_params.get("project", "")
    )


async def password_session(request: Request) -> Response:
    """``POST /dashboard/session`` (auth mode keystone): a user name and password signed in
    to Keystone (``keystone_login``); the answer is ``GET``'s with the token added, or
    ``{"projects": [...]}`` for the user to choose one and send again with its id."""
    authenticator = request.app.state.authenticator
    if authenticator.mode != "keystone":
        return _error(400, f"Auth mode {authenticator.mode} signs in with a token, not a password")
    # JSON only: a cross-site form cannot send it (a browser preflights it).
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return _error(415, "Send the sign-in as JSON (Content-Type: application/json)")
    try:
        credentials = keystone_login.Credentials.from_body(
            json.loads(await request.body() or b"null")
        )
        keystone_url = authenticator.protocol.www_authenticate_uri or authenticator.auth_url
        token, projects = await run_in_threadpool(keystone_login.sign_in, keystone_url, credentials)
    except ValueError:
        return _error(400, "The sign-in is not valid JSON")
    except keystone_login.LoginError as error:
        return _error(error.status, str(error))
    if token is None:
        return JSONResponse({"projects": projects}, headers={"Cache-Control": "no-store"})
    return await _whoami(request, token, "", with_token=True)


async def _whoami(
    request: Request, token: str | None, project: str, with_token: bool = False
) -> Response:
    authenticator = request.app.state.authenticator
    if authenticator.mode == "none":
        if not project.strip():
            return _error(
                400,
                "Name a project: auth mode none takes the project from the request (?project=NAME)",
            )
        context = authenticator.authenticate(token, project.strip())
    else:
        if not token:
            return _error(
                401, "Send a token in X-Auth-Token: this server authenticates every request"
            )
        try:
            context = await run_in_threadpool(authenticator.authenticate, token, project)
        except Exception as error:  # noqa: BLE001 - Keystone out of reach: the page says so
            return _error(
                getattr(error, "status", 503),
                str(error) or "The identity service does not answer; try again later",
            )
        if context is None:
            return _error(
                401, "The token is not valid (unknown, revoked or expired): sign in again"
            )
    body: dict[str, Any] = {
        "auth_mode": authenticator.mode,
        "project_id": context.tenant_id,
        "user_id": context.user_id,
        "roles": list(context.roles),
        "is_admin": context.is_admin,
    }
    if with_token:
        body["token"] = token
    return JSONResponse(body, headers={"Cache-Control": "no-store"})


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse(
        {"error": {"message": message}}, status_code=status, headers={"Cache-Control": "no-store"}
    )


async def not_found(request: Request) -> Response:
    main = f'<h1>Not found</h1><p>The dashboard has no page at {html.escape(request.url.path)}. <a href="{PREFIX}/">Go to the stacks</a>.</p>'
    response = _page(request, "Not found", "missing", main)
    response.status_code = 404
    return response


async def to_index(request: Request) -> Response:
    return RedirectResponse(f"{PREFIX}/", status_code=307)


def routes() -> Router:
    """The dashboard, to mount at ``/dashboard``."""
    return Router(
        routes=[
            Route("/", stacks_page, methods=["GET"]),
            Route("/login", login_page, methods=["GET"]),
            Route("/launch", launch_page, methods=["GET"]),
            Route("/session", session, methods=["GET"]),
            Route("/session", password_session, methods=["POST"]),
            Route("/stacks/{stack_name}/{stack_id}", stack_page, methods=["GET"]),
            Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
            Route("/{rest:path}", not_found, methods=["GET"]),
        ],
    )
