"""A stand-in for Keystone's v3 API as the stack domain admin calls it
(``resources/openstack/keystone/stack_domain.py``): projects, users, role grants and
credentials in memory, behind a keystoneauth-like session (``request(url, method,
json=..., raise_exc=False)`` and ``auth.get_access(session).domain_id``), with Keystone's
answers (201, 204, 404, 409: a name taken in a domain). The real Keystone is driven in
tests/cloud/test_stack_users.py; this one lets unit and scenario tests count what was made.
"""

from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib import parse

IDENTITY_URL = "http://keystone.test/v3"


@dataclass
class Answer:
    status_code: int
    body: Any = None
    reason: str = ""

    @property
    def content(self) -> bytes:
        return b"" if self.body is None else json.dumps(self.body).encode()

    def json(self) -> Any:
        return self.body


@dataclass
class FakeKeystone:
    """Keystone's state; ``domain_id``: the stack domain the admin's token is scoped to."""

    domain_id: str = "heat-domain-id"
    projects: dict[str, dict[str, Any]] = field(default_factory=dict)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    roles: dict[str, dict[str, Any]] = field(default_factory=dict)
    grants: set[tuple[str, str, str]] = field(default_factory=set)
    credentials: dict[str, dict[str, Any]] = field(default_factory=dict)
    # (method, path without query) of every request, in order.
    requests: list[tuple[str, str]] = field(default_factory=list)
    # (method, path prefix) -> status answered instead (a refusal to test).
    refuse: dict[tuple[str, str], int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def session(self) -> FakeSession:
        return FakeSession(self)

    def add_project(self, name: str, domain_id: str) -> str:
        project_id = uuid.uuid4().hex
        self.projects[project_id] = {"id": project_id, "name": name, "domain_id": domain_id}
        return project_id

    def add_user(self, name: str, domain_id: str, default_project_id: str | None = None) -> str:
        user_id = uuid.uuid4().hex
        self.users[user_id] = {"id": user_id, "name": name, "domain_id": domain_id, "default_project_id": default_project_id}
        return user_id

    # -- the API -------------------------------------------------------------------------

    def answer(self, method: str, url: str, body: Any) -> Answer:
        parts = parse.urlsplit(url)
        path = parts.path.removeprefix(parse.urlsplit(IDENTITY_URL).path)
        query = dict(parse.parse_qsl(parts.query))
        segments = [parse.unquote(segment) for segment in path.strip("/").split("/")]
        with self.lock:
            self.requests.append((method, path))
            for (refused_method, prefix), status in self.refuse.items():
                if method == refused_method and path.startswith(prefix):
                    return Answer(status, {"error": {"message": "refused by the test", "code": status}})
            return self._answer(method, segments, query, body)

    def _answer(self, method: str, segments: list[str], query: dict[str, str], body: Any) -> Answer:
        collection = segments[0]
        if collection == "projects" and len(segments) == 6 and method == "PUT":
            _, project_id, _, user_id, _, role_id = segments
            if project_id not in self.projects or user_id not in self.users or role_id not in self.roles:
                return _not_found()
            self.grants.add((project_id, user_id, role_id))
            return Answer(204)
        table = {"projects": self.projects, "users": self.users, "roles": self.roles, "credentials": self.credentials}[collection]
        singular = collection[:-1]
        if len(segments) == 1 and method == "GET":
            found = [
                item for item in table.values()
                if all(item.get(key) == value for key, value in query.items())
            ]  # fmt: skip
            return Answer(200, {collection: found})
        if len(segments) == 1 and method == "POST":
            item = dict(body[singular])
            if collection == "credentials":
                import hashlib

                item_id = hashlib.sha256(json.loads(item["blob"])["access"].encode()).hexdigest()
                if item_id in table:
                    return Answer(409, {"error": {"message": "Duplicate entry", "code": 409}})
            else:
                item_id = uuid.uuid4().hex
                if collection != "users" and any(
                    other["name"] == item["name"] and other.get("domain_id") == item.get("domain_id") for other in table.values()
                ):
                    return Answer(409, {"error": {"message": "Conflict occurred attempting to store project", "code": 409}})
            item["id"] = item_id
            item.pop("password", None)
            table[item_id] = item
            return Answer(201, {singular: item})
        item_id = segments[1]
        if item_id not in table:
            return _not_found()
        if method == "GET":
            return Answer(200, {singular: table[item_id]})
        if method == "PATCH":
            changes = dict(body[singular])
            changes.pop("password", None)
            table[item_id].update(changes)
            return Answer(200, {singular: table[item_id]})
        if method == "DELETE":
            del table[item_id]
            if collection == "users":
                for credential_id in [c for c, credential in self.credentials.items() if credential["user_id"] == item_id]:
                    del self.credentials[credential_id]
            return Answer(204)
        return Answer(405)


def _not_found() -> Answer:
    return Answer(404, {"error": {"message": "Could not find it.", "code": 404}})


class _Access:
    def __init__(self, domain_id: str):
        self.domain_id = domain_id


class _Auth:
    def __init__(self, keystone: FakeKeystone):
        self.keystone = keystone

    def get_access(self, session: Any) -> _Access:
        return _Access(self.keystone.domain_id)


class FakeSession:
    """What StackDomain uses of a keystoneauth session."""

    def __init__(self, keystone: FakeKeystone):
        self.keystone = keystone
        self.auth = _Auth(keystone)

    def request(self, url: str, method: str, json: Any = None, raise_exc: bool = True) -> Answer:
        assert raise_exc is False
        return self.keystone.answer(method, url, json)


def domain_keystone_plugin(keystone: FakeKeystone, admin_password: str) -> type:
    """The built-in ``keystone`` client plugin with its stack domain on ``keystone`` (what
    a test registers in a service's registry under ``keystone``)."""
    from stoker.resources.openstack.keystone.client_plugin import KeystoneClientPlugin
    from stoker.resources.openstack.keystone.stack_domain import StackDomain

    class DomainKeystone(KeystoneClientPlugin):
        @property
        def connection(self) -> Any:
            # A cloud is there (server_transport.has_keystone); its own credentials are
            # never used in the domain: any call on it fails the test.
            return object()

        def identity_url(self) -> str:
            return IDENTITY_URL

        def stack_domain(self) -> StackDomain | None:
            if not self.settings.get("stack_user_domain"):
                return None
            assert self.settings["stack_domain_admin_password"] == admin_password
            return StackDomain(keystone.session(), IDENTITY_URL, self.settings["stack_user_domain"])

    return DomainKeystone
