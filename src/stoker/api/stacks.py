"""Stack routes of the Orchestration API v1: the collection, lookup (302 to the
canonical ``/stacks/{name}/{id}``), show, update (PUT; PATCH keeps what is not given),
delete, previews, the stored template/environment/files, abandon and export, outputs,
snapshots and actions. Paths, status codes and bodies follow
``heat/api/openstack/v1/stacks.py`` and ``actions.py``.

Actions answer as soon as the service has checked and stored the request and the job
has recorded the stack IN_PROGRESS; the job goes on on the server's loop.

Every route finds its stack in the caller's project (``api.projects``): another
project's stack is 404, as a missing one; the list holds the caller's project's only.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from stoker.api import projects, schemas, views
from stoker.api.call import Call, Reply
from stoker.api.errors import BadRequestError, NotFoundError
from stoker.api.openapi_components import (
    ANY,
    BOOLEAN,
    IMPLEMENTATIONS,
    LOCATION,
    NULL,
    OBJECT,
    REDIRECT,
    RESOURCE_CHANGES,
    STACK_LIST_QUERY,
    STRING,
    array,
    empty,
    flag,
    nullable,
    obj,
    ok,
    operation,
    query,
    ref,
)
from stoker.api.operations import Operation
from stoker.api.policy import ACTIONS
from stoker.engine.errors import StackNotFoundError
from stoker.engine.states import Action

# Heat's stack list sort keys (API name -> record attribute).
_SORT_KEYS = {"stack_name": "name", "name": "name", "stack_status": "status", "status": "status",
              "creation_time": "created_at", "created_at": "created_at", "updated_time": "updated_at", "updated_at": "updated_at"}


def _matches(stack: Any, call: Call) -> bool:
    """Heat's list filters: id, name/stack_name, status/stack_status (``COMPLETE`` or
    ``CREATE_COMPLETE``), action, owner_id/parent; and the four tag filters."""
    params = call.params

    def values(*keys: str) -> list[str]:
        return [value for key in keys for value in params.getlist(key)]

    checks = [
        (values("id"), [stack.id]),
        (values("name", "stack_name"), [stack.name]),
        (values("status", "stack_status"), [stack.status, stack.state]),
        (values("action", "stack_action"), [stack.action]),
        (values("owner_id", "parent"), [stack.owner_id or ""]),
    ]
    if any(wanted and not set(wanted) & set(have) for wanted, have in checks):
        return False
    tags = set(stack.tags or [])

    def tag_set(key: str) -> set[str] | None:
        value = params.get(key)
        return {tag for tag in value.split(",") if tag} if value else None

    wanted_all, wanted_any = tag_set("tags"), tag_set("tags_any")
    not_all, not_any = tag_set("not_tags"), tag_set("not_tags_any")
    if wanted_all and not wanted_all <= tags:
        return False
    if wanted_any and not wanted_any & tags:
        return False
    if not_all and not_all <= tags:
        return False
    return not (not_any and not_any & tags)


def index(call: Call) -> dict[str, Any]:
    """``GET /stacks``: the caller's project's stacks, newest first unless sorted
    otherwise; ``limit`` and ``marker`` (a stack id) page through, with a ``next`` link
    when a page is full. ``global_tenant``: every project's, each with its ``project``
    (Heat's global_index: an admin's only)."""
    caller = projects.project(call)
    every_project = call.bool_param("global_tenant")
    if every_project and not caller.admin:
        raise projects.ForbiddenError("Only an admin may list the stacks of every project (global_tenant)")
    stacks = call.service.list_stacks(
        nested=call.bool_param("show_nested"),
        hidden=call.bool_param("show_hidden"),
        project=caller,
        deleted=call.bool_param("show_deleted"),
        all_projects=every_project,
    )
    stacks = [stack for stack in stacks if _matches(stack, call)]
    named = [_SORT_KEYS.get(key) for key in call.params.getlist("sort_keys")] or ["created_at"]
    if None in named:
        raise BadRequestError(f"Invalid sort key in {call.params.getlist('sort_keys')}", hint="use one of stack_name, stack_status, creation_time, updated_time")
    direction = call.params.get("sort_dir", "desc")
    if direction not in ("asc", "desc"):
        raise BadRequestError(f"Unknown sort direction {direction}, must be 'desc' or 'asc'")
    keys = [key for key in named if key is not None]
    lowest = datetime.min.replace(tzinfo=None)
    stacks.sort(key=lambda s: tuple(getattr(s, k) or (lowest if k.endswith("_at") else "") for k in keys), reverse=direction == "desc")
    marker = call.params.get("marker")
    if marker:
        ids = [stack.id for stack in stacks]
        if marker not in ids:
            raise NotFoundError(f"The Stack ({marker}) given as marker could not be found.")
        stacks = stacks[ids.index(marker) + 1:]
    limit = call.int_param("limit")
    if limit is not None:
        stacks = stacks[:limit]
    body: dict[str, Any] = {"stacks": [views.stack_summary(call, stack, with_project=every_project) for stack in stacks]}
    if limit and len(stacks) == limit:
        query = dict(call.params.multi_items())
        query["marker"] = stacks[-1].id
        body["links"] = [{"rel": "next", "href": f"{call.url('stacks')}?{urlencode(query)}"}]
    return body


def create(call: Call) -> Reply:
    """``POST /stacks``: 201 with the new stack's id and link (and ``Location``)."""
    data = schemas.instantiation(call.body)
    name = schemas.stack_name(data)
    service = call.service
    if data.converge:
        raise BadRequestError("converge flag only supported in stack update (or update preview) request.")  # Heat's words
    if data.adopt_data is not None:
        stack = service.adopt_stack(
            name,
            data.adopt_data,
            data.environments,
            data.parameters,
            data.disable_rollback is not False,
            data.timeout_mins,
            project_id=call.context.tenant_id,
        )
    else:
        stack = service.create_stack(
            name,
            schemas.template_of(data),
            data.environments,
            data.parameters,
            files=data.files,
            disable_rollback=data.disable_rollback is not False,
            timeout_mins=data.timeout_mins,
            tags=data.tags or [],
            project_id=call.context.tenant_id,
        )
    href = call.stack_url(stack)
    return Reply(201, {"stack": {"id": stack.id, "links": [call.link(href)]}}, {"Location": href})


