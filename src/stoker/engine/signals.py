"""Signals to resources, and the capability credentials that may send them.

stoker has no Keystone, so a resource that agents signal (a wait condition handle)
gets a capability of its own: a random secret, issued at create, of which the store
keeps only the SHA-256 (``signal_credentials``); the plugin keeps the plain secret in
its data, sealed at rest (``data_set(..., redact=True)``), to show it again in its
attributes. A credential is valid for signals to that one resource until the resource
is deleted or issues a new one.

Signals are rows (``signals``), so one sent while no engine runs is kept until a waiter
looks. ``ResourceSignals`` is what a plugin gets from its hooks (``signals``): issue and
revoke its credential, record and read its signals, build the URLs agents are given,
and find the handle a wait condition names.

Must not: decide what a signal means (the plugin's ``handle_signal`` does), or put a
secret into an event, a log line or an error message.
"""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from stoker.identifiers import new_id, new_secret
from stoker.sdk.exceptions import StokerError
from stoker.sdk.signals import Credential, SignalSource
from stoker.store import Store
from stoker.store.records import ResourceRecord, SignalCredentialRecord, SignalRecord, StackRecord
from stoker.store.signals import SignalRepository

if TYPE_CHECKING:
    from stoker.engine.stack import StackRuntime

# What a credential lets its holder do: signal its resource, or read its metadata (a
# server's, polled by its agent); a "keypair" is a server's CFN keypair (its id is the
# access key, the plain secret is in the server's data: signatures are computed with
# it), which reads the server's metadata through the CFN API only.
PURPOSES = (SIGNAL, METADATA, ALARM, KEYPAIR) = ("signal", "metadata", "alarm", "keypair")
# The project in a signal URL of a stack made without one (the embedded CLI's): the
# resource's own credential reaches it whatever project the path names
# (Service.signalled_resource).
DEFAULT_PROJECT = "default"


class SignalCredentialError(StokerError):
    """A signal came with a secret that is not a live credential of its resource (the
    API answers 403). The message never repeats the secret."""


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def _matches(record: SignalCredentialRecord, secret: str) -> bool:
    return record.revoked_at is None and hmac.compare_digest(record.secret_hash, secret_hash(secret))


def _signalling(store: Store, resource_uuid: str) -> list[SignalCredentialRecord]:
    return [record for record in store.signals.signal_credentials(resource_uuid) if record.purpose in (None, SIGNAL)]


def credential_matches(record: SignalCredentialRecord, secret: str) -> bool:
    """Whether ``secret`` is the live credential ``record``'s."""
    return _matches(record, secret)


def credential_valid(store: Store, resource_uuid: str, secret: str) -> bool:
    """Whether ``secret`` is a live signal credential of the resource whose record has
    ``resource_uuid``: the one check an auth layer makes of a signal's token."""
    return any(_matches(record, secret) for record in _signalling(store, resource_uuid))


def has_credentials(store: Store, resource_uuid: str) -> bool:
    """Whether the resource accepts signals only with one of its credentials."""
    return bool(_signalling(store, resource_uuid))


def credential_by_url(store: Store, credential_id: str, secret: str, purposes: tuple[str, ...] = (SIGNAL,)) -> SignalCredentialRecord:
    """The live credential a capability URL names (its id and secret), if it was issued
    for one of ``purposes``, or SignalCredentialError. (An ALARM credential is a
    scaling policy's ``alarm_url``: a capability URL only, never an X-Auth-Token.)"""
    record = store.signals.get_signal_credential(credential_id)
    if record is None or not secret or not _matches(record, secret) or (record.purpose or SIGNAL) not in purposes:
        raise SignalCredentialError("The URL is not valid: its credential is unknown, revoked or does not match")
    return record


def credential_resource(store: Store, credential: SignalCredentialRecord, gone: str) -> tuple[StackRecord, ResourceRecord]:
    """The live stack and current resource a capability URL's credential names, or
    SignalCredentialError with ``gone`` when either is gone."""
    stack = store.get_stack(credential.stack_id)
    record = None
    if stack is not None and stack.deleted_at is None:
        record = next((r for r in store.list_resources(stack.id) if r.current and r.uuid == credential.resource_uuid), None)
    if stack is None or record is None:
        raise SignalCredentialError(gone)
    return stack, record


def keypair_credential(store: Store, access: str) -> SignalCredentialRecord | None:
    """The live CFN keypair whose access key is ``access``, or None."""
    record = store.signals.get_signal_credential(access) if access else None
    if record is None or record.revoked_at is not None or record.purpose != KEYPAIR:
        return None
    return record


def public_base(url: str) -> str:
    return url.rstrip("/")


def resource_signal_url(public_url: str, project: str, stack_name: str, stack_id: str, resource_name: str) -> str:
    """Heat's resource signal route (POST), where a handle's token is accepted."""
    parts = [quote(project or DEFAULT_PROJECT, safe=""), "stacks", quote(stack_name, safe=""), stack_id, "resources", quote(resource_name, safe=""), "signal"]
    return f"{public_base(public_url)}/v1/" + "/".join(parts)


def waitcondition_url(public_url: str, credential: Credential) -> str:
    """stoker's capability URL (PUT or POST): the secret in it is the capability, as a
    pre-signed CFN URL or a Swift temp URL would carry its signature."""
    return f"{public_base(public_url)}/v1/waitcondition/{credential.id}?secret={credential.secret}"


