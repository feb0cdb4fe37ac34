"""Who is asking: the three ways ``stoker serve`` authenticates a request, and the
request context each makes (docs/auth.md has their threat models).

    none      no authentication (today's laptop mode): the project is the path's
              ``{tenant_id}``, the caller a member and reader of it, any token taken
              as-is. Refused on an address other than loopback.
    token     static tokens from a YAML file (token -> project_id, user_id, roles),
              compared in constant time; for a deployment without Keystone.
    keystone  tokens validated by keystonemiddleware's ``auth_token`` (what every
              OpenStack API runs), against a Keystone that must answer at start.

keystonemiddleware is WSGI middleware and the app is ASGI, so its ``AuthProtocol`` is
used as an object: a webob request holding only the caller's X-Auth-Token goes through
``process_request``, which validates the token (with its cache) and sets the
X-Project-Id, X-User-Id, X-Roles and X-Is-Admin-Project headers read here. It blocks
(an HTTP call to Keystone), so ``api.call`` runs it in a worker thread.

What this module must not do: decide what a caller may do (``api.policy``) or which
stacks a project reaches (``api.projects``). ``RequestContext`` keeps ``tenant_id`` and
``token``, which the rest of the API reads.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import yaml

from stoker.api.errors import ApiError
from stoker.sdk.exceptions import StokerError

if TYPE_CHECKING:
    from stoker.api.policy import Policy
    from stoker.settings import Settings

LOG = logging.getLogger(__name__)

MODES = ("none", "token", "keystone")
# Keystone's default implied roles (keystone-manage bootstrap): a token lists the roles
# a role implies, so an admin is a member and a reader too. Static tokens imply them
# the same way.
IMPLIED_ROLES = {"admin": ("member", "reader"), "member": ("reader",)}
# The none mode's caller, for the policy: every role, so every rule of its own project
# passes as before; but not a cloud admin (is_admin_project is false), so no caller
# reaches another project's stacks.
NONE_ROLES = ("admin", "member", "reader")


class AuthConfigurationError(StokerError):
    """The server cannot authenticate as configured: it does not start."""


class UnauthorizedError(ApiError):
    """401: no token, or one that is not valid (unknown, revoked or expired)."""

    status = 401
    heat_type = "HTTPUnauthorized"


class IdentityUnavailableError(ApiError):
    """503: Keystone does not answer, so no token can be validated."""

    status = 503
    heat_type = "HTTPServiceUnavailable"


@dataclass(frozen=True)
class RequestContext:
    # The caller's project: the token's in token and keystone modes, the path's in none.
    tenant_id: str
    # The X-Auth-Token as sent (None without one); never stored or logged.
    token: str | None
    user_id: str | None = None
    roles: tuple[str, ...] = ()
    # Heat's context is_admin (policy rule context_is_admin): reaches every project.
    is_admin: bool = False
    is_admin_project: bool = False
    auth_mode: str = "none"
    # False only for a signal let in without a valid token (a handle's own token).
    authenticated: bool = True


class Authenticator(Protocol):
    mode: str
    # The WWW-Authenticate header of a 401, where the mode has one (Keystone's). Read-only here,
    # so each mode may declare it narrower (None, or always a str).
    @property
    def challenge(self) -> str | None: ...

    def authenticate(self, token: str | None, path_tenant: str) -> RequestContext | None:
        """The caller's context, or None when the token does not authenticate."""


def with_implied_roles(roles: list[str]) -> tuple[str, ...]:
    found = [role.lower() for role in roles]
    for role in list(found):
        found.extend(implied for implied in IMPLIED_ROLES.get(role, ()) if implied not in found)
    return tuple(dict.fromkeys(found))


class NoAuthentication:
    mode = "none"
    challenge = None

    def authenticate(self, token: str | None, path_tenant: str) -> RequestContext:
        return RequestContext(tenant_id=path_tenant, token=token, roles=NONE_ROLES, auth_mode=self.mode)


@dataclass(frozen=True)
class _StaticToken:
    token: str
    project_id: str
    user_id: str
    roles: tuple[str, ...]
    is_admin_project: bool