def preview(call: Call) -> dict[str, Any]:
    """``POST /stacks/preview``: the stack a create would make (Heat's preview_stack,
    through its stacks view): id ``"None"``, its parameters and resources.

    stoker's ``?with_plan=true`` (docs/api.md) adds, beside ``stack``, the plan the
    ``stoker`` command prints, as an update preview gives it: ``resource_changes`` (every
    resource added, in the order the create makes them) and ``implementations`` (the
    template each candidate list chose). Heat's body is left as it is without it.
    stoker's ``?plan=true`` adds these and ``plan``, the plan document (docs/plans.md)
    that ``POST /plans/apply`` takes."""
    document = call.bool_param("plan")
    plan: dict[str, Any] | None = {} if call.bool_param("with_plan") and not document else None
    data = schemas.instantiation(call.body)
    name, template = schemas.stack_name(data), schemas.template_of(data)
    stack = call.service.preview_stack(
        name,
        template,
        data.environments,
        data.parameters,
        files=data.files,
        disable_rollback=data.disable_rollback is not False,
        timeout_mins=data.timeout_mins,
        tags=data.tags,
        project_id=call.context.tenant_id,
        plan=plan,
    )
    body: dict[str, Any] = {"stack": views.stack_preview(call, stack)}
    if document:
        body.update(
            call.service.plan_create(
                name, template, data.environments, data.parameters, files=data.files,
                disable_rollback=data.disable_rollback, timeout_mins=data.timeout_mins, tags=data.tags, project_id=call.context.tenant_id,
            )
        )
    elif plan is not None:
        # The embedded engine's own plan, from the same validation, so that the command
        # prints the same against a server.
        body.update(plan)
    return body


