"""stoker's plan route: ``POST /v1/{tenant_id}/plans/apply`` applies a saved plan
(docs/plans.md), the document a preview with ``?plan=true`` answers.

A create's (or an import's) plan answers 201 with the new stack's id and link, as a create does; an
update's 202, as an update does; a refresh's 200, done (docs/drift.md). A plan made against a stack that has changed since,
or whose inputs would now plan otherwise, is refused with 409 saying why; a document
that is not a plan of this version with 400.
"""

from __future__ import annotations

from stoker.api import projects
from stoker.api.call import Call, Reply
from stoker.api.errors import BadRequestError
from stoker.api.openapi_components import LOCATION, STRING, array, obj, ok, operation, ref
from stoker.api.operations import Operation


def apply(call: Call) -> Reply:
    if not isinstance(call.body, dict):
        raise BadRequestError(
            "The request body must be a plan document (a JSON object)",
            hint="make one with a preview's ?plan=true",
        )
    stack = call.service.apply_plan(call.body, projects.project(call))
    href = call.stack_url(stack)
    body = {"stack": {"id": stack.id, "links": [call.link(href)]}}
    if call.body.get("operation") in ("create", "import"):
        return Reply(201, body, {"Location": href})
    if call.body.get("operation") == "refresh":
        return Reply(200, body)  # done: a refresh changes no cloud object, runs no job
    return Reply(202, body)


_CREATED = obj({"stack": obj({"id": STRING, "links": array(ref("Link"))})})

OPERATIONS = [
    Operation("POST", "/v1/{tenant_id}/plans/apply", apply, "stacks:apply_plan", operation(
        "Apply a saved plan: exactly the create or update it shows (stoker's)",
        {
            **ok(_CREATED, "Accepted: an update's plan goes on", 202),
            **ok(_CREATED, "Created: a create's (or an import's) plan goes on", 201, LOCATION),
            **ok(_CREATED, "Done: a refresh's plan (no job)"),
        },
        tag="stacks", body=ref("Plan"), faults=(409,),
        description="409 when the stack changed since the plan was made, or its inputs would now make another plan; 400 for a document that is not a plan of version 1.",
    )),
]
