"""Who may do what: Heat's policy rules, enforced with oslo.policy, and the binding of
each route's rule to its endpoint.

The rules are Heat's own names and check strings (``heat/policies/*.py``, the
2023.1+ defaults, "secure RBAC"): a project's ``reader`` reads, its ``member`` writes
too, ``admin`` lists the engines (``service:index``). An operator's policy file
(``STOKER_POLICY_FILE``, YAML or JSON as Heat's ``policy.yaml``) overrides any rule by
name. Where stoker's default differs from Heat's it says so beside the rule, and
docs/auth.md has the table of both.

Each route's rule is declared with the route (``api.operations.Operation``: a rule name,
or ``PUBLIC`` for the routes that need no token at all, the version document and the
capability URLs, which carry their own secret); ``api.routes.RULES`` is the table of
them, which ``bind`` gives the endpoints when the app is built. The signal route's rule
(``SIGNAL_RULE``) lets a wait condition handle's own token stand in for one. ``api.call``
enforces a route's rule in one place; an endpoint without a rule is refused when the app
is built, so a new route cannot be left open by forgetting it.

What this module must not do: authenticate (``api.auth`` makes the context it reads)
or decide which stacks a project reaches (``api.projects``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from oslo_config import cfg
from oslo_policy import policy as oslo_policy

from stoker.api.auth import RequestContext
from stoker.api.errors import ApiError
from stoker.engine.validation import TypeRefusedError

LOG = logging.getLogger(__name__)


class ForbiddenError(ApiError):
    """403: the policy refuses the request, or its path names another project (Heat's
    ``registered_policy_enforce``)."""

    status = 403
    heat_type = "Forbidden"


class ResourceTypeForbiddenError(ForbiddenError, TypeRefusedError):
    """403: the caller may not use a resource type the request's template names."""


class PolicyFileError(ApiError):
    """The operator's policy file cannot be read: the server does not start."""


# heat/policies/base.py, word for word.
RULE_CONTEXT_IS_ADMIN = "rule:context_is_admin"
RULE_DENY_EVERYBODY = "rule:deny_everybody"
PROJECT_MEMBER = "role:member and project_id:%(project_id)s"
PROJECT_READER = "role:reader and project_id:%(project_id)s"
PROJECT_ADMIN = "role:admin and project_id:%(project_id)s"
PROJECT_STACK_USER = "role:heat_stack_user and project_id:%(project_id)s"
PROJECT_READER_OR_STACK_USER = f"({PROJECT_READER}) or ({PROJECT_STACK_USER})"

BASE_RULES = {
    "context_is_admin": "(role:admin and is_admin_project:True)",
    "project_admin": "role:admin",
    "deny_stack_user": "not role:heat_stack_user",
    "deny_everybody": "!",
    "allow_everybody": "",
}

