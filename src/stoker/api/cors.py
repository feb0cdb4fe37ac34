"""Cross-origin requests (CORS): which other web origins' pages may call the API from a
browser, as Heat allows them with oslo.middleware's CORS middleware and its ``[cors]
allowed_origin``. Off by default: the dashboard is served from the API's own origin
and needs none.

What it owns: the check of the operator's origins (``Settings.cors_allowed_origins``,
``STOKER_CORS_ALLOWED_ORIGINS``) and the middleware made from them, with the headers,
methods and exposed headers OpenStack services give oslo.middleware by default. No
credentials mode: the API's tokens travel in ``X-Auth-Token``, never in cookies.
What it must not do: authenticate or authorise (a cross-origin call still needs its
token, and the policy still applies).
"""

from __future__ import annotations

import re

from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware

from stoker.sdk.exceptions import StokerError

ALLOW_METHODS = ["GET", "PUT", "POST", "DELETE", "PATCH"]
ALLOW_HEADERS = [
    "X-Auth-Token",
    "X-Identity-Status",
    "X-Roles",
    "X-Service-Catalog",
    "X-User-Id",
    "X-Tenant-Id",
    "X-OpenStack-Request-ID",
    "Content-Type",
    "Last-Event-ID",
]
EXPOSE_HEADERS = [
    "X-Auth-Token",
    "X-Subject-Token",
    "X-Service-Token",
    "X-OpenStack-Request-ID",
    "Location",
]
# Seconds a browser may keep a preflight's answer (oslo.middleware's max_age default).
MAX_AGE_S = 3600
_ORIGIN = re.compile(r"^https?://[^/\s?#@]+$")


class CorsConfigurationError(StokerError):
    """An allowed origin that is not one: the server does not start."""


def allowed_origins(origins: list[str]) -> list[str]:
    """The origins, each checked: ``scheme://host[:port]`` exactly as a browser sends it."""
    checked = []
    for origin in origins:
        if not _ORIGIN.match(origin):
            raise CorsConfigurationError(
                f"STOKER_CORS_ALLOWED_ORIGINS: {origin!r} is not an origin",
                hint="give each as scheme://host[:port] with no path, e.g. https://ops.example.com, separated by commas",
            )
        checked.append(origin.lower())
    return checked


def middleware(origins: list[str]) -> list[Middleware]:
    """The app's CORS middleware: none without allowed origins."""
    if not origins:
        return []
    return [
        Middleware(
            CORSMiddleware,
            allow_origins=allowed_origins(origins),
            allow_methods=ALLOW_METHODS,
            allow_headers=ALLOW_HEADERS,
            expose_headers=EXPOSE_HEADERS,
            allow_credentials=False,
            max_age=MAX_AGE_S,
        )
    ]
