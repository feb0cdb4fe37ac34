"""Client plugins: how a resource reaches a service (seed 001 ``client()`` /
``client_plugin()``; microversions as seed 004 describes them for a client layer).

Owns:
  ``ClientPlugin``    the base a service's plugin extends: creates and caches the client,
                      classifies the client's errors (not found, conflict, over limit) and
                      negotiates the API (micro)version with the service.
  ``Version``         a version string compared numerically ("2.10" > "2.9").
  ``ClientRegistry``  plugin names to plugin classes; a plugin module adds its plugins with a
                      module-level ``client_mapping()``, as resource plugins use
                      ``resource_mapping()``.
  ``Clients``         the plugin instances of one request context, created on first use.

Version negotiation (seed 004): a plugin declares the versions it can speak
(``supported_versions`` and/or the range ``min_microversion``..``max_microversion``); the
service advertises the range it offers (``get_min_microversion()`` /
``get_max_microversion()``, which a real plugin answers by asking the service once). The
negotiated version is the newest version both sides support. A default microversion
(``<service>_default_microversion`` in the settings, ``OS_<SERVICE>_DEFAULT_MICROVERSION`` in
the environment) is for a REST layer only, as the seed says: it never pins the negotiated
version, which every call of a plugin's client uses. ``default_microversion()`` reads it for a
plugin that has a raw REST path of its own (the OpenStack plugins' ``rest()``).

This module does no network I/O itself and knows no service: subclasses do both in
``create_client`` and ``get_*_microversion``.
"""

from __future__ import annotations

import abc
import inspect
import logging
import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, ClassVar

from stoker.sdk.exceptions import (
    ClientPluginError,
    EntityNotFound,
    MicroversionUnavailableError,
    SchemaError,
    UnknownClientPluginError,
)

__all__ = ["LATEST", "ClientPlugin", "ClientRegistry", "Clients", "ExceptionFilter", "Version", "check_client_plugin"]

LOG = logging.getLogger(__name__)

# A pin of "latest" means "no pin": negotiate as usual.
LATEST = "latest"

_VERSION_PATTERN = re.compile(r"^\s*v?(\d+)(?:\.(\d+))?\s*$")


@dataclass(frozen=True, order=True)
class Version:
    """An API version ``MAJOR[.MINOR]``. Compares numerically, so "2.10" > "2.9" and
    "2" == "2.0"; ``str()`` gives back the text it was parsed from."""

    major: int
    minor: int
    text: str = field(default="", compare=False)

    @classmethod
    def parse(cls, value: str | Version) -> Version:
        if isinstance(value, Version):
            return value
        if not isinstance(value, str):
            # A float cannot tell 2.1 from 2.10, so versions must be written as strings.
            raise ValueError(f"{value!r} is not a version; write versions as strings like '2.10'")
        match = _VERSION_PATTERN.match(value)
        if match is None:
            raise ValueError(f"{value!r} is not a version; use MAJOR.MINOR, e.g. '2.10'")
        major, minor = int(match.group(1)), int(match.group(2) or 0)
        return cls(major, minor, value.strip())

    def __str__(self) -> str:
        return self.text or f"{self.major}.{self.minor}"


def _join(words: Sequence[str], last: str = "and") -> str:
    words = list(words)
    if len(words) <= 1:
        return "".join(words)
    return f"{', '.join(words[:-1])} {last} {words[-1]}"


class ExceptionFilter:
    """The two ways Heat plugins ignore an expected client error:

    ``plugin.ignore_not_found(error)`` inside ``except`` re-raises anything else, and
    ``with plugin.ignore_not_found:`` swallows only matching errors.
    """

    def __init__(self, should_ignore: Callable[[BaseException], bool]):
        self._should_ignore = should_ignore

    def __call__(self, error: BaseException) -> None:
        if not self._should_ignore(error):
            raise error

    def __enter__(self) -> ExceptionFilter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> bool:
        return error is not None and self._should_ignore(error)


