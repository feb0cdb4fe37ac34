"""Heat's stack user domain: a Keystone domain an operator sets aside for the users stacks
make (``stack_user_domain``), where stoker acts as the domain's admin
(``stack_domain_admin`` with ``stack_domain_admin_password``, a domain-scoped token), as
Heat's ``heat_keystoneclient`` does (``create_stack_domain_project``,
``create_stack_domain_user``, ``_check_stack_domain_user``, ``delete_stack_domain_user``,
``delete_stack_domain_project``, ``create_stack_domain_user_keypair``).

Owns: the domain admin's session (one per Keystone, domain and admin, shared by every
stack and thread: keystoneauth renews its token), the domain's id (the setting is an id
or a name, as Heat's ``stack_user_domain_id`` or ``stack_user_domain_name``), and the
Keystone requests on the domain's projects, users, role grants and EC2 credentials,
answered as plain dictionaries. What a stack user is and when one is made belongs to
``stack_user``.

Why: a stack's own credentials (in keystone mode, the owner's trust) may not make users
unless the owner is an admin; the domain admin may, and only in its domain, so a plain
member's stack gets its users (heat-tempest-plugin's CfnInitIntegrationTest as ``demo``).

Must not: put the admin's password, a user's password or a secret key into a message, an
exception or a log line.
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Mapping
from typing import Any
from urllib import parse

from stoker.sdk.exceptions import ClientPluginError

__all__ = [
    "DOMAIN_SETTINGS",
    "StackDomain",
    "StackDomainError",
    "StackDomainUserError",
    "stack_domain_for",
]

# The client plugin settings (Settings.stack_domain), Heat's option names.
DOMAIN_SETTINGS = (DOMAIN, ADMIN, ADMIN_PASSWORD) = (
    "stack_user_domain",
    "stack_domain_admin",
    "stack_domain_admin_password",
)
# Keystone's ids: 32 hexadecimal characters (a domain's may also be "default").
_LOOKS_LIKE_ID = re.compile(r"^[0-9a-f]{32}$|^default$")
PROJECT_DESCRIPTION = "Heat stack user project"


class StackDomainError(ClientPluginError):
    """Keystone refused the stack domain admin a request (``http_status``: its status, or
    None when none came); the message names the request and Keystone's reason."""

    def __init__(self, message: str, http_status: int | None = None, *, hint: str | None = None):
        super().__init__(message, hint=hint)
        self.http_status = http_status


class StackDomainUserError(ClientPluginError):
    """A user about to be changed is not a user of the stack domain and the stack's
    project (Heat's ``_check_stack_domain_user``: "User <action> in invalid domain")."""


