"""The ``keystone`` client plugin (openstacksdk's identity proxy) and the custom
constraints Heat registers for Keystone (``keystone.project``, ``keystone.domain``,
``keystone.role``, ``keystone.user``, ``keystone.group``, ``keystone.service``,
``keystone.region``).

Owns: Heat's finders (``get_<entity>_id``), which take an id or a name, and for a role,
project, group or user a name with its domain as Heat writes it (``name{domain}``);
Keystone's errors (``is_not_found``, ``is_conflict``: the base's, from openstacksdk's
exceptions); role grants and their listing, and the requests openstacksdk's data model
cannot make (a region's or endpoint's extra fields, which Keystone keeps and Heat sends).
Identity has no microversions. Found objects are cached per context (``CACHE``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any
from urllib import parse

from stoker.resources.openstack.client_plugin import AmbiguousNameError, OpenStackClientPlugin
from stoker.resources.openstack.constraints import LookupConstraint
from stoker.sdk.exceptions import ClientPluginError, EntityNotFound

__all__ = [
    "KeystoneClientPlugin",
    "KeystoneServiceNameConflict",
    "client_mapping",
    "constraint_mapping",
]

# Heat's "entity{domain}": a name qualified by its domain's name or id.
_WITH_DOMAIN = re.compile(r"\{(.*?)\}$")


class KeystoneServiceNameConflict(ClientPluginError):
    """Several Keystone services have the name given (Heat's error of that name)."""

    def __init__(self, service: str):
        super().__init__(
            f"Keystone has more than one service with same name {service}. Please use service id instead of name",
            hint="give the service's id",
        )


class KeystoneClientPlugin(OpenStackClientPlugin):
    """Keystone through openstacksdk's ``connection.identity``."""

    name = "keystone"
    service_type = "identity"
    proxy_name = "identity"

    # -- finders (Heat's names) ---------------------------------------------------------

    def parse_entity_with_domain(
        self, entity_with_domain: str, entity_type: str
    ) -> tuple[str, str | None]:
        """``name{domain}`` -> (name, the domain's id); a plain value -> (value, None)."""
        match = _WITH_DOMAIN.search(entity_with_domain)
        if match is None:
            return entity_with_domain, None
        try:
            return entity_with_domain[: match.start()], self.get_domain_id(match.group(1))
        except EntityNotFound:
            raise EntityNotFound(entity_type, entity_with_domain) from None

    def _find_in_domain(self, entity: str, heat_entity: str, value: str) -> Any:
        """The ``entity`` (openstacksdk's name) that ``value`` names: an id, a name, or
        ``name{domain}``; not found is Heat's ``The Keystone<Entity> (value) could not
        be found.``"""
        name, domain_id = self.parse_entity_with_domain(value, heat_entity)
        client = self.client()

        def find(name_or_id: str, ignore_missing: bool = False) -> Any:
            if domain_id is None:
                return getattr(client, f"find_{entity}")(name_or_id, ignore_missing=False)
            # Qualified by a domain: the one of that name there (openstacksdk's finder
            # would look the name up in every domain).
            listing = getattr(client, f"{entity}s")(name=name, domain_id=domain_id)
            found = self.one_match(entity, name, [item for item in listing if item.name == name])
            if found is None:
                raise EntityNotFound(heat_entity, value)
            return found

        try:
            return self.find(entity, value, find)
        except EntityNotFound:
            raise EntityNotFound(heat_entity, value) from None

    def get_project_id(self, project: str) -> str:
        return str(self._find_in_domain("project", "KeystoneProject", project).id)

    def get_user_id(self, user: str) -> str:
        return str(self._find_in_domain("user", "KeystoneUser", user).id)

    def get_role_id(self, role: str) -> str:
        return str(self._find_in_domain("role", "KeystoneRole", role).id)

    def get_group_id(self, group: str) -> str:
        return str(self._find_in_domain("group", "KeystoneGroup", group).id)

    def get_domain_id(self, domain: str) -> str:
        try:
            return self.find_id("domain", domain)
        except EntityNotFound:
            raise EntityNotFound("KeystoneDomain", domain) from None

    def get_service_id(self, service: str) -> str:
        try:
            return self.find_id("service", service)
        except AmbiguousNameError:
            raise KeystoneServiceNameConflict(service) from None
        except EntityNotFound:
            raise EntityNotFound("KeystoneService", service) from None

    def get_region_id(self, region: str) -> str:
        """A region by its id only (regions have no name)."""

        def by_id(region_id: str, ignore_missing: bool = False) -> Any:
            # By a quoted path: openstacksdk's get_region sends the id as it is, and a
            # region Heat made has a URL-encoded id ("%20").
            found = self.send("GET", f"/regions/{parse.quote(region_id, safe='')}")["region"]
            return SimpleNamespace(**found)

        try:
            return str(self.find("region", region, by_id).id)
        except EntityNotFound:
            raise EntityNotFound("KeystoneRegion", region) from None

    # -- Heat's stack user domain (stack_domain.py) --------------------------------------

    def identity_url(self) -> str:
        """Keystone's v3 public URL (Heat's ``server_keystone_endpoint_url``): where agents
        authenticate as stack users, and where the stack domain admin acts."""
        connection = self.connection
        endpoint = (
            connection.session.get_endpoint(service_type="identity", interface="public")
            or connection.auth["auth_url"]
        )
        endpoint = str(endpoint).rstrip("/")
        return endpoint if endpoint.endswith("/v3") else f"{endpoint}/v3"

    def stack_domain(self) -> Any:
        """The stack user domain (``stack_domain.StackDomain``) the operator's settings
        name, acted in as its admin on this cloud's Keystone (its TLS settings); None
        without them: stack users then live in the stack's own project (Heat's legacy
        placement)."""
        from stoker.resources.openstack.keystone.stack_domain import DOMAIN, stack_domain_for

        if not self.settings.get(DOMAIN):
            return None
        session = self.connection.session
        return stack_domain_for(self.settings, self.identity_url(), session.verify, session.cert)

    def delete_stack_user_project(self, project_id: str) -> None:
        """Delete a stack's stack user project, if it is the stack domain's (the engine
        calls this at the end of a top-level stack's delete). Without a stack domain
        nothing is deleted: the project is then the stack's own (Heat's legacy path)."""
        domain = self.stack_domain()
        if domain is not None:
            domain.delete_project(project_id)

    # -- requests safe to send twice ------------------------------------------------------

    def repeatable(self, call: Callable[[], Any]) -> Any:
        """``call``, sent again when no answer came (the connection lost, a gateway's
        502-504): for a request Keystone may receive twice to the same effect (a PUT, a
        PATCH, a DELETE, the create of an object whose name Keystone keeps unique, which
        a second time is refused, not made twice). A Keystone whose database is busy
        drops the request unanswered (the test cloud's SQLite-backed one does, under
        concurrent writes)."""
        return self.read(call)

    # -- role grants ------------------------------------------------------------------

    def grant(self, role_id: str, *, user_id: str | None = None, group_id: str | None = None,
              project_id: str | None = None, domain_id: str | None = None) -> None:  # fmt: skip
        """Give ``role_id`` to a user or group on a project or domain."""
        self._assignment("PUT", role_id, user_id, group_id, project_id, domain_id)

    def revoke(self, role_id: str, *, user_id: str | None = None, group_id: str | None = None,
               project_id: str | None = None, domain_id: str | None = None) -> None:  # fmt: skip
        """Take ``role_id`` away (an assignment already gone is not an error)."""
        try:
            self._assignment("DELETE", role_id, user_id, group_id, project_id, domain_id)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types
            self.ignore_not_found(error)

    def _assignment(self, method: str, role_id: str, user_id: str | None, group_id: str | None,
                    project_id: str | None, domain_id: str | None) -> None:  # fmt: skip
        # openstacksdk's assign_* calls answer False, not an error, when Keystone refuses;
        # the same request is sent here and a refusal raised as openstacksdk's exception.
        from openstack import exceptions

        scope = f"/projects/{project_id}" if project_id is not None else f"/domains/{domain_id}"
        actor = f"/users/{user_id}" if user_id is not None else f"/groups/{group_id}"
        path = f"{scope}{actor}/roles/{role_id}"
        exceptions.raise_from_response(self.repeatable(lambda: self.client().request(path, method)))

    def role_assignments(
        self, *, user_id: str | None = None, group_id: str | None = None
    ) -> list[dict[str, str | None]]:
        """The user's or group's direct assignments: ``{"role", "project", "domain"}``
        ids each (Heat's ``parse_list_assignments``)."""
        query = {"user_id": user_id} if user_id is not None else {"group_id": group_id}
        found = []
        for assignment in self.client().role_assignments(**query):
            role = (assignment.role or {}).get("id")
            if not role:
                continue
            scope = assignment.scope or {}
            found.append({
                "role": role,
                "project": (scope.get("project") or {}).get("id"),
                "domain": (scope.get("domain") or {}).get("id"),
            })  # fmt: skip
        return found

    # -- what openstacksdk's data model leaves out ---------------------------------------

    def send(
        self, method: str, path: str, body: dict[str, Any] | None = None, repeat: bool | None = None
    ) -> dict[str, Any]:
        """A request on Keystone's API with the body as given (extra fields kept), its
        answer's JSON; a refusal is openstacksdk's exception. ``repeat``: whether it is
        sent again when no answer came (``repeatable``); by default all but a POST."""
        from openstack import exceptions

        arguments: dict[str, Any] = {} if body is None else {"json": body}

        def request() -> Any:
            return self.client().request(path, method, **arguments)

        # A create (POST) is sent once: a region without an id or an endpoint made twice
        # would be two objects.
        if repeat is None:
            repeat = method != "POST"
        response = self.repeatable(request) if repeat else request()
        exceptions.raise_from_response(response)
        return response.json() if response.content else {}


class _KeystoneConstraint(LookupConstraint):
    client_plugin_name = "keystone"
    entity = None


class ProjectConstraint(_KeystoneConstraint):
    name, finder = "keystone.project", "get_project_id"


class UserConstraint(_KeystoneConstraint):
    name, finder = "keystone.user", "get_user_id"


class RoleConstraint(_KeystoneConstraint):
    name, finder = "keystone.role", "get_role_id"


class DomainConstraint(_KeystoneConstraint):
    name, finder = "keystone.domain", "get_domain_id"


class GroupConstraint(_KeystoneConstraint):
    name, finder = "keystone.group", "get_group_id"


class ServiceConstraint(_KeystoneConstraint):
    name, finder = "keystone.service", "get_service_id"


class RegionConstraint(_KeystoneConstraint):
    name, finder = "keystone.region", "get_region_id"


CONSTRAINTS = (
    ProjectConstraint, UserConstraint, RoleConstraint, DomainConstraint, GroupConstraint, ServiceConstraint, RegionConstraint,
)  # fmt: skip


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"keystone": KeystoneClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {c.name: c for c in CONSTRAINTS}