class ClientPlugin(abc.ABC):
    """Base of every client plugin. A subclass sets ``name`` (and ``service_type`` when the
    service's type differs from the name), implements ``create_client`` and, for a versioned
    service, declares its versions and implements ``get_max_microversion``."""

    # The name resources use: client('keystone'), default_client_name = 'keystone'.
    name: str = ""
    # The service type in the default-microversion settings ("block-storage" ->
    # OS_BLOCK_STORAGE_DEFAULT_MICROVERSION); the name when empty.
    service_type: ClassVar[str] = ""
    # Discrete versions this plugin can speak, e.g. ("1.2", "2.0").
    supported_versions: ClassVar[Sequence[str]] = ()
    # A continuous microversion range this plugin can speak, e.g. "2.1".."2.79". The low end
    # defaults to MAJOR.0 of the high end.
    min_microversion: ClassVar[str | None] = None
    max_microversion: ClassVar[str | None] = None
    # The client's exception types for each class of error; override the is_* methods when a
    # client signals them some other way (a status code on one exception type).
    not_found_errors: ClassVar[tuple[type[BaseException], ...]] = (EntityNotFound,)
    conflict_errors: ClassVar[tuple[type[BaseException], ...]] = ()
    over_limit_errors: ClassVar[tuple[type[BaseException], ...]] = ()

    def __init__(
        self,
        context: Any = None,
        *,
        name: str | None = None,
        settings: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
    ):
        self.context = context
        if name:
            self.name = name
        self.settings: Mapping[str, Any] = dict(settings or {})
        # The process environment is read here, at the boundary; tests pass their own.
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        # Handlers of several resources run in worker threads and share one plugin per
        # context: the lock makes negotiation and each client's creation happen once.
        self._lock = threading.RLock()
        self._clients: dict[Version | None, Any] = {}
        self._service_range: tuple[Version | None, Version | None] | None = None
        self._negotiated: Version | None = None
        self._negotiation_done = False

    # -- the client ---------------------------------------------------------------

    @abc.abstractmethod
    def create_client(self, version: str | None) -> Any:
        """Return a new client speaking ``version`` (None for an unversioned service)."""

    def client(self, version: str | None = None) -> Any:
        """The client for ``version`` (default: the negotiated version), created once."""
        if version is None:
            negotiated = self.negotiated_version()
            key = Version.parse(negotiated) if negotiated is not None else None
        else:
            key = self._parse(version, "the requested version")
            if not self.knows_version(key):
                raise ClientPluginError(
                    f"client plugin {self.name!r} cannot speak version {version} of service "
                    f"{self.service_name}; it knows {self.describe_known_versions()}"
                )
            if not self._in_service_range(key):
                low, high = self._get_service_range()
                raise ClientPluginError(
                    f"This cloud supports microversions {_describe_range(low, high)} for service "
                    f"{self.service_name}; version {version} is not one of them"
                )
        with self._lock:
            if key not in self._clients:
                self._clients[key] = self.create_client(None if key is None else str(key))
            return self._clients[key]

    def invalidate(self) -> None:
        """Forget cached clients and the negotiated version (e.g. after re-authenticating)."""
        with self._lock:
            self._clients.clear()
            self._service_range = None
            self._negotiated = None
            self._negotiation_done = False

    # -- errors (Heat's names) ------------------------------------------------------

    def is_not_found(self, error: BaseException) -> bool:
        return isinstance(error, self.not_found_errors)

    def is_conflict(self, error: BaseException) -> bool:
        return isinstance(error, self.conflict_errors)

    def is_over_limit(self, error: BaseException) -> bool:
        return isinstance(error, self.over_limit_errors)

    @property
    def ignore_not_found(self) -> ExceptionFilter:
        """Call with an error to re-raise it unless it is a not-found, or use as a context."""
        return ExceptionFilter(self.is_not_found)

    @property
    def ignore_conflict_and_not_found(self) -> ExceptionFilter:
        return ExceptionFilter(lambda error: self.is_conflict(error) or self.is_not_found(error))

    # -- what the plugin knows -----------------------------------------------------

    @property
    def service_name(self) -> str:
        return self.service_type or self.name

    @classmethod
    def _declared_range(cls) -> tuple[Version, Version] | None:
        if cls.max_microversion is None:
            return None
        high = Version.parse(cls.max_microversion)
        low = Version.parse(cls.min_microversion) if cls.min_microversion else Version(high.major, 0)
        return low, high

    @classmethod
    def declares_versions(cls) -> bool:
        return bool(cls.supported_versions) or cls.max_microversion is not None

    @classmethod
    def knows_version(cls, version: str | Version) -> bool:
        """Whether this plugin can speak ``version`` (whatever the cloud offers)."""
        wanted = Version.parse(version)
        if any(Version.parse(known) == wanted for known in cls.supported_versions):
            return True
        declared = cls._declared_range()
        return declared is not None and declared[0] <= wanted <= declared[1]

    @classmethod
    def describe_known_versions(cls) -> str:
        parts = [str(Version.parse(v)) for v in sorted(cls.supported_versions, key=Version.parse)]
        declared = cls._declared_range()
        if declared is not None:
            parts.append(f"{declared[0]} to {declared[1]}")
        return _join(parts) if parts else "no versions"

    # -- what the service offers (subclasses ask the service) ---------------------------

    def get_max_microversion(self) -> str | None:
        """The newest version the service offers; None when it does not say. A real plugin
        asks the service (e.g. its version document); called at most once per plugin."""
        return None

    def get_min_microversion(self) -> str | None:
        """The oldest version the service still offers; None when it does not say."""
        return None

    def _get_service_range(self) -> tuple[Version | None, Version | None]:
        with self._lock:
            if self._service_range is None:
                low = self.get_min_microversion()
                high = self.get_max_microversion()
                self._service_range = (
                    None if low is None else self._parse(low, "the service's minimum version"),
                    None if high is None else self._parse(high, "the service's maximum version"),
                )
            return self._service_range

    def _in_service_range(self, version: Version) -> bool:
        low, high = self._get_service_range()
        return (low is None or version >= low) and (high is None or version <= high)

    # -- negotiation ---------------------------------------------------------------------

    def _setting_names(self) -> tuple[str, str]:
        service = self.service_name.replace("-", "_")
        return f"{service}_default_microversion", f"OS_{service.upper()}_DEFAULT_MICROVERSION"

    def default_microversion(self) -> tuple[str | None, str]:
        """The default microversion the user set for a REST layer, and where it was set
        (for messages); never the version the plugin's client negotiates (seed 004)."""
        setting, variable = self._setting_names()
        value = self.settings.get(setting)
        if value not in (None, ""):
            return str(value), f"the setting {setting}"
        value = self.environ.get(variable)
        if value not in (None, ""):
            return str(value), f"the environment variable {variable}"
        return None, ""

    def negotiated_version(self) -> str | None:
        """The version clients use: the newest version both this plugin and the service
        support (a default microversion does not change it). None when the plugin declares
        no versions."""
        with self._lock:
            if not self._negotiation_done:
                self._negotiated = self._negotiate()
                self._negotiation_done = True
            return None if self._negotiated is None else str(self._negotiated)

    def _negotiate(self) -> Version | None:
        if not self.declares_versions():
            return None
        low, high = self._get_service_range()
        candidates = [
            version
            for version in map(Version.parse, self.supported_versions)
            if self._in_service_range(version)
        ]
        declared = self._declared_range()
        if declared is not None:
            top = declared[1] if high is None else min(declared[1], high)
            bottom = declared[0] if low is None else max(declared[0], low)
            if bottom <= top:
                candidates.append(top)
        if not candidates:
            raise ClientPluginError(
                f"client plugin {self.name!r} and service {self.service_name} share no version: "
                f"the plugin knows {self.describe_known_versions()}, the cloud offers "
                f"{_describe_range(low, high)}"
            )
        return max(candidates)

    def is_version_supported(self, version: str) -> bool:
        """Whether a feature introduced in ``version`` is available: the negotiated version is
        the same major version and at least as new (microversions are cumulative; another
        major version is another API)."""
        wanted = Version.parse(version)
        negotiated = self.negotiated_version()
        if negotiated is None:
            return False
        current = Version.parse(negotiated)
        return current.major == wanted.major and current >= wanted

    def require_version(self, version: str, feature: str = "this feature") -> None:
        """Raise a clear error unless a feature introduced in ``version`` is available."""
        if self.is_version_supported(version):
            return
        if not self.knows_version(version):
            raise ClientPluginError(
                f"{feature} needs version {version} of service {self.service_name}, which client "
                f"plugin {self.name!r} does not know (it knows {self.describe_known_versions()})"
            )
        negotiated = self.negotiated_version()
        _, high = self._get_service_range()
        available = str(high) if high is not None else negotiated
        raise MicroversionUnavailableError(
            f"This cloud supports a maximum microversion of {available} for service "
            f"{self.service_name} and {feature} only exists on clouds with microversion "
            f"{version}. Please contact your cloud provider for information about when this "
            "feature might be available.",
            service=self.service_name,
            required=version,
            available=available,
        )

    def _parse(self, value: str, what: str) -> Version:
        try:
            return Version.parse(value)
        except ValueError as error:
            raise ClientPluginError(f"{what} for service {self.service_name}: {error}")


