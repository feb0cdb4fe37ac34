"""OS::Mistral::ExternalResource, as Heat has it: a resource whose create, update,
suspend, resume and delete are Mistral workflows of the template's choosing.

Owns: starting the workflow an action names (its params, the resource's input, and once
the resource exists the outputs of the earlier executions as ``env.heat_extresource_data``),
polling its execution (IDLE, RUNNING and PAUSED wait, SUCCESS completes, ERROR and
CANCELLED fail with Mistral's ``state_info``), merging each execution's output into the
``output`` attribute, the physical id (the output's ``resource_id``, else the execution's
id), and the update rules: an input of ``replace_on_change_inputs`` that changes replaces
the resource, and ``always_update`` runs the UPDATE workflow even when nothing changed.

The execution's id is the handler's token, persisted as soon as the handler returns, so
an engine that restarts polls the same execution. An action without a workflow does
nothing. A create killed between Mistral's answer and that write runs its workflow again
when resumed: an execution has no name of the resource's to be found by.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.mistral.client_plugin import (
    FAILED_STATES,
    RUNNING_STATES,
    SUCCESS,
    refuse_without_mistral,
)
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ResourceFailure
from stoker.sdk.resource import Resource

__all__ = ["MistralExternalResource", "resource_mapping"]

# The data key holding the merged outputs of the executions so far (a JSON text, Heat's).
OUTPUTS_KEY = "outputs"
# The env key a workflow reads those outputs from.
ENV_DATA_KEY = "heat_extresource_data"


class MistralExternalResource(Resource):
    """A plugin for managing user-defined resources via Mistral workflows.

    This resource allows users to manage resources that are not known to Heat. The user
    may specify a Mistral workflow to handle each resource action, such as CREATE, UPDATE,
    or DELETE.

    The workflows may return an output named 'resource_id', which will be treated as the
    physical ID of the resource by Heat.

    Once the resource is created, subsequent workflow runs will receive the output of the
    last workflow execution in the 'heat_extresource_data' key in the workflow environment
    (accessible as ``env().heat_extresource_data`` in the workflow).

    The template author may specify a subset of inputs as causing replacement of the
    resource when they change, as an alternative to running the UPDATE workflow.
    """

    support_status = support.SupportStatus(version="9.0.0")
    default_client_name = "mistral"
    entity = "executions"

    _ACTION_PROPERTIES = (WORKFLOW, PARAMS) = ("workflow", "params")
    PROPERTIES = (EX_ACTIONS, INPUT, DESCRIPTION, REPLACE_ON_CHANGE, ALWAYS_UPDATE) = (
        "actions",
        "input",
        "description",
        "replace_on_change_inputs",
        "always_update",
    )
    ATTRIBUTES = (OUTPUT,) = ("output",)

    _action_properties_schema = properties.Schema(
        properties.Schema.MAP,
        "Dictionary which defines the workflow to run and its params.",
        schema={
            WORKFLOW: properties.Schema(
                properties.Schema.STRING,
                "Workflow to execute.",
                required=True,
                constraints=[constraints.CustomConstraint("mistral.workflow")],
            ),
            PARAMS: properties.Schema(
                properties.Schema.MAP,
                'Workflow additional parameters. If workflow is reverse typed, params requires "task_name", '
                "which defines initial task.",
                default={},
            ),
        },
    )

    properties_schema = {
        EX_ACTIONS: properties.Schema(
            properties.Schema.MAP,
            "Resource action which triggers a workflow execution.",
            schema={
                Resource.CREATE: _action_properties_schema,
                Resource.UPDATE: _action_properties_schema,
                Resource.SUSPEND: _action_properties_schema,
                Resource.RESUME: _action_properties_schema,
                Resource.DELETE: _action_properties_schema,
            },
            required=True,
        ),
        INPUT: properties.Schema(
            properties.Schema.MAP,
            "Dictionary which contains input for the workflows.",
            update_allowed=True,
            default={},
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Workflow execution description.", default="Heat managed"
        ),
        REPLACE_ON_CHANGE: properties.Schema(
            properties.Schema.LIST,
            "A list of inputs that should cause the resource to be replaced when their values change.",
            default=[],
        ),
        ALWAYS_UPDATE: properties.Schema(
            properties.Schema.BOOLEAN,
            "Triggers UPDATE action execution even if input is unchanged.",
            default=False,
        ),
    }

    attributes_schema = {
        OUTPUT: attributes.Schema("Output from the execution.", type=attributes.Schema.MAP),
    }

    def validate(self) -> None:
        refuse_without_mistral(self)
        super().validate()

    # -- the update rules -----------------------------------------------------------

    def needs_replace_with_prop_diff(
        self,
        changed_properties_set: set[str],
        after_props: Mapping[str, Any],
        before_props: Mapping[str, Any],
    ) -> bool:
        old_inputs = before_props.get(self.INPUT) or {}
        new_inputs = after_props.get(self.INPUT) or {}
        return any(
            old_inputs.get(name) != new_inputs.get(name)
            for name in after_props.get(self.REPLACE_ON_CHANGE) or []
        )

    def updates_when_unchanged(self) -> bool:
        """Heat's ``always_update``: the UPDATE workflow runs at every stack update."""
        return bool(self.properties[self.ALWAYS_UPDATE])

    # -- running an action's workflow ------------------------------------------------

    def _outputs(self) -> dict[str, Any]:
        return dict(json.loads(self.data().get(OUTPUTS_KEY) or "{}"))

    def _start(self, action: str, inputs: Any = None) -> str | None:
        """Start the workflow ``action`` names; its execution's id (None: no workflow)."""
        action_data = (self.properties[self.EX_ACTIONS] or {}).get(action)
        if not action_data:
            return None
        params = copy.deepcopy(dict(action_data.get(self.PARAMS) or {}))
        if self.resource_id:
            # The outputs of the earlier executions, for this one to read.
            params["env"] = {**dict(params.get("env") or {}), ENV_DATA_KEY: self._outputs()}
        execution = self.client_plugin().create_execution(
            action_data[self.WORKFLOW],
            inputs or self.properties[self.INPUT],
            description=self.properties[self.DESCRIPTION],
            params=params,
        )
        return str(execution["id"])

    def _finished(self, action: str, execution_id: str | None) -> bool:
        if not execution_id:
            return True
        execution = self.client_plugin().get_execution(execution_id)
        state = execution.get("state")
        if state in RUNNING_STATES:
            return False
        if state in FAILED_STATES:
            raise ResourceFailure(
                f"{action} workflow execution {execution_id} ended {state}: {execution.get('state_info')}"
            )
        if state != SUCCESS:
            raise ResourceFailure(
                f"Mistral execution is in unknown state. (execution {execution_id}: {state})"
            )
        output = json.loads(execution.get("output") or "{}")
        outputs = self._outputs()
        outputs.update(output)
        self.data_set(OUTPUTS_KEY, json.dumps(outputs))
        physical_id = output.get("resource_id") or execution_id
        self.resource_id_set(str(physical_id)[:255])
        return True

    def handle_create(self) -> str | None:
        return self._start(self.CREATE)

    def check_create_complete(self, token: str | None) -> bool:
        return self._finished(self.CREATE, token)

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> str | None:
        self.properties = json_snippet.properties(self.properties_schema, self.context)
        return self._start(self.UPDATE, prop_diff.get(self.INPUT))

    def check_update_complete(self, token: str | None) -> bool:
        return self._finished(self.UPDATE, token)

    def handle_suspend(self) -> str | None:
        return self._start(self.SUSPEND)

    def check_suspend_complete(self, token: str | None) -> bool:
        return self._finished(self.SUSPEND, token)

    def handle_resume(self) -> str | None:
        return self._start(self.RESUME)

    def check_resume_complete(self, token: str | None) -> bool:
        return self._finished(self.RESUME, token)

    def handle_delete(self) -> str | None:
        return self._start(self.DELETE)

    def check_delete_complete(self, token: str | None) -> bool:
        return self._finished(self.DELETE, token)

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id and name == self.OUTPUT:
            # Heat hands out the stored JSON text; the attribute's type is a map, given here.
            return self._outputs()
        return None

    def _show_resource(self) -> dict[str, Any] | None:
        return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Mistral::ExternalResource": MistralExternalResource}