class StaticTokens:
    """Tokens from a YAML file read once at start::

        tokens:
          "3c1f...long random text...": {project_id: p1, user_id: alice, roles: [member]}
          "9ab2...":                    {project_id: p1, user_id: bob, roles: [reader]}

    Every token is compared with ``hmac.compare_digest`` (all of them, whatever matched),
    so the time an answer takes does not tell how much of a guess was right."""

    mode = "token"
    challenge = None
    MIN_TOKEN_CHARS = 16

    def __init__(self, path: str | None, policy: Policy):
        if not path:
            raise AuthConfigurationError("STOKER_AUTH_MODE=token needs STOKER_AUTH_TOKENS_FILE, a YAML file of tokens (see docs/auth.md)")
        self.policy = policy
        self.tokens = self._load(Path(path))

    @classmethod
    def _load(cls, path: Path) -> list[_StaticToken]:
        try:
            data = yaml.safe_load(path.read_text())
        except OSError as error:
            raise AuthConfigurationError(f"The tokens file {path} cannot be read: {error.strerror}")
        except yaml.YAMLError as error:
            raise AuthConfigurationError(f"The tokens file {path} is not valid YAML: {error}")
        entries = data.get("tokens") if isinstance(data, Mapping) else None
        if not isinstance(entries, Mapping) or not entries:
            raise AuthConfigurationError(f"The tokens file {path} must map 'tokens' to token: {{project_id, user_id, roles}} entries")
        tokens = []
        for number, (token, entry) in enumerate(entries.items(), start=1):
            # Named by position: an error must not print any part of a token.
            where = f"The tokens file {path}, token number {number}:"
            if not isinstance(token, str) or len(token) < cls.MIN_TOKEN_CHARS:
                raise AuthConfigurationError(f"{where} a token must be text of at least {cls.MIN_TOKEN_CHARS} characters")
            if not isinstance(entry, Mapping) or not isinstance(entry.get("project_id"), str) or not entry["project_id"]:
                raise AuthConfigurationError(f"{where} needs a project_id")
            roles = entry.get("roles", [])
            if not isinstance(roles, list) or not all(isinstance(role, str) for role in roles):
                raise AuthConfigurationError(f"{where} roles must be a list of role names")
            tokens.append(
                _StaticToken(token, entry["project_id"], str(entry.get("user_id") or token[:8]), with_implied_roles(roles), bool(entry.get("is_admin_project", True)))
            )
        return tokens

    def authenticate(self, token: str | None, path_tenant: str) -> RequestContext | None:
        if not token:
            return None
        given = token.encode("utf-8", "surrogateescape")
        found = None
        for candidate in self.tokens:
            if hmac.compare_digest(candidate.token.encode(), given) and found is None:
                found = candidate
        if found is None:
            return None
        return RequestContext(
            tenant_id=found.project_id,
            token=token,
            user_id=found.user_id,
            roles=found.roles,
            is_admin=self.policy.is_admin(list(found.roles), found.project_id, found.is_admin_project),
            is_admin_project=found.is_admin_project,
            auth_mode=self.mode,
        )


