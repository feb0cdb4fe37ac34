"""Snapshots, export and abandon, and drift: a stack's state copied out of stoker, or
the live objects' read in to compare (docs/drift.md). A part of ``Service``.

What it owns: the snapshot records and the SNAPSHOT and RESTORE jobs they start; the
export (Heat's abandon data, nested stacks' resources under their parents); abandon,
which forgets a stack and its nested stacks leaving their resources in place; running a
drift detection and reading the last one.

What it must not do: take or restore a snapshot itself (the engine's jobs do), or decide
what drifted (``engine/drift.py`` does).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from stoker.engine import drift
from stoker.engine.engine import Engine, Job
from stoker.engine.errors import ActionInProgressError
from stoker.engine.events import Listener, stack_event
from stoker.engine.snapshot import exported_resources
from stoker.engine.states import Action, Status
from stoker.identifiers import new_id
from stoker.reads import StackReads
from stoker.sdk.exceptions import ResourceNotFoundError, ValidationError
from stoker.serving import Serving
from stoker.settings import Settings
from stoker.stack_checks import check_idle
from stoker.store import SnapshotRecord, StackRecord, Store
from stoker.store.drift import DriftRecord
from stoker.store.repository import utcnow


class StackCopies:
    """Snapshots, export, abandon and drift of a ``Service``'s stacks: stacks found by
    ``reads``, jobs and changes under a stack's lock run by ``serving``."""

    def __init__(self, settings: Settings, store: Store, engine: Engine, reads: StackReads, serving: Serving):
        self.settings = settings
        self.store = store
        self.engine = engine
        self.reads = reads
        self.serving = serving

    def create_snapshot(self, name_or_id: str, name: str | None = None, listeners: Sequence[Listener] = ()) -> SnapshotRecord:
        stack = self.reads.get_stack(name_or_id)
        check_idle(self.store, stack)
        if stack.status != Status.COMPLETE or stack.action in (Action.DELETE, Action.INIT):
            raise ValidationError(f"Stack {stack.name} is {stack.state}: only a stack in a COMPLETE state can be snapshotted")
        record = SnapshotRecord(id=new_id(), stack_id=stack.id, name=name, status="IN_PROGRESS", status_reason="")
        self.store.save_snapshot(record)
        self.serving.run(Job(stack.id, Action.SNAPSHOT, snapshot_id=record.id), listeners)
        return self.get_snapshot(stack.id, record.id)

    def list_snapshots(self, name_or_id: str) -> list[SnapshotRecord]:
        return self.store.list_snapshots(self.reads.get_stack(name_or_id).id)

    def get_snapshot(self, name_or_id: str, snapshot_id: str) -> SnapshotRecord:
        for record in self.list_snapshots(name_or_id):
            if record.id == snapshot_id or record.name == snapshot_id:
                return record
        raise ResourceNotFoundError(f"The Snapshot ({snapshot_id}) could not be found.", hint=f"see 'stoker stack snapshot list {name_or_id}'")

    def delete_snapshot(self, name_or_id: str, snapshot_id: str) -> None:
        stack = self.reads.get_stack(name_or_id)
        record = self.get_snapshot(stack.id, snapshot_id)
        self.serving.call(self.engine.delete_snapshot(stack, record.id))

    def restore_snapshot(self, name_or_id: str, snapshot_id: str, listeners: Sequence[Listener] = ()) -> StackRecord:
        stack = self.reads.get_stack(name_or_id)
        check_idle(self.store, stack)
        record = self.get_snapshot(stack.id, snapshot_id)
        if record.status != "COMPLETE":
            raise ValidationError(f"Snapshot {snapshot_id} is {record.status}: only a complete snapshot can be restored")
        return self.serving.run(Job(stack.id, Action.RESTORE, snapshot_id=record.id), listeners)

    def export_stack(self, name_or_id: str) -> dict[str, Any]:
        """Everything needed to adopt the stack elsewhere (Heat's abandon/export data)."""
        stack = self.reads.get_stack(name_or_id)
        stored = self.store.get_template(stack.raw_template_id)
        resources = self._exported_resources(stack.id)
        return {
            "id": stack.id,
            "name": stack.name,
            "action": stack.action,
            "status": stack.status,
            "template": stored.template,
            "files": stored.files,
            "environment": stored.environment,
            "parameters": stack.parameters,
            "project_id": stack.project_id,
            "tags": stack.tags,
            "resources": resources,
        }

    def _exported_resources(self, stack_id: str) -> dict[str, Any]:
        """A stack's resources for export; a nested stack's resources under its parent
        resource's ``resources`` (as Heat's abandon data nests them)."""
        resources = exported_resources(self.store.list_resources(stack_id))
        for entry in resources.values():
            # Plain, as Heat exports them: the data is for adopting the stack elsewhere.
            entry["resource_data"] = self.store.sealer.open(entry["resource_data"])[0]
        for child in self.store.child_stacks(stack_id):
            owned = resources.get(child.owner_resource or "")
            if owned is not None and owned["resource_id"] == child.id:
                owned["resources"] = self._exported_resources(child.id)
        return resources

    def abandon_stack(self, name_or_id: str) -> dict[str, Any]:
        """Forget a stack, leaving its physical resources in place; returns the adopt data."""
        if not self.settings.enable_stack_abandon:
            raise ValidationError("Stack abandon is disabled", hint="set STOKER_ENABLE_STACK_ABANDON=true to allow it")
        stack = self.reads.get_stack(name_or_id)
        check_idle(self.store, stack)

        def abandon(current: StackRecord) -> dict[str, Any]:
            data = self.export_stack(current.id)
            self._forget(current)
            if self.serving.delegation is not None:
                from stoker.clouds.trusts import acting_user

                self.serving.delegation.forget(current, acting_user.get())
            return data

        return self.serving.holding(stack, abandon)

    def detect_drift(self, name_or_id: str) -> DriftRecord:
        """Compare every resource of the stack (and of its nested stacks) with its live
        object now (``engine/drift.py``); the result is kept as the stack's last. Not
        while an action runs: its resources are changing. Blocks on the services."""
        stack = self.reads.get_stack(name_or_id)
        if stack.status == Status.IN_PROGRESS:
            raise ActionInProgressError(stack.name, stack.state)
        return drift.detect(self.engine, self.store, stack)

    def last_drift(self, name_or_id: str) -> DriftRecord | None:
        """The stack's last drift detection, if any."""
        return self.store.drift.last_drift(self.reads.get_stack(name_or_id).id)

    def _forget(self, stack: StackRecord) -> None:
        """Drop a stack and its nested stacks from the store, leaving resources in place."""
        for child in self.store.child_stacks(stack.id):
            self._forget(child)
        event = stack_event(stack, "DELETE", "COMPLETE", "Stack abandoned: its resources were left in place")
        self.store.delete_resources(stack.id, (r.stored_id for r in self.store.list_resources(stack.id)))
        self.store.update_stack(stack.id, event=event, action="DELETE", status="COMPLETE", status_reason=event.resource_status_reason, deleted_at=utcnow())
