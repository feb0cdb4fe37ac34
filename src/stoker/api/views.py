"""Response bodies: stacks, resources, events, outputs and snapshots in Heat's v1 shapes.

The keys are Heat's (``heat/engine/api.py`` format_* and the API's transforms in
``heat/api/openstack/v1/{views/stacks_view,resources,events}.py``): ``stack_status`` is
``<ACTION>_<STATUS>``, ids come with ``links`` (absolute URLs), times are ISO 8601 UTC
with a ``Z``, stack parameters are strings.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from stoker.masking import HiddenValues
from stoker.store import EventRecord, ResourceRecord, SnapshotRecord, StackRecord
from stoker.store.drift import DriftRecord

if TYPE_CHECKING:
    from stoker.service import Service


class Links(Protocol):
    """What the views take of a call: the API's ``Call``, the embedded CLI's links too."""

    service: Service

    def url(self, *parts: str) -> str: ...

    def stack_url(self, stack: StackRecord, *parts: str) -> str: ...

    def link(self, href: str, rel: str = "self") -> dict[str, str]: ...


def isotime(value: datetime | None) -> str | None:
    return value.strftime("%Y-%m-%dT%H:%M:%SZ") if value else None


def parameter_text(value: Any) -> str:
    """A parameter value as Heat shows it (``stack.parameters.map(str)``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return ",".join(parameter_text(item) for item in value)
    if isinstance(value, Mapping):
        return json.dumps(value)
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


# The keys of a stack in a list (Heat's stacks_view.basic_keys); ``with_project``: its
# project too (Heat's include_project, in an admin's list of every project's stacks).
def stack_summary(call: Links, stack: StackRecord, with_project: bool = False) -> dict[str, Any]:
    summary = {
        "id": stack.id,
        "links": [call.link(call.stack_url(stack))],
        "stack_name": stack.name,
        "description": "",
        "stack_status": stack.state,
        "stack_status_reason": stack.status_reason,
        "creation_time": isotime(stack.created_at),
        "updated_time": isotime(stack.updated_at),
        "deletion_time": isotime(stack.deleted_at),
        "stack_owner": None,
        "parent": stack.owner_id,
        "stack_user_project_id": stack.stack_user_project_id,
        "tags": stack.tags or None,
    }
    if with_project:
        summary["project"] = stack.project_id
    return summary


def stack_detail(call: Links, stack: StackRecord, resolve_outputs: bool = True) -> dict[str, Any]:
    """``GET /stacks/{name}/{id}``: the summary plus parameters, outputs and settings."""
    service = call.service
    body = stack_summary(call, stack)
    # DELETE_COMPLETE is recorded a moment before deleted_at: deleted either way (a
    # lookup by id in between would no longer find it).
    deleted = stack.deleted_at is not None or stack.state == "DELETE_COMPLETE"
    description = "" if deleted else service.description_of(stack.id)
    parameters = {} if deleted else service.stack_parameters(stack)
    body.update(
        {
            "description": description,
            "template_description": description,
            "parameters": {name: parameter_text(value) for name, value in parameters.items()},
            "notification_topics": [],
            "capabilities": [],
            "disable_rollback": stack.disable_rollback,
            "timeout_mins": stack.timeout_mins,
            "tags": stack.tags or None,
        }
    )
    # the candidate templates chosen (template capabilities); imported here, as a list
    # does not need it
    from stoker.engine import implementations

    body.update(implementations.shown(service.store, stack))
    # stoker's own key (docs/drift.md): the last drift detection's counts, or None.
    body["stoker_drift"] = drift_summary(service.store.drift.last_drift(stack.id))
    # Heat: outputs unless the stack is DELETE_COMPLETE (or not asked for).
    if resolve_outputs and not deleted:
        body["outputs"] = service.outputs(stack.id)
    return body


def drift_summary(record: DriftRecord | None) -> dict[str, Any] | None:
    """A drift detection's counts by status and when it ran (``stack show``)."""
    if record is None:
        return None
    return {"detected_at": isotime(record.detected_at), **record.summary}


def drift_body(stack: StackRecord, record: DriftRecord) -> dict[str, Any]:
    """``POST`` or ``GET .../drift`` (stoker's own, docs/drift.md): the detection with
    each resource's result; hidden values were masked when it was made."""
    return {
        "drift": {
            "stack_id": stack.id,
            "stack_name": stack.name,
            "detected_at": isotime(record.detected_at),
            "summary": record.summary,
            "resources": record.resources,
        }
    }


def stack_preview(call: Links, stack: dict[str, Any]) -> dict[str, Any]:
    """A previewed stack (service.preview_stack) through Heat's stacks view: its
    ``stack_identity`` becomes ``id`` (``"None"``) and a self link; parameters are
    strings; resources are as the engine formats them."""
    body = dict(stack)
    identity = body.pop("stack_identity")
    body = {
        "id": identity["stack_id"],
        "links": [call.link(call.url("stacks", identity["stack_name"], identity["stack_id"]))],
        **body,
        "creation_time": isotime(body["creation_time"]),
        "parameters": {name: parameter_text(value) for name, value in body["parameters"].items()},
    }
    return body


def resource_body(
    call: Links,
    stack: StackRecord,
    record: ResourceRecord,
    required_by: list[str],
    nested: StackRecord | None = None,
    detail: bool = False,
) -> dict[str, Any]:
    """One resource (Heat's format_stack_resource through the API's format_resource)."""
    url = call.stack_url(stack, "resources", record.name)
    links = [call.link(url), call.link(call.stack_url(stack), "stack")]
    if nested is not None:
        links.append(call.link(call.stack_url(nested), "nested"))
    body: dict[str, Any] = {
        "links": links,
        "logical_resource_id": record.name,
        "resource_name": record.name,
        "physical_resource_id": record.physical_resource_id or "",
        "resource_type": record.type,
        "resource_status": record.state,
        "resource_status_reason": record.status_reason,
        "creation_time": isotime(record.created_at),
        "updated_time": isotime(record.updated_at or record.created_at),
        "required_by": required_by,
    }
    if stack.owner_resource:
        body["parent_resource"] = stack.owner_resource
    if detail:
        definition = record.definition or {}
        body["description"] = definition.get("description", "")
    return body


def event_body(call: Links, stack: StackRecord, event: EventRecord, detail: bool = False, root: StackRecord | None = None) -> dict[str, Any]:
    """One event; the summary keys of a list unless ``detail`` (Heat's events.summary_keys)."""
    resource_url = call.stack_url(stack, "resources", event.resource_name)
    links = [
        call.link(call.stack_url(stack, "resources", event.resource_name, "events", event.uuid)),
        call.link(resource_url, "resource"),
        call.link(call.stack_url(stack), "stack"),
    ]
    if root is not None and root.id != stack.id:
        links.append(call.link(call.stack_url(root), "root_stack"))
    body: dict[str, Any] = {
        "id": event.uuid,
        "links": links,
        "event_time": isotime(event.created_at),
        "logical_resource_id": event.resource_name,
        "resource_name": event.resource_name,
        "resource_status": f"{event.resource_action}_{event.resource_status}",
        "resource_status_reason": event.resource_status_reason,
        "physical_resource_id": event.physical_resource_id or "",
    }
    if detail:
        body["resource_type"] = event.resource_type
        body["resource_properties"] = {}
    return body


def snapshot_body(record: SnapshotRecord, hidden: HiddenValues) -> dict[str, Any]:
    """Heat's format_snapshot; the stack's hidden parameters masked in its data."""
    return {
        "id": record.id,
        "name": record.name,
        "status": record.status,
        "status_reason": record.status_reason,
        "data": hidden.stack_data(record.data) if record.data is not None else None,
        "creation_time": isotime(record.created_at),
    }


# Heat's resource list filters (query key -> what of a resource it compares).
_RESOURCE_FILTERS = {
    "type": lambda r: [r.type],
    "status": lambda r: [r.status, r.state],
    "name": lambda r: [r.name],
    "action": lambda r: [r.action],
    "id": lambda r: [r.uuid],
    "physical_resource_id": lambda r: [r.physical_resource_id or ""],
}

RESOURCE_FILTER_KEYS = tuple(_RESOURCE_FILTERS)


def resource_matches(record: Any, filters: Mapping[str, Sequence[str]]) -> bool:
    """Whether a resource passes Heat's resource list filters (the values of one key
    any of, the keys all of; ``status`` is ``FAILED`` or ``CREATE_FAILED``)."""
    return not any(values and not set(values) & set(_RESOURCE_FILTERS[key](record)) for key, values in filters.items())