def lookup(call: Call, subpath: str | None = None) -> Reply:
    """``/stacks/{name or id}[/subpath]``: 302 to the stack's canonical URL (any method:
    heatclient reissues the request there), keeping the query."""
    name_or_id, caller = call.path("stack_name"), projects.project(call)
    try:
        stack = call.service.get_stack(name_or_id, caller)
    except StackNotFoundError:
        # Heat's identify_stack: an id finds a deleted stack too (show_deleted), so a
        # client waiting by id for DELETE_COMPLETE sees it.
        found = call.service.store.get_stack(name_or_id)
        # DELETE_COMPLETE is recorded a moment before deleted_at: deleted either way.
        gone = found is not None and (found.deleted_at is not None or found.state == "DELETE_COMPLETE")
        if found is None or not gone or subpath or not caller.reaches(found):
            raise
        stack = found
    location = call.stack_url(stack, *(subpath.split("/") if subpath else []))
    if call.request.url.query:
        location += "?" + call.request.url.query
    return Reply(302, {"location": location}, {"Location": location})


def _lookup_to(subpath: str) -> Any:
    def lookup_subpath(call: Call) -> Reply:
        return lookup(call, subpath)

    return lookup_subpath


def show(call: Call) -> dict[str, Any]:
    stack = projects.stack(call, deleted=True)
    return {"stack": views.stack_detail(call, stack, call.bool_param("resolve_outputs", True))}


def template(call: Call) -> Any:
    return call.service.template_of(projects.stack(call).id)


def environment(call: Call) -> Any:
    stack = projects.stack(call)
    return call.service.environment_of(stack.id)  # hidden parameters masked


def files(call: Call) -> Any:
    stack = projects.stack(call)
    return call.service.files_of(stack)  # hidden parameters' values masked


def _update(call: Call, patch: bool) -> Reply:
    stack = projects.stack(call)
    if schemas.refresh_only(call.body):
        # stoker's: done at once (no job: the cloud is not changed), 200 with what the
        # stack took (docs/drift.md).
        return Reply(200, call.service.refresh_stack(stack.id, projects.project(call)))
    data = schemas.instantiation(call.body, patch=patch)
    files = data.files if (data.template is not None or data.environments or data.files) else None
    call.service.update_stack(
        stack.id,
        data.template,
        data.environments,
        data.parameters,
        files=files,
        existing=patch,
        clear_parameters=data.clear_parameters,
        disable_rollback=data.disable_rollback,
        timeout_mins=data.timeout_mins,
        tags=data.tags,
        converge=data.converge,
    )
    return Reply(202, empty=True)


def update(call: Call) -> Reply:
    """``PUT``: a new template and parameters replace the stack's; 202."""
    return _update(call, patch=False)


def update_patch(call: Call) -> Reply:
    """``PATCH``: the stack's template, environment and parameters with what is given
    merged in; ``clear_parameters`` returns parameters to their defaults; 202."""
    return _update(call, patch=True)


def _preview_update(call: Call, patch: bool) -> Any:
    stack = projects.stack(call)
    if schemas.refresh_only(call.body):
        # stoker's: what a refresh would take from the live objects, as a plan.
        return call.service.plan_refresh(stack.id, projects.project(call))
    data = schemas.instantiation(call.body, patch=patch)
    files = data.files if (data.template is not None or data.environments or data.files) else None
    if call.bool_param("plan"):
        # stoker's: the same preview with its plan document (docs/plans.md), which
        # POST /plans/apply takes.
        return call.service.plan_update(
            stack.id, data.template, data.environments, data.parameters, files=files, existing=patch, show_nested=call.bool_param("show_nested"),
            clear_parameters=data.clear_parameters, disable_rollback=data.disable_rollback, timeout_mins=data.timeout_mins, tags=data.tags,
            converge=data.converge,
        )
    return call.service.preview_update(
        stack.id, data.template, data.environments, data.parameters, files=files, existing=patch, show_nested=call.bool_param("show_nested"),
        converge=data.converge,
    )


