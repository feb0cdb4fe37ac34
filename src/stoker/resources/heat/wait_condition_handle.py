"""Wait condition handles: OS::Heat::WaitConditionHandle, OS::Heat::UpdateWaitConditionHandle
and AWS::CloudFormation::WaitConditionHandle (kept beside Heat's own: one idea, one module).

A handle is what an agent signals. At create a handle issues its own capability
credential (``sdk.signals``: a secret the engine stores only hashed;
the plain one is kept in the resource's data, sealed at rest) and hands out stoker URLs
that accept it; with HEAT_SIGNAL it makes a Keystone stack user instead
(``resources.openstack.keystone.stack_user``), deleted with the handle; with ZAQAR_SIGNAL a
stack user and a Zaqar queue (``resources.openstack.zaqar.signal_queue``) the agent posts
to, popped each time a wait condition looks (as Heat's ``_service_zaqar_signal``) and
deleted with the handle. Signals are rows the engine keeps; a wait condition reads them.

Must not: keep signals itself, sleep, or put a secret into a message.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from stoker.resources.openstack.keystone import stack_user
from stoker.resources.openstack.zaqar import signal_queue
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import StokerError, ValidationError
from stoker.sdk.resource import Resource
from stoker.sdk.signals import Signals, SignalSource


def kept_signals(resource: Resource) -> Signals:
    """``resource``'s signals, in an engine that keeps them (a handle or wait condition
    acting anywhere else is a bug, said so)."""
    signals = resource.signals()
    if signals is None:
        raise StokerError(f"{resource.name}: signals are kept only by an engine acting on the stack")
    return signals


def handle_class_of(source: SignalSource | None) -> type[BaseWaitConditionHandle] | None:
    """The wait condition handle class of ``source``; None when it is not a handle."""
    plugin = None if source is None else source.plugin_class
    return plugin if plugin is not None and issubclass(plugin, BaseWaitConditionHandle) else None

TRANSPORTS = (CFN_SIGNAL, TEMP_URL_SIGNAL, HEAT_SIGNAL, NO_SIGNAL, ZAQAR_SIGNAL, TOKEN_SIGNAL) = (
    "CFN_SIGNAL",
    "TEMP_URL_SIGNAL",
    "HEAT_SIGNAL",
    "NO_SIGNAL",
    "ZAQAR_SIGNAL",
    "TOKEN_SIGNAL",
)
# Transports served by a credential of the handle's own (the others need none, or
# another service).
_CREDENTIAL_TRANSPORTS = (TOKEN_SIGNAL, CFN_SIGNAL, TEMP_URL_SIGNAL)
# What a transport stoker cannot serve is missing (every one is served now).
_UNSERVED: dict[str, str] = {}

# Keys of the handle's data.
CREDENTIAL_ID, SECRET, TOKEN_KEY, ENDPOINT_KEY, SIGNAL_URL = "credential_id", "secret", "token", "endpoint", "signal_url"


class SignalRejectedError(StokerError):
    """A signal whose details are not in the handle's format (Heat: "Metadata format invalid")."""