# Rule name -> (stoker's default, Heat's default where it differs, else None).
DEFAULTS: dict[str, tuple[str, str | None]] = {
    # heat/policies/stacks.py
    "stacks:abandon": (PROJECT_MEMBER, None),
    "stacks:create": (PROJECT_MEMBER, None),
    "stacks:delete": (PROJECT_MEMBER, None),
    "stacks:detail": (PROJECT_READER, None),
    "stacks:export": (PROJECT_MEMBER, None),
    "stacks:generate_template": (PROJECT_MEMBER, None),
    # Heat denies every caller by default (an operator opens it); the issue asks for
    # admin's global listing, so stoker's default lets a cloud admin list every project.
    "stacks:global_index": (RULE_CONTEXT_IS_ADMIN, RULE_DENY_EVERYBODY),
    "stacks:index": (PROJECT_READER, None),
    "stacks:list_resource_types": (PROJECT_READER, None),
    "stacks:list_template_versions": (PROJECT_READER, None),
    "stacks:list_template_functions": (PROJECT_READER, None),
    "stacks:lookup": (PROJECT_READER_OR_STACK_USER, None),
    "stacks:preview": (PROJECT_READER, None),
    "stacks:resource_schema": (PROJECT_READER, None),
    "stacks:show": (PROJECT_READER, None),
    "stacks:template": (PROJECT_READER, None),
    "stacks:environment": (PROJECT_READER, None),
    "stacks:files": (PROJECT_READER, None),
    "stacks:update": (PROJECT_MEMBER, None),
    "stacks:update_patch": (PROJECT_MEMBER, None),
    # A PATCH that changes nothing (no template, environment, parameters, files or
    # settings): Heat checks this rule instead of update_patch.
    "stacks:update_no_change": ("rule:stacks:update_patch", None),
    "stacks:preview_update": (PROJECT_MEMBER, None),
    "stacks:preview_update_patch": (PROJECT_MEMBER, None),
    "stacks:validate_template": (PROJECT_MEMBER, None),
    "stacks:snapshot": (PROJECT_MEMBER, None),
    "stacks:show_snapshot": (PROJECT_READER, None),
    "stacks:delete_snapshot": (PROJECT_MEMBER, None),
    "stacks:list_snapshots": (PROJECT_READER, None),
    "stacks:restore_snapshot": (PROJECT_MEMBER, None),
    "stacks:list_outputs": (PROJECT_READER, None),
    "stacks:show_output": (PROJECT_READER, None),
    # heat/policies/actions.py (check is a reader's: it changes nothing)
    "actions:action": (PROJECT_MEMBER, None),
    "actions:snapshot": (PROJECT_MEMBER, None),
    "actions:suspend": (PROJECT_MEMBER, None),
    "actions:resume": (PROJECT_MEMBER, None),
    "actions:check": (PROJECT_READER, None),
    "actions:cancel_update": (PROJECT_MEMBER, None),
    "actions:cancel_without_rollback": (PROJECT_MEMBER, None),
    # heat/policies/resource.py and events.py
    "resource:index": (PROJECT_READER, None),
    "resource:metadata": (PROJECT_READER_OR_STACK_USER, None),
    "resource:signal": (PROJECT_READER_OR_STACK_USER, None),
    "resource:mark_unhealthy": (PROJECT_MEMBER, None),
    "resource:show": (PROJECT_READER, None),
    "events:index": (PROJECT_READER, None),
    "events:show": (PROJECT_READER, None),
    # heat/policies/build_info.py and service.py
    "build_info:build_info": (PROJECT_READER, None),
    # stoker's: the values a custom constraint accepts in the caller's cloud (a read).
    "custom_constraints:values": (PROJECT_READER, None),
    "service:index": (PROJECT_ADMIN, None),
    # heat/policies/software_configs.py and software_deployments.py
    "software_configs:global_index": (RULE_DENY_EVERYBODY, None),
    "software_configs:index": (PROJECT_READER, None),
    "software_configs:create": (PROJECT_MEMBER, None),
    "software_configs:show": (PROJECT_READER, None),
    "software_configs:delete": (PROJECT_MEMBER, None),
    "software_deployments:index": (PROJECT_READER, None),
    "software_deployments:create": (PROJECT_MEMBER, None),
    "software_deployments:show": (PROJECT_READER, None),
    "software_deployments:update": (PROJECT_MEMBER, None),
    "software_deployments:delete": (PROJECT_MEMBER, None),
    "software_deployments:metadata": (PROJECT_READER_OR_STACK_USER, None),
    # stoker's: applying a saved plan is a create or an update.
    "stacks:apply_plan": (PROJECT_MEMBER, None),
    # stoker's: an import makes a stack (docs/import.md), a member's as a create is.
    "stacks:import": (PROJECT_MEMBER, None),
    # stoker's own routes (docs/api.md), which Heat does not have: introspection of the
    # templates a request carries, as validate's reading counterpart.
    "capabilities:find": (PROJECT_READER, None),
    "capabilities:template_capabilities": (PROJECT_READER, None),
    # Drift (docs/drift.md): a detection reads the live objects and changes none of them
    # (it records events and its result), a member's like a check that writes; reading
    # the last result is a reader's.
    "stacks:drift": (PROJECT_MEMBER, None),
    "stacks:show_drift": (PROJECT_READER, None),
    # The plan of a suspend, resume, check or delete (docs/plans.md) reads the store only.
    "stacks:preview_action": (PROJECT_READER, None),
}