def _describe_range(low: Version | None, high: Version | None) -> str:
    if low is None and high is None:
        return "any version"
    if low is None:
        return f"up to {high}"
    if high is None:
        return f"from {low}"
    return f"{low} to {high}"


def check_client_plugin(name: str, cls: Any) -> list[str]:
    """Every mistake in a client plugin class's declarations (checked when it registers)."""
    owner = f"client plugin {name!r}"
    if not isinstance(cls, type) or not issubclass(cls, ClientPlugin):
        return [f"{owner}: must extend stoker.sdk.clients.ClientPlugin"]
    owner = f"{owner} ({cls.__module__}.{cls.__qualname__})"
    problems = []
    if not name:
        problems.append(f"{owner}: a client plugin needs a name")
    if cls.name and cls.name != name:
        problems.append(f"{owner}: declares name {cls.name!r} but is registered as {name!r}")
    if inspect.isabstract(cls):
        problems.append(f"{owner}: create_client() is not implemented")
    for attribute in ("min_microversion", "max_microversion"):
        value = getattr(cls, attribute)
        if value is not None:
            try:
                Version.parse(value)
            except ValueError as error:
                problems.append(f"{owner}: {attribute}: {error}")
    if cls.min_microversion is not None and cls.max_microversion is None:
        problems.append(f"{owner}: min_microversion is set without max_microversion")
    for version in cls.supported_versions:
        try:
            Version.parse(version)
        except ValueError as error:
            problems.append(f"{owner}: supported_versions: {error}")
    if not problems:
        declared = cls._declared_range()
        if declared is not None and declared[0] > declared[1]:
            problems.append(f"{owner}: min_microversion {declared[0]} is newer than max_microversion {declared[1]}")
    return problems


