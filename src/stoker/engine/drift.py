"""Drift detection: every resource's live object, read through its plugin
(``Resource.get_live_state``), compared property by property with what the stack holds
(docs/drift.md).

Each resource gets one status: IN_SYNC, MODIFIED (with each property's expected and actual
value), DELETED (its object is gone) or NOT_CHECKED (with why). A nested stack's
resources are checked in turn, under the path of the resources that own them
(``group/0/server``). Only the properties the template set, and the scalar ones whose
default holds anyway, are compared: a list or map the template left to its default is
what the service filled in, not drift.

What it owns: the comparison and the report, its events (one per resource not IN_SYNC,
one for the stack; neither changes a state) and keeping it as the stack's last. What it
must not do: change a resource, or run while an action runs (the service refuses that).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from stoker.engine.errors import StackChangedError
from stoker.engine.events import resource_event, stack_event
from stoker.engine.stack import StackRuntime
from stoker.sdk.exceptions import EntityNotFound
from stoker.sdk.resource import Resource
from stoker.sdk.stack_resource import StackResource
from stoker.store import ResourceRecord, StackRecord, Store
from stoker.store.drift import DriftRecord
from stoker.store.records import utcnow
from stoker.template.definitions import ResourceDefinition

__all__ = [
    "DriftStatus",
    "PropertyDrift",
    "ResourceDrift",
    "compared_properties",
    "detect",
    "differences",
    "same_value",
    "summary_of",
    "GONE",
    "absorb",
    "as_found",
    "as_found_record",
    "examine",
    "found",
]


class DriftStatus(StrEnum):
    IN_SYNC = "IN_SYNC"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"
    NOT_CHECKED = "NOT_CHECKED"


@dataclass
class PropertyDrift:
    name: str
    expected: Any
    actual: Any


@dataclass
class ResourceDrift:
    """One resource's result; ``path``: its name, under its owners' in nested stacks."""

    path: str
    resource_name: str
    resource_type: str
    physical_resource_id: str | None
    stack_id: str
    status: DriftStatus
    reason: str = ""
    properties: list[PropertyDrift] = field(default_factory=list)
    # The changed properties' live values unmasked, for a converging update only (never
    # shown: ``properties`` has them masked).
    live: dict[str, Any] = field(default_factory=dict, repr=False)

    def body(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "resource_name": self.resource_name,
            "resource_type": self.resource_type,
            "physical_resource_id": self.physical_resource_id,
            "stack_id": self.stack_id,
            "status": str(self.status),
            "reason": self.reason,
            "properties": [
                {"name": p.name, "expected": p.expected, "actual": p.actual}
                for p in self.properties
            ],
        }


def _canonical(value: Any) -> Any:
    """A value with its lists' order, its maps' null entries and its numbers' types set
    aside: a security group list in another order, or ``1`` and ``1.0``, are the same
    live state."""
    if isinstance(value, Mapping):
        # A key the stack holds as null is one the template left out: absent alike.
        return {str(key): _canonical(item) for key, item in value.items() if item is not None}
    if isinstance(value, (list, tuple)):
        return sorted(
            (_canonical(item) for item in value),
            key=lambda item: json.dumps(item, sort_keys=True, default=str),
        )
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def same_value(expected: Any, actual: Any) -> bool:
    return _canonical(expected) == _canonical(actual)


def compared_properties(
    schema: Mapping[str, Any], stored: Mapping[str, Any], given: set[str] | None
) -> set[str]:
    """The properties a detection compares: those the stack holds a value of that the
    template set (``given``; None: unknown, all of them) or whose default is a scalar
    (``admin_state_up: true`` holds whether written or not). An empty text default is
    "not set" (a port's ``device_id``: the server it is given to sets it), not a value."""
    names = set()
    for name, value in stored.items():
        if value is None:
            continue
        default = getattr(schema.get(name), "default", None)
        scalar = isinstance(default, (bool, int, float)) or (isinstance(default, str) and default != "")
        if given is None or name in given or scalar:
            names.add(name)
    return names


def differences(
    stored: Mapping[str, Any], live: Mapping[str, Any], compared: set[str]
) -> list[PropertyDrift]:
    return [
        PropertyDrift(name, stored[name], live[name])
        for name in sorted(compared & set(live))
        if not same_value(stored[name], live[name])
    ]


def _given_names(record: ResourceRecord) -> set[str] | None:
    definition = record.definition
    if not isinstance(definition, Mapping):
        return None
    given = definition.get("properties")
    return set(given) if isinstance(given, Mapping) else set()


class _Detection:
    def __init__(self, engine: Any, store: Store):
        self.engine = engine
        self.store = store
        self.results: list[ResourceDrift] = []
        self.records: list[ResourceRecord] = []  # the record of each result, in order
        # the records of the resources owning each result's stack, outermost first
        self.owners: list[tuple[ResourceRecord, ...]] = []

    def stack(self, stack: StackRecord, prefix: str = "", owners: tuple[ResourceRecord, ...] = ()) -> None:
        runtime: StackRuntime = self.engine.load_runtime(stack)
        hidden = runtime.hidden_values()
        for record in sorted(runtime.current.values(), key=lambda r: r.name):
            if record.action == "DELETE" and record.status == "COMPLETE":
                continue
            path = prefix + record.name
            child = self._child_stack(runtime, record)
            if child is not None:
                self.stack(child, path + "/", (*owners, record))
                continue
            result = self.resource(runtime, record, path)
            result.reason = hidden.text(result.reason)
            for drift in result.properties:
                drift.expected, drift.actual = (
                    hidden.data(drift.expected),
                    hidden.data(drift.actual),
                )
            self.results.append(result)
            self.records.append(record)
            self.owners.append(owners)
            if result.status != DriftStatus.IN_SYNC:
                self.store.events.add_event(
                    resource_event(record, record.action, record.status, _event_reason(result))
                )

    def _child_stack(self, runtime: StackRuntime, record: ResourceRecord) -> StackRecord | None:
        try:
            nested = issubclass(runtime.plugin_class(record.type, record.name), StackResource)
        except Exception:  # noqa: BLE001 - a type no longer registered: reported by resource()
            return None
        if not nested or record.physical_resource_id is None:
            return None
        child = self.store.get_stack(record.physical_resource_id)
        return child if child is not None and child.deleted_at is None else None

    def resource(self, runtime: StackRuntime, record: ResourceRecord, path: str) -> ResourceDrift:
        result = ResourceDrift(
            path,
            record.name,
            record.type,
            record.physical_resource_id,
            record.stack_id,
            DriftStatus.NOT_CHECKED,
        )
        if record.physical_resource_id is None:
            result.reason = (
                f"never created ({record.state})"
                if record.action in ("INIT", "CREATE")
                else f"no physical resource ({record.state})"
            )
            return result
        try:
            plugin_class = runtime.plugin_class(record.type, record.name)
        except Exception as error:  # noqa: BLE001 - the type's plugin is gone
            result.reason = f"type {record.type} is not available: {error}"
            return result
        if issubclass(plugin_class, StackResource):
            result.status, result.reason = DriftStatus.DELETED, "its nested stack is gone"
            return result
        if not plugin_class.reads_live_state():
            result.reason = f"{record.type} has no live object to read"
            return result
        stored = dict(record.properties or {})
        try:
            definition = ResourceDefinition(
                name=record.name, resource_type=record.type, properties_data=stored
            )
            instance = runtime.instance(record, definition, fresh=True)
            live, seen = _live_state(instance, stored)
        except EntityNotFound:
            result.status, result.reason = DriftStatus.DELETED, "the live object is gone"
            return result
        except Exception as error:  # noqa: BLE001 - any plugin failure is reported, not raised
            result.reason = f"reading the live object failed: {type(error).__name__}: {error}"
            return result
        finally:
            runtime.instances.pop(record.id, None)
        if not live and seen:
            # It is there, and none of what it shows can differ from the stack without a
            # replacement (a key pair, a security group rule): as the stack holds it.
            result.status, result.reason = DriftStatus.IN_SYNC, "it exists; it has no property that changes in place"
            return result
        if not live:
            result.reason = f"{record.type} has no live object to read"
            return result
        result.properties = differences(
            stored,
            live,
            compared_properties(plugin_class.properties_schema, stored, _given_names(record)),
        )
        result.live = {drift.name: live[drift.name] for drift in result.properties}
        result.status = DriftStatus.MODIFIED if result.properties else DriftStatus.IN_SYNC
        return result


def _live_state(instance: Resource, stored: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
    """The live values of a resource's properties, and whether its object was read (a
    type that overrides ``get_live_state`` tells only the values)."""
    if type(instance).get_live_state is not Resource.get_live_state:
        return instance.get_live_state(stored), False
    data = instance.get_live_resource_data()
    if data is None:
        return {}, False
    return instance.parse_live_resource_data(stored, data), True


def _event_reason(result: ResourceDrift) -> str:
    text = f"Drift {result.status}"
    if result.properties:
        text += ": " + "; ".join(
            f"{p.name} expected {json.dumps(p.expected, default=str)}, actual {json.dumps(p.actual, default=str)}"
            for p in result.properties
        )
    elif result.reason:
        text += f": {result.reason}"
    return text


def summary_of(results: list[ResourceDrift]) -> dict[str, Any]:
    counts = Counter(str(result.status) for result in results)
    drifted = counts[DriftStatus.MODIFIED] + counts[DriftStatus.DELETED]
    return {
        "stack_status": "DRIFTED" if drifted else "IN_SYNC",
        "resources": len(results),
        **{str(status).lower(): counts[status] for status in DriftStatus},
    }


def detect(engine: Any, store: Store, stack: StackRecord) -> DriftRecord:
    """Detect the drift of ``stack`` and its nested stacks now; record its events and keep
    it as the stack's last detection. Blocks on the services (run it off any loop)."""
    return _detected(_Detection(engine, store), store, stack)


# The reason a resource whose object is gone is marked CHECK_FAILED with.
GONE = "the live object is gone (drift)"


def examine(engine: Any, store: Store, stack: StackRecord) -> tuple[DriftRecord, list[tuple[ResourceDrift, ResourceRecord]]]:
    """Detect drift (recorded as ``detect`` records it): the detection and each result
    with the record it was made from, as stored."""
    record, detection = _examined(engine, store, stack)
    return record, list(zip(detection.results, detection.records, strict=True))


def _examined(engine: Any, store: Store, stack: StackRecord) -> tuple[DriftRecord, _Detection]:
    detection = _Detection(engine, store)
    return _detected(detection, store, stack), detection


def as_found_record(result: ResourceDrift, resource: ResourceRecord) -> ResourceRecord | None:
    """``resource`` as its detection found it: a MODIFIED one holding its live values
    of the changed properties, a DELETED one marked CHECK_FAILED; None when it did not
    drift (or was not checked)."""
    if result.status == DriftStatus.MODIFIED:
        return replace(resource, properties={**(resource.properties or {}), **result.live})
    if result.status == DriftStatus.DELETED:
        return replace(resource, action="CHECK", status="FAILED", status_reason=GONE)
    return None


def _passing_on(owner: ResourceRecord) -> ResourceRecord:
    """A nested stack's owner that passes the next update on to its stack (whose
    resources now hold what was found): without the digest of what it last gave it
    (``StackResource.DIGEST_KEY``), the update cannot skip it."""
    data = {key: value for key, value in (owner.data or {}).items() if key != StackResource.DIGEST_KEY}
    return replace(owner, data=data)


def _changes(detection: _Detection) -> Iterator[tuple[ResourceRecord, ResourceRecord, ResourceDrift | None]]:
    """(stored, as found, its result) of each record a detection changes: the drifted
    resources, then the owners of their stacks (result None), each once."""
    owners: dict[int, ResourceRecord] = {}
    for result, resource, chain in zip(detection.results, detection.records, detection.owners, strict=True):
        as_it_is = as_found_record(result, resource)
        if as_it_is is None:
            continue
        yield resource, as_it_is, result
        owners.update((owner.id, owner) for owner in chain if owner.id is not None)
    for owner in owners.values():
        if StackResource.DIGEST_KEY in (owner.data or {}):
            yield owner, _passing_on(owner), None


def found(engine: Any, store: Store, stack: StackRecord) -> dict[int, ResourceRecord]:
    """Detect drift and give, by record id, each record as found (``as_found_record``;
    the owners of their nested stacks passing the update on). Nothing but the
    detection is written: a converging update's plan decides on these (``as_found``),
    which the update itself has stored first (``absorb``)."""
    _, detection = _examined(engine, store, stack)
    return {stored.id: as_it_is for stored, as_it_is, _ in _changes(detection) if stored.id is not None}


def as_found(runtime: StackRuntime, changed: Mapping[int, ResourceRecord]) -> None:
    """Make ``runtime`` (just loaded, not acting) hold the records ``found`` gave for
    its resources in place of the stored ones."""
    if not changed:
        return
    runtime.records = [
        changed.get(record.id, record) if record.id is not None else record
        for record in runtime.records
    ]
    runtime.current = {record.name: record for record in runtime.records if record.current}


def absorb(engine: Any, store: Store, stack: StackRecord, refresh: bool = False) -> tuple[DriftRecord, list[tuple[ResourceDrift, ResourceRecord]]]:
    """Detect drift, then store each resource as found (``as_found_record``), so that
    an update with the stack's own template changes back what drifted (Heat's
    ``converge``): a MODIFIED resource holds its live values of the changed properties
    (the update's diff is then template against reality), a DELETED one is marked
    CHECK_FAILED (the update replaces it), and the owners of their nested stacks pass
    the next update on. Each change of a resource is an event of its own. ``refresh``:
    the same as an end in itself (``stack update --refresh-only``: the stack takes
    reality as its own, the cloud is not changed), with an event of the stack saying
    what was taken. Gives what ``examine`` gives."""
    record, detection = _examined(engine, store, stack)
    word = "refreshed" if refresh else "converging"
    taken = gone = 0
    for resource, as_it_is, result in _changes(detection):
        if result is None:
            store.update_resource(resource, data=as_it_is.data)
        elif as_it_is.action == "CHECK":
            gone += 1
            event = resource_event(resource, "CHECK", "FAILED", f"Drift {word}: {GONE}")
            store.update_resource(
                resource, event=event, action="CHECK", status="FAILED", status_reason=GONE
            )
        else:
            taken += 1
            reason = f"Drift {word}: {', '.join(sorted(result.live))} as found in the live object"
            store.update_resource(
                resource,
                event=resource_event(resource, resource.action, resource.status, reason),
                properties=as_it_is.properties,
            )
    if refresh:
        reason = (
            f"Drift refreshed: {taken} resource(s) took their live values, {gone} marked "
            "CHECK_FAILED (their objects are gone); the cloud was not changed"
        )
        store.events.add_event(stack_event(stack, stack.action, stack.status, reason))
    return record, list(zip(detection.results, detection.records, strict=True))


def _detected(detection: _Detection, store: Store, stack: StackRecord) -> DriftRecord:
    """Detection takes no lock (it reads, for as long as the services take): an action
    that began or ended meanwhile makes the result a mix of before and after, so it is
    not kept (``StackChangedError``)."""
    detection.stack(stack)
    now = store.get_stack(stack.id)
    if now is None or (now.action, now.status, now.updated_at) != (stack.action, stack.status, stack.updated_at):
        raise StackChangedError(stack.name, now.state if now is not None else "DELETE_COMPLETE")
    summary = summary_of(detection.results)
    record = DriftRecord(
        stack.id, utcnow(), summary, [result.body() for result in detection.results]
    )
    counts = ", ".join(f"{summary[str(status).lower()]} {status}" for status in DriftStatus)
    reason = f"Drift detection: {summary['stack_status']} ({counts})"
    store.events.add_event(stack_event(stack, stack.action, stack.status, reason))
    store.drift.save_drift(record)
    return record
