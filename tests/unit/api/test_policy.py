"""Heat's policy rules through the real oslo.policy (``stoker.api.policy``): each
route's rule is registered, the personas pass what Heat's defaults let them, an
operator's file overrides a rule, and a route without a rule stops the app being built."""

from __future__ import annotations

import pytest
from starlette.routing import Route

from stoker.api import policy, routes
from stoker.api.auth import NONE_ROLES, RequestContext, with_implied_roles
from stoker.api.call import ACCESS_ATTRIBUTE, endpoint


def context(project: str, *roles: str, admin: bool = False) -> RequestContext:
    return RequestContext(tenant_id=project, token="t", user_id="u", roles=with_implied_roles(list(roles)), is_admin=admin, is_admin_project=admin)


def allowed(enforcer: policy.Policy, caller: RequestContext, rule: str, project: str = "p") -> bool:
    try:
        enforcer.check(caller, [rule], project)
    except policy.ForbiddenError:
        return False
    return True


def test_policy_every_route_rule_is_registered():
    rules = {rule for rule in routes.ROUTES.values() if rule != policy.ACTIONS}
    rules |= {f"actions:{name}" for name in ("suspend", "resume", "check", "cancel_update", "cancel_without_rollback", "action")}
    rules |= set(policy.GLOBAL_INDEX.values())
    assert rules - set(policy.DEFAULTS) == set()
    registered = set(policy.Policy().enforcer.registered_rules)
    assert set(policy.DEFAULTS) <= registered


def test_policy_heat_defaults_by_persona():
    enforcer = policy.Policy()
    reader, member, admin = context("p", "reader"), context("p", "member"), context("p", "admin", admin=True)
    for rule in ("stacks:index", "stacks:show", "resource:index", "events:index", "actions:check", "software_configs:show"):
        assert allowed(enforcer, reader, rule), rule
    for rule in ("stacks:create", "stacks:update", "stacks:delete", "actions:suspend", "stacks:validate_template", "software_configs:create"):
        assert not allowed(enforcer, reader, rule), rule
        assert allowed(enforcer, member, rule), rule
    for rule in ("service:index", "stacks:global_index"):
        assert not allowed(enforcer, member, rule), rule
        assert allowed(enforcer, admin, rule), rule
    # Heat's software_configs:global_index denies even an admin.
    assert not allowed(enforcer, admin, "software_configs:global_index")
    # A member of another project is nobody here.
    assert not allowed(enforcer, context("q", "member"), "stacks:index", project="p")
    # none mode's caller: every project-scoped rule, but not the cloud admin's.
    anyone = RequestContext(tenant_id="p", token=None, roles=NONE_ROLES)
    assert allowed(enforcer, anyone, "stacks:delete") and allowed(enforcer, anyone, "service:index")
    assert not allowed(enforcer, anyone, "stacks:global_index")
    assert not enforcer.is_admin(list(NONE_ROLES), "p", is_admin_project=False)
    assert enforcer.is_admin(["admin"], "p", is_admin_project=True)


def test_policy_rules_of_actions_and_global_listings():
    assert policy.rules_of({"suspend": None}, {}, policy.ACTIONS) == ["actions:suspend"]
    assert policy.rules_of({"check": None}, {}, policy.ACTIONS) == ["actions:check"]
    assert policy.rules_of({"explode": None}, {}, policy.ACTIONS) == ["actions:action"]
    assert policy.rules_of({"suspend": None, "resume": None}, {}, policy.ACTIONS) == ["actions:action"]
    assert policy.rules_of(None, {"global_tenant": "True"}, "stacks:index") == ["stacks:index", "stacks:global_index"]
    assert policy.rules_of(None, {"global_tenant": "false"}, "stacks:index") == ["stacks:index"]


def test_policy_operator_file_overrides_a_rule(tmp_path):
    path = tmp_path / "policy.yaml"
    path.write_text('"stacks:create": "role:admin"\n')
    enforcer = policy.Policy(str(path))
    assert not allowed(enforcer, context("p", "member"), "stacks:create")
    assert allowed(enforcer, context("p", "member"), "stacks:update")  # the file does not name it
    with pytest.raises(policy.PolicyFileError, match="does not exist"):
        policy.Policy(str(tmp_path / "missing.yaml"))
    path.write_text('"stacks:create": [unclosed\n')
    with pytest.raises(policy.PolicyFileError, match="cannot be read"):
        policy.Policy(str(path))


def test_policy_bind_refuses_a_route_without_a_rule():
    def handler(call):  # pragma: no cover - never called
        return None

    known = Route("/v1/{tenant_id}/stacks", endpoint(handler), methods=["GET"])
    policy.bind([known], ACCESS_ATTRIBUTE, routes.RULES)
    assert getattr(known.endpoint, ACCESS_ATTRIBUTE) == {"GET": "stacks:index"}
    with pytest.raises(ValueError, match="POST /v1/{tenant_id}/brand_new"):
        policy.bind([Route("/v1/{tenant_id}/brand_new", endpoint(handler), methods=["POST"])], ACCESS_ATTRIBUTE, routes.RULES)
