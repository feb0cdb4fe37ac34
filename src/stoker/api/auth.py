"""Who is asking: the request context the API gives every call.

There is no Keystone here. A request is accepted with or without ``X-Auth-Token``; a
token, when given, is taken as-is (never checked, never stored), so python-heatclient
and ``openstack stack ...`` work with any token or none. The tenant is the
``{tenant_id}`` of the path, as in Heat's URLs; stacks are not partitioned by it (one
server serves one tenant's stacks). Put an authenticating proxy in front of the server
when it must not be open to everyone who can reach its port.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.requests import Request


@dataclass(frozen=True)
class RequestContext:
    tenant_id: str
    # The X-Auth-Token as sent (None without one); accepted as-is, see above.
    token: str | None


def context_of(request: Request) -> RequestContext:
    return RequestContext(tenant_id=request.path_params.get("tenant_id", ""), token=request.headers.get("x-auth-token"))