def preview_update(call: Call) -> Any:
    """``PUT .../preview``: {"resource_changes": {added, deleted, replaced, updated, unchanged}}."""
    return _preview_update(call, patch=False)


def preview_update_patch(call: Call) -> Any:
    return _preview_update(call, patch=True)


def delete(call: Call) -> Reply:
    """``DELETE``: 204; the delete goes on as a job (a GET shows DELETE_IN_PROGRESS,
    then 404 by name once deleted)."""
    call.service.delete_stack(projects.stack(call).id)
    return Reply(204, empty=True)


def abandon(call: Call) -> Any:
    """``DELETE .../abandon``: forget the stack, keep its resources; the adopt data."""
    return call.service.abandon_stack(projects.stack(call).id)


def export(call: Call) -> Any:
    return call.service.export_stack(projects.stack(call).id)


# -- outputs -----------------------------------------------------------------------------


def outputs(call: Call) -> dict[str, Any]:
    """Heat lists outputs without resolving them: key and description."""
    return {"outputs": [{"output_key": o["output_key"], "description": o["description"]} for o in call.service.outputs(projects.stack(call).id)]}


def output(call: Call) -> dict[str, Any]:
    key = call.path("output_key")
    found = call.service.outputs(projects.stack(call).id, [key])
    if not found:
        raise NotFoundError(f"Specified output key {key} not found.")
    return {"output": found[0]}


# -- drift (stoker's own, docs/drift.md) -------------------------------------------------


def drift_detect(call: Call) -> dict[str, Any]:
    """``POST .../drift``: compare every resource with its live object now; 200 with the
    result, which is kept as the stack's last."""
    stack = projects.stack(call)
    return views.drift_body(stack, call.service.detect_drift(stack.id))


def drift_last(call: Call) -> dict[str, Any]:
    """``GET .../drift``: the stack's last drift detection (404 before the first)."""
    stack = projects.stack(call)
    record = call.service.last_drift(stack.id)
    if record is None:
        raise NotFoundError(f"No drift detection has run on stack {stack.name}.", hint=f"detect it first: POST {call.stack_url(stack, 'drift')}")
    return views.drift_body(stack, record)


# -- snapshots ---------------------------------------------------------------------------


def snapshot_create(call: Call) -> Any:
    """``POST .../snapshots``: the new snapshot (IN_PROGRESS while its job runs)."""
    name = schemas.snapshot_name(call.body)
    stack = projects.stack(call)
    record = call.service.create_snapshot(stack.id, name)
    return views.snapshot_body(record, call.service.hidden_values(stack))


def snapshot_list(call: Call) -> dict[str, Any]:
    stack = projects.stack(call)
    hidden = call.service.hidden_values(stack)
    return {"snapshots": [views.snapshot_body(r, hidden) for r in call.service.list_snapshots(stack.id)]}


def snapshot_show(call: Call) -> dict[str, Any]:
    stack = projects.stack(call)
    record = call.service.get_snapshot(stack.id, call.path("snapshot_id"))
    return {"snapshot": views.snapshot_body(record, call.service.hidden_values(stack))}


def snapshot_delete(call: Call) -> Reply:
    call.service.delete_snapshot(projects.stack(call).id, call.path("snapshot_id"))
    return Reply(204, empty=True)


def snapshot_restore(call: Call) -> Reply:
    call.service.restore_snapshot(projects.stack(call).id, call.path("snapshot_id"))
    return Reply(202, empty=True)


# -- actions -----------------------------------------------------------------------------

_ACTIONS = ("suspend", "resume", "check", "cancel_update", "cancel_without_rollback")


