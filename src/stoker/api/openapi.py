"""The OpenAPI 3.1 document of the Orchestration API v1, served at ``GET /openapi.json``.

It describes every route the app serves: paths, methods, path and query parameters,
request bodies, and each response's status and body in Heat's shapes (the api-ref's,
``heat/api/openstack/v1/*`` and ``heat/engine/api.py``), a 4xx always being Heat's fault
body (``api.errors.fault``). It names the ``X-Auth-Token`` header as the credential and
marks the routes that need none (``api.policy.PUBLIC`` and the version document) and
the one where it is optional (``api.policy.SIGNAL``).

The document is data written by hand, composed here from the schemas, parameters and
responses of ``api.openapi_components``; nothing reads the routes to write it, so that
it says what a client may rely on rather than what the code happens to do. Two tests keep the two honest: every route of the app is in the
document and every path of the document is a route (``tests/unit/api/test_openapi.py``),
and a schemathesis run checks the running server's answers against it
(``tests/acceptance/test_openapi.py``).

What this module must not do: decide anything about a request. It describes; the route
modules serve.
"""

from __future__ import annotations

import copy

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from stoker.api.openapi_components import (
    ANY,
    BOOLEAN,
    COUNT,
    EVENT_LIST_QUERY,
    IMPLEMENTATIONS,
    LOCATION,
    NO_TOKEN,
    NULL,
    OBJECT,
    REDIRECT,
    RESOURCE_CHANGES,
    RESOURCE_LIST_QUERY,
    SCHEMAS,
    SECRET,
    STACK_LIST_QUERY,
    STRING,
    TOKEN,
    Schema,
    array,
    empty,
    flag,
    nullable,
    obj,
    ok,
    operation,
    path_parameters,
    query,
    ref,
)

OPENAPI_PATH = "/openapi.json"

TENANT = "/v1/{tenant_id}"
STACKS = TENANT + "/stacks"
STACK = STACKS + "/{stack_name}/{stack_id}"
RESOURCE = STACK + "/resources/{resource_name}"
# The CFN API's paths (api/cfn.py: its errors are AWS's, not a Fault).
CFN_PATHS = ("/cfn/v1/", "/v1/")

# -- the paths -----------------------------------------------------------------------------