# heat/policies/resource_types.py: the resource types only a project's admin may use
# (``resource_types:<type>``; ``OS::Keystone::*`` names every Keystone type). An operator's
# policy file may restrict any other type the same way, by its name or a ``Prefix::*``.
RESOURCE_TYPE_RULE = "resource_types:%s"
ADMIN_RESOURCE_TYPES = (
    "OS::Nova::Flavor", "OS::Cinder::EncryptedVolumeType", "OS::Cinder::VolumeType", "OS::Cinder::Quota",
    "OS::Neutron::Quota", "OS::Nova::Quota", "OS::Manila::ShareType", "OS::Neutron::ProviderNet",
    "OS::Neutron::QoSPolicy", "OS::Neutron::QoSBandwidthLimitRule", "OS::Neutron::Segment", "OS::Nova::HostAggregate",
    "OS::Cinder::QoSSpecs", "OS::Cinder::QoSAssociation", "OS::Keystone::*", "OS::Blazar::Host",
)  # fmt: skip
DEFAULTS.update({RESOURCE_TYPE_RULE % name: ("rule:project_admin", None) for name in ADMIN_RESOURCE_TYPES})

# The rule of POST .../actions: the body's key names the action's own (Heat's
# ActionController; ``rules_of``).
ACTIONS = "actions:*"
# A signal to a resource: with a token of the project, as Heat's resource:signal; or
# with a wait condition handle's own token (``curl_cli``), which the service checks.
SIGNAL_RULE = "resource:signal"
# The rule of an endpoint no app bound a table to (``api.call``): authenticated by the
# app's authenticator, if any, and no rule checked.
UNBOUND = ""

# A list that asks for every project's items (``global_tenant=true``) is checked
# against a second rule too, as Heat's index calls its global_index.
GLOBAL_INDEX = {"stacks:index": "stacks:global_index", "software_configs:index": "software_configs:global_index"}
_ACTION_NAMES = ("suspend", "resume", "check", "cancel_update", "cancel_without_rollback")


def bind(routes: list[Any], attribute: str, rules: Mapping[tuple[str, str], str | None]) -> None:
    """Give each endpoint of ``routes`` (those made by ``api.call.endpoint``, which
    have ``attribute``) its rule by method from ``rules`` ((method, path) -> rule, None
    for a public route: ``api.routes.RULES``). A route missing from ``rules`` is an
    error here, when the app is built."""
    missing = []
    for route in routes:
        target = getattr(route, "endpoint", None)
        if not hasattr(target, attribute):
            continue
        access: dict[str, str | None] = getattr(target, attribute)
        for method in sorted(route.methods or ()):
            if method == "HEAD":
                continue
            key = (method, route.path)
            if key not in rules:
                missing.append(f"{method} {route.path}")
            elif access.get(method, rules[key]) != rules[key]:
                raise ValueError(f"{method} {route.path}: one endpoint on two routes with different rules")
            else:
                access[method] = rules[key]
    if missing:
        raise ValueError("routes without a policy rule (declare them as an api.operations.Operation): " + ", ".join(missing))


def rules_of(body: Any, query: Mapping[str, str], rule: str) -> list[str]:
    """The rules one request of a route whose rule is ``rule`` must pass: an action's
    own (by its body's key; a body that names no known action passes ``actions:action``
    and is then refused by the route), and a global listing's second rule."""
    if rule == ACTIONS:
        name = next(iter(body), None) if isinstance(body, Mapping) and len(body) == 1 else None
        return [f"actions:{name}" if name in _ACTION_NAMES else "actions:action"]
    if rule == "stacks:update_patch" and _no_change(body):
        return ["stacks:update_no_change"]
    rules = [rule]
    if rule in GLOBAL_INDEX and str(query.get("global_tenant", "")).lower() in ("true", "1", "yes", "on"):
        rules.append(GLOBAL_INDEX[rule])
    return rules


# The keys of a stack request that carry no setting (Heat's InstantiationData.PARAMS).
_CONTENT_KEYS = ("stack_name", "template", "template_url", "parameters", "environment", "files", "environment_files", "files_container")


