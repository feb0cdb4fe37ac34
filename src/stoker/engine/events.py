"""Recording state changes: every transition is persisted with its event, then announced.

The recorder writes the new state and the event in one transaction before it returns,
so the engine never moves on from a state the store does not have. Listeners (the CLI's
live progress) are told after the commit; the API's event stream reads the store instead
(``store/event_feed.py``), as the events may be written by another process.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from stoker.engine.states import STACK_TYPE, Action, Status
from stoker.identifiers import new_id
from stoker.masking import HiddenValues
from stoker.store import EventRecord, ResourceRecord, StackRecord, Store

LOG = logging.getLogger(__name__)

Listener = Callable[[EventRecord], None]


def resource_event(record: ResourceRecord, action: str, status: str, reason: str, physical_resource_id: str | None = None) -> EventRecord:
    """The event of one resource state change (written with the change, never alone)."""
    return EventRecord(
        id=None,
        uuid=new_id(),
        stack_id=record.stack_id,
        resource_name=record.name,
        physical_resource_id=physical_resource_id if physical_resource_id is not None else record.physical_resource_id,
        resource_type=record.type,
        resource_action=str(action),
        resource_status=str(status),
        resource_status_reason=reason,
    )


def stack_event(stack: StackRecord, action: str, status: str, reason: str) -> EventRecord:
    """An event about the stack itself (Heat records these as OS::Heat::Stack)."""
    return EventRecord(
        id=None,
        uuid=new_id(),
        stack_id=stack.id,
        resource_name=stack.name,
        physical_resource_id=stack.id,
        resource_type=STACK_TYPE,
        resource_action=str(action),
        resource_status=str(status),
        resource_status_reason=reason,
    )


class Recorder:
    """Records one stack's state changes. ``hidden``: the stack's hidden parameter
    values, masked in every reason recorded (a plugin's error may quote a value)."""

    def __init__(self, store: Store, stack: StackRecord, listeners: list[Listener] | None = None, hidden: HiddenValues | None = None):
        self.store = store
        self.stack = stack
        self.listeners = listeners or []
        self.hidden = hidden if hidden is not None else HiddenValues()

    def _announce(self, event: EventRecord) -> None:
        for listener in self.listeners:
            try:
                listener(event)
            except Exception:  # noqa: BLE001 - a display problem must not break the action
                LOG.exception("event listener failed")

    async def resource_state(self, record: ResourceRecord, action: Action, status: Status, reason: str = "state changed", **fields: Any) -> None:
        reason = self.hidden.text(reason)
        event = resource_event(record, action, status, reason, fields.get("physical_resource_id"))
        await self.store.update_resource_async(record, event=event, action=str(action), status=str(status), status_reason=reason, **fields)
        record.action, record.status, record.status_reason = str(action), str(status), reason
        for key, value in fields.items():
            setattr(record, key, value)
        self._announce(event)

    async def resource_event(self, record: ResourceRecord, reason: str, **fields: Any) -> None:
        """An event about a resource that does not change its state (a hook reached),
        in the state the resource is in, as Heat's ``Resource._add_event``."""
        reason = self.hidden.text(reason)
        event = resource_event(record, record.action, record.status, reason)
        await self.store.update_resource_async(record, event=event, **fields)
        for key, value in fields.items():
            setattr(record, key, value)
        self._announce(event)

    def _stack_event(self, action: Action, status: Status, reason: str) -> EventRecord:
        return stack_event(self.stack, action, status, self.hidden.text(reason))

    async def stack_event(self, action: Action, status: Status, reason: str) -> None:
        """An event about the stack that does not change its state (e.g. a warning)."""
        event = self._stack_event(action, status, reason)
        await self.store.events.add_event_async(event)
        self._announce(event)

    async def stack_state(self, action: Action, status: Status, reason: str, **fields: Any) -> None:
        stack = self.stack
        event = self._stack_event(action, status, reason)
        reason = event.resource_status_reason
        await self.store.update_stack_async(stack.id, event=event, action=str(action), status=str(status), status_reason=reason, **fields)
        stack.action, stack.status, stack.status_reason = str(action), str(status), reason
        for key, value in fields.items():
            setattr(stack, key, value)
        self._announce(event)
