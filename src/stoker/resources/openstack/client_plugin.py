"""The base of the OpenStack client plugins: a ``ClientPlugin`` whose client is an
openstacksdk proxy (``connection.network``, ``connection.compute``...).

Owns: classifying openstacksdk's exceptions (``is_not_found``, ``is_conflict``,
``is_over_limit``), the name-or-id finders with their "none" and "several" errors, the
service's microversion range as openstacksdk discovers it, and the raw REST path with an
explicit microversion per call (seed 004).

Seed 004, as applied here: resource plugins call the proxy's methods, where openstacksdk
picks the newest microversion it knows that the cloud offers, call by call; they never
choose one. Only ``rest()`` takes a microversion, and without one it uses the default the
user set (``{service_type}_default_microversion`` in clouds.yaml or the settings,
``OS_{SERVICE_TYPE}_DEFAULT_MICROVERSION``); ``latest`` there is the cloud's maximum, and a
microversion outside the cloud's range fails before it is sent, naming where it was set. A
feature newer than the cloud's maximum fails with the seed's message (``require_version``).
A microversion that removes fields of openstacksdk's data model is not used while the cloud
offers an older one (``keeps_fields_until``, ``keep_fields``), and a request that carries a
field a newer microversion removed is sent at the last one that has it (``create_at``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, ClassVar

from stoker.clouds.source import connection_for, rest_region
from stoker.resources.openstack.constraints import CACHE
from stoker.sdk.clients import LATEST, ClientPlugin
from stoker.sdk.exceptions import ClientPluginError, EntityNotFound, MicroversionUnavailableError

__all__ = ["AmbiguousNameError", "OpenStackClientPlugin", "http_status", "keep_fields"]

# Status codes that mean "the cloud refuses for now: too much" (request too large, rate limit).
OVER_LIMIT_STATUSES = (413, 429)
TRANSIENT_STATUSES = (502, 503, 504)
# Tries of a read that failed transiently (see ClientPlugin.read).
READ_ATTEMPTS = 3
# Tries of a create that failed transiently, and the seconds between them (see
# OpenStackClientPlugin.create_or_find): at least a second, so what the service stamps with
# the time to the second (a Keystone trust's expiry on MySQL) differs the next time.
CREATE_ATTEMPTS = 3
CREATE_PAUSE_S = 1.0


class AmbiguousNameError(ClientPluginError):
    """A name matched several objects; an id is needed (Heat's PhysicalResourceNameAmbiguity)."""

    def __init__(self, entity: str, name: str):
        super().__init__(
            f"Multiple physical resources were found with name ({name}).",
            hint=f"several {entity}s have this name; give the {entity}'s id instead",
        )
        self.entity = entity
        self.name = name


def http_status(error: BaseException) -> int | None:
    """The HTTP status of an openstacksdk or keystoneauth error, if it has one."""
    for attribute in ("status_code", "http_status"):
        value = getattr(error, attribute, None)
        if isinstance(value, int):
            return value
    response = getattr(error, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) else None


def _is_sdk_error(error: BaseException, name: str) -> bool:
    # Checked by class name in openstacksdk's own module, so classifying an error never
    # imports openstacksdk (an error from it means it is loaded already).
    return any(
        cls.__name__ == name and cls.__module__.startswith("openstack.")
        for cls in type(error).__mro__
    )


class OpenStackClientPlugin(ClientPlugin):
    """A client plugin whose client is the openstacksdk proxy ``proxy_name`` of the
    context's connection (``clouds.source.connection_for``)."""

    # The attribute of openstack.connection.Connection: "network", "compute"...
    proxy_name: ClassVar[str] = ""
    # Whether the service has microversions (and the plugin asks for its range).
    microversioned: ClassVar[bool] = False
    # openstacksdk resource classes ("module.Class") whose newer microversions remove
    # fields of their data model, each with the last microversion that has them. Seed 004:
    # their calls use it while the cloud still offers it (and the newest otherwise, the
    # fields then None).
    keeps_fields_until: ClassVar[Mapping[str, str]] = {}

    # -- the client ----------------------------------------------------------------

    @property
    def connection(self) -> Any:
        return connection_for(self.context)

    def create_client(self, version: str | None) -> Any:
        return getattr(self.connection, self.proxy_name)

    def client(self, version: str | None = None) -> Any:
        # openstacksdk negotiates per call (seed 004): the proxy is the one client, and a
        # version is only chosen by rest(). A plugin that asks for a microversion gets
        # the seed's error when the cloud does not offer it, not a silent downgrade.
        if version is not None and self.microversioned:
            self.require_version(str(version))
        with self._lock:
            if None not in self._clients:
                client = self.create_client(None)
                if self.microversioned:
                    # Every call of a microversioned proxy needs the version document. Read
                    # it here, under the lock: handler threads that start together then find
                    # it in the session's cache instead of each reading it (seen: 8 reads
                    # for 10 servers deleted at once).
                    client.get_endpoint_data()
                if self.keeps_fields_until:
                    keep_fields(client, self.keeps_fields_until)
                self._clients[None] = client
            return self._clients[None]

    # -- errors -----------------------------------------------------------------------

    def is_not_found(self, error: BaseException) -> bool:
        return (
            isinstance(error, EntityNotFound)
            or _is_sdk_error(error, "NotFoundException")
            or http_status(error) == 404
        )

    def is_conflict(self, error: BaseException) -> bool:
        return _is_sdk_error(error, "ConflictException") or http_status(error) == 409

    def is_over_limit(self, error: BaseException) -> bool:
        return http_status(error) in OVER_LIMIT_STATUSES

    def is_transient(self, error: BaseException) -> bool:
        """A failure that says nothing of the request: no answer in time (the cloud's
        ``api_timeout``), no connection, or a gateway's 502/503/504."""
        from keystoneauth1 import exceptions as keystoneauth_exceptions

        return isinstance(error, keystoneauth_exceptions.ConnectionError) or http_status(error) in TRANSIENT_STATUSES

    def read(self, call: Callable[[], Any], attempts: int = READ_ATTEMPTS) -> Any:
        """``call`` (a read: safe to send again) retried on a transient failure, at most
        ``attempts`` times in all; for polls, where one lost answer must not fail an action."""
        for attempt in range(1, attempts + 1):
            try:
                return call()
            except Exception as error:  # noqa: BLE001 - openstacksdk's and keystoneauth's types
                if attempt == attempts or not self.is_transient(error):
                    raise
        raise AssertionError("unreachable")

    def create_or_find(
        self,
        create: Callable[[], str],
        find_created: Callable[[], str | None],
        attempts: int = CREATE_ATTEMPTS,
        pause_s: float = CREATE_PAUSE_S,
    ) -> str:
        """``create()`` (a POST answering the new object's id), sent again after a
        transient failure (``is_transient``) unless ``find_created()`` finds the object it
        made before its answer was lost; at most ``attempts`` times in all, ``pause_s``
        apart. For a create whose object can be found again by what only this resource
        gives it (its physical name, a queue's subscriber)."""
        for attempt in range(1, attempts + 1):
            try:
                return create()
            except Exception as error:  # noqa: BLE001 - openstacksdk's and keystoneauth's types
                if attempt == attempts or not self.is_transient(error):
                    raise
            found = find_created()
            if found is not None:
                return found
            time.sleep(pause_s)
        raise AssertionError("unreachable")

    # -- finders -----------------------------------------------------------------------

    def find(self, entity: str, name_or_id: str, find: Callable[..., Any] | None = None) -> Any:
        """The object ``name_or_id`` names, through the proxy's ``find_<entity>``
        (openstacksdk tries the id, then the name). None and several matches are errors
        that say what to give instead. Found objects are remembered for the context (one
        validation or stack action): 500 uses of one name cost one lookup."""
        found = CACHE.answer(
            self.context, (self.name, "find", entity, name_or_id), lambda: self._find(entity, name_or_id, find)
        )
        found_id = getattr(found, "id", None)
        if found_id is not None and str(found_id) != name_or_id:
            # Found by name: its id names it too (a property resolved to the id is then
            # checked without asking again).
            CACHE.remember(self.context, (self.name, "find", entity, str(found_id)), found)
        return found

    def _find(self, entity: str, name_or_id: str, find: Callable[..., Any] | None) -> Any:
        finder = find or getattr(self.client(), f"find_{entity}")
        try:
            return finder(name_or_id, ignore_missing=False)
        except Exception as error:  # noqa: BLE001 - openstacksdk's types, classified below
            if _is_sdk_error(error, "DuplicateResource"):
                raise AmbiguousNameError(entity, name_or_id)
            if self.is_not_found(error):
                raise EntityNotFound(entity, name_or_id)
            raise

    @staticmethod
    def one_match(entity: str, name_or_id: str, candidates: Iterable[Any]) -> Any:
        """openstacksdk's rule for a listing a finder made itself: the object whose id is
        ``name_or_id``, else the one object of that name (None when there is none; several
        are an error that says to give the id)."""
        named = []
        for candidate in candidates:
            if str(getattr(candidate, "id", "")) == name_or_id:
                return candidate
            if getattr(candidate, "name", None) == name_or_id:
                named.append(candidate)
        if len(named) > 1:
            raise AmbiguousNameError(entity, name_or_id)
        return named[0] if named else None

    def find_id(self, entity: str, name_or_id: str) -> str:
        return str(self.find(entity, name_or_id).id)

    # -- microversions (seed 004) ---------------------------------------------------------

    def _endpoint_data(self) -> Any:
        return self.client().get_endpoint_data()

    def get_max_microversion(self) -> str | None:
        if not self.microversioned:
            return None
        data = self._endpoint_data()
        version = getattr(data, "max_microversion", None)
        return None if version is None else _version_text(version)

    def get_min_microversion(self) -> str | None:
        if not self.microversioned:
            return None
        data = self._endpoint_data()
        version = getattr(data, "min_microversion", None)
        return None if version is None else _version_text(version)

    def negotiated_version(self) -> str | None:
        """The newest microversion the cloud offers, which openstacksdk may use call by
        call; None for a service without microversions. The user's default microversion
        does not change it: that default is for the raw REST path only (seed 004)."""
        if not self.microversioned:
            return None
        with self._lock:
            if not self._negotiation_done:
                _, self._negotiated = self._get_service_range()
                self._negotiation_done = True
            return None if self._negotiated is None else str(self._negotiated)

    def offers_version(self, version: str) -> bool:
        """Whether the cloud offers microversion ``version`` of this service (between its
        minimum and maximum): what a call that needs an older one than the newest asks."""
        if not self.microversioned:
            return False
        return self._in_service_range(self._parse(version, "the microversion asked for"))

    def create_at(self, resource_type: Any, microversion: str, **attributes: Any) -> Any:
        """Create an object of openstacksdk's ``resource_type`` at ``microversion``, not
        the newest both sides know: for a request that carries a field a newer
        microversion removed (seed 004). What the proxy's ``create_*`` does otherwise."""
        return resource_type.new(**attributes).create(self.client(), microversion=microversion)

    def require_version(self, version: str, feature: str = "this feature") -> None:
        """Raise the seed's error, verbatim, unless the cloud offers microversion
        ``version`` of this service; ``feature`` names what needed it (in the hint)."""
        if self.is_version_supported(version):
            return
        available = self.negotiated_version() or "none"
        error = MicroversionUnavailableError(
            f"This cloud supports a maximum microversion of {available} for service "
            f"{self.service_name} and this feature only exists on clouds with microversion "
            f"{version}. Please contact your cloud provider for information about when this "
            "feature might be available",
            service=self.service_name,
            required=version,
            available=available,
        )
        error.hint = f"{feature} needs microversion {version}"
        raise error

    @classmethod
    def knows_version(cls, version: Any) -> bool:
        # openstacksdk speaks every microversion of the service's current major version.
        return cls.microversioned or super().knows_version(version)

    @classmethod
    def declares_versions(cls) -> bool:
        return cls.microversioned

    def default_microversion(self) -> tuple[str | None, str]:
        """The user's default for the raw REST path: the settings, the environment, then
        clouds.yaml (``{service_type}_default_microversion``)."""
        value, source = super().default_microversion()
        if value is not None:
            return value, source
        try:
            region = rest_region(self.connection)
        except ClientPluginError:
            return None, ""
        configured = region.get_default_microversion(self.service_name)
        if configured:
            setting, _ = self._setting_names()
            return str(configured), f"{setting} in clouds.yaml"
        return None, ""

    def rest(self, method: str, url: str, *, microversion: str | None = None, **arguments: Any) -> Any:
        """A raw REST call (a ``requests.Response``) on this service's endpoint, with an
        explicit microversion or the user's default. The one place a microversion is chosen
        by a caller rather than by openstacksdk.

        An error answer raises openstacksdk's exception for it, as the proxies' calls do.

        ``latest`` is the newest the cloud offers, sent as that number (without a header a
        service answers in its oldest microversion). A microversion outside the cloud's
        range fails here, naming where it was set, instead of coming back as the service's
        406 response."""
        source = "the microversion argument of rest()"
        if microversion is None and self.microversioned:
            microversion, source = self.default_microversion()
        if microversion is not None and self.microversioned:
            microversion = self._rest_microversion(microversion.strip(), source)
        if microversion is not None:
            arguments["microversion"] = microversion
        response = self.client().request(url, method.upper(), **arguments)
        from openstack import exceptions

        # openstacksdk's error for a 4xx/5xx answer (is_not_found, is_conflict know it).
        exceptions.raise_from_response(response)
        return response

    def _rest_microversion(self, microversion: str, source: str) -> str:
        low, high = self._get_service_range()
        if microversion.lower() == LATEST:
            return microversion if high is None else str(high)
        wanted = self._parse(microversion, source)
        if (low is None or wanted >= low) and (high is None or wanted <= high):
            return microversion
        offered = " to ".join(str(end) for end in (low, high) if end is not None)
        if low is None or high is None:
            offered = f"up to {high}" if low is None else f"from {low}"
        error = MicroversionUnavailableError(
            f"{source} asks for microversion {microversion} of service {self.service_name}, "
            f"but this cloud supports microversions {offered}",
            service=self.service_name,
            required=microversion,
            available=None if high is None else str(high),
        )
        error.hint = f"choose a microversion from {offered}, or 'latest'"
        raise error


def keep_fields(proxy: Any, until: Mapping[str, str]) -> None:
    """Make ``proxy`` (an openstacksdk proxy) call each resource class of ``until`` at most
    at the microversion given, so that the fields a newer one removes stay filled (seed
    004): the proxy's own ``_list``, ``_find`` and ``_get_resource`` use a subclass whose
    ``_max_microversion`` is that one. openstacksdk still asks for no more than the cloud
    offers, and for nothing older than its minimum (a cloud that offers nothing older
    answers in its own newer way, the removed fields None). Once per proxy."""
    if getattr(proxy, "_stoker_keeps_fields", None) is not None:
        return
    import importlib

    kept: dict[type, type] = {}
    for qualified, microversion in until.items():
        module_name, _, class_name = qualified.rpartition(".")
        cls = getattr(importlib.import_module(module_name), class_name)
        kept[cls] = type(cls.__name__, (cls,), {"_max_microversion": microversion, "__module__": cls.__module__, "__doc__": cls.__doc__})

    def wrapped(name: str) -> Callable[..., Any]:
        original = getattr(proxy, name)

        def call(resource_type: Any, *arguments: Any, **keywords: Any) -> Any:
            return original(kept.get(resource_type, resource_type), *arguments, **keywords)

        return call

    for name in ("_list", "_find", "_get_resource"):
        setattr(proxy, name, wrapped(name))
    proxy._stoker_keeps_fields = kept


def _version_text(version: Any) -> str:
    if isinstance(version, tuple):
        return ".".join(str(part) for part in version[:2])
    return str(version)
