"""Where the OpenStack resource types get their cloud: one ``openstack.connection.Connection``
per stack context, made from a pluggable ``CloudSource``. The plugins of
``resources/openstack/`` ask it for their connection (``client_plugin.py``); serve mode
(``serving.py``) installs the source, ``clouds/trusts.py``'s in keystone mode.

Owns:
  ``CloudSource``             the protocol: a context in, an ``openstack.config`` cloud region out.
  ``EnvironmentCloudSource``  embedded mode: ``OS_CLOUD`` (a cloud in clouds.yaml) or the
                              ``OS_*`` variables, read from the process environment.
  ``connection_for``          the connection of a context (a stack action, a validation),
                              made on first use and shared by every client plugin of it.
  ``set_cloud_source``        how serve mode (or a test) installs another source.
  ``keystone_session``        a keystoneauth session that retries, on a connection failure,
                              the requests it sends without a token (authentication and
                              version discovery), which every session of the engine is.

Must not: log, store or repeat credentials. Errors name the setting to fix, never the
values of the auth section. ``openstack`` is imported here on first use only, so the CLI
and stacks without OpenStack resources never pay for it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Protocol

from stoker.sdk.exceptions import ClientPluginError

__all__ = [
    "CloudConfigurationError",
    "CloudSource",
    "EnvironmentCloudSource",
    "NoCloudError",
    "cloud_source",
    "connection_for",
    "keystone_session",
    "set_cloud_source",
]


class CloudConfigurationError(ClientPluginError):
    """No usable cloud configuration: the message says which setting to fix."""


class NoCloudError(CloudConfigurationError):
    """No cloud is configured at all (neither ``OS_CLOUD`` nor ``OS_AUTH_URL``): what
    may work without one (a server's CFN keypair, which stoker then issues) asks."""


class CloudSource(Protocol):
    """Makes the cloud region (openstack.config.cloud_region.CloudRegion) a context acts in."""

    def cloud_region(self, context: Any) -> Any: ...


class EnvironmentCloudSource:
    """Embedded mode: the cloud named by ``OS_CLOUD`` in clouds.yaml, else the ``OS_*``
    variables (``OS_AUTH_URL``, ``OS_USERNAME``...), as the ``openstack`` command reads them."""

    def __init__(self, environ: Mapping[str, str] | None = None):
        self.environ = os.environ if environ is None else environ

    def cloud_region(self, context: Any) -> Any:
        from keystoneauth1 import exceptions as keystoneauth_exceptions
        from openstack import config as openstack_config
        from openstack import exceptions as openstack_exceptions

        cloud = self.environ.get("OS_CLOUD") or None
        files = [self.environ["OS_CLIENT_CONFIG_FILE"]] if self.environ.get("OS_CLIENT_CONFIG_FILE") else []
        # openstacksdk reads os.environ itself; another mapping (serve mode, tests) is
        # given to it as the same settings it would have read from OS_* variables.
        own_environment = self.environ is os.environ
        settings = {} if own_environment or cloud else _settings_from_variables(self.environ)
        try:
            loader = openstack_config.OpenStackConfig(
                config_files=files + list(openstack_config.loader.CONFIG_FILES),
                load_envvars=own_environment,
            )
            region = loader.get_one(cloud, **settings)  # type: ignore[arg-type]  # openstacksdk types **kwargs as its positionals
        except (openstack_exceptions.ConfigException, keystoneauth_exceptions.ClientException) as error:
            if cloud is None and isinstance(error, keystoneauth_exceptions.MissingRequiredOptions):
                raise NoCloudError(
                    "No OpenStack cloud is configured for resource types that need one",
                    hint="set OS_CLOUD to a cloud in clouds.yaml, or OS_AUTH_URL and the other OS_* variables",
                )
            where = f"cloud {cloud!r} of clouds.yaml (OS_CLOUD)" if cloud else "the OS_* variables"
            raise CloudConfigurationError(
                f"Cannot configure OpenStack from {where}: {_first_line(error)}",
                hint="set OS_CLOUD to a cloud in clouds.yaml, or OS_AUTH_URL and the other OS_* variables",
            )
        return region


def _settings_from_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """``OS_AUTH_URL`` -> ``auth_url``..., as openstacksdk maps its own environment."""
    skip = {"OS_CLOUD", "OS_CLIENT_CONFIG_FILE", "OS_CLIENT_SECURE_FILE"}
    return {
        name[3:].lower(): value
        for name, value in environ.items()
        if name.startswith("OS_") and name not in skip and value
    }


def _first_line(error: BaseException) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


_source_lock = threading.Lock()
_source: CloudSource | None = None
# context -> its connection. Weak: a stack action's connection goes with the action.
_connections: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
# The connections of the clouds in use, by configuration (``_fingerprint``); the least
# recently used beyond SHARED_CONNECTIONS is dropped.
SHARED_CONNECTIONS = 16
_shared: OrderedDict[str, Any] = OrderedDict()


def set_cloud_source(source: CloudSource | None) -> None:
    """Install the source of cloud regions (None: back to the environment)."""
    global _source
    with _source_lock:
        _source = source
        _connections.clear()
        _shared.clear()


def cloud_source() -> CloudSource:
    with _source_lock:
        return _source if _source is not None else EnvironmentCloudSource()


def connection_for(context: Any) -> Any:
    """The one connection of ``context``, made on first use. Client plugins of several
    services share it, and contexts whose cloud is configured the same (a validation, then
    the stack action; the next command of a server) share one too: authentication, the
    catalog and each service's version document are fetched once, not once per action
    (keystoneauth renews the token when it expires)."""
    # Handlers of one stack run in several threads: one connection per context.
    with _source_lock:
        found = _lookup(context)
        if found is not None:
            return found
        source = _source if _source is not None else EnvironmentCloudSource()
        region = source.cloud_region(context)
        key = _fingerprint(region)
        connection = _shared.get(key)
        if connection is None:
            connection = _shared[key] = _connect(region)
            while len(_shared) > SHARED_CONNECTIONS:
                _shared.popitem(last=False)
        else:
            _shared.move_to_end(key)
        try:
            _connections[context] = connection
        except TypeError:
            pass  # a context that cannot be weakly referenced gets a connection per call
        return connection


def _fingerprint(region: Any) -> str:
    """What makes two cloud regions the same cloud as the same user: the whole
    configuration (auth included). Kept only as a digest, never logged."""
    text = repr((getattr(region, "name", None), getattr(region, "region_name", None), sorted((str(k), repr(v)) for k, v in region.config.items())))
    return hashlib.sha256(text.encode()).hexdigest()


def _lookup(context: Any) -> Any:
    try:
        return _connections.get(context)
    except TypeError:
        return None


def _connect(region: Any) -> Any:
    """A connection whose proxies negotiate their microversion call by call. A user's
    ``{service_type}_default_microversion`` (clouds.yaml or ``OS_*``) is for the raw REST
    layer only (seed 004): openstacksdk would otherwise pin every proxy call to it, below
    what the cloud offers and what the plugins' checks assumed. The region as configured,
    default included, stays at hand for ``rest_region``."""
    import copy

    from openstack import connection as openstack_connection

    negotiating = copy.copy(region)
    negotiating.config = {key: value for key, value in region.config.items() if not key.endswith("_default_microversion")}
    if negotiating.config.get("api_timeout") is None:
        # openstacksdk waits for ever by default: a service that never answers would
        # leave a resource IN_PROGRESS for good.
        negotiating.config["api_timeout"] = DEFAULT_API_TIMEOUT_S
    negotiating.set_session_constructor(_retrying_session_class())
    connection = openstack_connection.Connection(config=negotiating)
    _rest_regions[connection] = region
    return connection


# Times a request sent without a token is sent again when the connection fails (refused,
# or closed before the answer: a Keystone behind a server that closes a connection as
# the request comes in). Authentication and version documents change nothing in the
# cloud, so a repeat cannot do anything twice; a service call (a POST that may have
# been carried out) is never repeated unless the cloud's configuration asks for it
# (``connect_retries`` in clouds.yaml). keystoneauth waits 0.5 s, then 1 s, then 2 s.
TOKENLESS_CONNECT_RETRIES = 3


@functools.cache
def _retrying_session_class() -> Any:
    from keystoneauth1 import session

    class TokenlessRetryingSession(session.Session):
        """keystoneauth's session, whose requests without a token are retried on a
        connection failure unless the caller says how often itself."""

        def request(self, url: str, method: str, *args: Any, **kwargs: Any) -> Any:
            if kwargs.get("authenticated") is False and kwargs.get("connect_retries") is None and not self._connect_retries:
                kwargs["connect_retries"] = TOKENLESS_CONNECT_RETRIES
            return super().request(url, method, *args, **kwargs)

    return TokenlessRetryingSession


def keystone_session(**kwargs: Any) -> Any:
    """A keystoneauth session (``keystoneauth1.session.Session``'s arguments) whose
    authentication survives a dropped connection (``TOKENLESS_CONNECT_RETRIES``)."""
    return _retrying_session_class()(**kwargs)


# Seconds a request may take before it fails, unless the cloud's configuration sets
# ``api_timeout`` (clouds.yaml, OS_API_TIMEOUT).
DEFAULT_API_TIMEOUT_S = 60.0


# connection -> the region as configured (with the user's default microversions).
_rest_regions: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()


def rest_region(connection: Any) -> Any:
    """The cloud region as the user configured it, for the raw REST layer's defaults."""
    try:
        return _rest_regions.get(connection) or connection.config
    except TypeError:
        return connection.config