def action(call: Call) -> None:
    """``POST .../actions`` with exactly one of {"suspend": null}, resume, check,
    cancel_update (rolls back) or cancel_without_rollback."""
    body = call.body or {}
    if not isinstance(body, dict) or len(body) < 1:
        raise BadRequestError("No action specified")
    if len(body) > 1:
        raise BadRequestError("Multiple actions specified")
    name = next(iter(body))
    if name not in _ACTIONS:
        raise BadRequestError(f"Invalid action {name} specified", hint="one of " + ", ".join(_ACTIONS))
    stack = projects.stack(call)
    if name.startswith("cancel"):
        call.service.cancel_stack(stack.id, rollback=name == "cancel_update")
    else:
        call.service.stack_action(stack.id, Action(name.upper()))
    return None


def action_preview(call: Call) -> Any:
    """stoker's ``POST .../actions/preview`` with exactly one of {"suspend": null},
    resume, check, delete, snapshot, or {"restore": "<snapshot id>"}: ``{"plan": ...}``,
    what that action would do to each resource (docs/plans.md); nothing runs."""
    body = call.body or {}
    hint = 'send {"suspend": null} (or resume, check, delete, snapshot), or {"restore": "<snapshot id>"}'
    if not isinstance(body, dict) or len(body) != 1:
        raise BadRequestError("Name exactly one action to plan", hint=hint)
    (action, value), stack = next(iter(body.items())), projects.stack(call)
    if action == "restore":
        if not isinstance(value, str) or not value:
            raise BadRequestError("A restore's plan names the snapshot: restore must be a snapshot id", hint=hint)
        return call.service.plan_restore(stack.id, value, projects.project(call))
    return call.service.plan_stack_action(stack.id, action, projects.project(call))


TENANT = "/v1/{tenant_id}"
STACKS = TENANT + "/stacks"
STACK = STACKS + "/{stack_name}/{stack_id}"
ALL = ("GET", "POST", "PUT", "PATCH", "DELETE")
# The lookups: /stacks/{stack_name}[/subpath], by the stack's name or id, redirect to
# the stack's own URL, with the methods heatclient sends there.
LOOKUPS: dict[str | None, tuple[str, ...]] = {
    None: ALL,
    "resources": ("GET", "POST"),
    "events": ("GET", "POST"),
    "template": ("GET", "POST"),
    "actions": ("GET", "POST"),
    "environment": ("GET",),
    "files": ("GET",),
    "outputs": ("GET",),
    "snapshots": ("GET", "POST"),
    "drift": ("GET", "POST"),
    "events/stream": ("GET",),
}


def _lookups() -> list[Operation]:
    operations = []
    for subpath, methods in LOOKUPS.items():
        where, to = (f"the stack's {subpath}", f"/{subpath}") if subpath else ("the stack", "")
        spec = operation(f"Find {where} by the stack's name or id", REDIRECT, tag="stacks", description="302 to /stacks/{stack_name}/{stack_id}" + to + ", the query kept.")
        handler = _lookup_to(subpath) if subpath else lookup
        operations += [Operation(method, STACKS + "/{stack_name}" + to, handler, "stacks:lookup", spec) for method in methods]
    return operations


_WRITES = (409,)  # the stack is busy, or exists already
_LIST = ok(obj({"stacks": array(ref("StackSummary"))}, {"links": array(ref("Link"))}))
_REFRESHED = ok(obj({"plan": ref("Plan")}), "stoker's refresh_only: done, what the stack took from the live objects")
_SHOW_NESTED = [
    query("show_nested", BOOLEAN, "also the changes to the resources of nested stacks (Heat's)"),
    flag("plan", "stoker's: the plan document too (plan), which POST /plans/apply takes"),
]
_ACTION_BODY = {name: {"type": "null"} for name in _ACTIONS}
_PLANNED = {name: {"type": "null"} for name in ("suspend", "resume", "check", "delete", "snapshot")} | {"restore": {**STRING, "description": "the id of the snapshot to restore"}}

