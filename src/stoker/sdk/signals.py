"""Signals, as a plugin sees them: what ``self.signals()`` returns.

A resource that agents signal (a wait condition handle) issues a capability credential
(``issue_credential``: a secret the engine stores only hashed), records what it is sent
(``add``: idempotent per signal id) and reads it back (``received``); a resource that
waits (a wait condition) finds the handle it names (``find``, ``source``). The engine's
implementation is ``stoker.engine.signals.ResourceSignals`` over the store;
``MemorySignals`` here is the in-memory one for tests of plugins.

Must not: know about the store or the API.
"""

from __future__ import annotations

import itertools
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol
from urllib.parse import quote

from stoker.identifiers import new_secret

__all__ = ["Credential", "MemorySignals", "Signal", "SignalSource", "Signals"]


@dataclass(frozen=True)
class Credential:
    """A credential as issued: ``secret`` is shown once, to the plugin that keeps it."""

    id: str
    secret: str = field(repr=False)


@dataclass
class Signal:
    """One received signal: ``signal_id`` is the sender's id or, without one, its
    ordinal; ``ordinal`` its place among the resource's signals (1: the first)."""

    id: int
    signal_id: str
    details: Any
    ordinal: int
    handled_at: Any = None


@dataclass(frozen=True)
class SignalSource:
    """A resource of the same stack that receives signals, as a waiter sees it: its
    name, plugin class, resolved properties and signals; ``instance`` builds its plugin
    instance (its data and client plugins: a handle whose signals wait in a Zaqar
    queue, a server whose metadata is posted to one), None where there is none."""

    name: str
    plugin_class: type
    signals: Signals
    properties: Mapping[str, Any] = field(default_factory=dict)
    instance: Callable[[], Any] | None = None


class Signals(Protocol):
    def resource_signal_url(self, resource_name: str) -> str: ...

    def waitcondition_url(self, credential: Credential) -> str: ...

    def server_metadata_url(self, credential: Credential) -> str: ...

    def issue_credential(self, purpose: str = "signal") -> Credential: ...

    def revoke_credentials(self) -> int: ...

    def add(self, details: Any, signal_id: str | None = None) -> tuple[Any, bool]: ...

    def received(self) -> list[Any]: ...

    def mark_handled(self, signals: list[Any]) -> None: ...

    def clear(self) -> int: ...

    def find(self, reference: Any) -> SignalSource | None: ...

    def source(self, name: str) -> SignalSource | None: ...


class MemorySignals:
    """Signals of one resource kept in memory; ``sources``: the other resources a
    waiter may name, by reference and by name."""

    def __init__(self, public_url: str = "http://127.0.0.1:8004", sources: Mapping[str, SignalSource] | None = None):
        self.public_url = public_url.rstrip("/")
        self.sources = dict(sources or {})
        self.signals: list[Signal] = []
        self.credentials: dict[str, bool] = {}  # id -> live
        self._ids = itertools.count(1)

    def resource_signal_url(self, resource_name: str) -> str:
        return f"{self.public_url}/v1/default/stacks/memory/memory/resources/{quote(resource_name, safe='')}/signal"

    def waitcondition_url(self, credential: Credential) -> str:
        return f"{self.public_url}/v1/waitcondition/{credential.id}?secret={credential.secret}"

    def server_metadata_url(self, credential: Credential) -> str:
        return f"{self.public_url}/v1/server_metadata/{credential.id}?secret={credential.secret}"

    def issue_credential(self, purpose: str = "signal") -> Credential:
        self.credentials = dict.fromkeys(self.credentials, False)
        credential = Credential(secrets.token_hex(8), new_secret())
        self.credentials[credential.id] = True
        return credential

    def revoke_credentials(self) -> int:
        live = sum(self.credentials.values())
        self.credentials = dict.fromkeys(self.credentials, False)
        return live

    def add(self, details: Any, signal_id: str | None = None) -> tuple[Signal, bool]:
        key = signal_id if signal_id is not None else str(len(self.signals) + 1)
        for signal in self.signals:
            if signal.signal_id == key:
                signal.details = details
                return signal, False
        signal = Signal(next(self._ids), key, details, len(self.signals) + 1)
        self.signals.append(signal)
        return signal, True

    def received(self) -> list[Signal]:
        return list(self.signals)

    def mark_handled(self, signals: list[Any]) -> None:
        for signal in signals:
            signal.handled_at = signal.handled_at or "handled"

    def clear(self) -> int:
        count = len(self.signals)
        self.signals.clear()
        return count

    def find(self, reference: Any) -> SignalSource | None:
        return self.sources.get(reference) if isinstance(reference, str) else None

    def source(self, name: str) -> SignalSource | None:
        return next((source for source in self.sources.values() if source.name == name), None)
