"""One declaration per operation (``stoker.api.operations``): the Starlette routes and the
policy table derived from a list of operations."""

from __future__ import annotations

import pytest

from stoker.api import routes
from stoker.api.call import ACCESS_ATTRIBUTE
from stoker.api.operations import PUBLIC, Operation, rule_table, starlette_routes


def handler(call):  # pragma: no cover - never called
    return None


def other(call):  # pragma: no cover - never called
    return None


async def plain(request):  # pragma: no cover - never called
    return None


def test_operations_one_route_per_path_and_handler_in_declaration_order():
    made = starlette_routes(
        [
            Operation("PUT", "/a/{x}", handler, PUBLIC, None),
            Operation("GET", "/b", plain, PUBLIC, None, plain=True),
            Operation("POST", "/a/{x}", handler, PUBLIC, None),
            Operation("DELETE", "/a/{x}", other, "r:delete", None),
        ]
    )
    assert [(route.path, route.methods) for route in made] == [
        ("/a/{x}", {"PUT", "POST"}),
        ("/b", {"GET", "HEAD"}),
        ("/a/{x}", {"DELETE"}),
    ]
    # A Call handler is made an endpoint (api.call), which has the rule table's attribute;
    # a plain one is the route's endpoint itself.
    assert hasattr(made[0].endpoint, ACCESS_ATTRIBUTE) and made[1].endpoint is plain


def test_operations_rule_table_refuses_an_operation_declared_twice():
    assert rule_table(
        [
            Operation("GET", "/a", handler, PUBLIC, None),
            Operation("POST", "/a", handler, "r:create", None),
        ]
    ) == {
        ("GET", "/a"): None,
        ("POST", "/a"): "r:create",
    }
    with pytest.raises(ValueError, match="GET /a: declared twice"):
        rule_table(
            [
                Operation("GET", "/a", handler, PUBLIC, None),
                Operation("GET", "/a", other, "r:show", None),
            ]
        )


def test_operations_of_the_app_derive_its_policy_table():
    assert routes.ROUTES[("GET", "/v1/{tenant_id}/stacks")] == "stacks:index"
    assert ("PUT", "/v1/waitcondition/{credential_id}") in routes.PUBLIC
    assert routes.SIGNAL == (
        "POST",
        "/v1/{tenant_id}/stacks/{stack_name}/{stack_id}/resources/{resource_name}/signal",
    )
    assert set(routes.RULES) == set(routes.ROUTES) | routes.PUBLIC
