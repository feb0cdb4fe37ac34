"""make_url: a correctly escaped URL from its parts (from 2017-09-01)."""

from __future__ import annotations

from typing import Any
from urllib import parse as urlparse

from stoker.sdk.properties import UNRESOLVED
from stoker.template.functions.base import Function, ResolutionContext

KEYS = ("scheme", "username", "password", "host", "port", "path", "query", "fragment")


class MakeURL(Function):
    """``{make_url: {scheme, username, password, host, port, path, query, fragment}}``:
    every part optional; the user, password, host, path, query and fragment are escaped,
    an IPv6 host is put in brackets, the port must be 1-65535."""

    __slots__ = ()
    description = "A function for constructing a URL from its parts."

    def check(self) -> None:
        if isinstance(self.args, Function):
            return
        if not isinstance(self.args, dict):
            raise self.error(f'The arguments to "{self.fn_name}" must be a map')
        invalid = [key for key in self.args if key not in KEYS]
        if invalid:
            raise self.error(
                f'Invalid arguments to "{self.fn_name}": {", ".join(map(str, invalid))}', hint="parts: " + ", ".join(KEYS)
            )
        self._check_parts(self.args)

    def _check_parts(self, args: dict[str, Any]) -> None:
        for key in KEYS:
            if key not in args or isinstance(args[key], Function):
                continue
            value = args[key]
            if key == "query":
                if not isinstance(value, dict):
                    raise self.error(f'The "query" argument to "{self.fn_name}" must be a map')
            elif key == "port":
                if isinstance(value, bool) or not isinstance(value, (int, str)):
                    raise self.error(f'Invalid URL port "{value}" for {self.fn_name} called with {args}')
                try:
                    port = int(value)
                except ValueError:
                    raise self.error(f'Invalid URL port "{value}" for {self.fn_name} called with {args}')
                if not 0 < port <= 65535:
                    raise self.error(f"Invalid URL port {port}, must be in range 1-65535")
            elif not isinstance(value, str):
                raise self.error(f'The "{key}" argument to "{self.fn_name}" must be a string')

    def result(self, context: ResolutionContext) -> Any:
        args = self.resolved_args(context)
        if args is UNRESOLVED:
            return UNRESOLVED
        if not isinstance(args, dict):
            raise self.error(f'The arguments to "{self.fn_name}" must be a map')
        self._check_parts(args)
        scheme = args.get("scheme", "")
        if ":" in scheme:
            raise self.error("URL \"scheme\" should not contain ':'")
        netloc = ""
        username = urlparse.quote(args.get("username", ""), safe="")
        password = urlparse.quote(args.get("password", ""), safe="")
        if username or password:
            netloc = username + (f":{password}" if password else "") + "@"
        host = args.get("host", "")
        if host.startswith("[") and host.endswith("]"):
            host = host[1:-1]
        host = urlparse.quote(host, safe=":")
        netloc += f"[{host}]" if ":" in host else host
        port = args.get("port", "")
        if port:
            netloc += f":{port}"
        path = urlparse.quote(args.get("path", ""))
        query = urlparse.urlencode(args.get("query", {})).replace("%2F", "/")
        fragment = urlparse.quote(args.get("fragment", ""))
        return urlparse.urlunsplit((scheme, netloc, path, query, fragment))