class StackDomain:
    """The stack user domain, acted in as its admin through ``session`` (a keystoneauth
    session authenticated domain-scoped), on the Keystone at ``identity_url`` (v3)."""

    def __init__(self, session: Any, identity_url: str, domain: str):
        self.session = session
        self.identity_url = identity_url.rstrip("/")
        self.domain = domain
        self._domain_id: str | None = None
        self._lock = threading.Lock()

    # -- the domain ------------------------------------------------------------------

    @property
    def domain_id(self) -> str:
        """The domain's id, from the admin's domain-scoped token (Heat's
        ``stack_domain_id``)."""
        if self._domain_id is None:
            with self._lock:
                if self._domain_id is None:
                    self._domain_id = str(self.session.auth.get_access(self.session).domain_id)
        return self._domain_id

    def _request(self, method: str, path: str, body: Mapping[str, Any] | None = None, ok: tuple[int, ...] = (200, 201, 204)) -> Any:
        """One request to Keystone's v3 API as the domain admin; its JSON answer (None
        when empty); a refusal is StackDomainError with Keystone's own message."""
        arguments: dict[str, Any] = {"raise_exc": False}
        if body is not None:
            arguments["json"] = dict(body)
        response = self.session.request(f"{self.identity_url}{path}", method, **arguments)
        if response.status_code not in ok:
            raise StackDomainError(
                f"Keystone refused the stack domain admin {method} {path.split('?')[0]} (HTTP {response.status_code}): {_reason(response)}",
                response.status_code,
            )
        return response.json() if response.content else None

    # -- projects --------------------------------------------------------------------

    def find_project(self, name: str) -> str | None:
        """The id of the domain's project named ``name``, if any."""
        query = parse.urlencode({"name": name, "domain_id": self.domain_id})
        found = self._request("GET", f"/projects?{query}")["projects"]
        return str(found[0]["id"]) if found else None

    def create_project(self, name: str) -> str:
        """A project of the domain named ``name`` (Heat's ``<project>-<stack id>``), made
        or, when it exists already (an earlier create cut short, or made at the same moment
        for a sibling stack), found: never two. Its id."""
        found = self.find_project(name)
        if found is not None:
            return found
        body = {"project": {"name": name, "domain_id": self.domain_id, "description": PROJECT_DESCRIPTION}}
        try:
            return str(self._request("POST", "/projects", body)["project"]["id"])
        except StackDomainError as error:
            if error.http_status != 409:
                raise
        made = self.find_project(name)
        if made is None:
            raise StackDomainError(f"Keystone said project {name} exists in the stack domain, and then did not find it", 409)
        return made

    def delete_project(self, project_id: str) -> bool:
        """Delete the project if it is one of the stack domain's (never the stack's own,
        nor another domain's: Heat's ``delete_stack_domain_project``); whether it was
        deleted. Gone already, or not to be read (403), it is left alone."""
        try:
            project = self._request("GET", f"/projects/{parse.quote(project_id, safe='')}")["project"]
        except StackDomainError as error:
            if error.http_status in (403, 404):
                return False
            raise
        if project.get("domain_id") != self.domain_id:
            return False
        self._request("DELETE", f"/projects/{parse.quote(project_id, safe='')}", ok=(204, 404))
        return True

    # -- users -----------------------------------------------------------------------

    def find_user(self, name: str, project_id: str) -> str | None:
        """The id of the domain's user named ``name`` whose default project is
        ``project_id``, if any."""
        query = parse.urlencode({"name": name, "domain_id": self.domain_id})
        for user in self._request("GET", f"/users?{query}")["users"]:
            if user.get("default_project_id") == project_id:
                return str(user["id"])
        return None

    def create_user(self, name: str, password: str, project_id: str, description: str) -> str:
        """A user of the domain whose default project is ``project_id``; its id."""
        body = {
            "user": {
                "name": name[-255:],  # Heat's _get_username: the last 255 characters
                "password": password,
                "domain_id": self.domain_id,
                "default_project_id": project_id,
                "description": description,
            }
        }
        return str(self._request("POST", "/users", body)["user"]["id"])

    def set_password(self, user_id: str, password: str) -> None:
        self._request("PATCH", f"/users/{parse.quote(user_id, safe='')}", {"user": {"password": password}})

    def get_user(self, user_id: str) -> dict[str, Any]:
        """The user as Keystone shows it (StackDomainError 404 when there is none)."""
        return dict(self._request("GET", f"/users/{parse.quote(user_id, safe='')}")["user"])

    def check_user(self, user_id: str, project_id: str, action: str) -> bool:
        """Whether the user exists, refusing (StackDomainUserError) one outside the domain
        or the stack's project (Heat's ``_check_stack_domain_user``)."""
        try:
            user = self.get_user(user_id)
        except StackDomainError as error:
            if error.http_status == 404:
                return False
            raise
        if user.get("domain_id") != self.domain_id:
            raise StackDomainUserError(f"User {action} in invalid domain")
        if user.get("default_project_id") != project_id:
            raise StackDomainUserError(f"User {action} in invalid project")
        return True

    def delete_user(self, user_id: str, project_id: str) -> None:
        """Delete a user of the domain and the stack's project, checked first (a user
        already gone is no error; one of another domain or project is refused)."""
        if self.check_user(user_id, project_id, "delete"):
            self._request("DELETE", f"/users/{parse.quote(user_id, safe='')}", ok=(204, 404))

    # -- roles -----------------------------------------------------------------------

    def role_id(self, name: str) -> str:
        """The role named ``name`` (made if Keystone lacks it and lets the domain admin,
        as stoker's legacy placement makes it; Heat requires it to exist)."""

        def find() -> str | None:
            roles = self._request("GET", f"/roles?{parse.urlencode({'name': name})}")["roles"]
            found = [role for role in roles if role.get("domain_id") is None]
            return str(found[0]["id"]) if found else None

        found = find()
        if found is not None:
            return found
        try:
            return str(self._request("POST", "/roles", {"role": {"name": name}})["role"]["id"])
        except StackDomainError as error:
            if error.http_status == 403:
                # Keystone's default policy keeps roles to admins of the cloud (Heat then
                # says "Can't find role").
                raise StackDomainError(
                    f"Keystone has no role {name}, and the stack domain admin may not make one",
                    403,
                    hint=f"make it once as the cloud's admin: openstack role create {name}",
                ) from None
            if error.http_status != 409:
                raise
        made = find()
        if made is None:
            raise StackDomainError(f"Keystone said role {name} exists, and then did not find it", 409)
        return made

    def grant(self, role_id: str, user_id: str, project_id: str) -> None:
        """Give the user the role on the project (a grant made already is no error)."""
        quoted = [parse.quote(value, safe="") for value in (project_id, user_id, role_id)]
        self._request("PUT", "/projects/{}/users/{}/roles/{}".format(*quoted))

    # -- EC2 credentials ----------------------------------------------------------------

    def credential_exists(self, credential_id: str) -> bool:
        try:
            self._request("GET", f"/credentials/{parse.quote(credential_id, safe='')}")
        except StackDomainError as error:
            if error.http_status == 404:
                return False
            raise
        return True

    def create_ec2_credential(self, user_id: str, project_id: str, blob: str) -> str:
        """An EC2 credential of the user on the project (Heat's
        ``create_stack_domain_user_keypair``); its id. Made meanwhile by a repeat (409:
        Keystone names it by the SHA-256 of its access key), it is the one."""
        body = {"credential": {"type": "ec2", "user_id": user_id, "project_id": project_id, "blob": blob}}
        answer = self._request("POST", "/credentials", body, ok=(201, 409))
        return str(answer["credential"]["id"]) if answer and "credential" in answer else ""

    def delete_credential(self, credential_id: str) -> None:
        self._request("DELETE", f"/credentials/{parse.quote(credential_id, safe='')}", ok=(204, 404))


