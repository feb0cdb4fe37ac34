"""Talking to the test cloud over plain HTTP: a Keystone token, the catalog we register, and
the JSON requests the readiness checks make.

Standard library only, so the launcher runs from any Python (stoker's venv, or a bare
``python -m tests.cloud``) without importing openstacksdk, whose import alone costs a second.
It owns what the cloud's catalog and users are; it must not start or stop anything.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

ADMIN_PASSWORD = "secret"
DEMO_PASSWORD = "demo-secret"
SERVICE_PASSWORD = "service-secret"
REGION = "RegionOne"
# Heat's stack user domain (devstack's): the domain ``heat`` and its admin, who holds the
# admin role on it; the keystone-mode stoker servers tests start are given them
# (STACK_DOMAIN_ENVIRONMENT).
STACK_USER_DOMAIN = "heat"
STACK_DOMAIN_ADMIN = "heat_domain_admin"
STACK_DOMAIN_ADMIN_PASSWORD = "heat-domain-secret"
STACK_DOMAIN_ENVIRONMENT = {
    "STOKER_STACK_USER_DOMAIN": STACK_USER_DOMAIN,
    "STOKER_STACK_DOMAIN_ADMIN": STACK_DOMAIN_ADMIN,
    "STOKER_STACK_DOMAIN_ADMIN_PASSWORD": STACK_DOMAIN_ADMIN_PASSWORD,
}
# Seconds one HTTP request to a service may take; a readiness probe gets less, so that an
# answer that never comes (something else on the port) does not hide a process that died.
REQUEST_TIMEOUT_S = 30
PROBE_TIMEOUT_S = 5

# The service users each service authenticates as, and the catalog entries: (user, service
# name, service type, the API's endpoint name in CloudEndpoints, path under the API's root).
CATALOG = [
    ("placement", "placement", "placement", "placement", ""),
    ("neutron", "neutron", "network", "neutron", ""),
    ("glance", "glance", "image", "glance", ""),
    ("cinder", "cinderv3", "volumev3", "cinder", "/v3"),
    ("cinder", "cinder", "block-storage", "cinder", "/v3"),
    ("nova", "nova", "compute", "nova", "/v2.1"),
]


class ServiceError(Exception):
    """A request to a service failed; the message names the method, URL and answer."""


@dataclass
class Response:
    status: int
    headers: dict[str, str]
    body: Any


def request(
    method: str,
    url: str,
    token: str | None = None,
    body: Any = None,
    headers: dict | None = None,
    raw: bytes | None = None,
    timeout_s: float = REQUEST_TIMEOUT_S,
) -> Response:
    """One JSON request (or ``raw`` bytes); HTTP errors come back as a Response, connection
    errors raise OSError."""
    data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
    sent = {"Accept": "application/json", **(headers or {})}
    if body is not None:
        sent["Content-Type"] = "application/json"
    elif raw is not None:
        sent.setdefault("Content-Type", "application/octet-stream")
    if token:
        sent["X-Auth-Token"] = token
    http_request = urllib.request.Request(url, data=data, method=method, headers=sent)
    try:
        with urllib.request.urlopen(http_request, timeout=timeout_s) as answer:
            status, answer_headers, raw = answer.status, dict(answer.headers), answer.read()
    except urllib.error.HTTPError as error:
        status, answer_headers, raw = error.code, dict(error.headers), error.read()
    try:
        parsed = json.loads(raw) if raw else None
    except ValueError:
        parsed = raw.decode(errors="replace")
    return Response(status, answer_headers, parsed)


class Keystone:
    """An admin's token on the test cloud's Keystone, and the calls registration needs."""

    def __init__(
        self,
        url: str,
        username: str = "admin",
        password: str = ADMIN_PASSWORD,
        project: str = "admin",
    ):
        self.url = url.rstrip("/")
        answer = request(
            "POST",
            f"{self.url}/auth/tokens",
            body={
                "auth": {
                    "identity": {
                        "methods": ["password"],
                        "password": {
                            "user": {
                                "name": username,
                                "domain": {"id": "default"},
                                "password": password,
                            }
                        },
                    },
                    "scope": {"project": {"name": project, "domain": {"id": "default"}}},
                }
            },
        )
        if answer.status != 201:
            raise ServiceError(
                f"Keystone refused a token for {username}: {answer.status} {answer.body}"
            )
        self.token = answer.headers.get("X-Subject-Token") or answer.headers.get("x-subject-token")
        self.project_id = answer.body["token"]["project"]["id"]

    def call(
        self, method: str, path: str, body: Any = None, expect: tuple[int, ...] = (200, 201, 204)
    ) -> Any:
        url = path if path.startswith("http") else f"{self.url}{path}"
        answer = request(method, url, token=self.token, body=body)
        if answer.status not in expect:
            raise ServiceError(f"{method} {url} answered {answer.status}: {answer.body}")
        return answer.body

    def _find(self, collection: str, name: str, **query: str) -> dict | None:
        parameters = "&".join(f"{key}={value}" for key, value in {"name": name, **query}.items())
        found = self.call("GET", f"/{collection}?{parameters}")[collection]
        return found[0] if found else None

    def ensure(self, collection: str, singular: str, name: str, **attributes: Any) -> dict:
        """The named object, created if missing (registration may run twice after a crash)."""
        query = {"domain_id": attributes["domain_id"]} if "domain_id" in attributes else {}
        existing = self._find(collection, name, **query)
        if existing:
            return existing
        return self.call("POST", f"/{collection}", body={singular: {"name": name, **attributes}})[
            singular
        ]

    def grant(self, project_id: str, user_id: str, role_id: str) -> None:
        self.call("PUT", f"/projects/{project_id}/users/{user_id}/roles/{role_id}")

    def register(self, api_urls: dict[str, str]) -> None:
        """Create the service project, service users, demo project and user, and the catalog.

        ``api_urls`` maps the API names of CATALOG (and ``keystone``) to their root URLs.
        """
        roles = {
            role: self.ensure("roles", "role", role)["id"]
            for role in ("admin", "member", "reader", "service")
        }
        service_project = self.ensure("projects", "project", "service", domain_id="default")
        demo_project = self.ensure("projects", "project", "demo", domain_id="default")
        demo = self.ensure(
            "users",
            "user",
            "demo",
            domain_id="default",
            password=DEMO_PASSWORD,
            default_project_id=demo_project["id"],
        )
        self.grant(demo_project["id"], demo["id"], roles["member"])
        self.grant(demo_project["id"], demo["id"], roles["reader"])
        # Heat's stack user domain, as devstack makes it (`openstack domain create heat`, its
        # admin user, the admin role on the domain, the stack user role, which a domain
        # admin may not make); in the golden copy, so free at start.
        self.ensure("roles", "role", "heat_stack_user")
        heat = self.ensure("domains", "domain", STACK_USER_DOMAIN, description="Stack projects and users")
        domain_admin = self.ensure(
            "users", "user", STACK_DOMAIN_ADMIN, domain_id=heat["id"], password=STACK_DOMAIN_ADMIN_PASSWORD
        )
        self.call("PUT", f"/domains/{heat['id']}/users/{domain_admin['id']}/roles/{roles['admin']}")
        for user_name, service_name, service_type, api, path in CATALOG:
            user = self.ensure(
                "users",
                "user",
                user_name,
                domain_id="default",
                password=SERVICE_PASSWORD,
                default_project_id=service_project["id"],
            )
            self.grant(service_project["id"], user["id"], roles["admin"])
            self.grant(service_project["id"], user["id"], roles["service"])
            services = self.call("GET", f"/services?type={service_type}")["services"]
            service = (
                next((s for s in services if s["name"] == service_name), None)
                or self.call(
                    "POST",
                    "/services",
                    body={"service": {"name": service_name, "type": service_type}},
                )["service"]
            )
            interfaces = {
                endpoint["interface"]
                for endpoint in self.call("GET", f"/endpoints?service_id={service['id']}")[
                    "endpoints"
                ]
            }
            for interface in ("public", "internal", "admin"):
                if interface not in interfaces:
                    self.call(
                        "POST",
                        "/endpoints",
                        body={
                            "endpoint": {
                                "service_id": service["id"],
                                "interface": interface,
                                "url": api_urls[api] + path,
                                "region_id": REGION,
                            }
                        },
                    )


def user_token(url: str, user_id: str, password: str, project_id: str) -> str:
    """A token of the user named by its id (a stack user, of whatever domain), scoped to the
    project named by its id; ServiceError when Keystone refuses one."""
    answer = request(
        "POST",
        f"{url.rstrip('/')}/auth/tokens",
        body={
            "auth": {
                "identity": {"methods": ["password"], "password": {"user": {"id": user_id, "password": password}}},
                "scope": {"project": {"id": project_id}},
            }
        },
    )
    if answer.status != 201:
        raise ServiceError(f"Keystone refused a token for user {user_id}: {answer.status} {answer.body}")
    return answer.headers.get("X-Subject-Token") or answer.headers.get("x-subject-token") or ""


def service_authentication(user: str, keystone_url: str) -> str:
    """The ``[keystone_authtoken]``-style options a service uses to act as its service user."""
    return "\n".join(
        [
            f"www_authenticate_uri = {keystone_url}",
            f"auth_url = {keystone_url}",
            "auth_type = password",
            "project_domain_name = Default",
            "user_domain_name = Default",
            "project_name = service",
            f"region_name = {REGION}",
            f"username = {user}",
            f"password = {SERVICE_PASSWORD}",
        ]
    )
