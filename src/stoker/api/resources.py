"""Resource and event routes of the Orchestration API v1: list (with ``nested_depth``
and Heat's filters), show (with attributes), metadata, signal and mark unhealthy;
events of a stack or of one resource (``limit``, ``marker``, ``sort_dir``,
``nested_depth``, Heat's filters) and one event. Bodies follow
``heat/api/openstack/v1/resources.py`` and ``events.py``.
"""

from __future__ import annotations

from typing import Any

from stoker.api import event_stream, projects, views
from stoker.api.call import Call, parse_bool
from stoker.api.errors import BadRequestError, NotFoundError
from stoker.api.openapi_components import (
    ANY,
    BOOLEAN,
    COUNT,
    EVENT_LIST_QUERY,
    NULL,
    OBJECT,
    RESOURCE_LIST_QUERY,
    SECRET,
    STRING,
    array,
    obj,
    ok,
    operation,
    query,
    ref,
)
from stoker.api.operations import PUBLIC, Operation
from stoker.api.policy import SIGNAL_RULE
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


RESOURCE = STACK + "/resources/{resource_name}"
_EVENTS = ok(obj({"events": array(ref("Event"))}))
_EVENT = ok(obj({"event": ref("EventDetail")}))
_STREAM = {"200": {"description": (
    "Server-sent events: `event: event` messages (an item of the event list plus stack_path, the message id a cursor), "
    "and a last `event: stack` message ({\"stack\": the stack as listed}) when the stream ends: when the stack is deleted, "
    "or with until=terminal once it is no longer IN_PROGRESS. `: ping` comments keep an idle stream open."
), "content": {"text/event-stream": {"schema": ref("StreamMessage")}}}}
_SIGNALLED = ok(obj({"resource": STRING, "metadata": OBJECT}), "The resource's name and its signals by id (Heat's CFN answer)")

OPERATIONS = [
    Operation("GET", STACK + "/resources", resource_list, "resource:index", operation("List the resources", ok(obj({"resources": array(ref("Resource"))})), tag="resources", parameters=RESOURCE_LIST_QUERY)),
    Operation("GET", RESOURCE, resource_show, "resource:show", operation("Show a resource, with its attributes", ok(obj({"resource": ref("ResourceDetail")})), tag="resources")),
    Operation("PATCH", RESOURCE, mark_unhealthy, "resource:mark_unhealthy", operation(
        "Mark a resource unhealthy (or healthy again)", ok(NULL, "Marked (a JSON null body)"), tag="resources",
        body=obj({"mark_unhealthy": BOOLEAN}, {"resource_status_reason": STRING}, extra=False), faults=(409,),
    )),
    Operation("GET", RESOURCE + "/metadata", resource_metadata, "resource:metadata", operation("A resource's metadata", ok(obj({"metadata": ANY})), tag="resources")),
    # With a token of the project, as Heat's resource:signal; or with a wait condition
    # handle's own token (its curl_cli), which the service checks (api.call).
    Operation("POST", RESOURCE + "/signal", resource_signal, SIGNAL_RULE, operation(
        "Signal a resource", ok(NULL, "Delivered (a JSON null body)"), tag="resources",
        body=OBJECT, body_required=False, faults=(409,), security=[{"token": []}, {}],
        description="Takes an API token, or in place of one a wait condition handle's own token (its curl_cli sends it).",
    )),
    Operation("GET", STACK + "/events", event_list, "events:index", operation("List the stack's events", _EVENTS, tag="events", parameters=EVENT_LIST_QUERY)),
    # stoker's own (docs/api.md), the events as they are recorded (server-sent events),
    # a list's rule: before /events/{event_id}, which would take "stream".
    Operation("GET", STACK + "/events/stream", event_stream.event_stream, "events:index", operation(
        "Stream the stack's events as they are recorded (stoker's)", _STREAM, tag="events", faults=(429,),
        description="429 when the project already has as many streams open as the server allows (STOKER_MAX_EVENT_STREAMS_PER_PROJECT): "
        "close streams no longer read, or poll the event list instead.",
        parameters=[
            query("nested_depth", COUNT, "follow nested stacks this many levels down (default: all)"),
            query("until", {"enum": ["terminal", "next_action"]}, "end the stream once the stack is no longer IN_PROGRESS (terminal), or once an action of the stack begun on this stream has ended (next_action: open with from=now, then start the action); default: when the client goes"),
            query("from", {"enum": ["start", "now"]}, "the stack's recorded events first (start, the default), or only those from now on"),
            query("last_event_id", STRING, "resume after this message's id (as the Last-Event-ID header, which wins)"),
            {"name": "Last-Event-ID", "in": "header", "required": False, "description": "resume after this message's id (an EventSource sends it)", "schema": STRING},
        ],
    )),
    # Not in Heat's API (whose event show names the resource), but handy: an event by id.
    Operation("GET", STACK + "/events/{event_id}", event_show, "events:show", operation("Show an event by its id (stoker's)", _EVENT, tag="events")),
    Operation("GET", RESOURCE + "/events", event_list, "events:index", operation("List a resource's events", _EVENTS, tag="events", parameters=EVENT_LIST_QUERY)),
    Operation("GET", RESOURCE + "/events/{event_id}", event_show, "events:show", operation("Show a resource's event", _EVENT, tag="events")),
    # stoker's capability URLs for signals (Heat's CFN API has /waitcondition/{arn}):
    # the secret is the credential, no token needed.
    *(
        Operation(method, "/v1/waitcondition/{credential_id}", waitcondition_signal, PUBLIC, operation(
            "Signal the resource whose capability URL this is (cfn-signal)", _SIGNALLED, tag="signals",
            parameters=[SECRET], body=OBJECT, body_required=False, faults=(403,),
        ))
        for method in ("PUT", "POST")
    ),
    Operation("GET", "/v1/server_metadata/{credential_id}", server_metadata, PUBLIC, operation(
        "A server's metadata, for its agent (os-collect-config)", ok(OBJECT, "The metadata itself"), tag="signals", parameters=[SECRET], faults=(403,),
    )),
]