@dataclass
class ClientRegistry:
    """Client plugin names to classes, filled from each plugin module's ``client_mapping()``."""

    plugins: dict[str, type[ClientPlugin]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def register(self, name: str, cls: type[ClientPlugin]) -> None:
        problems = check_client_plugin(name, cls)
        if problems:
            raise SchemaError("; ".join(problems))
        self.plugins[name] = cls

    def register_mapping(self, mapping: Mapping[str, type], source: str) -> None:
        """Register what a module's ``client_mapping()`` returned; a broken plugin is
        reported and skipped, never fatal."""
        for name, cls in mapping.items():
            try:
                self.register(name, cls)
            except SchemaError as error:
                message = f"plugin {source}: {error.message}"
                LOG.warning("Skipping %s", message)
                self.problems.append(message)

    def known_names(self) -> list[str]:
        return sorted(self.plugins)

    def get_class(self, name: str | None) -> type[ClientPlugin]:
        cls = self.plugins.get(name or "")
        if cls is None:
            raise UnknownClientPluginError(name, self.known_names())
        return cls

    def create(
        self,
        name: str | None,
        context: Any = None,
        *,
        settings: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> ClientPlugin:
        return self.get_class(name)(context, name=name, settings=settings, environ=environ)


class Clients:
    """The client plugins of one request context (Heat's ``context.clients``): one
    instance per name, created on first use and shared by every resource of the context."""

    def __init__(
        self,
        registry: ClientRegistry,
        context: Any = None,
        *,
        settings: Mapping[str, Any] | None = None,
        environ: Mapping[str, str] | None = None,
    ):
        self.registry = registry
        self.context = context
        self.settings = settings
        self.environ = environ
        # Resources of one stack ask from several worker threads; one instance per name.
        self._lock = threading.Lock()
        self._plugins: dict[str, ClientPlugin] = {}

    def client_plugin(self, name: str | None) -> ClientPlugin:
        with self._lock:
            plugin = self._plugins.get(name or "")
            if plugin is None:
                plugin = self.registry.create(
                    name, self.context, settings=self.settings, environ=self.environ
                )
                self._plugins[plugin.name] = plugin
            return plugin

    def client(self, name: str | None, version: str | None = None) -> Any:
        return self.client_plugin(name).client(version)

    def invalidate_plugins(self) -> None:
        with self._lock:
            plugins = list(self._plugins.values())
        for plugin in plugins:
            plugin.invalidate()
