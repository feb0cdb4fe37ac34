"""OS::Mistral::CronTrigger, as Heat has it.

Owns: the trigger's create (a cron pattern, a first execution time, or both, and a count
of executions; the physical id is the trigger's name, Mistral's identity for it), its
``next_execution_time`` and ``remaining_executions`` attributes, and its delete tolerating
one Mistral removed already (Mistral deletes a trigger whose executions ran out). Every
property change replaces the trigger, as in Heat (none is update_allowed).

A killed create is found again by the trigger's name (``find_created``): Mistral keeps
names unique in a project.
"""

from __future__ import annotations

from typing import Any

from stoker.resources.openstack.mistral.client_plugin import refuse_without_mistral
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.resource import Resource

__all__ = ["MistralCronTrigger", "resource_mapping"]


class MistralCronTrigger(Resource):
    """A resource implements Mistral cron trigger.

    Cron trigger is an object allowing to run workflow on a schedule. User specifies what
    workflow with what input needs to be run and also specifies how often it should be
    run. Pattern property is used to describe the frequency of workflow execution.
    """

    support_status = support.SupportStatus(version="5.0.0")
    default_client_name = "mistral"
    entity = "cron_triggers"

    PROPERTIES = (NAME, PATTERN, WORKFLOW, FIRST_TIME, COUNT) = (
        "name",
        "pattern",
        "workflow",
        "first_time",
        "count",
    )
    _WORKFLOW_KEYS = (WORKFLOW_NAME, WORKFLOW_INPUT) = ("name", "input")
    ATTRIBUTES = (NEXT_EXECUTION_TIME, REMAINING_EXECUTIONS) = (
        "next_execution_time",
        "remaining_executions",
    )

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "Name of the cron trigger."),
        PATTERN: properties.Schema(
            properties.Schema.STRING,
            "Cron expression.",
            constraints=[constraints.CustomConstraint("cron_expression")],
        ),
        WORKFLOW: properties.Schema(
            properties.Schema.MAP,
            "Workflow to execute.",
            required=True,
            schema={
                WORKFLOW_NAME: properties.Schema(
                    properties.Schema.STRING,
                    "Name or ID of the workflow.",
                    required=True,
                    constraints=[constraints.CustomConstraint("mistral.workflow")],
                ),
                WORKFLOW_INPUT: properties.Schema(
                    properties.Schema.MAP, "Input values for the workflow."
                ),
            },
        ),
        FIRST_TIME: properties.Schema(
            properties.Schema.STRING,
            'Time of the first execution in format "YYYY-MM-DD HH:MM".',
        ),
        COUNT: properties.Schema(properties.Schema.INTEGER, "Remaining executions."),
    }

    attributes_schema = {
        NEXT_EXECUTION_TIME: attributes.Schema(
            'Time of the next execution in format "YYYY-MM-DD HH:MM:SS".',
            type=attributes.Schema.STRING,
        ),
        REMAINING_EXECUTIONS: attributes.Schema(
            "Number of remaining executions.", type=attributes.Schema.INTEGER
        ),
    }

    def validate(self) -> None:
        refuse_without_mistral(self)
        super().validate()
        if not (self.properties[self.PATTERN] or self.properties[self.FIRST_TIME]):
            raise ValidationError(
                f"At least one of the following properties must be specified: {self.PATTERN}, "
                f"{self.FIRST_TIME}",
                path=f"resources.{self.name}.properties",
                hint=f'give {self.PATTERN} (a cron expression) or {self.FIRST_TIME} ("YYYY-MM-DD HH:MM", UTC)',
            )

    def _trigger_name(self) -> str:
        return self.properties[self.NAME] or self.physical_resource_name()

    def handle_create(self) -> None:
        workflow = self.properties[self.WORKFLOW]
        made = self.client_plugin().create_cron_trigger(
            self._trigger_name(),
            workflow[self.WORKFLOW_NAME],
            pattern=self.properties[self.PATTERN],
            workflow_input=workflow.get(self.WORKFLOW_INPUT),
            first_time=self.properties[self.FIRST_TIME],
            # Unset is no count (Mistral refuses 0): an unset integer reads as 0 here.
            count=self.properties[self.COUNT]
            if self.properties.data.get(self.COUNT) is not None
            else None,
        )
        self.resource_id_set(made.get("name") or self._trigger_name())

    def find_created(self) -> str | None:
        name = self._trigger_name()
        try:
            self.client_plugin().get_cron_trigger(name)
        except Exception as error:  # noqa: BLE001 - a client's own types
            self.client_plugin().ignore_not_found(error)
            return None
        return name

    def handle_delete(self) -> None:
        if self.resource_id is None:
            return
        try:
            self.client_plugin().delete_cron_trigger(self.resource_id)
        except Exception as error:  # noqa: BLE001
            # Gone already: Mistral deletes a trigger whose executions ran out.
            self.client_plugin().ignore_not_found(error)

    def handle_check(self) -> None:
        self.client_plugin().get_cron_trigger(self.resource_id)

    def _resolve_attribute(self, name: str) -> Any:
        if self.resource_id is None:
            return None
        trigger = self.client_plugin().get_cron_trigger(self.resource_id)
        if name == self.NEXT_EXECUTION_TIME:
            return trigger.get("next_execution_time")
        if name == self.REMAINING_EXECUTIONS:
            return trigger.get("remaining_executions")
        return None

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return self.client_plugin().get_cron_trigger(self.resource_id)


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Mistral::CronTrigger": MistralCronTrigger}