class KeystoneTokens:
    """Tokens validated by keystonemiddleware's AuthProtocol, configured as Heat's
    [keystone_authtoken]: from an oslo.config file (``keystone_config_file``) and the
    options given one by one (``keystone_authtoken``, from STOKER_KEYSTONE_<OPTION>)."""

    mode = "keystone"
    GROUP = "keystone_authtoken"

    def __init__(self, config_file: str | None, options: Mapping[str, str], policy: Policy):
        from keystonemiddleware import auth_token
        from oslo_config import cfg

        self.policy = policy
        if config_file and not Path(config_file).is_file():
            raise AuthConfigurationError(f"The Keystone configuration file {config_file} does not exist")
        conf = cfg.ConfigOpts()
        conf([], project="stoker", default_config_files=[config_file] if config_file else [], default_config_dirs=[])
        for group, opts in auth_token.list_opts():
            conf.register_opts(opts, group=group)
        options = dict(options)
        # The service user's credentials are those of the password plugin unless the
        # operator names another; without a public URL for the 401's challenge, the
        # auth_url is the best guess (keystonemiddleware warns otherwise).
        if "username" in options or "application_credential_id" in options:
            options.setdefault("auth_type", "v3applicationcredential" if "application_credential_id" in options else "password")
        if "auth_url" in options:
            options.setdefault("www_authenticate_uri", options["auth_url"])
        self._set(conf, options)
        self.conf = conf
        self.auth_url = conf[self.GROUP].auth_url if "auth_url" in conf[self.GROUP] else None
        if not conf[self.GROUP].auth_type:
            raise AuthConfigurationError(
                "STOKER_AUTH_MODE=keystone needs the service user that validates tokens: STOKER_KEYSTONE_AUTH_URL, "
                "STOKER_KEYSTONE_USERNAME, STOKER_KEYSTONE_PASSWORD and STOKER_KEYSTONE_PROJECT_NAME, or a "
                "[keystone_authtoken] section in STOKER_KEYSTONE_CONFIG_FILE (see docs/auth.md)"
            )
        self.protocol = auth_token.AuthProtocol(None, {"oslo_config_config": conf})
        self.challenge = f'Keystone uri="{self.protocol.www_authenticate_uri}"'

    def _set(self, conf: Any, options: dict[str, str]) -> None:
        from keystoneauth1 import loading
        from oslo_config import cfg

        group = conf[self.GROUP]
        auth_type = options.get("auth_type") or group.auth_type
        if auth_type:
            try:
                conf.register_opts(loading.get_auth_plugin_conf_options(auth_type), group=self.GROUP)
            except Exception as error:  # noqa: BLE001 - an unknown plugin name: say so
                raise AuthConfigurationError(f"Unknown Keystone auth_type {auth_type!r}: {error}")
        for name, value in options.items():
            if name not in group:
                raise AuthConfigurationError(f"STOKER_KEYSTONE_{name.upper()}: {name} is not a [keystone_authtoken] option of keystonemiddleware or of auth_type {auth_type}")
            try:
                conf.set_override(name, value, group=self.GROUP)
            except (ValueError, cfg.Error) as error:
                raise AuthConfigurationError(f"STOKER_KEYSTONE_{name.upper()}: {error}")

    def check(self) -> None:
        """Refuse to start unless Keystone answers, the service user authenticates and a
        token (the service user's own) validates through the middleware."""
        from keystoneauth1 import exceptions as ksa_exceptions
        from keystoneauth1 import loading, session

        where = f"Keystone at {self.auth_url}" if self.auth_url else "Keystone"
        # keystoneauth logs each failed discovery before it raises; the error below says it.
        discovery = logging.getLogger("keystoneauth")
        level = discovery.level
        discovery.setLevel(logging.ERROR)
        try:
            plugin = loading.load_auth_from_conf_options(self.conf, self.GROUP)
            token = session.Session(auth=plugin, timeout=10).get_token()
        except ksa_exceptions.Unauthorized as error:
            raise AuthConfigurationError(f"{where} refused the service user's credentials: {error}")
        except ksa_exceptions.ClientException as error:
            raise AuthConfigurationError(f"{where} cannot be reached: {type(error).__name__}: {error}")
        finally:
            discovery.setLevel(level)
        try:
            context = self.authenticate(token, "")
        except ApiError as error:
            raise AuthConfigurationError(f"{where} cannot validate tokens: {error}")
        if context is None:
            raise AuthConfigurationError(f"{where} did not validate the service user's own token: check the [keystone_authtoken] options")

    def authenticate(self, token: str | None, path_tenant: str) -> RequestContext | None:
        import webob.exc
        from keystonemiddleware.auth_token import _request

        if not token:
            return None
        request = _request._AuthTokenRequest.blank("/", headers={"X-Auth-Token": token})  # noqa: SLF001 - the request class process_request expects
        try:
            self.protocol.process_request(request)
        except webob.exc.HTTPUnauthorized:
            return None
        except webob.exc.HTTPServiceUnavailable:
            raise IdentityUnavailableError("The Keystone service is temporarily unavailable: no token can be validated")
        headers = request.headers
        if headers.get("X-Identity-Status") != "Confirmed" or not headers.get("X-Project-Id"):
            # A token scoped to no project (or to a domain) has no stacks to reach.
            return None
        project_id = headers["X-Project-Id"]
        roles = tuple(role.strip().lower() for role in headers.get("X-Roles", "").split(",") if role.strip())
        admin_project = headers.get("X-Is-Admin-Project", "True") == "True"
        return RequestContext(
            tenant_id=project_id,
            token=token,
            user_id=headers.get("X-User-Id"),
            roles=roles,
            is_admin=self.policy.is_admin(list(roles), project_id, admin_project),
            is_admin_project=admin_project,
            auth_mode=self.mode,
        )


def authenticator_for(settings: Settings, policy: Policy) -> Authenticator:
    """The settings' authenticator; a keystone one has checked Keystone answers."""
    mode = settings.auth_mode
    if mode == "none":
        return NoAuthentication()
    if mode == "token":
        return StaticTokens(settings.auth_tokens_file, policy)
    if mode == "keystone":
        keystone = KeystoneTokens(settings.keystone_config_file, settings.keystone_authtoken, policy)
        keystone.check()
        return keystone
    raise AuthConfigurationError(f"Unknown auth mode {mode!r}: choose one of {', '.join(MODES)} (STOKER_AUTH_MODE, --auth-mode)")


def check_listening(mode: str, host: str) -> None:
    """``none`` serves only a loopback address: anyone who reaches the port would be
    every project's member."""
    if mode != "none":
        return
    try:
        loopback = ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = host == "localhost"
    if not loopback:
        raise AuthConfigurationError(
            f"Refusing to listen on {host} without authentication: auth mode 'none' serves only loopback "
            "(127.0.0.1, ::1). Choose --auth-mode token or keystone (STOKER_AUTH_MODE); see docs/auth.md"
        )
