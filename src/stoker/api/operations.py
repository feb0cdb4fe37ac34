"""One declaration per operation of the API: its method, path, handler, policy rule and
OpenAPI description, in one ``Operation`` beside the handler that serves it.

Each route module lists its operations (``OPERATIONS``); ``api.routes`` gathers them in
the order the app matches them, and everything else is derived from that list: the
Starlette routes (``starlette_routes``), the policy table ``api.policy.bind`` gives each
endpoint its rule from (``rule_table``), and the paths of the OpenAPI document
(``api.openapi``, which renders each ``spec`` with its operation's rule).

What this module must not do: know any route (the route modules declare them) or
decide anything about a request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Final

from starlette.routing import Route

from stoker.api.call import endpoint
from stoker.api.openapi_components import OperationSpec, Schema


class Public:
    """The rule of an operation that needs no token (``PUBLIC``): the version and OpenAPI
    documents, the capability URLs (whose secret the service checks), the CFN API (its
    signature checked there)."""

    def __repr__(self) -> str:
        return "PUBLIC"


PUBLIC: Final = Public()


@dataclass(frozen=True)
class Operation:
    """One method on one path.

    ``handler``: a function of an ``api.call.Call`` (made an endpoint by
    ``api.call.endpoint``, which authenticates, checks the rule and answers in Heat's
    shapes), or with ``plain`` a Starlette endpoint that answers the request itself.
    ``rule``: the policy rule (``api.policy``) or ``PUBLIC``. ``spec``: the OpenAPI
    operation (``api.openapi_components.operation``, whose security and faults follow
    the rule; or the whole operation object as written), None for a route that is not
    API (the HTML pages of the type reference)."""

    method: str
    path: str
    handler: Callable[..., Any]
    rule: str | Public
    spec: OperationSpec | Schema | None
    plain: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return self.method, self.path


def starlette_routes(operations: Iterable[Operation]) -> list[Route]:
    """The routes, in the operations' order: one route per path and handler (the
    methods of one handler on one path share it, at its first operation's place)."""
    grouped: dict[tuple[str, Callable[..., Any]], list[Operation]] = {}
    for op in operations:
        grouped.setdefault((op.path, op.handler), []).append(op)
    routes = []
    for (path, handler), ops in grouped.items():
        if len({op.plain for op in ops}) != 1:
            raise ValueError(f"{path}: one handler both plain and a Call handler")
        routes.append(
            Route(
                path,
                handler if ops[0].plain else endpoint(handler),
                methods=[op.method for op in ops],
            )
        )
    return routes


def rule_table(operations: Iterable[Operation]) -> dict[tuple[str, str], str | None]:
    """(method, path) -> the operation's rule, None for a public one: what
    ``api.policy.bind`` gives the endpoints. An operation declared twice is an error."""
    table: dict[tuple[str, str], str | None] = {}
    for op in operations:
        if op.key in table:
            raise ValueError(f"{op.method} {op.path}: declared twice")
        table[op.key] = None if isinstance(op.rule, Public) else op.rule
    return table
