"""Resource and event routes of the Orchestration API v1: list (with ``nested_depth``
and Heat's filters), show (with attributes), metadata, signal and mark unhealthy;
events of a stack or of one resource (``limit``, ``marker``, ``sort_dir``,
``nested_depth``, Heat's filters) and one event. Bodies follow
``heat/api/openstack/v1/resources.py`` and ``events.py``.
"""

from __future__ import annotations

from typing import Any

from starlette.routing import Route

from stoker.api import event_stream, projects, views
from stoker.api.call import Call, endpoint, parse_bool
from stoker.api.errors import BadRequestError, NotFoundError
from stoker.api.views import _RESOURCE_FILTERS, RESOURCE_FILTER_KEYS, resource_matches  # noqa: F401 - the API's names for them
from stoker.store import StackRecord

STACK = "/v1/{tenant_id}/stacks/{stack_name}/{stack_id}"


def _nested_children(call: Call, stack: StackRecord) -> dict[str, StackRecord]:
    """A stack's live nested stacks by their parent resource's name."""
    return {child.owner_resource or "": child for child in call.service.store.child_stacks(stack.id)}


def resource_list(call: Call) -> dict[str, Any]:
    invalid = set(call.params.keys()) - set(_RESOURCE_FILTERS) - {"nested_depth", "with_detail"}
    if invalid:
        raise BadRequestError(f"Invalid filter parameters {sorted(invalid)}")
    filters = {key: call.params.getlist(key) for key in _RESOURCE_FILTERS}
    stack = projects.stack(call)
    depth = call.depth_param()
    detail = call.bool_param("with_detail")
    service = call.service
    listed = service.list_resources_nested(stack.id, depth) if depth else [(stack, r) for r in service.list_resources(stack.id, sealed=detail)]
    required: dict[str, dict[str, list[str]]] = {}
    children: dict[str, dict[str, StackRecord]] = {}
    body = []
    for owner, record in listed:
        if not resource_matches(record, filters):
            continue
        if owner.id not in required:
            required[owner.id] = _required_by(call, owner)
            children[owner.id] = _nested_children(call, owner)
        nested = children[owner.id].get(record.name)
        nested = nested if nested is not None and nested.id == record.physical_resource_id else None
        body.append(views.resource_body(call, owner, record, required[owner.id].get(record.name, []), nested, detail))
    return {"resources": body}


def _required_by(call: Call, stack: StackRecord) -> dict[str, list[str]]:
    try:
        return call.service.required_by(stack)
    except Exception:  # noqa: BLE001 - a stack whose template no longer loads still lists its resources
        return {}


def _resource(call: Call) -> tuple[StackRecord, Any]:
    stack = projects.stack(call)
    name = call.path("resource_name")
    for record in call.service.list_resources(stack.id):
        if record.name == name:
            return stack, record
    raise NotFoundError(f"The Resource ({name}) could not be found in Stack {stack.name}.")


def _resource_by_name_or_physical_id(call: Call) -> tuple[StackRecord, Any]:
    """Heat's ``_find_resource_in_stack``: mark unhealthy takes a resource's name or its
    physical id, as an alarm knows only the server it watched (heat-templates'
    autohealing workflow names the instance id from the alarm's event)."""
    stack = projects.stack(call)
    name = call.path("resource_name")
    records = call.service.list_resources(stack.id)
    for record in records:
        if record.name == name:
            return stack, record
    matches = [record for record in records if record.physical_resource_id == name]
    if len(matches) > 1:
        raise BadRequestError(f"Multiple resources were found with the physical ID ({name}).")
    if matches:
        return stack, matches[0]
    raise NotFoundError(f"The Resource ({name}) could not be found in Stack {stack.name}.")


def resource_show(call: Call) -> dict[str, Any]:
    stack, record = _resource(call)
    nested = _nested_children(call, stack).get(record.name)
    nested = nested if nested is not None and nested.id == record.physical_resource_id else None
    body = views.resource_body(call, stack, record, _required_by(call, stack).get(record.name, []), nested, detail=True)
    body["attributes"] = call.service.resource_attributes(stack, record.name)
    return {"resource": body}


def resource_metadata(call: Call) -> dict[str, Any]:
    stack, record = _resource(call)
    return {"metadata": call.service.resource_metadata(stack, record.name)}


def server_metadata(call: Call) -> dict[str, Any]:
    """``GET /v1/server_metadata/{credential_id}?secret=...``: a server's metadata for
    its agent (os-collect-config's request collector), the body being the metadata
    itself as a Swift temp URL serves it. HEAD answers too (the collector asks it
    first). No Last-Modified is sent, on purpose: HTTP dates count whole seconds, and the
    collector skips the fetch when the date equals the last one it saw, so a deployment
    made in the same second as a poll would never reach the server. Without the header
    the collector fetches at every poll, which is always right."""
    return call.service.metadata_by_capability(call.path("credential_id"), call.params.get("secret", ""))


def resource_signal(call: Call) -> None:
    """``POST .../signal``: the body is the signal's details (``{"unset_hook": ...}``
    clears a hook). A resource with signal credentials of its own (a wait condition
    handle's ``token``) refuses a request whose X-Auth-Token is not one of them; one
    of them reaches its resource whatever project the path names (see
    ``Service.signalled_resource``)."""
    stack, record = call.service.signalled_resource(
        call.path("stack_name"), call.path("stack_id"), call.path("resource_name"), projects.project(call), call.context.token
    )
    details = call.body if call.body is not None else {}
    if not isinstance(details, dict):
        raise BadRequestError("The signal's details must be a JSON object")
    call.service.signal_resource(stack.id, record.name, details, credential=call.context.token)
    return None


