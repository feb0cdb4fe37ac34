"""What is done to one resource of a stack, outside its stack's actions: a hook cleared,
a signal delivered (through the API with the project's token or the resource's own
credential, or to a capability URL), a resource marked unhealthy. A part of ``Service``.

What it owns: finding the resource a signal names and checking the credential it came
with; handing the signal to the plugin (a scaling signal under the stack's lock, or to a
worker); the events these write. What it must not do: run a stack action (the engine
does), or read for display (``reads.py``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stoker.engine import scaling, signals
from stoker.engine.engine import Engine
from stoker.engine.errors import StackNotFoundError
from stoker.engine.events import resource_event
from stoker.engine.trees import root_of
from stoker.reads import Project, StackReads
from stoker.sdk.exceptions import ValidationError
from stoker.serving import Serving
from stoker.stack_checks import check_idle
from stoker.store import ResourceRecord, StackRecord, Store


class ResourceActions:
    """Hooks, signals and health marks of a ``Service``'s resources: stacks and
    resources found by ``reads``, engine work run by ``serving`` (here, or on the
    serving loop, or by a worker)."""

    def __init__(self, store: Store, engine: Engine, reads: StackReads, serving: Serving):
        self.store = store
        self.engine = engine
        self.reads = reads
        self.serving = serving

    def clear_hook(self, name_or_id: str, resource_name: str, hook: str | None = None) -> None:
        """Let a resource waiting at a hook go on (``hook`` None: whichever it waits at)."""
        from stoker.engine.hooks import HOOK_TYPES

        stack = self.reads.get_stack(name_or_id)
        record = self.reads.current_resource(stack, resource_name)
        if hook is not None and hook not in HOOK_TYPES:
            raise ValidationError(f"Unknown hook {hook}", hint="use one of " + ", ".join(HOOK_TYPES))
        if record.hook is None or (hook is not None and record.hook != hook):
            raise ValidationError(f"Resource {resource_name} is not waiting at hook {hook or 'any'}")
        event = resource_event(record, record.action, record.status, f"Hook {record.hook} is cleared")
        self.store.update_resource(record, event=event, hook=None)

    def signal_resource(self, name_or_id: str, resource_name: str, details: Mapping[str, Any] | None = None, credential: str | None = None) -> None:
        """Send a signal to a resource: ``{"unset_hook": "pre-create"}`` clears a hook;
        anything else goes to the plugin's ``handle_signal(details)``. ``credential``:
        the token the request came with (see ``check_signal_credential``)."""
        details = dict(details or {})
        if credential is not None:
            self.check_signal_credential(self.reads.current_resource(self.reads.get_stack(name_or_id), resource_name), credential)
        if "unset_hook" in details:
            self.clear_hook(name_or_id, resource_name, details["unset_hook"])
            return
        stack = self.reads.get_stack(name_or_id)
        self._deliver_signal(stack, self.reads.current_resource(stack, resource_name), details)

    def signalled_resource(self, name: str, stack_id: str, resource_name: str, project: Project | None, credential: str | None) -> tuple[StackRecord, ResourceRecord]:
        """The stack and current resource a signal to ``/stacks/{name}/{id}/resources/
        {resource}/signal`` names: in a stack ``project`` reaches, or in any stack when
        ``credential`` is one of the resource's own signal credentials (Heat lets the
        stack's own users, of its stack_user_project_id, signal it; the signal URLs of
        a stack made without a project name the ``default`` one). Otherwise not found,
        as a missing stack is not."""
        try:
            stack = self.reads.identified_stack(name, stack_id, project)
        except StackNotFoundError:
            found = self.store.get_stack(stack_id)
            record = None
            if credential and found is not None and found.deleted_at is None and found.name == name:
                record = next((r for r in self.store.list_resources(found.id) if r.current and r.name == resource_name), None)
            if found is None or record is None or not signals.credential_valid(self.store, record.uuid, credential or ""):
                raise
            return found, record
        return stack, self.reads.current_resource(stack, resource_name)

    def check_signal_credential(self, record: ResourceRecord, credential: str) -> None:
        """A signal that carries a token: a resource with signal credentials of its own
        (a wait condition handle) accepts only one of them. Others take the token the
        request was let in with, as every other request of the stack's project."""
        if signals.has_credentials(self.store, record.uuid) and not signals.credential_valid(self.store, record.uuid, credential):
            raise signals.SignalCredentialError(f"The token is not a credential of resource {record.name}")

    def signal_by_capability(self, credential_id: str, secret: str, details: Any) -> dict[str, Any]:
        """A signal to a capability URL (``/v1/waitcondition/{id}?secret=...``, what
        cfn-signal PUTs to): the credential names the stack and resource. Returns Heat's
        answer: the resource's name and its signals by id."""
        credential = signals.credential_by_url(self.store, credential_id, secret, purposes=(signals.SIGNAL, signals.ALARM))
        stack, record = signals.credential_resource(self.store, credential, "The signal URL is not valid: its resource is gone")
        instance = self._deliver_signal(stack, record, details)
        metadata = getattr(instance, "metadata", None)
        return {"resource": record.name, "metadata": metadata(self.store.signals.list_signals(record.uuid)) if callable(metadata) else {}}

    def _deliver_signal(self, stack: StackRecord, record: ResourceRecord, details: Any) -> Any:
        resource_name = record.name
        runtime = self.engine.load_runtime(stack)
        instance = runtime.instance(record)
        handle = getattr(instance, "handle_signal", None)
        if handle is None:
            raise ValidationError(f"Resource {resource_name} ({record.type}) does not accept signals")
        if scaling.runs_under_lock(type(instance)):
            enqueue_signal = getattr(self.serving.jobs, "enqueue_signal", None)
            if enqueue_signal is not None:
                # With workers, one of them resizes the group (workers.StackWorker).
                enqueue_signal(stack.id, resource_name, details)
                return instance
            # A scaling signal resizes a nested stack: under the stack's lock, to its end.
            self.serving.call(scaling.signal(self.engine, stack.id, resource_name, details))
            return instance
        result = handle(details)
        # Heat's event text: what the plugin says the signal was, else its details.
        reason = result if isinstance(result, str) and result else json.dumps(details, sort_keys=True)
        self.store.events.add_event(resource_event(record, "SIGNAL", "COMPLETE", f"Signal: {reason}"))
        return instance

    def mark_unhealthy(self, name_or_id: str, resource_name: str, unhealthy: bool = True, reason: str = "") -> None:
        """Mark a resource CHECK_FAILED (so the next update replaces it), or reset that.
        A nested stack's resource may be marked too, as in Heat (heat-templates'
        autohealing marks a group member's server, then updates the root): under the root
        stack's lock, which every action of the tree holds, when the root is idle."""
        stack = self.reads.get_stack(name_or_id)
        root = root_of(self.store, stack)
        check_idle(self.store, root)
        self.reads.current_resource(stack, resource_name)  # a missing resource is named at once

        # Heat's resource_mark_unhealthy: the user's reason is kept as given, for a mark
        # and for a reset alike; a deleted resource is not marked.
        why = reason or "state changed by resource_mark_unhealthy api"

        def mark(current_root: StackRecord) -> None:
            current = current_root if stack.id == root.id else self.store.get_stack(stack.id)
            if current is None or current.deleted_at is not None:
                raise StackNotFoundError(stack.name)
            record = self.reads.current_resource(current, resource_name)
            if unhealthy and record.action != "DELETE":
                event = resource_event(record, "CHECK", "FAILED", why)
                self.store.update_resource(record, event=event, action="CHECK", status="FAILED", status_reason=why)
            elif not unhealthy and record.action == "CHECK" and record.status == "FAILED":
                event = resource_event(record, "CHECK", "COMPLETE", why)
                self.store.update_resource(record, event=event, action="CHECK", status="COMPLETE", status_reason=why)

        self.serving.holding(root, mark)