def _reason(response: Any) -> str:
    try:
        return str(response.json()["error"]["message"])[:300]
    except Exception:  # noqa: BLE001 - not Keystone's JSON error
        return str(getattr(response, "reason", "") or "no reason given")[:300]


# (identity URL, domain, admin, the password's digest, TLS) -> the domain: one session per
# admin, shared by every stack (keystoneauth renews its token when it expires).
_DOMAINS: dict[tuple[Any, ...], StackDomain] = {}
_DOMAINS_LOCK = threading.Lock()


def stack_domain_for(settings: Mapping[str, Any], identity_url: str, verify: Any = True, cert: Any = None) -> StackDomain | None:
    """The stack user domain the settings name (``DOMAIN_SETTINGS``), its admin
    authenticated; None when the settings name none (Heat's legacy placement). An admin
    Keystone refuses is a StackDomainError naming the admin and domain, not the password."""
    domain, admin, password = (settings.get(name) for name in DOMAIN_SETTINGS)
    if not domain:
        return None
    if not admin or not password:
        raise StackDomainError(
            "the stack user domain is set without its admin",
            hint="set STOKER_STACK_DOMAIN_ADMIN and STOKER_STACK_DOMAIN_ADMIN_PASSWORD with STOKER_STACK_USER_DOMAIN",
        )
    digest = hashlib.sha256(str(password).encode()).hexdigest()
    key = (identity_url.rstrip("/"), str(domain), str(admin), digest, repr(verify), repr(cert))
    with _DOMAINS_LOCK:
        found = _DOMAINS.get(key)
        if found is None:
            found = _DOMAINS[key] = StackDomain(_admin_session(identity_url, str(domain), str(admin), str(password), verify, cert), identity_url, str(domain))
        return found


def _admin_session(identity_url: str, domain: str, admin: str, password: str, verify: Any, cert: Any) -> Any:
    """A session of the domain admin, scoped to its domain: the setting tried as an id
    first when it looks like one, else as a name first (Heat takes either option)."""
    from keystoneauth1 import exceptions as keystone_exceptions
    from keystoneauth1.identity import v3

    from stoker.clouds.source import keystone_session

    as_id: dict[str, Any] = {"user_domain_id": domain, "domain_id": domain}
    as_name: dict[str, Any] = {"user_domain_name": domain, "domain_name": domain}
    attempts = [as_id, as_name] if _LOOKS_LIKE_ID.match(domain) else [as_name, as_id]
    status: int | None = None
    for scope in attempts:
        auth = v3.Password(auth_url=identity_url, username=admin, password=password, **scope)
        session = keystone_session(auth=auth, verify=verify, cert=cert)
        try:
            auth.get_access(session)
        except keystone_exceptions.Unauthorized as error:
            status = getattr(error, "http_status", 401)
            continue
        except keystone_exceptions.ClientException as error:
            raise StackDomainError(
                f"the stack domain admin {admin} could not authenticate in domain {domain}: {type(error).__name__}",
                getattr(error, "http_status", None),
            ) from None
        return session
    raise StackDomainError(
        f"Keystone refused the stack domain admin {admin} a token scoped to domain {domain}",
        status,
        hint="check STOKER_STACK_USER_DOMAIN (the domain's id or name), STOKER_STACK_DOMAIN_ADMIN (a user of that domain with its admin role) and its password",
    )
