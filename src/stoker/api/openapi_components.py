"""The pieces the OpenAPI document (``api.openapi``) is composed of: the schemas of
Heat's bodies (``components.schemas``: stacks, resources, events, snapshots, software
configs and deployments, the fault, the request bodies), the path and query parameters,
the responses, and ``operation``, an operation's description, which gets its fault
responses and its security from the policy rule of the operation it describes.

What this module must not do: know the paths (each route module declares its own,
``api.operations``) or serve anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stoker.api.call import MAX_INTEGER
from stoker.plans.document import schema as plan_schema

# A plan's operations, as its JSON Schema (shipped with stoker) names them.
_PLAN_OPERATIONS = plan_schema()["properties"]["operation"]["enum"]

JSON = "application/json"

# -- schema pieces -------------------------------------------------------------------------

Schema = dict[str, Any]


def ref(name: str) -> Schema:
    return {"$ref": f"#/components/schemas/{name}"}


def nullable(schema: Schema) -> Schema:
    return {"anyOf": [schema, {"type": "null"}]}


def obj(required: dict[str, Schema] | None = None, optional: dict[str, Schema] | None = None, extra: bool = True, description: str | None = None) -> Schema:
    """An object with ``required`` keys and ``optional`` ones; ``extra``: other keys allowed."""
    schema: Schema = {"type": "object", "properties": {**(required or {}), **(optional or {})}}
    if required:
        schema["required"] = list(required)
    if not extra:
        schema["additionalProperties"] = False
    if description:
        schema["description"] = description
    return schema


def array(items: Schema) -> Schema:
    return {"type": "array", "items": items}


STRING: Schema = {"type": "string"}
BOOLEAN: Schema = {"type": "boolean"}
ANY: Schema = {}
OBJECT: Schema = {"type": "object"}
NULL: Schema = {"type": "null"}
# Heat's times (heat/common/timeutils.isotime): UTC, whole seconds, a Z.
TIME: Schema = {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$"}
# <ACTION>_<STATUS>, Heat's stack_status and resource_status.
STATE: Schema = {"type": "string", "pattern": r"^[A-Z]+_(IN_PROGRESS|COMPLETE|FAILED)$"}
TEMPLATE_OR_TEXT: Schema = {"anyOf": [OBJECT, STRING], "description": "an object, or its YAML or JSON text"}

# A plan's changes (engine.preview): an update preview's, and a create preview's with
# stoker's ``with_plan``.
RESOURCE_CHANGES: Schema = obj(
    {
        key: array(obj(
            {"resource_name": STRING, "resource_type": STRING, "reason": STRING},
            {
                "property_changes": {"type": "object", "additionalProperties": OBJECT, "description": "stoker's: property -> {old, new}"},
                "parent_resource": {**STRING, "description": "show_nested: the resource whose nested stack holds this one"},
                "nested_in": {**STRING, "description": "stoker's, show_nested: the dotted path of parent resources from the stack previewed"},
            },
        ))
        for key in ("added", "deleted", "replaced", "updated", "unchanged")
    }
)
# stoker's (docs/api.md): the template each candidate list of the environment chose.
IMPLEMENTATIONS: Schema = array(obj({"resource_name": STRING, "resource_type": STRING, "template": nullable(STRING), "requires": STRING}))

# seed 003: an environment's requires, each capability to a value or a list of values.
_SCALAR: Schema = {"anyOf": [STRING, {"type": "number"}, BOOLEAN]}
REQUIREMENTS: Schema = {"type": "object", "additionalProperties": {"anyOf": [_SCALAR, {**array(_SCALAR), "minItems": 1}]}}
CAPABILITY_VALUES: Schema = {"type": "object", "additionalProperties": array(STRING)}

SCHEMAS: dict[str, Schema] = {
    "Fault": obj(
        {
            "code": {"type": "integer", "minimum": 400, "maximum": 599},
            "title": STRING,
            "explanation": STRING,
            "error": obj(
                {"type": STRING, "message": STRING, "traceback": {"type": "null"}},
                {"details": {"type": "string", "description": "stoker's: the problems with their places, where the message is Heat's verbatim text"}},
            ),
        },
        extra=False,
        description="Heat's fault body (heat/api/middleware/fault.py); never a traceback.",
    ),
    "Link": obj({"href": STRING, "rel": STRING}),
    "StackSummary": obj(
        {
            "id": STRING,
            "links": array(ref("Link")),
            "stack_name": STRING,
            "description": STRING,
            "stack_status": STATE,
            "stack_status_reason": STRING,
            "creation_time": TIME,
            "updated_time": nullable(TIME),
            "deletion_time": nullable(TIME),
            "stack_owner": {"type": "null"},
            "parent": nullable(STRING),
            "stack_user_project_id": {**nullable(STRING), "description": "the stack user domain's project its users live in (null: none, or the stack's own project)"},
            "tags": nullable(array(STRING)),
        },
        {"project": {"type": "string", "description": "with global_tenant=true only"}},
        description="A stack in a list (Heat's stacks_view basic keys).",
    ),
    "Output": obj(
        {"output_key": STRING, "description": STRING, "output_value": ANY},
        {"output_error": {"type": "string", "description": "why the value cannot be computed (the value is then null)"}},
    ),
    "StackDetail": {
        "allOf": [
            ref("StackSummary"),
            obj(
                {
                    "template_description": STRING,
                    "parameters": {"type": "object", "additionalProperties": STRING, "description": "values as text; hidden ones as ******"},
                    "notification_topics": array(ANY),
                    "capabilities": array(ANY),
                    "disable_rollback": BOOLEAN,
                    "timeout_mins": nullable({"type": "integer"}),
                },
                {
                    "outputs": {**array(ref("Output")), "description": "unless resolve_outputs=false, or the stack is deleted"},
                    "implementations": {"type": "object", "additionalProperties": STRING, "description": "stoker's (docs/api.md): resource name -> the candidate template chosen"},
                    "stoker_drift": {**nullable(ref("DriftSummary")), "description": "stoker's (docs/drift.md): the last drift detection's counts, null before the first"},
                },
            ),
        ]
    },
    "DriftSummary": obj(
        {
            "stack_status": {"enum": ["IN_SYNC", "DRIFTED"]},
            "resources": {"type": "integer"},
            "in_sync": {"type": "integer"},
            "modified": {"type": "integer"},
            "deleted": {"type": "integer"},
            "not_checked": {"type": "integer"},
        },
        {"detected_at": TIME},
    ),
    "Drift": obj(
        {
            "stack_id": STRING,
            "stack_name": STRING,
            "detected_at": TIME,
            "summary": ref("DriftSummary"),
            "resources": array(
                obj(
                    {
                        "path": STRING,
                        "resource_name": STRING,
                        "resource_type": STRING,
                        "physical_resource_id": nullable(STRING),
                        "stack_id": STRING,
                        "status": {"enum": ["IN_SYNC", "MODIFIED", "DELETED", "NOT_CHECKED"]},
                        "reason": STRING,
                        "properties": array(obj({"name": STRING, "expected": ANY, "actual": ANY})),
                    }
                )
            ),
        },
        description="stoker's drift detection (docs/drift.md): every resource's live object compared with what the stack holds.",
    ),
    "StackPreview": obj(
        {
            "id": {"const": "None"},
            "links": array(ref("Link")),
            "stack_name": STRING,
            "parameters": {"type": "object", "additionalProperties": STRING},
            "resources": array(ANY),
            "creation_time": TIME,
        },
        {
            "description": STRING,
            "template_description": STRING,
            "disable_rollback": BOOLEAN,
            "timeout_mins": nullable({"type": "integer"}),
            "outputs": array(ANY),
        },
        description="Heat's preview_stack through its stacks view.",
    ),
    "ResourceChanges": {
        "anyOf": [
            obj({"resource_changes": RESOURCE_CHANGES}, {"implementations": IMPLEMENTATIONS, "implementation_changes": array(OBJECT), "plan": ref("Plan")}),
            obj({"plan": ref("Plan")}, description="stoker's refresh_only: what a refresh would take from the live objects (operation refresh)"),
        ],
    },
    # stoker's (docs/plans.md): its full JSON Schema is src/stoker/plans/plan.schema.json.
    "Plan": obj(
        {"format": {"const": "stoker-plan"}, "version": {"const": 1}, "operation": {"enum": _PLAN_OPERATIONS}, "stack": OBJECT, "resources": array(OBJECT), "outputs": array(OBJECT), "summary": OBJECT},
        {"inputs": OBJECT, "created_at": STRING, "done": BOOLEAN},
        description="A plan: what a create, update or refresh would do to each resource and output, and the inputs to apply it with (plan.schema.json)",
    ),
    "Resource": obj(
        {
            "links": array(ref("Link")),
            "logical_resource_id": STRING,
            "resource_name": STRING,
            "physical_resource_id": STRING,
            "resource_type": STRING,
            "resource_status": STATE,
            "resource_status_reason": STRING,
            "creation_time": nullable(TIME),
            "updated_time": nullable(TIME),
            "required_by": array(STRING),
        },
        {"parent_resource": STRING, "description": STRING},
    ),
    "ResourceDetail": {"allOf": [ref("Resource"), obj({"description": STRING, "attributes": OBJECT})]},
    "Event": obj(
        {
            "id": STRING,
            "links": array(ref("Link")),
            "event_time": TIME,
            "logical_resource_id": STRING,
            "resource_name": STRING,
            "resource_status": STATE,
            "resource_status_reason": STRING,
            "physical_resource_id": STRING,
        }
    ),
    "EventDetail": {"allOf": [ref("Event"), obj({"resource_type": STRING, "resource_properties": OBJECT})]},
    "Snapshot": obj(
        {
            "id": STRING,
            "name": nullable(STRING),
            "status": {"enum": ["IN_PROGRESS", "COMPLETE", "FAILED"]},
            "status_reason": STRING,
            "data": nullable(OBJECT),
            "creation_time": TIME,
        }
    ),
    "SoftwareConfigSummary": obj({"id": STRING, "name": nullable(STRING), "group": nullable(STRING), "creation_time": TIME}),
    "SoftwareConfig": {
        "allOf": [
            ref("SoftwareConfigSummary"),
            obj({"config": ANY, "inputs": nullable(array(OBJECT)), "outputs": nullable(array(OBJECT)), "options": nullable(OBJECT)}),
        ]
    },
    "SoftwareDeployment": obj(
        {
            "id": STRING,
            "server_id": STRING,
            "config_id": STRING,
            "input_values": nullable(OBJECT),
            "output_values": nullable(OBJECT),
            "action": nullable(STRING),
            "status": nullable(STRING),
            "status_reason": nullable(STRING),
            "creation_time": TIME,
        },
        {"updated_time": TIME},
    ),
    "StreamMessage": {
        "description": "One message of an event stream (the fields of a server-sent event; data is JSON text).",
        "oneOf": [
            obj({"event": {"const": "event"}, "id": {"type": "string", "pattern": r"^\d+-\d+$"}, "data": {
                "type": "string", "contentMediaType": JSON,
                "contentSchema": {"allOf": [ref("Event"), obj({"stack_path": {"type": "string", "description": "resource names down to the nested stack, joined by ."}})]},
            }}),
            obj({"event": {"const": "stack"}, "data": {"type": "string", "contentMediaType": JSON, "contentSchema": obj({"stack": nullable(ref("StackSummary"))})}}),
            obj({"event": {"const": "error"}, "data": {"type": "string", "contentMediaType": JSON, "contentSchema": obj({"error": STRING})}}),
        ],
    },
    # -- request bodies ------------------------------------------------------------------
    "StackInput": obj(
        optional={
            "template": TEMPLATE_OR_TEXT,
            "template_url": {"type": "string", "description": "refused: this server never fetches a URL; send the template itself"},
            "template_name": {"type": "string", "maxLength": 4096, "description": "stoker's own: the name the client read the template by (its path), used only to place errors (bad.yaml:4:11: ...)"},
            "files": {"type": "object", "additionalProperties": STRING, "description": "name -> the file's text (get_file, nested templates, environment files)"},
            "environment": TEMPLATE_OR_TEXT,
            "environment_files": {**array(STRING), "description": "names in files, merged in order; environment is then ignored"},
            "parameters": {"type": "object", "description": "parameter name -> value"},
            "disable_rollback": BOOLEAN,
            "timeout_mins": {"type": "integer", "minimum": 0, "maximum": MAX_INTEGER},
            "tags": {"anyOf": [array({"type": "string", "maxLength": 80}), STRING], "description": "a list, or comma-separated text"},
        },
        description="What a stack create, preview, update or validate carries (Heat's InstantiationData).",
    ),
    "StackCreate": {
        "allOf": [
            ref("StackInput"),
            obj(
                {"stack_name": {"type": "string", "pattern": r"^[a-zA-Z][a-zA-Z0-9_.-]{0,254}$"}},
                {"adopt_stack_data": {"anyOf": [OBJECT, STRING], "description": "an abandoned stack's data (or its JSON text): adopt instead of create"}},
            ),
        ],
        "description": "A template (or adopt_stack_data) is needed; without one the answer is 400.",
    },
    "StackUpdate": {
        "allOf": [
            ref("StackInput"),
            obj(optional={
                "clear_parameters": array(STRING),
                "converge": {**BOOLEAN, "description": "start from the live objects, changing back what drifted (Heat's; docs/drift.md)"},
                "refresh_only": {**BOOLEAN, "description": "stoker's: given alone, the stack takes the live objects' values and the cloud is not changed (docs/drift.md); answered 200 with what was taken"},
            }),
        ],
        "description": "PUT replaces the template and parameters; PATCH keeps what is not given.",
    },
    # seed 003's introspection (environment.capabilities): what a client reads of
    # /capabilities/find and /template_capabilities, every field typed.
    "CapabilitiesSkipped": obj(
        {"template": STRING, "reason": STRING}, extra=False,
        description="A template that could not be read, and why.",
    ),
    "CapabilitiesCandidate": obj(
        {"template": STRING, "matched": BOOLEAN, "reasons": array(STRING)}, extra=False,
        description="One candidate template of a registry list: whether its capabilities satisfy the requirements that bear on the type, and why (or why not).",
    ),
    "CapabilitiesResolution": obj(
        {
            "resource_type": STRING,
            "resource_name": {**nullable(STRING), "description": "the resource of a per-resource registry entry; null for a type's entry"},
            "chosen": {**nullable(STRING), "description": "the one candidate that matched; null when none or several did"},
            "requires": REQUIREMENTS,
            "candidates": array(ref("CapabilitiesCandidate")),
            "not_considered": {**array(STRING), "description": "requirements no candidate declares, set aside for this choice"},
        },
        extra=False,
        description="How one registry list of candidate templates resolves by the environment's requires.",
    ),
    "TemplateCapabilities": obj(
        {
            "capabilities": {**CAPABILITY_VALUES, "description": "each capability with the values the templates offer, in the order first seen"},
            "resource_types": {**CAPABILITY_VALUES, "description": "each resource type with the templates that may implement it"},
            "requires": REQUIREMENTS,
            "resolutions": array(ref("CapabilitiesResolution")),
        },
        {"skipped": array(ref("CapabilitiesSkipped"))},
        extra=False,
    ),
    "CapabilitiesFound": obj(
        {"templates": array(STRING)},
        {"skipped": array(ref("CapabilitiesSkipped"))},
        extra=False,
    ),
    "CapabilitiesInput": obj(
        {"files": {"type": "object", "additionalProperties": STRING}},
        {
            "templates": array(STRING),
            "environment_files": array(STRING),
            "environment": TEMPLATE_OR_TEXT,
        },
    ),
}


# -- parameters ----------------------------------------------------------------------------

PATH_PARAMETERS = {
    "tenant_id": "The project (Keystone's project id); a token's project unless the caller is a cloud admin.",
    "stack_name": "The stack's name (a lookup route also takes its id).",
    "stack_id": "The stack's id.",
    "resource_name": "The resource's name in its stack.",
    "constraint_name": "A custom constraint's name (nova.flavor, glance.image, neutron.network...).",
    "event_id": "The event's id.",
    "output_key": "The output's name.",
    "snapshot_id": "The snapshot's id.",
    "type_name": "A resource type, e.g. OS::Heat::RandomString.",
    "template_version": "A template version, e.g. 2021-04-16 or heat_template_version.2021-04-16.",
    "config_id": "The software config's id.",
    "deployment_id": "The software deployment's id.",
    "server_id": "The server's id.",
    "credential_id": "The id of a capability URL's credential.",
}


def path_parameters(path: str) -> list[Schema]:
    names = [part[1:-1] for part in path.split("/") if part.startswith("{")]
    return [{"name": name, "in": "path", "required": True, "description": PATH_PARAMETERS[name], "schema": STRING} for name in names]


def query(name: str, schema: Schema, description: str, required: bool = False, many: bool = False) -> Schema:
    if many:
        schema = array(schema)
    parameter: Schema = {"name": name, "in": "query", "required": required, "description": description, "schema": schema}
    if many:
        parameter.update({"style": "form", "explode": True})
    return parameter


COUNT: Schema = {"type": "integer", "minimum": 0, "maximum": MAX_INTEGER}
SORT_DIR: Schema = {"enum": ["asc", "desc"]}


def flag(name: str, description: str) -> Schema:
    return query(name, BOOLEAN, description)


STACK_LIST_QUERY = [
    *(query(name, STRING, f"only stacks whose {what} is one of these", many=True) for name, what in (
        ("id", "id"), ("name", "name"), ("stack_name", "name"), ("status", "status (COMPLETE or CREATE_COMPLETE)"),
        ("stack_status", "status"), ("action", "action"), ("stack_action", "action"), ("owner_id", "parent stack"), ("parent", "parent stack"),
    )),
    query("tags", STRING, "comma-separated: stacks with every one of these tags"),
    query("tags_any", STRING, "comma-separated: stacks with any of these tags"),
    query("not_tags", STRING, "comma-separated: stacks without all of these tags"),
    query("not_tags_any", STRING, "comma-separated: stacks with none of these tags"),
    flag("show_nested", "nested stacks too"),
    flag("show_hidden", "hidden stacks too"),
    flag("show_deleted", "deleted stacks too"),
    flag("global_tenant", "every project's stacks, each with its project (a cloud admin's only: 403 otherwise)"),
    query("sort_keys", {"enum": ["stack_name", "name", "stack_status", "status", "creation_time", "created_at", "updated_time", "updated_at"]}, "sort by these", many=True),
    query("sort_dir", SORT_DIR, "sort direction (default desc)"),
    query("marker", STRING, "the id of the last stack of the previous page"),
    query("limit", COUNT, "at most this many; a full page has a next link"),
]

EVENT_LIST_QUERY = [
    query("resource_status", STRING, "only events of this status (COMPLETE or CREATE_COMPLETE)", many=True),
    query("resource_action", STRING, "only events of this action", many=True),
    query("resource_name", STRING, "only events of this resource", many=True),
    query("resource_type", STRING, "only events of resources of this type", many=True),
    query("sort_dir", SORT_DIR, "asc (default): oldest first"),
    query("marker", STRING, "an event id: the events after it"),
    query("limit", COUNT, "at most this many"),
    query("nested_depth", COUNT, "nested stacks' events this many levels down"),
]

RESOURCE_LIST_QUERY = [
    *(query(name, STRING, f"only resources whose {name} is one of these", many=True) for name in ("type", "status", "name", "action", "id", "physical_resource_id")),
    query("nested_depth", COUNT, "nested stacks' resources this many levels down"),
    flag("with_detail", "each resource's description too"),
]

SECRET = query("secret", STRING, "the capability URL's secret", required=True)


# -- responses -----------------------------------------------------------------------------

FAULTS = {
    400: "The request is malformed (body, query parameter or template), or refused as invalid.",
    401: "No token, or one the server does not accept.",
    403: "The policy refuses it, or the path names another project.",
    404: "No such route, stack, resource or item in the caller's project.",
    409: "The stack is busy with another action, or exists already.",
    413: "The body is over the size limit.",
    429: "The project has as many event streams open as the server allows.",
    503: "Keystone does not answer (keystone auth mode).",
}


def fault(status: int) -> Schema:
    return {"description": FAULTS[status], "content": {JSON: {"schema": ref("Fault")}}}


def ok(schema: Schema, description: str = "OK", status: int = 200, headers: Schema | None = None) -> dict[str, Schema]:
    response: Schema = {"description": description, "content": {JSON: {"schema": schema}}}
    if headers:
        response["headers"] = headers
    return {str(status): response}


def empty(status: int, description: str) -> dict[str, Schema]:
    return {str(status): {"description": description}}


LOCATION = {"Location": {"description": "the URL", "schema": STRING}}
REDIRECT = ok(obj({"location": STRING}), "Found: the stack's canonical URL (any method: the client repeats it there)", 302, LOCATION)
TOKEN: list[dict[str, list[str]]] = [{"token": []}]  # a security requirement: scheme -> scopes
NO_TOKEN: list[Schema] = []


@dataclass(frozen=True)
class OperationSpec:
    """An operation's description without its policy rule (``operation``): its rule is
    its declaration's (``api.operations.Operation``), given to ``document``."""

    summary: str
    responses: dict[str, Schema]
    tag: str
    parameters: list[Schema] | None = None
    body: Schema | None = None
    body_required: bool = True
    faults: tuple[int, ...] = ()
    security: list[Schema] | None = None
    description: str | None = None

    def document(self, rule: str | None) -> Schema:
        """The OpenAPI operation object; ``rule``: its policy rule (None: a route that
        needs no token), which decides its security and its 401, 403 and 503."""
        secured = rule is not None
        codes = {400, 404, *self.faults} | ({401, 403, 503} if secured else set())
        if self.body is not None:
            codes |= {400, 413}
        result: Schema = {"summary": self.summary, "tags": [self.tag], "responses": {**self.responses, **{str(code): fault(code) for code in sorted(codes)}}}
        if self.description:
            result["description"] = self.description
        if self.parameters:
            result["parameters"] = self.parameters
        if self.body is not None:
            result["requestBody"] = {"required": self.body_required, "content": {JSON: {"schema": self.body}}}
        result["security"] = self.security if self.security is not None else (TOKEN if secured else NO_TOKEN)
        if rule:
            result["x-policy-rule"] = rule
        return result


def operation(
    summary: str,
    responses: dict[str, Schema],
    *,
    tag: str,
    parameters: list[Schema] | None = None,
    body: Schema | None = None,
    body_required: bool = True,
    faults: tuple[int, ...] = (),
    security: list[Schema] | None = None,
    description: str | None = None,
) -> OperationSpec:
    """One operation's description; its fault responses and security come from the rule
    of the operation it describes (``OperationSpec.document``)."""
    return OperationSpec(summary, responses, tag, parameters, body, body_required, faults, security, description)