STACK_WRITES = (409,)
LOOKUP_SUBPATHS = {
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
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def _lookup(subpath: str | None) -> Schema:
    where = f"the stack's {subpath}" if subpath else "the stack"
    return operation(f"Find {where} by the stack's name or id", REDIRECT, rule="stacks:lookup", tag="stacks", description="302 to /stacks/{stack_name}/{stack_id}" + (f"/{subpath}" if subpath else "") + ", the query kept.")


def _paths() -> dict[str, dict[str, Schema]]:
    paths: dict[str, dict[str, Schema]] = {}

    def add(method: str, path: str, spec: Schema) -> None:
        paths.setdefault(path, {})[method.lower()] = spec

    # -- the version document and this one
    # Neither reads a body or a parameter: nothing to refuse, no fault.
    add("GET", "/", {
        "summary": "The API versions", "tags": ["versions"], "security": NO_TOKEN,
        "responses": ok(obj({"versions": array(obj({"id": STRING, "status": STRING, "links": array(ref("Link"))}))}), "Multiple Choices: the versions", 300),
    })
    add("GET", OPENAPI_PATH, {
        "summary": "This document", "tags": ["versions"], "security": NO_TOKEN,
        "responses": ok({"type": "object", "required": ["openapi", "paths"]}, "The OpenAPI document"),
    })

    # -- stacks
    add("GET", STACKS, operation("List the project's stacks", ok(obj({"stacks": array(ref("StackSummary"))}, {"links": array(ref("Link"))})), rule="stacks:index", tag="stacks", parameters=STACK_LIST_QUERY))
    add("POST", STACKS, operation(
        "Create a stack (or adopt one)", ok(obj({"stack": obj({"id": STRING, "links": array(ref("Link"))})}), "Created: the stack's create goes on", 201, LOCATION),
        rule="stacks:create", tag="stacks", body=ref("StackCreate"), faults=STACK_WRITES,
    ))
    add("POST", STACKS + "/preview", operation(
        "Preview a stack create", ok(obj({"stack": ref("StackPreview")}, {"resource_changes": RESOURCE_CHANGES, "implementations": IMPLEMENTATIONS, "plan": ref("Plan")})),
        rule="stacks:preview", tag="stacks", body=ref("StackCreate"), faults=(409,),
        parameters=[
            flag("with_plan", "stoker's: the plan beside the stack (resource_changes in the create's order, implementations)"),
            flag("plan", "stoker's: with_plan's and the plan document (plan), which POST /plans/apply takes"),
        ],
    ))
    add("GET", STACKS + "/detail", operation("List the project's stacks (as GET /stacks)", ok(obj({"stacks": array(ref("StackSummary"))}, {"links": array(ref("Link"))})), rule="stacks:detail", tag="stacks", parameters=STACK_LIST_QUERY))
    for method in METHODS:
        add(method, STACKS + "/{stack_name}", _lookup(None))
    for subpath, methods in LOOKUP_SUBPATHS.items():
        for method in methods:
            add(method, STACKS + "/{stack_name}/" + subpath, _lookup(subpath))
    add("GET", STACK, operation("Show a stack (a deleted one too)", ok(obj({"stack": ref("StackDetail")})), rule="stacks:show", tag="stacks", parameters=[flag("resolve_outputs", "resolve the outputs (default true)")]))
    refreshed = ok(obj({"plan": ref("Plan")}), "stoker's refresh_only: done, what the stack took from the live objects")
    add("PUT", STACK, operation("Update a stack", {**empty(202, "Accepted: the update goes on"), **refreshed}, rule="stacks:update", tag="stacks", body=ref("StackUpdate"), faults=STACK_WRITES))
    add("PATCH", STACK, operation("Update a stack, keeping what is not given", {**empty(202, "Accepted: the update goes on"), **refreshed}, rule="stacks:update_patch", tag="stacks", body=ref("StackUpdate"), body_required=False, faults=STACK_WRITES))
    add("DELETE", STACK, operation("Delete a stack", empty(204, "The delete goes on"), rule="stacks:delete", tag="stacks", faults=STACK_WRITES))
    add("GET", STACK + "/template", operation("The stack's template", ok(OBJECT, "The template as stored"), rule="stacks:template", tag="stacks"))
    add("GET", STACK + "/environment", operation("The stack's environment", ok(obj(optional={"parameters": OBJECT, "parameter_defaults": OBJECT, "resource_registry": OBJECT, "event_sinks": array(ANY), "encrypted_param_names": array(STRING)}), "The environment; hidden parameters' values masked"), rule="stacks:environment", tag="stacks"))
    add("GET", STACK + "/files", operation("The stack's files", ok({"type": "object", "additionalProperties": STRING}, "name -> text"), rule="stacks:files", tag="stacks"))
    show_nested = [
        query("show_nested", BOOLEAN, "also the changes to the resources of nested stacks (Heat's)"),
        flag("plan", "stoker's: the plan document too (plan), which POST /plans/apply takes"),
    ]
    add("PUT", STACK + "/preview", operation("Preview an update", ok(ref("ResourceChanges")), rule="stacks:preview_update", tag="stacks", body=ref("StackUpdate"), faults=STACK_WRITES, parameters=show_nested))
    add("PATCH", STACK + "/preview", operation("Preview a PATCH update", ok(ref("ResourceChanges")), rule="stacks:preview_update_patch", tag="stacks", body=ref("StackUpdate"), body_required=False, faults=STACK_WRITES, parameters=show_nested))
    add("DELETE", STACK + "/abandon", operation(
        "Abandon a stack: forget it, keep its resources", ok(obj({"id": STRING, "name": STRING, "action": STRING, "status": STRING, "template": OBJECT, "resources": OBJECT}), "The adopt data"),
        rule="stacks:abandon", tag="stacks", faults=STACK_WRITES, description="400 unless the server enables it (STOKER_ENABLE_STACK_ABANDON), as Heat.",
    ))
    add("GET", STACK + "/export", operation("Export a stack's data", ok(obj({"id": STRING, "name": STRING, "action": STRING, "status": STRING, "template": OBJECT, "resources": OBJECT})), rule="stacks:export", tag="stacks"))
    add("GET", STACK + "/outputs", operation("List the outputs (not resolved)", ok(obj({"outputs": array(obj({"output_key": STRING, "description": STRING}))})), rule="stacks:list_outputs", tag="stacks"))
    add("GET", STACK + "/outputs/{output_key}", operation("Show an output, resolved", ok(obj({"output": ref("Output")})), rule="stacks:show_output", tag="stacks"))
    add("POST", STACK + "/drift", operation(
        "Detect drift: compare every resource with its live object", ok(obj({"drift": ref("Drift")}), "The detection, kept as the stack's last"),
        rule="stacks:drift", tag="stacks", faults=STACK_WRITES, body_required=False,
        description="stoker's own (docs/drift.md). 409 while an action runs on the stack.",
    ))
    add("GET", STACK + "/drift", operation("The stack's last drift detection", ok(obj({"drift": ref("Drift")})), rule="stacks:show_drift", tag="stacks", description="stoker's own (docs/drift.md). 404 before the first detection."))
    add("GET", STACK + "/snapshots", operation("List the snapshots", ok(obj({"snapshots": array(ref("Snapshot"))})), rule="stacks:list_snapshots", tag="snapshots"))
    add("POST", STACK + "/snapshots", operation(
        "Snapshot a stack", ok(ref("Snapshot"), "The snapshot (IN_PROGRESS while it is taken)"), rule="stacks:snapshot", tag="snapshots",
        body=obj(optional={"name": nullable({"type": "string", "maxLength": 255})}), body_required=False, faults=STACK_WRITES,
    ))
    add("GET", STACK + "/snapshots/{snapshot_id}", operation("Show a snapshot", ok(obj({"snapshot": ref("Snapshot")})), rule="stacks:show_snapshot", tag="snapshots"))
    add("DELETE", STACK + "/snapshots/{snapshot_id}", operation("Delete a snapshot", empty(204, "Deleted"), rule="stacks:delete_snapshot", tag="snapshots", faults=STACK_WRITES))
    add("POST", STACK + "/snapshots/{snapshot_id}/restore", operation("Restore a snapshot", empty(202, "Accepted: the restore goes on"), rule="stacks:restore_snapshot", tag="snapshots", faults=STACK_WRITES))
    actions = {name: {"type": "null"} for name in ("suspend", "resume", "check", "cancel_update", "cancel_without_rollback")}
    add("POST", STACK + "/actions", operation(
        "Suspend, resume, check or cancel", ok(NULL, "The action goes on (a JSON null body)"), rule="actions:<action>", tag="stacks",
        body={**obj(optional=actions, extra=False), "minProperties": 1, "maxProperties": 1, "description": "exactly one action; its rule is actions:<action>"},
        faults=STACK_WRITES,
    ))
    planned = {name: {"type": "null"} for name in ("suspend", "resume", "check", "delete", "snapshot")}
    planned["restore"] = {**STRING, "description": "the id of the snapshot to restore"}
    add("POST", STACK + "/actions/preview", operation(
        "What a suspend, resume, check, delete, snapshot or restore would do to each resource (stoker's)", ok(obj({"plan": ref("Plan")})), rule="stacks:preview_action", tag="stacks",
        body={**obj(optional=planned, extra=False), "minProperties": 1, "maxProperties": 1, "description": "exactly one action"},
    ))

    # -- resources and events
    add("GET", STACK + "/resources", operation("List the resources", ok(obj({"resources": array(ref("Resource"))})), rule="resource:index", tag="resources", parameters=RESOURCE_LIST_QUERY))
    add("GET", RESOURCE, operation("Show a resource, with its attributes", ok(obj({"resource": ref("ResourceDetail")})), rule="resource:show", tag="resources"))
    add("PATCH", RESOURCE, operation(
        "Mark a resource unhealthy (or healthy again)", ok(NULL, "Marked (a JSON null body)"), rule="resource:mark_unhealthy", tag="resources",
        body=obj({"mark_unhealthy": BOOLEAN}, {"resource_status_reason": STRING}, extra=False), faults=STACK_WRITES,
    ))
    add("GET", RESOURCE + "/metadata", operation("A resource's metadata", ok(obj({"metadata": ANY})), rule="resource:metadata", tag="resources"))
    add("POST", RESOURCE + "/signal", operation(
        "Signal a resource", ok(NULL, "Delivered (a JSON null body)"), rule="resource:signal", tag="resources",
        body=OBJECT, body_required=False, faults=STACK_WRITES, security=[{"token": []}, {}],
        description="Takes an API token, or in place of one a wait condition handle's own token (its curl_cli sends it).",
    ))
    events = ok(obj({"events": array(ref("Event"))}))
    event = ok(obj({"event": ref("EventDetail")}))
    add("GET", STACK + "/events", operation("List the stack's events", events, rule="events:index", tag="events", parameters=EVENT_LIST_QUERY))
    add("GET", STACK + "/events/stream", operation(
        "Stream the stack's events as they are recorded (stoker's)",
        {"200": {"description": (
            "Server-sent events: `event: event` messages (an item of the event list plus stack_path, the message id a cursor), "
            "and a last `event: stack` message ({\"stack\": the stack as listed}) when the stream ends: when the stack is deleted, "
            "or with until=terminal once it is no longer IN_PROGRESS. `: ping` comments keep an idle stream open."
        ), "content": {"text/event-stream": {"schema": ref("StreamMessage")}}}},
        rule="events:index", tag="events", faults=(429,),
        description="429 when the project already has as many streams open as the server allows (STOKER_MAX_EVENT_STREAMS_PER_PROJECT): "
        "close streams no longer read, or poll the event list instead.",
        parameters=[
            query("nested_depth", COUNT, "follow nested stacks this many levels down (default: all)"),
            query("until", {"enum": ["terminal", "next_action"]}, "end the stream once the stack is no longer IN_PROGRESS (terminal), or once an action of the stack begun on this stream has ended (next_action: open with from=now, then start the action); default: when the client goes"),
            query("from", {"enum": ["start", "now"]}, "the stack's recorded events first (start, the default), or only those from now on"),
            query("last_event_id", STRING, "resume after this message's id (as the Last-Event-ID header, which wins)"),
            {"name": "Last-Event-ID", "in": "header", "required": False, "description": "resume after this message's id (an EventSource sends it)", "schema": STRING},
        ],
    ))
    add("GET", STACK + "/events/{event_id}", operation("Show an event by its id (stoker's)", event, rule="events:show", tag="events"))
    add("GET", RESOURCE + "/events", operation("List a resource's events", events, rule="events:index", tag="events", parameters=EVENT_LIST_QUERY))
    add("GET", RESOURCE + "/events/{event_id}", operation("Show a resource's event", event, rule="events:show", tag="events"))

    # -- capability URLs: the secret is the credential
    signalled = ok(obj({"resource": STRING, "metadata": OBJECT}), "The resource's name and its signals by id (Heat's CFN answer)")
    for method in ("PUT", "POST"):
        add(method, "/v1/waitcondition/{credential_id}", operation(
            "Signal the resource whose capability URL this is (cfn-signal)", signalled, rule=None, tag="signals",
            parameters=[SECRET], body=OBJECT, body_required=False, faults=(403,),
        ))
    add("GET", "/v1/server_metadata/{credential_id}", operation(
        "A server's metadata, for its agent (os-collect-config)", ok(OBJECT, "The metadata itself"), rule=None, tag="signals", parameters=[SECRET], faults=(403,),
    ))

    # -- the CFN API: EC2-signed, its answers and errors AWS's XML (JSON with ContentType=JSON)
    aws_error = {
        "description": "AWS's ErrorResponse (Error: Type, Code, Message), as Heat's heat-api-cfn answers it",
        "content": {"application/xml": {"schema": STRING}, "application/json": {"schema": obj({"ErrorResponse": obj({"Error": obj({"Type": STRING, "Code": STRING, "Message": STRING})})})}},
    }
    cfn_query = [
        query("Action", STRING, "DescribeStackResource (the one action served)"),
        query("StackName", STRING, "the stack's name, id or ARN"),
        query("LogicalResourceId", STRING, "the resource's name: the keypair's own server"),
        query("ContentType", STRING, "JSON for a JSON answer (XML otherwise)"),
        query("AWSAccessKeyId", STRING, "the keypair's access key (signature version 2)"),
        query("SignatureVersion", STRING, "2 (version 4 signs in the Authorization header)"),
        query("SignatureMethod", STRING, "HmacSHA256 or HmacSHA1"),
        query("Signature", STRING, "the request's signature (version 2)"),
    ]
    for path in CFN_PATHS:
        for method in ("GET", "POST"):
            add(method, path, {
                "summary": "DescribeStackResource: a server's resource and its Metadata, for its agent (the cfn collector, cfn-init)",
                "description": "Heat's CFN API, signed with the server's EC2 keypair (AWS signature version 2 in the parameters, "
                "or version 4 in the Authorization header); POST may send the parameters as a form. A keypair reads its own server only.",
                "tags": ["signals"], "security": NO_TOKEN, "parameters": cfn_query,
                "responses": {
                    "200": {"description": "DescribeStackResourceResponse", "content": {"application/xml": {"schema": STRING}, "application/json": {"schema": OBJECT}}},
                    "400": aws_error, "403": aws_error,
                },
            })

    # -- what the engine offers
    add("POST", TENANT + "/validate", operation(
        "Validate a template",
        ok(obj(optional={"Description": STRING, "Parameters": OBJECT, "ParameterGroups": array(ANY), "Environment": OBJECT, "NestedParameters": OBJECT, "Warnings": array(ANY), "Notes": array(STRING)})),
        rule="stacks:validate_template", tag="templates", body=ref("StackInput"),
        parameters=[
            flag("show_nested", "the nested templates' parameters too (NestedParameters)"),
            flag("with_notes", "stoker's: what a create would still need (Notes)"),
        ],
    ))
    add("GET", TENANT + "/resource_types", operation(
        "List the resource types", ok(obj({"resource_types": {"anyOf": [array(STRING), array(obj({"resource_type": STRING, "description": STRING}))]}})),
        rule="stacks:list_resource_types", tag="resource_types",
        parameters=[
            query("name", STRING, "a regular expression (RE2) the name matches"),
            query("support_status", {"enum": ["UNKNOWN", "SUPPORTED", "DEPRECATED", "UNSUPPORTED", "HIDDEN"]}, "only types of this support status"),
            query("version", STRING, "only types whose support status names this version (e.g. 2014.1)"),
            flag("with_description", "objects with each type's description"),
        ],
    ))
    add("GET", TENANT + "/resource_types/{type_name}", operation(
        "A resource type's schema", ok(obj({"resource_type": STRING, "properties": OBJECT, "attributes": OBJECT}, {"description": STRING, "support_status": OBJECT})),
        rule="stacks:resource_schema", tag="resource_types", parameters=[flag("with_description", "the description too (default true)")],
    ))
    add("GET", TENANT + "/resource_types/{type_name}/template", operation(
        "A template with one resource of the type", ok(OBJECT, "A HOT or CFN template"), rule="stacks:generate_template", tag="resource_types",
        parameters=[query("template_type", {"enum": ["hot", "cfn"]}, "cfn (default) or hot")],
    ))
    add("GET", TENANT + "/template_versions", operation(
        "List the template versions", ok(obj({"template_versions": array(obj({"version": STRING, "type": {"enum": ["hot", "cfn"]}}, {"aliases": array(STRING)}))})),
        rule="stacks:list_template_versions", tag="templates",
    ))
    add("GET", TENANT + "/template_versions/{template_version}/functions", operation(
        "List a template version's functions", ok(obj({"template_functions": array(obj({"functions": STRING, "description": STRING}))})),
        rule="stacks:list_template_functions", tag="templates", parameters=[flag("with_condition_func", "the condition functions too")],
    ))
    add("GET", TENANT + "/custom_constraints/{constraint_name}/values", operation(
        "The values a custom constraint accepts in the caller's cloud, for a form's list (stoker's)",
        ok(obj({"constraint": STRING, "values": array(obj({"value": STRING, "id": STRING, "label": STRING}, extra=False)), "truncated": BOOLEAN})),
        rule="custom_constraints:values", tag="resource_types",
        description="At most 500 values, sorted by label; a value is the object's name, or its id where the name is not unique. 404 for a constraint not registered; 400 for one that does not list its values, or a cloud that did not answer.",
    ))
    add("GET", TENANT + "/build_info", operation("The build's revision", ok(obj({"api": obj({"revision": STRING}), "engine": obj({"revision": STRING})})), rule="build_info:build_info", tag="build_info"))
    service = obj({"id": STRING, "binary": STRING, "engine_id": STRING, "host": STRING, "hostname": STRING, "topic": STRING, "report_interval": {"type": "integer"},
                   "created_at": STRING, "updated_at": nullable(STRING), "deleted_at": nullable(STRING), "status": {"enum": ["up", "down"]}})
    add("GET", TENANT + "/services", operation("List the engines", ok(obj({"services": array(service)})), rule="service:index", tag="services"))

    # -- software configs and deployments
    configs, deployments = TENANT + "/software_configs", TENANT + "/software_deployments"
    add("GET", configs, operation(
        "List the software configs", ok(obj({"software_configs": array(ref("SoftwareConfigSummary"))})), rule="software_configs:index", tag="software_configs",
        parameters=[query("limit", COUNT, "at most this many"), query("marker", STRING, "the id of the last config of the previous page"), flag("global_tenant", "every project's (denied by default)")],
    ))
    add("POST", configs, operation(
        "Create a software config", ok(obj({"software_config": ref("SoftwareConfig")})), rule="software_configs:create", tag="software_configs",
        body=obj(optional={"name": nullable({"type": "string", "maxLength": 255}), "group": nullable({"type": "string", "maxLength": 255}), "config": ANY, "inputs": nullable(array(OBJECT)), "outputs": nullable(array(OBJECT)), "options": nullable(OBJECT)}),
    ))
    add("GET", configs + "/{config_id}", operation("Show a software config", ok(obj({"software_config": ref("SoftwareConfig")})), rule="software_configs:show", tag="software_configs"))
    add("DELETE", configs + "/{config_id}", operation("Delete a software config", empty(204, "Deleted"), rule="software_configs:delete", tag="software_configs"))
    deployment = ok(obj({"software_deployment": ref("SoftwareDeployment")}))
    text = nullable(STRING)
    add("GET", deployments, operation(
        "List the software deployments", ok(obj({"software_deployments": array(ref("SoftwareDeployment"))})), rule="software_deployments:index", tag="software_deployments",
        parameters=[query("server_id", STRING, "only this server's")],
    ))
    add("POST", deployments, operation(
        "Create a software deployment", deployment, rule="software_deployments:create", tag="software_deployments",
        body=obj({"config_id": STRING, "server_id": STRING}, {"id": text, "input_values": nullable(OBJECT), "action": text, "status": text, "status_reason": text, "stack_user_project_id": text}),
        description=(
            "400 for a config that is not the project's (as for a missing one); 404 for a server of another project's stack; "
            "403 for a stack_user_project_id other than the caller's project, unless the caller is a cloud admin."
        ),
    ))
    add("GET", deployments + "/metadata/{server_id}", operation(
        "The configs deployed to a server, for its agent", ok(obj({"metadata": array(ref("SoftwareConfig"))})), rule="software_deployments:metadata", tag="software_deployments",
        description="404 for a server of another project's stack.",
    ))
    add("GET", deployments + "/{deployment_id}", operation("Show a software deployment", deployment, rule="software_deployments:show", tag="software_deployments"))
    add("PUT", deployments + "/{deployment_id}", operation(
        "Update a software deployment", deployment, rule="software_deployments:update", tag="software_deployments",
        body=obj(optional={"config_id": text, "input_values": nullable(OBJECT), "output_values": nullable(OBJECT), "action": text, "status": text, "status_reason": text, "updated_at": text}),
    ))
    add("DELETE", deployments + "/{deployment_id}", operation("Delete a software deployment", empty(204, "Deleted"), rule="software_deployments:delete", tag="software_deployments"))

    # -- saved plans (stoker's, docs/plans.md)
    add("POST", TENANT + "/plans/apply", operation(
        "Apply a saved plan: exactly the create or update it shows (stoker's)",
        {
            **ok(obj({"stack": obj({"id": STRING, "links": array(ref("Link"))})}), "Accepted: an update's plan goes on", 202),
            **ok(obj({"stack": obj({"id": STRING, "links": array(ref("Link"))})}), "Created: a create's (or an import's) plan goes on", 201, LOCATION),
            **ok(obj({"stack": obj({"id": STRING, "links": array(ref("Link"))})}), "Done: a refresh's plan (no job)"),
        },
        rule="stacks:apply_plan", tag="stacks", body=ref("Plan"), faults=STACK_WRITES,
        description="409 when the stack changed since the plan was made, or its inputs would now make another plan; 400 for a document that is not a plan of version 1.",
    ))

    # -- importing existing objects (stoker's, docs/import.md)
    add("POST", TENANT + "/imports", operation(
        "Import: a stack whose named resources take over objects that exist already (stoker's)",
        ok(obj({"stack": obj({"id": STRING, "links": array(ref("Link"))})}), "Created: the stack's import goes on", 201, LOCATION),
        rule="stacks:import", tag="stacks",
        body={"allOf": [ref("StackCreate"), obj(
            {"resources": {"type": "object", "additionalProperties": STRING, "description": "resource name -> the id of the object it takes over"}},
            optional={"accept_differences": {"type": "boolean", "description": "take the objects over although their live properties differ from the template"}},
        )]},
        faults=STACK_WRITES,
        description="400 for a resource the template does not have, a type that cannot read its live object, an empty id, an object that does not exist, or differences not accepted: no stack is made. The stack's ADOPT action checks the objects again as it starts.",
    ))
    add("POST", TENANT + "/imports/preview", operation(
        "The plan of an import: what it takes over (and how it differs from the template) and makes (stoker's)",
        ok(obj({"plan": ref("Plan")}, {"resource_changes": OBJECT, "implementations": IMPLEMENTATIONS})),
        rule="stacks:import", tag="stacks",
        body={"allOf": [ref("StackCreate"), obj(
            {"resources": {"type": "object", "additionalProperties": STRING, "description": "resource name -> the id of the object it takes over"}},
            optional={"accept_differences": {"type": "boolean", "description": "take the objects over although their live properties differ from the template"}},
        )]},
        faults=(409,),
        description="400 as the import's (an object that does not exist included); differences are shown, not refused.",
    ))

    # -- template capabilities (stoker's, docs/api.md)
    add("POST", TENANT + "/capabilities/find", operation(
        "The templates whose capabilities satisfy every requirement (stoker's)", ok(ref("CapabilitiesFound")),
        rule="capabilities:find", tag="capabilities",
        body={"allOf": [ref("CapabilitiesInput"), obj(optional={"capabilities": OBJECT})]},
    ))
    add("POST", TENANT + "/template_capabilities", operation(
        "What a set of templates offers, and how registry lists resolve (stoker's)",
        ok(ref("TemplateCapabilities")),
        rule="capabilities:template_capabilities", tag="capabilities", body=ref("CapabilitiesInput"),
    ))

    for path, operations in paths.items():
        shared = path_parameters(path)
        for spec in operations.values():
            if shared:
                spec["parameters"] = shared + spec.get("parameters", [])
    return paths


_DOCUMENT: Schema = {
    "openapi": "3.1.0",
    "info": {
        "title": "stoker: the Orchestration API v1",
        "version": "1.0",
        "description": (
            "OpenStack Heat's Orchestration API v1 as stoker serves it, and stoker's own routes (docs/api.md). "
            "Every 4xx answers with Heat's fault body. Routes under /v1/{tenant_id} need an X-Auth-Token "
            "(in auth mode none, any token or none at all is accepted; docs/auth.md)."
        ),
    },
    "tags": [{"name": name} for name in ("versions", "stacks", "snapshots", "resources", "events", "signals", "templates", "resource_types", "build_info", "services", "software_configs", "software_deployments", "capabilities")],
    "paths": _paths(),
    "components": {
        "schemas": SCHEMAS,
        "securitySchemes": {"token": {"type": "apiKey", "in": "header", "name": "X-Auth-Token", "description": "A Keystone token, or a static token (docs/auth.md)"}},
    },
    "security": TOKEN,
}


def document(server_url: str | None = None) -> Schema:
    """The OpenAPI document (a copy, the caller's to change); ``server_url``: where the
    API is served, as its ``servers``."""
    result = copy.deepcopy(_DOCUMENT)
    if server_url:
        result["servers"] = [{"url": server_url.rstrip("/") or "/"}]
    return result


async def serve_document(request: Request) -> JSONResponse:
    """``GET /openapi.json``: the document, no token needed (as ``GET /``)."""
    return JSONResponse(document(str(request.base_url)))


routes = [Route(OPENAPI_PATH, serve_document, methods=["GET"])]