def server_metadata_url(public_url: str, credential: Credential) -> str:
    """stoker's capability URL (GET) for a server's metadata, as a Swift temp URL would
    serve it to os-collect-config's request collector."""
    return f"{public_base(public_url)}/v1/server_metadata/{credential.id}?secret={credential.secret}"


def redacted_url(url: str) -> str:
    """A URL as it may appear in a message: no query (a secret lives there)."""
    return url.split("?", 1)[0] + ("?..." if "?" in url else "")


class ResourceSignals:
    """The signals and credentials of one resource (its record's uuid), for its plugin
    (``sdk.signals.Signals``).

    Calls come from handler threads (and the API's worker threads for ``add``); each
    store write commits before it returns."""

    def __init__(self, store: Store | None, stack_id: str, resource_uuid: str, runtime: StackRuntime | None = None, read_only: bool = False):
        self.store = store
        self.stack_id = stack_id
        self.resource_uuid = resource_uuid
        self.runtime = runtime
        self.read_only = read_only or store is None

    # -- where agents reach stoker ----------------------------------------------------

    @property
    def public_url(self) -> str:
        return getattr(self.runtime, "public_url", "") or "http://127.0.0.1:8004"

    def resource_signal_url(self, resource_name: str) -> str:
        stack = self.runtime.stack if self.runtime is not None else None
        project = getattr(stack, "project_id", "") or DEFAULT_PROJECT
        name = getattr(stack, "name", "")
        return resource_signal_url(self.public_url, project, name, self.stack_id, resource_name)

    def waitcondition_url(self, credential: Credential) -> str:
        return waitcondition_url(self.public_url, credential)

    # -- credentials ------------------------------------------------------------------

    def _writable(self, what: str) -> SignalRepository:
        if self.read_only or self.store is None:
            raise StokerError(f"{what} is not possible here: nothing may be recorded while validating or previewing")
        return self.store.signals

    def server_metadata_url(self, credential: Credential) -> str:
        return server_metadata_url(self.public_url, credential)

    def issue_credential(self, purpose: str = SIGNAL) -> Credential:
        """A new credential for this resource; its earlier ones are revoked."""
        signals = self._writable("Issuing a signal credential")
        credential = Credential(new_id(), new_secret())
        signals.add_signal_credential(
            SignalCredentialRecord(credential.id, self.stack_id, self.resource_uuid, secret_hash(credential.secret), purpose=purpose)
        )
        return credential

    def revoke_credentials(self) -> int:
        return self._writable("Revoking signal credentials").revoke_signal_credentials(self.resource_uuid)

    # -- signals ----------------------------------------------------------------------

    def add(self, details: Any, signal_id: str | None = None) -> tuple[SignalRecord, bool]:
        """Record a signal (idempotent per ``signal_id``; without one it is numbered)."""
        return self._writable("Recording a signal").add_signal(self.stack_id, self.resource_uuid, details, signal_id)

    def received(self) -> list[SignalRecord]:
        """The resource's signals, in the order they first arrived."""
        return self.store.signals.list_signals(self.resource_uuid) if self.store is not None else []

    def mark_handled(self, signals: list[SignalRecord]) -> None:
        if not self.read_only and self.store is not None:
            self.store.signals.mark_signals_handled(s.id for s in signals if s.handled_at is None)

    def clear(self) -> int:
        """Forget the resource's signals (a wait condition deleted: Heat clears them)."""
        return self._writable("Clearing signals").delete_signals(self.resource_uuid)

    # -- other resources of the stack -------------------------------------------------

    def find(self, reference: Any) -> SignalSource | None:
        """The resource of this stack whose reference (``get_resource``) is
        ``reference``, as Heat's ``resource_by_refid`` (its plugin class says whether it
        is a handle). Physical ids first: they are the references of most resources."""
        runtime = self.runtime
        if runtime is None or not isinstance(reference, str):
            return None
        created = [r for r in list(runtime.current.values()) if r.action not in ("INIT", "DELETE") and r.physical_resource_id is not None]
        for record in created:
            if record.physical_resource_id == reference:
                return self._source(record, runtime.plugin_class(record.type, record.name))
        for record in created:
            cached = record.id in runtime.instances
            try:
                found = runtime.instance(record).get_reference_id()
            except Exception:  # noqa: BLE001 - a reference that cannot be computed is not this one
                continue
            finally:
                if not cached:
                    runtime.release(record)
            if found == reference:
                return self._source(record, runtime.plugin_class(record.type, record.name))
        return None

    def source(self, name: str) -> SignalSource | None:
        """The resource of this stack named ``name``, if it receives signals."""
        runtime = self.runtime
        if runtime is None:
            return None
        record = runtime.current.get(name)
        if record is None or record.action in ("INIT", "DELETE"):
            return None
        cls = runtime.plugin_class(record.type, record.name)
        return self._source(record, cls) if getattr(cls, "handle_signal", None) is not None else None

    def _source(self, record: Any, cls: type) -> SignalSource:
        signals = ResourceSignals(self.store, record.stack_id, record.uuid, self.runtime, self.read_only)
        runtime = self.runtime
        assert runtime is not None  # find and source have read the record from it

        def instance() -> Any:
            # As find's: an object built only for this look is not kept in the runtime.
            cached = record.id in runtime.instances
            built = runtime.instance(record)
            if not cached:
                runtime.release(record)
            return built

        return SignalSource(record.name, cls, signals, dict(record.properties or {}), instance)