def _no_change(body: Any) -> bool:
    """Heat's ``InstantiationData.no_change``: a PATCH body that asks for nothing new."""
    if not isinstance(body, Mapping):
        return True
    if body.get("template") is not None or body.get("template_url") is not None or body.get("files_container") is not None:
        return False
    if body.get("files") or body.get("environment_files") or body.get("parameters"):
        return False
    environment = body.get("environment")
    if isinstance(environment, Mapping) and any(environment.values()) or isinstance(environment, str) and environment.strip():
        return False
    return not any(key != "existing" for key in body if key not in _CONTENT_KEYS)


class Policy:
    """oslo.policy's Enforcer with Heat's rules registered, and an operator's file over
    them: read here, so a file that does not parse stops the server, and read again by
    oslo.policy when it changes, as in Heat. ``check`` runs in the endpoints' worker
    threads, as oslo.policy runs in the threads of every OpenStack API."""

    def __init__(self, policy_file: str | None = None):
        if policy_file is not None and not Path(policy_file).is_file():
            raise PolicyFileError(f"The policy file {policy_file} does not exist", hint="set STOKER_POLICY_FILE to an oslo.policy YAML or JSON file")
        conf = cfg.ConfigOpts()
        conf([], project="stoker", default_config_files=[], default_config_dirs=[])
        self.enforcer = oslo_policy.Enforcer(conf, policy_file=str(Path(policy_file).resolve()) if policy_file else None)
        self.enforcer.register_defaults(
            [oslo_policy.RuleDefault(name, check) for name, check in BASE_RULES.items()]
            + [oslo_policy.RuleDefault(name, check) for name, (check, _heat) in DEFAULTS.items()]
        )
        try:
            self.enforcer.load_rules()
        except Exception as error:  # noqa: BLE001 - any parse error: say which file, then stop
            raise PolicyFileError(f"The policy file {policy_file} cannot be read: {error}")

    def check(self, context: RequestContext, rules: list[str], project_id: str) -> None:
        """Raise ForbiddenError unless ``context`` passes every rule for a target in
        ``project_id`` (Heat's target: the path's tenant)."""
        credentials = credentials_of(context)
        for rule in rules:
            if not self.enforcer.authorize(rule, {"project_id": project_id, "tenant_id": project_id}, credentials):
                raise ForbiddenError(f"You are not authorized to complete {rule} action.")

    def check_resource_type(self, context: RequestContext, type_name: str, project_id: str) -> None:
        """Raise ForbiddenError unless ``context`` may use resources of ``type_name``
        (Heat's ResourceEnforcer): the type's own ``resource_types:<type>`` rule and its
        prefix's ``resource_types:<Prefix>::*``, each where a rule of that name exists
        (a type without one is anyone's)."""
        credentials = credentials_of(context)
        target = {"project_id": project_id, "tenant_id": project_id}
        prefix = "::".join([*type_name.split("::")[:-1], "*"])
        for name in dict.fromkeys((type_name, prefix)):
            rule = RESOURCE_TYPE_RULE % name
            # enforce, not authorize: an operator's file may name a type no default does.
            if rule in self.enforcer.rules and not self.enforcer.enforce(rule, target, credentials):
                # Heat's exception.Forbidden, naming the type.
                raise ResourceTypeForbiddenError(f"You are not authorized to use {type_name}.")

    def allows_resource_type(self, context: RequestContext, type_name: str, project_id: str) -> bool:
        try:
            self.check_resource_type(context, type_name, project_id)
        except ForbiddenError:
            return False
        return True

    def is_admin(self, roles: list[str], project_id: str, is_admin_project: bool) -> bool:
        """Heat's ``context_is_admin`` (``RequestContext.is_admin``): by default an
        ``admin`` of the admin project (Keystone's is_admin_project)."""
        credentials = {"roles": roles, "project_id": project_id, "is_admin_project": is_admin_project}
        return bool(self.enforcer.authorize("context_is_admin", {}, credentials))


def credentials_of(context: RequestContext) -> dict[str, Any]:
    """What oslo.policy's checks read (oslo.context's ``to_policy_values``)."""
    return {
        "user_id": context.user_id,
        "project_id": context.tenant_id,
        "roles": list(context.roles),
        "is_admin": context.is_admin,
        "is_admin_project": context.is_admin_project,
    }
