"""The Orchestration API v1 (OpenStack Heat's REST API) as an ASGI service.

``app`` (the Starlette app and its lifespan), ``stacks``, ``resources`` (and events),
``catalog`` (validation, resource types, template versions) hold the routes; ``call``
the per-request plumbing; ``schemas`` the request bodies; ``views`` the response
bodies; ``auth`` the request context; ``errors`` the one place an exception becomes
an HTTP response. The API holds no logic of its own beyond reading and shaping: every
check and action is the Service's, shared with the CLI.
"""

from stoker.api.app import create_app, serve

__all__ = ["create_app", "serve"]