class BaseWaitConditionHandle(Resource):
    """The base of wait condition handles: credentials at create, signals as rows, and
    Heat's rules for a signal's format (``METADATA_KEYS``, SUCCESS or FAILURE)."""

    WAIT_STATUSES = (STATUS_FAILURE, STATUS_SUCCESS) = ("FAILURE", "SUCCESS")
    # A signal's keys, as the subclass names them: data, reason, status, unique id.
    METADATA_KEYS: ClassVar[tuple[str, str, str, str]] = ("data", "reason", "status", "id")
    # Replaced at every stack update (OS::Heat::UpdateWaitConditionHandle); read by the
    # engine's update planning.
    replace_on_every_update: ClassVar[bool] = False

    def transport(self) -> str:
        return CFN_SIGNAL

    # -- signal format ---------------------------------------------------------------

    @classmethod
    def normalise_signal_data(cls, details: Any, ordinal: int) -> Any:
        """The signal as stored in Heat's metadata (``ordinal``: its place among the
        handle's signals). The CFN format takes no defaults."""
        return dict(details) if isinstance(details, Mapping) else details

    @classmethod
    def format_ok(cls, entry: Any) -> bool:
        if not isinstance(entry, Mapping) or set(entry) != set(cls.METADATA_KEYS):
            return False
        return entry[cls.METADATA_KEYS[2]] in cls.WAIT_STATUSES

    @classmethod
    def metadata(cls, signals: list[Any]) -> dict[str, dict[str, Any]]:
        """Heat's handle metadata: signal id -> {data, reason, status}, oldest first."""
        found: dict[str, dict[str, Any]] = {}
        unique_id = cls.METADATA_KEYS[3]
        for signal in signals:
            entry = cls.normalise_signal_data(signal.details, signal.ordinal)
            if isinstance(entry, Mapping):
                found[signal.signal_id] = {key: value for key, value in entry.items() if key != unique_id}
        return found

    @classmethod
    def service_signals(cls, source: SignalSource) -> None:
        """Before a waiter reads the signals: record those the transport makes itself."""

    # -- lifecycle ---------------------------------------------------------------------

    def handle_create(self) -> None:
        transport = self.transport()
        if transport == HEAT_SIGNAL:
            # Found again by its name if a crash cut the create short (stack_user).
            stack_user.create_stack_user(self)
        if transport == ZAQAR_SIGNAL:
            # Made at create (Heat makes it when the signal attribute is first read): a
            # wait condition may look before anything reads the attribute.
            signal_queue.queue_id(self)
        if transport in _CREDENTIAL_TRANSPORTS:
            signals = kept_signals(self)
            credential = signals.issue_credential()
            self.data_set(CREDENTIAL_ID, credential.id)
            self.data_set(SECRET, credential.secret, redact=True)
            if transport == TOKEN_SIGNAL:
                self.data_set(ENDPOINT_KEY, signals.resource_signal_url(self.name))
            else:
                # The URL holds the secret: sealed at rest like the secret itself.
                self.data_set(SIGNAL_URL, signals.waitcondition_url(credential), redact=True)
        self.resource_id_set(self.physical_resource_name())

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> None:
        return None

    def handle_delete(self) -> None:
        # The credential dies with the handle; so do its signals.
        signals = kept_signals(self)
        signals.revoke_credentials()
        signals.clear()
        signal_queue.forget(self)
        if self.transport() in (HEAT_SIGNAL, ZAQAR_SIGNAL) or self.data().get(stack_user.USER_ID):
            stack_user.delete_stack_user(self)
        for key in (SECRET, SIGNAL_URL, TOKEN_KEY, ENDPOINT_KEY, CREDENTIAL_ID):
            self.data_delete(key)

    def handle_signal(self, details: Any = None) -> str | None:
        """Record a signal, ``{"status": "SUCCESS" or "FAILURE", "reason": ..., "data":
        ..., "id": ...}`` in the handle's key names; returns Heat's event text."""
        _, reason, status, unique_id = self.METADATA_KEYS
        if not self.format_ok(self.normalise_signal_data(details, 0)):
            raise SignalRejectedError("Metadata format invalid")
        given = details.get(unique_id) if isinstance(details, Mapping) else None
        stored = dict(details) if isinstance(details, Mapping) else {}
        signal, _ = kept_signals(self).add(stored, None if given is None else str(given))
        entry = self.normalise_signal_data(signal.details, signal.ordinal)
        return f"status:{entry[status]} reason:{entry[reason]}"

    def _signal_map(self) -> dict[str, Any] | None:
        """Heat's ``signal`` attribute for the transport (None for TOKEN_SIGNAL, as Heat)."""
        transport = self.transport()
        if transport in (CFN_SIGNAL, TEMP_URL_SIGNAL):
            return {"alarm_url": self.data().get(SIGNAL_URL)}
        if transport == NO_SIGNAL:
            return {}
        if transport == HEAT_SIGNAL and self.data().get(stack_user.USER_ID):
            # Heat's: the stack user's credentials, and the resource to signal with them.
            return {
                **stack_user.stack_user_credentials(self),
                "username": self.physical_resource_name(),
                "region_name": stack_user.region_name(self),
                "stack_id": self.stack.id,
                "resource_name": self.name,
            }
        if transport == ZAQAR_SIGNAL and self.data().get(signal_queue.SIGNAL_QUEUE_ID):
            # Heat's: the stack user's credentials, and the queue to post the signal to.
            return {
                **signal_queue.credentials(self),
                "username": self.physical_resource_name(),
                "queue_id": str(self.data()[signal_queue.SIGNAL_QUEUE_ID]),
            }
        return None