# Order matters: a fixed path comes before a path parameter that would match it, and
# the lookup subpaths before /stacks/{stack_name}/{stack_id}.
OPERATIONS = [
    Operation("GET", STACKS, index, "stacks:index", operation("List the project's stacks", _LIST, tag="stacks", parameters=STACK_LIST_QUERY)),
    Operation("POST", STACKS, create, "stacks:create", operation(
        "Create a stack (or adopt one)", ok(obj({"stack": obj({"id": STRING, "links": array(ref("Link"))})}), "Created: the stack's create goes on", 201, LOCATION),
        tag="stacks", body=ref("StackCreate"), faults=_WRITES,
    )),
    Operation("POST", STACKS + "/preview", preview, "stacks:preview", operation(
        "Preview a stack create", ok(obj({"stack": ref("StackPreview")}, {"resource_changes": RESOURCE_CHANGES, "implementations": IMPLEMENTATIONS, "plan": ref("Plan")})),
        tag="stacks", body=ref("StackCreate"), faults=(409,),
        parameters=[
            flag("with_plan", "stoker's: the plan beside the stack (resource_changes in the create's order, implementations)"),
            flag("plan", "stoker's: with_plan's and the plan document (plan), which POST /plans/apply takes"),
        ],
    )),
    Operation("GET", STACKS + "/detail", index, "stacks:detail", operation("List the project's stacks (as GET /stacks)", _LIST, tag="stacks", parameters=STACK_LIST_QUERY)),
    *_lookups(),
    Operation("GET", STACK, show, "stacks:show", operation(
        "Show a stack (a deleted one too)", ok(obj({"stack": ref("StackDetail")})), tag="stacks", parameters=[flag("resolve_outputs", "resolve the outputs (default true)")],
    )),
    Operation("PUT", STACK, update, "stacks:update", operation(
        "Update a stack", {**empty(202, "Accepted: the update goes on"), **_REFRESHED}, tag="stacks", body=ref("StackUpdate"), faults=_WRITES,
    )),
    Operation("PATCH", STACK, update_patch, "stacks:update_patch", operation(
        "Update a stack, keeping what is not given", {**empty(202, "Accepted: the update goes on"), **_REFRESHED}, tag="stacks", body=ref("StackUpdate"), body_required=False, faults=_WRITES,
    )),
    Operation("DELETE", STACK, delete, "stacks:delete", operation("Delete a stack", empty(204, "The delete goes on"), tag="stacks", faults=_WRITES)),
    Operation("GET", STACK + "/template", template, "stacks:template", operation("The stack's template", ok(OBJECT, "The template as stored"), tag="stacks")),
    Operation("GET", STACK + "/environment", environment, "stacks:environment", operation(
        "The stack's environment",
        ok(obj(optional={"parameters": OBJECT, "parameter_defaults": OBJECT, "resource_registry": OBJECT, "event_sinks": array(ANY), "encrypted_param_names": array(STRING)}), "The environment; hidden parameters' values masked"),
        tag="stacks",
    )),
    Operation("GET", STACK + "/files", files, "stacks:files", operation("The stack's files", ok({"type": "object", "additionalProperties": STRING}, "name -> text"), tag="stacks")),
    Operation("PUT", STACK + "/preview", preview_update, "stacks:preview_update", operation(
        "Preview an update", ok(ref("ResourceChanges")), tag="stacks", body=ref("StackUpdate"), faults=_WRITES, parameters=_SHOW_NESTED,
    )),
    Operation("PATCH", STACK + "/preview", preview_update_patch, "stacks:preview_update_patch", operation(
        "Preview a PATCH update", ok(ref("ResourceChanges")), tag="stacks", body=ref("StackUpdate"), body_required=False, faults=_WRITES, parameters=_SHOW_NESTED,
    )),
    Operation("DELETE", STACK + "/abandon", abandon, "stacks:abandon", operation(
        "Abandon a stack: forget it, keep its resources", ok(obj({"id": STRING, "name": STRING, "action": STRING, "status": STRING, "template": OBJECT, "resources": OBJECT}), "The adopt data"),
        tag="stacks", faults=_WRITES, description="400 unless the server enables it (STOKER_ENABLE_STACK_ABANDON), as Heat.",
    )),
    Operation("GET", STACK + "/export", export, "stacks:export", operation(
        "Export a stack's data", ok(obj({"id": STRING, "name": STRING, "action": STRING, "status": STRING, "template": OBJECT, "resources": OBJECT})), tag="stacks",
    )),
    Operation("GET", STACK + "/outputs", outputs, "stacks:list_outputs", operation(
        "List the outputs (not resolved)", ok(obj({"outputs": array(obj({"output_key": STRING, "description": STRING}))})), tag="stacks",
    )),
    Operation("GET", STACK + "/outputs/{output_key}", output, "stacks:show_output", operation("Show an output, resolved", ok(obj({"output": ref("Output")})), tag="stacks")),
    Operation("POST", STACK + "/drift", drift_detect, "stacks:drift", operation(
        "Detect drift: compare every resource with its live object", ok(obj({"drift": ref("Drift")}), "The detection, kept as the stack's last"),
        tag="stacks", faults=_WRITES, body_required=False,
        description="stoker's own (docs/drift.md). 409 while an action runs on the stack.",
    )),
    Operation("GET", STACK + "/drift", drift_last, "stacks:show_drift", operation(
        "The stack's last drift detection", ok(obj({"drift": ref("Drift")})), tag="stacks", description="stoker's own (docs/drift.md). 404 before the first detection.",
    )),
    Operation("GET", STACK + "/snapshots", snapshot_list, "stacks:list_snapshots", operation("List the snapshots", ok(obj({"snapshots": array(ref("Snapshot"))})), tag="snapshots")),
    Operation("POST", STACK + "/snapshots", snapshot_create, "stacks:snapshot", operation(
        "Snapshot a stack", ok(ref("Snapshot"), "The snapshot (IN_PROGRESS while it is taken)"), tag="snapshots",
        body=obj(optional={"name": nullable({"type": "string", "maxLength": 255})}), body_required=False, faults=_WRITES,
    )),
    Operation("GET", STACK + "/snapshots/{snapshot_id}", snapshot_show, "stacks:show_snapshot", operation("Show a snapshot", ok(obj({"snapshot": ref("Snapshot")})), tag="snapshots")),
    Operation("DELETE", STACK + "/snapshots/{snapshot_id}", snapshot_delete, "stacks:delete_snapshot", operation("Delete a snapshot", empty(204, "Deleted"), tag="snapshots", faults=_WRITES)),
    Operation("POST", STACK + "/snapshots/{snapshot_id}/restore", snapshot_restore, "stacks:restore_snapshot", operation(
        "Restore a snapshot", empty(202, "Accepted: the restore goes on"), tag="snapshots", faults=_WRITES,
    )),
    # The body's key names the rule (policy.ACTIONS: actions:<action>).
    Operation("POST", STACK + "/actions", action, ACTIONS, operation(
        "Suspend, resume, check or cancel", ok(NULL, "The action goes on (a JSON null body)"), tag="stacks",
        body={**obj(optional=_ACTION_BODY, extra=False), "minProperties": 1, "maxProperties": 1, "description": "exactly one action; its rule is actions:<action>"},
        faults=_WRITES,
    )),
    Operation("POST", STACK + "/actions/preview", action_preview, "stacks:preview_action", operation(
        "What a suspend, resume, check, delete, snapshot or restore would do to each resource (stoker's)", ok(obj({"plan": ref("Plan")})), tag="stacks",
        body={**obj(optional=_PLANNED, extra=False), "minProperties": 1, "maxProperties": 1, "description": "exactly one action"},
    )),
]
