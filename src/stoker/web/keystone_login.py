"""Signing in to the dashboard with a Keystone user name and password (auth mode
keystone): the server asks Keystone for the user's token, as ``openstack token issue``
would, and hands it to the page, which then calls the API with it like any token.

What it owns: the password sign-in's exchange with Keystone (keystoneauth1): a token
scoped to the project asked for; without one, the projects the user may choose from
(an unscoped token's ``/auth/projects``), or the only one scoped at once. What it must
not do: keep a password or a token (nothing is stored or logged), or decide what the
token may do (the API's policy does).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

# Seconds Keystone has to answer a sign-in.
KEYSTONE_TIMEOUT_S = 15


class LoginError(Exception):
    """A sign-in Keystone refused or could not answer; ``status`` for the page."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Credentials:
    username: str
    password: str
    user_domain: str = "Default"
    project_id: str | None = None
    project_name: str | None = None
    project_domain: str = "Default"

    @classmethod
    def from_body(cls, body: Any) -> Credentials:
        if not isinstance(body, dict):
            raise LoginError(
                400,
                "Send a JSON object: {username, password, user_domain, project_id or project_name}",
            )
        text = {
            key: value.strip() if key != "password" else value
            for key, value in body.items()
            if isinstance(value, str)
        }
        if not text.get("username") or not text.get("password"):
            raise LoginError(400, "Give a user name and a password")
        return cls(
            username=text["username"],
            password=text["password"],
            user_domain=text.get("user_domain") or "Default",
            project_id=text.get("project_id") or None,
            project_name=text.get("project_name") or None,
            project_domain=text.get("project_domain") or "Default",
        )


def _session(
    keystone_url: str, credentials: Credentials, project_id: str | None, project_name: str | None
) -> Any:
    from keystoneauth1.identity import v3

    from stoker.clouds.source import keystone_session

    # An id names the project alone; a name needs its domain; neither: unscoped.
    by_name = project_name if not project_id else None
    plugin = v3.Password(
        auth_url=keystone_url,
        username=credentials.username,
        password=credentials.password,
        user_domain_name=credentials.user_domain,
        project_id=project_id,
        project_name=by_name,
        project_domain_name=credentials.project_domain if by_name else None,
    )
    return keystone_session(auth=plugin, timeout=KEYSTONE_TIMEOUT_S)


def _token(
    keystone_url: str,
    credentials: Credentials,
    project_id: str | None = None,
    project_name: str | None = None,
) -> tuple[Any, str]:
    from keystoneauth1 import exceptions

    # keystoneauth logs each refused attempt itself; the page is told instead.
    logger = logging.getLogger("keystoneauth")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        made = _session(keystone_url, credentials, project_id, project_name)
        return made, made.get_token()
    except exceptions.Unauthorized:
        if project_id or project_name:
            raise LoginError(
                401,
                "Keystone refused the sign-in: the user name, domain or password is wrong, or the user has no role in that project",
            )
        raise LoginError(
            401, "Keystone refused the sign-in: the user name, domain or password is wrong"
        )
    except exceptions.ClientException as error:
        raise LoginError(503, f"Keystone does not answer ({type(error).__name__}); try again later")
    finally:
        logger.setLevel(level)


def sign_in(keystone_url: str, credentials: Credentials) -> tuple[str | None, list[dict[str, str]]]:
    """(the user's token scoped to a project, []), or (None, the projects to choose from)
    when none was named and the user has several."""
    if credentials.project_id or credentials.project_name:
        return _token(keystone_url, credentials, credentials.project_id, credentials.project_name)[
            1
        ], []
    unscoped, token = _token(keystone_url, credentials)
    try:
        answer = unscoped.get(
            f"{keystone_url.rstrip('/')}/auth/projects",
            headers={"X-Auth-Token": token},
            authenticated=False,
        )
        projects = [
            {"id": item["id"], "name": item["name"], "domain_id": item.get("domain_id", "")}
            for item in answer.json().get("projects", [])
        ]
    except Exception:  # noqa: BLE001 - a Keystone that cannot list: the user names a project instead
        raise LoginError(400, "Keystone did not list your projects: name the project to sign in to")
    if not projects:
        raise LoginError(403, "You have a role in no project: ask an administrator for one")
    if len(projects) == 1:
        return _token(keystone_url, credentials, projects[0]["id"])[1], []
    return None, sorted(projects, key=lambda item: item["name"])