class HeatWaitConditionHandle(BaseWaitConditionHandle):
    """Resource for managing instance signals.

    The main points of this resource are: it has no dependencies (so the instance can
    reference it); it creates a credential to allow signalling from the instance; it
    handles signals from the instance, validates and stores them.

    stoker issues the credential itself (there is no Keystone): with TOKEN_SIGNAL (the
    default) ``token`` is a secret valid only for this handle's ``endpoint`` (stoker's
    resource signal URL, under the server's ``public_url``), and ``curl_cli`` signals
    it; CFN_SIGNAL and TEMP_URL_SIGNAL give a stoker URL carrying the secret
    (``signal``'s ``alarm_url``), which accepts a PUT or POST of the signal. HEAT_SIGNAL
    makes a Keystone stack user whose credentials (``signal``: ``auth_url``,
    ``user_id``, ``password``, ``project_id``, ``stack_id``, ``resource_name``) sign
    the resource-signal call to stoker's API. ZAQAR_SIGNAL makes a stack user and a Zaqar
    queue (``signal``: the same credentials and ``queue_id``) to post the signal to; the
    wait condition takes it off the queue when it looks. A signal is
    ``{"status": "SUCCESS" | "FAILURE", "reason": ..., "data": ..., "id": ...}``, every
    key optional (status defaults to SUCCESS, id to the signal's ordinal); a repeated id
    replaces that signal rather than counting twice.
    """

    support_status = support.SupportStatus(version="2014.2")

    PROPERTIES = (SIGNAL_TRANSPORT,) = ("signal_transport",)

    properties_schema = {
        SIGNAL_TRANSPORT: properties.Schema(
            properties.Schema.STRING,
            "How the client will signal the wait condition. CFN_SIGNAL will allow an HTTP POST "
            "(or PUT) to a signed URL. TEMP_URL_SIGNAL will create a URL to be signalled via HTTP "
            "PUT. HEAT_SIGNAL will allow calls to the API resource-signal using Keystone "
            "credentials (a Keystone stack user's, against stoker's API). ZAQAR_SIGNAL will create a "
            "dedicated zaqar queue. TOKEN_SIGNAL will allow an HTTP POST to an "
            "API endpoint with the provided token. NO_SIGNAL will result in the resource going "
            "to a signalled state without waiting for any signal.",
            default=TOKEN_SIGNAL,
            constraints=[constraints.AllowedValues(TRANSPORTS)],
            support_status=support.SupportStatus(version="6.0.0"),
        ),
    }

    ATTRIBUTES = (TOKEN, ENDPOINT, CURL_CLI, SIGNAL) = ("token", "endpoint", "curl_cli", "signal")

    attributes_schema = {
        TOKEN: attributes.Schema(
            "Token which can be used for signalling handle when signal_transport is set to "
            "TOKEN_SIGNAL. None for all other signal transports.",
            cache_mode=attributes.Schema.CACHE_NONE,
            type=attributes.Schema.STRING,
        ),
        ENDPOINT: attributes.Schema(
            "Endpoint/url which can be used for signalling handle when signal_transport is set "
            "to TOKEN_SIGNAL. None for all other signal transports.",
            cache_mode=attributes.Schema.CACHE_NONE,
            type=attributes.Schema.STRING,
        ),
        CURL_CLI: attributes.Schema(
            "Convenience attribute, provides curl CLI command prefix, which can be used for "
            "signalling handle completion or failure when signal_transport is set to "
            "TOKEN_SIGNAL. You can signal success by adding --data-binary '{\"status\": "
            "\"SUCCESS\"}' , or signal failure by adding --data-binary '{\"status\": "
            "\"FAILURE\"}'. This attribute is set to None for all other signal transports.",
            cache_mode=attributes.Schema.CACHE_NONE,
            type=attributes.Schema.STRING,
        ),
        SIGNAL: attributes.Schema(
            "JSON serialized map that includes the endpoint, token and/or other attributes the "
            "client must use for signalling this handle. The contents of this map depend on the "
            "type of signal selected in the signal_transport property.",
            cache_mode=attributes.Schema.CACHE_NONE,
            type=attributes.Schema.STRING,
        ),
    }

    METADATA_KEYS = ("data", "reason", "status", "id")

    def transport(self) -> str:
        return self.properties[self.SIGNAL_TRANSPORT]

    def validate(self) -> None:
        super().validate()
        missing = _UNSERVED.get(self.properties[self.SIGNAL_TRANSPORT])
        if missing is not None:
            raise ValidationError(
                f"signal_transport {self.properties[self.SIGNAL_TRANSPORT]} is not supported: {missing}",
                path=f"resources.{self.name}.properties.{self.SIGNAL_TRANSPORT}",
                hint="use TOKEN_SIGNAL (the default), CFN_SIGNAL, TEMP_URL_SIGNAL, HEAT_SIGNAL or NO_SIGNAL",
            )

    @classmethod
    def normalise_signal_data(cls, details: Any, ordinal: int) -> Any:
        # Missing values are tolerated: success by default, numbered by arrival.
        entry = dict(details) if isinstance(details, Mapping) else {}
        entry.setdefault("reason", f"Signal {ordinal} received")
        entry.setdefault("data", None)
        entry.setdefault("id", ordinal)
        entry.setdefault("status", cls.STATUS_SUCCESS)
        return entry

    def handle_signal(self, details: Any = None) -> str | None:
        if details is not None and not isinstance(details, Mapping):
            raise SignalRejectedError("Metadata format invalid")
        return super().handle_signal(details or {})

    @classmethod
    def service_signals(cls, source: SignalSource) -> None:
        transport = source.properties.get(cls.SIGNAL_TRANSPORT, TOKEN_SIGNAL)
        # NO_SIGNAL: each look at the handle counts as one more signal (as Heat's).
        if transport == NO_SIGNAL:
            source.signals.add({})
        # ZAQAR_SIGNAL: the signals posted to the handle's queue since the last look.
        if transport == ZAQAR_SIGNAL and source.instance is not None:
            handle = source.instance()
            for details in signal_queue.take_signals(handle, signal_queue.MAX_TAKEN):
                handle.handle_signal(details)

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        data = self.data()
        if name == self.SIGNAL:
            return json.dumps(self._signal_map())
        if self.transport() != TOKEN_SIGNAL:
            return None
        token, endpoint = data.get(SECRET), data.get(ENDPOINT_KEY)
        if name == self.TOKEN:
            return token
        if name == self.ENDPOINT:
            return endpoint
        if name == self.CURL_CLI:
            if token is None or endpoint is None:
                return None
            return (
                f"curl -i -X POST -H 'X-Auth-Token: {token}' -H 'Content-Type: application/json' "
                f"-H 'Accept: application/json' {endpoint}"
            )
        return None