def waitcondition_signal(call: Call) -> dict[str, Any]:
    """``PUT`` or ``POST /v1/waitcondition/{credential_id}?secret=...``: a signal to the
    resource whose capability URL this is (a CFN or temp-URL wait condition handle's;
    ``cfn-signal`` PUTs its JSON here). Answers as Heat's CFN API: the resource's name
    and its signals."""
    details = call.body
    if details is not None and not isinstance(details, dict):
        raise BadRequestError("The signal's details must be a JSON object")
    return call.service.signal_by_capability(call.path("credential_id"), call.params.get("secret", ""), details)


def mark_unhealthy(call: Call) -> None:
    """``PATCH .../resources/{name}`` with {"mark_unhealthy": bool, "resource_status_reason": text}."""
    body = call.body or {}
    if not isinstance(body, dict):
        raise BadRequestError("The request body must be a JSON object")
    invalid = set(body) - {"mark_unhealthy", "resource_status_reason"}
    if invalid:
        raise BadRequestError(f"Invalid keys in resource mark unhealthy {sorted(invalid)}")
    if "mark_unhealthy" not in body:
        raise BadRequestError("Missing mandatory (mark_unhealthy) key from mark unhealthy request")
    unhealthy = parse_bool("mark_unhealthy", body["mark_unhealthy"])
    stack, record = _resource_by_name_or_physical_id(call)
    call.service.mark_unhealthy(stack.id, record.name, unhealthy=unhealthy, reason=str(body.get("resource_status_reason") or ""))
    return None


# -- events ------------------------------------------------------------------------------

_EVENT_FILTERS = {
    "resource_status": lambda e: [e.resource_status, f"{e.resource_action}_{e.resource_status}"],
    "resource_action": lambda e: [e.resource_action],
    "resource_name": lambda e: [e.resource_name],
    "resource_type": lambda e: [e.resource_type],
}


def _events(call: Call, resource_name: str | None) -> tuple[StackRecord, list[tuple[StackRecord, Any]]]:
    stack = projects.stack(call)
    depth = call.depth_param()
    service = call.service
    events = service.list_events(stack.id, resource_name, depth)
    stacks = {stack.id: stack}
    found = []
    for event in events:
        owner = stacks.get(event.stack_id)
        if owner is None:
            owner = stacks[event.stack_id] = service.store.get_stack(event.stack_id) or stack
        found.append((owner, event))
    return stack, found


def event_list(call: Call) -> dict[str, Any]:
    """Oldest first (``sort_dir=desc``: newest first); ``marker`` is an event id: the
    events after it in that order; then ``limit``."""
    resource_name = call.request.path_params.get("resource_name")
    stack, events = _events(call, resource_name)
    events = [
        (owner, event)
        for owner, event in events
        if not any(call.params.getlist(key) and not set(call.params.getlist(key)) & set(have(event)) for key, have in _EVENT_FILTERS.items())
    ]
    direction = call.params.get("sort_dir", "asc")
    if direction not in ("asc", "desc"):
        raise BadRequestError(f"Unknown sort direction {direction}, must be 'desc' or 'asc'")
    if direction == "desc":
        events.reverse()
    marker = call.params.get("marker")
    if marker:
        ids = [event.uuid for _, event in events]
        if marker in ids:
            events = events[ids.index(marker) + 1:]
    limit = call.int_param("limit")
    if limit is not None:
        events = events[:limit]
    if resource_name is not None and not events and not marker:
        raise NotFoundError(f"No events found for resource {resource_name}")
    root = stack if call.depth_param() else None
    return {"events": [views.event_body(call, owner, event, root=root) for owner, event in events]}


def event_show(call: Call) -> dict[str, Any]:
    resource_name = call.request.path_params.get("resource_name")
    event_id = call.path("event_id")
    _, events = _events(call, resource_name)
    for owner, event in events:
        if event.uuid == event_id:
            return {"event": views.event_body(call, owner, event, detail=True)}
    raise NotFoundError(f"No event {event_id} found")


routes = [
    Route(STACK + "/resources", endpoint(resource_list), methods=["GET"]),
    Route(STACK + "/resources/{resource_name}", endpoint(resource_show), methods=["GET"]),
    Route(STACK + "/resources/{resource_name}", endpoint(mark_unhealthy), methods=["PATCH"]),
    Route(STACK + "/resources/{resource_name}/metadata", endpoint(resource_metadata), methods=["GET"]),
    Route(STACK + "/resources/{resource_name}/signal", endpoint(resource_signal), methods=["POST"]),
    # stoker's capability URLs for signals (Heat's CFN API has /waitcondition/{arn}).
    Route("/v1/waitcondition/{credential_id}", endpoint(waitcondition_signal), methods=["PUT", "POST"]),
    Route("/v1/server_metadata/{credential_id}", endpoint(server_metadata), methods=["GET"]),
    Route(STACK + "/events", endpoint(event_list), methods=["GET"]),
    # stoker's own (docs/api.md): before /events/{event_id}, which would take "stream".
    Route(STACK + "/events/stream", endpoint(event_stream.event_stream), methods=["GET"]),
    # Not in Heat's API (whose event show names the resource), but handy: an event by id.
    Route(STACK + "/events/{event_id}", endpoint(event_show), methods=["GET"]),
    Route(STACK + "/resources/{resource_name}/events", endpoint(event_list), methods=["GET"]),
    Route(STACK + "/resources/{resource_name}/events/{event_id}", endpoint(event_show), methods=["GET"]),
]
