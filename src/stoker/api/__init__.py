"""The Orchestration API v1 (OpenStack Heat's REST API) as an ASGI service.

``app`` (the Starlette app and its lifespan), ``stacks``, ``resources`` (and events),
``catalog`` (validation, resource types, template versions) hold the routes; ``call``
the per-request plumbing; ``schemas`` the request bodies; ``views`` the response
bodies; ``auth`` the request context; ``errors`` the one place an exception becomes
an HTTP response. The API holds no logic of its own beyond reading and shaping: every
check and action is the Service's, shared with the CLI.
"""

from __future__ import annotations

from typing import Any

__all__ = ["create_app", "serve"]


def __getattr__(name: str) -> Any:
    # Imported when asked for: the embedded CLI reads ``views`` without the ASGI
    # stack (Starlette, uvicorn, the policy engine), which it never serves.
    if name in __all__:
        from stoker.api import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