class WaitConditionHandle(BaseWaitConditionHandle):
    """AWS WaitConditionHandle resource.

    It has no dependencies (so the instance can reference it) and generates a unique URL,
    returned as its reference: ``cfn-signal`` PUTs to that URL, and the WaitCondition
    polls the signals it received. The URL is stoker's own capability URL (under the
    server's ``public_url``), carrying a secret valid only for this handle. A signal is
    ``{"Status": "SUCCESS" | "FAILURE", "Reason": ..., "UniqueId": ..., "Data": ...}``
    with every key given; a repeated UniqueId replaces that signal.
    """

    support_status = support.SupportStatus(version="2014.1")

    METADATA_KEYS = ("Data", "Reason", "Status", "UniqueId")

    def get_reference_id(self) -> str:
        if self.resource_id is not None:
            url = self.data().get(SIGNAL_URL)
            if url:
                return str(url)
        return self.name

    def handle_signal(self, details: Any = None) -> str | None:
        if details is None:
            return None
        return super().handle_signal(details)


class UpdateWaitConditionHandle(WaitConditionHandle):
    """WaitConditionHandle that clears signals and changes handle on update.

    This works similarly to an AWS::CloudFormation::WaitConditionHandle, except that on
    update it clears all signals received and changes the handle. Using this handle means
    that you must setup the signal senders to send their signals again any time the update
    handle changes. This allows us to roll out new configurations and be confident that
    they are rolled out once UPDATE COMPLETE is reached.
    """

    support_status = support.SupportStatus(version="2014.1")
    # Every stack update replaces it: a new URL, and no signals.
    replace_on_every_update = True


def resource_mapping() -> dict[str, type[Resource]]:
    return {
        "OS::Heat::WaitConditionHandle": HeatWaitConditionHandle,
        "OS::Heat::UpdateWaitConditionHandle": UpdateWaitConditionHandle,
        "AWS::CloudFormation::WaitConditionHandle": WaitConditionHandle,
    }
