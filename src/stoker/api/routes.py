"""The app's routes: every operation of the API (``api.operations``), each route
module's list in the order the app matches them, and what is derived from it: the
Starlette routes, and the policy table ``api.policy.bind`` gives each endpoint its rule
from (``RULES``; ``PUBLIC``, the operations that need no token; ``SIGNAL``, the one where
a token is optional, a wait condition handle's own token standing in for one). The
OpenAPI document (``api.openapi``) describes the same operations.

Order matters where two paths can match one URL: a fixed path comes before a path
parameter that would match it (within a module, as each module's list says); and the
capability URLs' ``/v1/waitcondition/{credential_id}`` and
``/v1/server_metadata/{credential_id}`` (``resources``) also match a
``/v1/{tenant_id}/<name>`` route for a project named ``waitcondition``: the catalog's and
the stacks' routes win over them, they win over the later modules'.

What this module must not do: declare a route (the route modules do) or serve one.
"""

from __future__ import annotations

from starlette.routing import Route

from stoker.api import (
    capabilities,
    catalog,
    cfn,
    imports,
    openapi,
    plans,
    policy,
    resources,
    software_configs,
    software_deployments,
    stacks,
)
from stoker.api.operations import Operation, rule_table, starlette_routes

OPERATIONS: list[Operation] = [
    *openapi.OPERATIONS,
    *catalog.OPERATIONS,
    *stacks.OPERATIONS,
    *resources.OPERATIONS,
    *software_configs.OPERATIONS,
    *software_deployments.OPERATIONS,
    *capabilities.OPERATIONS,
    *plans.OPERATIONS,
    *imports.OPERATIONS,
    *cfn.OPERATIONS,
]

# (method, path) -> its rule, None for a route that needs no token: what policy.bind reads.
RULES = rule_table(OPERATIONS)
# The same, split: the routes with a rule, those without (no token needed), and the signal
# route, whose token a wait condition handle's own may stand in for.
ROUTES = {key: rule for key, rule in RULES.items() if rule is not None}
PUBLIC = {key for key, rule in RULES.items() if rule is None}
SIGNAL = next(key for key, rule in ROUTES.items() if rule == policy.SIGNAL_RULE)


def starlette() -> list[Route]:
    """The app's routes, made anew (each endpoint's rule is bound to it by the app)."""
    return starlette_routes(OPERATIONS)
