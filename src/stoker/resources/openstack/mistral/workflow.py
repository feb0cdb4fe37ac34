"""OS::Mistral::Workflow, as Heat has it.

Owns: the workflow's v2 definition built from the properties (Heat's layout: the workflow
under its name, the tasks' keys with dashes, the input's names, ``task-defaults``), its
create (the physical id is the workflow's name, Mistral's identity for it), update in
place (Mistral's PUT of the new definition; a new name replaces the resource), the signal that starts an execution with the signal's input
and params over the properties', the ``executions``, ``data`` and ``alarm_url``
attributes, and the delete of the executions signals started, then of the workflow.

A killed create is found again by the workflow's name (``find_created``): Mistral keeps
names unique in a project.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import yaml

from stoker.resources.heat.scaling_policy import ALARM_CREDENTIAL_KEY, ALARM_PURPOSE, ALARM_URL_KEY
from stoker.resources.openstack.mistral.client_plugin import refuse_without_mistral
from stoker.sdk import attributes, constraints, properties, support, translation
from stoker.sdk.exceptions import ResourceFailure, ValidationError
from stoker.sdk.resource import Resource

__all__ = ["MistralWorkflow", "resource_mapping"]

# The data key of the executions signals started, newest first, comma-separated (Heat's).
EXECUTIONS_KEY = "executions"


def _list(description: str) -> properties.Schema:
    return properties.Schema(properties.Schema.LIST, description)


def _since(version: str) -> support.SupportStatus:
    return support.SupportStatus(version=version)


ON_SUCCESS_TEXT = "List of tasks which will run after the task has completed successfully."
ON_ERROR_TEXT = "List of tasks which will run after the task has completed with an error."
ON_COMPLETE_TEXT = "List of tasks which will run after the task has completed regardless of whether it is successful or not."
REQUIRES_TEXT = (
    "List of tasks which should be executed before this task. Used only in reverse workflows."
)
RETRY_TEXT = "Defines a pattern how task should be repeated in case of an error."
WAIT_BEFORE_TEXT = (
    "Defines a delay in seconds that Mistral Engine should wait before starting a task."
)
WAIT_AFTER_TEXT = (
    "Defines a delay in seconds that Mistral Engine should wait after a task has completed before starting "
    "next tasks defined in on-success, on-error or on-complete."
)
PAUSE_BEFORE_TEXT = (
    "Defines whether Mistral Engine should put the workflow on hold or not before starting a task."
)
TIMEOUT_TEXT = (
    "Defines a period of time in seconds after which a task will be failed automatically by engine if "
    "hasn't completed."
)
CONCURRENCY_TEXT = (
    "Defines a max number of actions running simultaneously in a task. Applicable only for tasks that have "
    "with-items."
)


class MistralWorkflow(Resource):
    """A resource that implements Mistral workflow.

    Workflow represents a process that can be described in a various number of ways and
    that can do some job interesting to the end user. Each workflow consists of tasks (at
    least one) describing what exact steps should be made during workflow execution.

    For detailed description how to use Workflow, read Mistral documentation.
    """

    support_status = support.SupportStatus(version="2015.1")
    default_client_name = "mistral"
    entity = "workflows"
    # Signals run under the stack's lock, so the executions they start are recorded, and
    # the stored attributes (``executions``) are read again after each.
    signal_under_lock = True
    attributes_change_on_signal = True

    PROPERTIES = (
        NAME, TYPE, DESCRIPTION, INPUT, OUTPUT, TASKS, PARAMS, TASK_DEFAULTS, USE_REQUEST_BODY_AS_INPUT, TAGS,
    ) = (
        "name", "type", "description", "input", "output", "tasks", "params", "task_defaults",
        "use_request_body_as_input", "tags",
    )  # fmt: skip
    _TASKS_KEYS = (
        TASK_NAME, TASK_DESCRIPTION, ON_ERROR, ON_COMPLETE, ON_SUCCESS, POLICIES, ACTION, WORKFLOW, PUBLISH,
        TASK_INPUT, REQUIRES, RETRY, WAIT_BEFORE, WAIT_AFTER, PAUSE_BEFORE, TIMEOUT, WITH_ITEMS, KEEP_RESULT,
        TARGET, JOIN, CONCURRENCY,
    ) = (
        "name", "description", "on_error", "on_complete", "on_success", "policies", "action", "workflow",
        "publish", "input", "requires", "retry", "wait_before", "wait_after", "pause_before", "timeout",
        "with_items", "keep_result", "target", "join", "concurrency",
    )  # fmt: skip
    # The task keys a kilo-era ``policies`` map may hold (Heat's translation moves them up).
    POLICY_KEYS = (PAUSE_BEFORE, WAIT_AFTER, WAIT_BEFORE, TIMEOUT, CONCURRENCY, RETRY)
    SIGNAL_DATA_KEYS = (SIGNAL_DATA_INPUT, SIGNAL_DATA_PARAMS) = ("input", "params")
    ATTRIBUTES = (WORKFLOW_DATA, ALARM_URL, EXECUTIONS) = ("data", "alarm_url", "executions")

    properties_schema = {
        NAME: properties.Schema(properties.Schema.STRING, "Workflow name."),
        TYPE: properties.Schema(
            properties.Schema.STRING,
            "Workflow type.",
            constraints=[constraints.AllowedValues(["direct", "reverse"])],
            required=True,
            update_allowed=True,
        ),
        USE_REQUEST_BODY_AS_INPUT: properties.Schema(
            properties.Schema.BOOLEAN,
            "Defines the method in which the request body for signaling a workflow would be parsed. In case this "
            "property is set to True, the body would be parsed as a simple json where each key is a workflow "
            'input, in other cases body would be parsed expecting a specific json format with two keys: "input" '
            'and "params".',
            update_allowed=True,
            support_status=_since("6.0.0"),
        ),
        TAGS: properties.Schema(
            properties.Schema.LIST,
            "List of tags to set on the workflow.",
            update_allowed=True,
            support_status=_since("10.0.0"),
        ),
        DESCRIPTION: properties.Schema(
            properties.Schema.STRING, "Workflow description.", update_allowed=True
        ),
        INPUT: properties.Schema(
            properties.Schema.MAP,
            "Dictionary which contains input for workflow.",
            update_allowed=True,
        ),
        OUTPUT: properties.Schema(
            properties.Schema.MAP,
            "Any data structure arbitrarily containing YAQL expressions that defines workflow output. May be "
            "nested.",
            update_allowed=True,
        ),
        PARAMS: properties.Schema(
            properties.Schema.MAP,
            "Workflow additional parameters. If Workflow is reverse typed, params requires 'task_name', which "
            "defines initial task.",
            update_allowed=True,
        ),
        TASK_DEFAULTS: properties.Schema(
            properties.Schema.MAP,
            "Default settings for some of task attributes defined at workflow level.",
            support_status=_since("5.0.0"),
            schema={
                ON_SUCCESS: _list(ON_SUCCESS_TEXT),
                ON_ERROR: _list(ON_ERROR_TEXT),
                ON_COMPLETE: _list(ON_COMPLETE_TEXT),
                REQUIRES: _list(REQUIRES_TEXT),
                RETRY: properties.Schema(properties.Schema.MAP, RETRY_TEXT),
                WAIT_BEFORE: properties.Schema(properties.Schema.INTEGER, WAIT_BEFORE_TEXT),
                WAIT_AFTER: properties.Schema(properties.Schema.INTEGER, WAIT_AFTER_TEXT),
                PAUSE_BEFORE: properties.Schema(properties.Schema.BOOLEAN, PAUSE_BEFORE_TEXT),
                TIMEOUT: properties.Schema(properties.Schema.INTEGER, TIMEOUT_TEXT),
                CONCURRENCY: properties.Schema(
                    properties.Schema.INTEGER, CONCURRENCY_TEXT, support_status=_since("8.0.0")
                ),
            },
            update_allowed=True,
        ),
        TASKS: properties.Schema(
            properties.Schema.LIST,
            "Dictionary containing workflow tasks.",
            schema=properties.Schema(
                properties.Schema.MAP,
                schema={
                    TASK_NAME: properties.Schema(
                        properties.Schema.STRING, "Task name.", required=True
                    ),
                    TASK_DESCRIPTION: properties.Schema(
                        properties.Schema.STRING, "Task description."
                    ),
                    TASK_INPUT: properties.Schema(
                        properties.Schema.MAP, "Actual input parameter values of the task."
                    ),
                    ACTION: properties.Schema(
                        properties.Schema.STRING,
                        "Name of the action associated with the task. Either action or workflow may be defined "
                        "in the task.",
                    ),
                    WORKFLOW: properties.Schema(
                        properties.Schema.STRING,
                        "Name of the workflow associated with the task. Can be defined by intrinsic function "
                        "get_resource or by name of the referenced workflow, i.e. { workflow: wf_name } or "
                        "{ workflow: { get_resource: wf_name }}. Either action or workflow may be defined in the "
                        "task.",
                        constraints=[constraints.CustomConstraint("mistral.workflow")],
                    ),
                    PUBLISH: properties.Schema(
                        properties.Schema.MAP,
                        "Dictionary of variables to publish to the workflow context.",
                    ),
                    ON_SUCCESS: _list(ON_SUCCESS_TEXT),
                    ON_ERROR: _list(ON_ERROR_TEXT),
                    ON_COMPLETE: _list(ON_COMPLETE_TEXT),
                    POLICIES: properties.Schema(
                        properties.Schema.MAP,
                        "Dictionary-like section defining task policies that influence how Mistral Engine runs "
                        "tasks. Must satisfy Mistral DSL v2.",
                        support_status=support.SupportStatus(
                            status=support.HIDDEN,
                            version="8.0.0",
                            message="Add needed policies directly to the task, Policy keyword is not needed",
                            previous_status=support.SupportStatus(
                                status=support.DEPRECATED,
                                version="5.0.0",
                                previous_status=support.SupportStatus(version="2015.1"),
                            ),
                        ),
                    ),
                    REQUIRES: _list(REQUIRES_TEXT),
                    RETRY: properties.Schema(
                        properties.Schema.MAP, RETRY_TEXT, support_status=_since("5.0.0")
                    ),
                    WAIT_BEFORE: properties.Schema(
                        properties.Schema.INTEGER, WAIT_BEFORE_TEXT, support_status=_since("5.0.0")
                    ),
                    WAIT_AFTER: properties.Schema(
                        properties.Schema.INTEGER, WAIT_AFTER_TEXT, support_status=_since("5.0.0")
                    ),
                    PAUSE_BEFORE: properties.Schema(
                        properties.Schema.BOOLEAN, PAUSE_BEFORE_TEXT, support_status=_since("5.0.0")
                    ),
                    TIMEOUT: properties.Schema(
                        properties.Schema.INTEGER, TIMEOUT_TEXT, support_status=_since("5.0.0")
                    ),
                    WITH_ITEMS: properties.Schema(
                        properties.Schema.STRING,
                        "If configured, it allows to run action or workflow associated with a task multiple "
                        "times on a provided list of items.",
                        support_status=_since("5.0.0"),
                    ),
                    KEEP_RESULT: properties.Schema(
                        properties.Schema.BOOLEAN,
                        "Allowing not to store action results after task completion.",
                        support_status=_since("5.0.0"),
                    ),
                    CONCURRENCY: properties.Schema(
                        properties.Schema.INTEGER, CONCURRENCY_TEXT, support_status=_since("8.0.0")
                    ),
                    TARGET: properties.Schema(
                        properties.Schema.STRING,
                        "It defines an executor to which task action should be sent to.",
                        support_status=_since("5.0.0"),
                    ),
                    JOIN: properties.Schema(
                        properties.Schema.STRING,
                        "Allows to synchronize multiple parallel workflow branches and aggregate their data. "
                        "Valid inputs: all - the task will run only if all upstream tasks are completed. Any "
                        "numeric value - then the task will run once at least this number of upstream tasks "
                        "are completed and corresponding conditions have triggered.",
                        support_status=_since("6.0.0"),
                    ),
                },
            ),
            required=True,
            update_allowed=True,
            constraints=[constraints.Length(min=1)],
        ),
    }

    attributes_schema = {
        WORKFLOW_DATA: attributes.Schema(
            "A dictionary which contains name and input of the workflow.",
            type=attributes.Schema.MAP,
        ),
        ALARM_URL: attributes.Schema(
            "A signed url to create executions for workflows specified in Workflow resource.",
            type=attributes.Schema.STRING,
            cache_mode=attributes.Schema.CACHE_NONE,
        ),
        EXECUTIONS: attributes.Schema(
            "List of workflows' executions, each of them is a dictionary with information about execution. "
            "Each dictionary returns values for next keys: id, workflow_name, created_at, updated_at, state for "
            "current execution state, input, output.",
            type=attributes.Schema.LIST,
        ),
    }

    def translation_rules(self, props: properties.Properties) -> list[translation.TranslationRule]:
        # A kilo-era task's ``policies`` map: its keys become the task's own, then it goes.
        rules = [
            translation.TranslationRule(
                props,
                translation.TranslationRule.REPLACE,
                [self.TASKS, key],
                value_name=self.POLICIES,
                custom_value_path=[key],
            )
            for key in self.POLICY_KEYS
        ]
        rules.append(
            translation.TranslationRule(
                props, translation.TranslationRule.DELETE, [self.TASKS, self.POLICIES]
            )
        )
        return rules

    # -- validation -------------------------------------------------------------------

    def _path(self, *parts: Any) -> str:
        return ".".join([f"resources.{self.name}.properties", *(str(part) for part in parts)])

    def validate(self) -> None:
        refuse_without_mistral(self)
        super().validate()
        self._check_definition()

    def _check_definition(self) -> None:
        """Heat's rules on the type's params and on each task. Validation skips a workflow
        whose properties refer to what is not created yet (a task's ``workflow`` given by
        ``get_resource``): create checks them again, then."""
        workflow_type = self.properties[self.TYPE]
        if workflow_type == "reverse" and not (self.properties[self.PARAMS] or {}).get("task_name"):
            raise ValidationError(
                "Mistral resource validation error: 'task_name' is not assigned in 'params' in case of reverse "
                "type workflow.",
                path=self._path(self.PARAMS),
                hint="give params: {task_name: <the task the workflow ends with>}",
            )
        for index, task in enumerate(self.properties[self.TASKS] or []):
            self._validate_task(index, task, workflow_type)

    def _validate_task(self, index: int, task: Mapping[str, Any], workflow_type: str) -> None:
        where = f"{self._path(self.TASKS)}[{index}]"
        if task.get(self.WORKFLOW) and task.get(self.ACTION):
            raise ValidationError(
                f"Cannot define the following properties at the same time: {self.WORKFLOW}, {self.ACTION}",
                path=where,
                hint="a task runs either an action or a workflow",
            )
        if not task.get(self.WORKFLOW) and not task.get(self.ACTION):
            raise ValidationError(
                f"At least one of the following properties must be specified: {self.WORKFLOW}, {self.ACTION}",
                path=where,
            )
        if task.get(self.REQUIRES) is not None and workflow_type == "direct":
            raise ValidationError(
                f"Mistral resource validation error: task {task.get(self.TASK_NAME)} contains property "
                "'requires' in case of direct workflow. Only reverse workflows can contain property 'requires'.",
                path=f"{where}.{self.REQUIRES}",
                hint="use on_success (or on_error, on_complete) in a direct workflow",
            )
        for key in task.get(self.POLICIES) or {}:
            if task.get(key) is not None:
                raise ValidationError(
                    f"Property {self.POLICIES} and {key} cannot be used both at one time.",
                    path=f"{where}.{self.POLICIES}",
                )
        if task.get(self.WITH_ITEMS) is None and task.get(self.CONCURRENCY) is not None:
            raise ValidationError(
                f"{self.CONCURRENCY} property requires {self.WITH_ITEMS} property to be specified.",
                path=f"{where}.{self.CONCURRENCY}",
                hint=f"give {self.WITH_ITEMS}, or leave {self.CONCURRENCY} out",
            )

    # -- the definition ----------------------------------------------------------------

    def _workflow_name(self, props: Mapping[str, Any] | None = None) -> str:
        return (props if props is not None else self.properties).get(
            self.NAME
        ) or self.physical_resource_name()

    def get_reference_id(self) -> str:
        return self._workflow_name()

    def _task(self, task: Mapping[str, Any]) -> dict[str, Any]:
        task = dict(task)
        # A kilo-era template's policies, when no translation moved them (Heat's build_tasks).
        task.update(task.get(self.POLICIES) or {})
        built: dict[str, Any] = {}
        if task.get(self.WORKFLOW) is not None:
            built[self.WORKFLOW] = task[self.WORKFLOW]
        for key in self._TASKS_KEYS:
            if key in (self.WORKFLOW, self.TASK_NAME, self.POLICIES) or task.get(key) is None:
                continue
            built[key.replace("_", "-")] = task[key]
        return built

    def definition(self, props: Mapping[str, Any] | None = None) -> str:
        """The workflow's Mistral v2 definition (YAML), as Heat's ``prepare_properties``."""
        props = props if props is not None else self.properties
        name = self._workflow_name(props)
        # Heat leaves out what is not set (an unset list or map reads as empty here).
        body: dict[str, Any] = {
            key: props.get(key)
            for key in (self.TYPE, self.DESCRIPTION, self.TAGS, self.OUTPUT)
            if props.get(key) not in (None, [], {})
        }
        if props.get(self.INPUT):
            body[self.INPUT] = list(props[self.INPUT])
        body[self.TASKS] = {}
        for task in props.get(self.TASKS) or []:
            body[self.TASKS][task[self.TASK_NAME]] = self._task(task)
        # Only the defaults given (an unset map reads as empty; Mistral refuses an empty one).
        task_defaults = {
            key.replace("_", "-"): value
            for key, value in (props.get(self.TASK_DEFAULTS) or {}).items()
            if value
        }
        if task_defaults:
            body["task-defaults"] = task_defaults
        return yaml.safe_dump({"version": "2.0", name: body})

    # -- create, update, delete -------------------------------------------------------

    def handle_create(self) -> None:
        self._check_definition()
        self._issue_alarm_url()
        made = self.client_plugin().create_workflows(self.definition())
        # Mistral names the workflow as the definition does: the name is its identity.
        self.resource_id_set(made[0]["name"] if made else self._workflow_name())

    def find_created(self) -> str | None:
        name = self._workflow_name()
        try:
            self.client_plugin().get_workflow(name)
        except Exception as error:  # noqa: BLE001 - a client's own types
            self.client_plugin().ignore_not_found(error)
            return None
        return name

    def needs_replace_failed(self) -> bool:
        # A workflow of a template-given name that Mistral still has is updated in place:
        # a replacement would be refused (the name is taken by the old one).
        if self.resource_id is None or self.properties[self.NAME] is None:
            return True
        try:
            self.client_plugin().get_workflow(self.resource_id)
        except Exception as error:  # noqa: BLE001
            self.client_plugin().ignore_not_found(error)
            self.resource_id_set(None)
            return True
        return False

    def handle_update(
        self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]
    ) -> None:
        if not prop_diff:
            return
        new_properties = json_snippet.properties(self.properties_schema, self.context)
        self.properties = new_properties
        # The name cannot change in place (a new one replaces the resource): Mistral's PUT
        # finds the workflow by the definition's name.
        made = self.client_plugin().update_workflows(self.definition(new_properties))
        self.resource_id_set(made[0]["name"] if made else self._workflow_name(new_properties))

    def handle_delete(self) -> None:
        plugin = self.client_plugin()
        for execution in self._execution_ids():
            try:
                plugin.delete_execution(execution)
            except Exception as error:  # noqa: BLE001
                plugin.ignore_not_found(error)
        self.data_delete(EXECUTIONS_KEY)
        signals = self.signals()
        if signals is not None and self.data().get(ALARM_CREDENTIAL_KEY):
            signals.revoke_credentials()
            self.data_delete(ALARM_URL_KEY)
            self.data_delete(ALARM_CREDENTIAL_KEY)
        if self.resource_id is None:
            return
        try:
            plugin.delete_workflow(self.resource_id)
        except Exception as error:  # noqa: BLE001
            plugin.ignore_not_found(error)

    def handle_check(self) -> None:
        self.client_plugin().get_workflow(self.resource_id)

    # -- signals ---------------------------------------------------------------------

    def _issue_alarm_url(self) -> None:
        """Heat's alarm_url is an EC2-signed URL of the resource's signal; stoker's is its
        own capability URL, valid for this workflow only (as OS::Heat::ScalingPolicy's)."""
        signals = self.signals()
        if signals is None or self.data().get(ALARM_URL_KEY):
            return
        credential = signals.issue_credential(ALARM_PURPOSE)
        self.data_set(ALARM_CREDENTIAL_KEY, credential.id)
        self.data_set(ALARM_URL_KEY, signals.waitcondition_url(credential), redact=True)

    def _signal_input_and_params(self, details: Any) -> tuple[Any, Any]:
        if self.properties[self.USE_REQUEST_BODY_AS_INPUT]:
            return details, None
        if not isinstance(details, Mapping):
            return None, None
        return details.get(self.SIGNAL_DATA_INPUT), details.get(self.SIGNAL_DATA_PARAMS)

    def _validate_signal_data(self, inputs: Any, params: Any) -> None:
        if inputs is not None:
            if not isinstance(inputs, Mapping):
                raise ValidationError(
                    f"Signal data error: Input in signal data must be a map, find a {type(inputs)}",
                    hint='send {"input": {<name>: <value>}, "params": {...}}',
                )
            known = self.properties[self.INPUT] or {}
            for key in inputs:
                if key not in known:
                    raise ValidationError(
                        f"Signal data error: Unknown input {key}",
                        hint="the workflow's input property names the inputs a signal may set: "
                        + (", ".join(sorted(known)) or "none"),
                    )
        if params is not None and not isinstance(params, Mapping):
            raise ValidationError(f"Signal data error: Params must be a map, find a {type(params)}")

    def handle_signal(self, details: Any = None) -> str:
        """Start an execution: the input and params of the template, overridden by the
        signal's. The execution's id is recorded (its ``executions`` attribute)."""
        inputs, params = self._signal_input_and_params(details)
        self._validate_signal_data(inputs, params)
        workflow_input = copy.deepcopy(self.properties[self.INPUT])
        workflow_params = copy.deepcopy(self.properties[self.PARAMS]) or {}
        if inputs:
            workflow_input = {**(workflow_input or {}), **inputs}
        if params:
            workflow_params.update(params)
        try:
            execution = self.client_plugin().create_execution(
                self._workflow_name(), workflow_input, params=workflow_params
            )
        except Exception as error:  # noqa: BLE001 - Mistral's refusal, in its words
            raise ResourceFailure(f"{type(error).__name__}: {error}") from None
        self.data_set(EXECUTIONS_KEY, ",".join([execution["id"], *self._execution_ids()]))
        return str(execution["id"])

    def check_signal_complete(self, token: str) -> str:
        return f"execution {token} started"

    def _execution_ids(self) -> list[str]:
        recorded = self.data().get(EXECUTIONS_KEY)
        return [value for value in str(recorded).split(",") if value] if recorded else []

    # -- attributes ------------------------------------------------------------------

    def _resolve_attribute(self, name: str) -> Any:
        if name == self.EXECUTIONS:
            return [self._execution(execution) for execution in self._execution_ids()]
        if name == self.WORKFLOW_DATA:
            return {self.NAME: self.resource_id, self.INPUT: self.properties[self.INPUT]}
        if name == self.ALARM_URL and self.resource_id is not None:
            return self.data().get(ALARM_URL_KEY)
        return None

    def _execution(self, execution_id: str) -> dict[str, Any]:
        found = self.client_plugin().get_execution(execution_id)
        return {
            "id": found.get("id"),
            "workflow_name": found.get("workflow_name"),
            "created_at": found.get("created_at"),
            "updated_at": found.get("updated_at"),
            "state": found.get("state"),
            "input": _decoded(found.get("input")),
            "output": _decoded(found.get("output")),
        }

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        return self.client_plugin().get_workflow(self.resource_id)

    def parse_live_resource_data(self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]) -> dict[str, Any]:
        """What Mistral keeps of the properties, read from the workflow's definition: its
        type, description, output and the input's names (their values are stoker's, each
        execution's defaults: Mistral lists the names only, as "size, zone"). The tasks
        are not compared."""
        live = super().parse_live_resource_data(resource_properties, resource_data)
        try:
            document = yaml.safe_load(resource_data.get("definition") or "") or {}
        except yaml.YAMLError:
            document = {}
        body = document.get(resource_data.get("name")) if isinstance(document, dict) else None
        if not isinstance(body, dict):
            live.pop(self.INPUT, None)  # no definition to read: nothing said of them
            return live
        given = resource_properties.get(self.INPUT) or {}
        names: dict[str, Any] = {}
        for entry in body.get(self.INPUT) or []:
            if isinstance(entry, dict) and entry:  # {name: its default in Mistral}
                name, default = next(iter(entry.items()))
                names[str(name)] = default
            else:
                names[str(entry)] = NO_DEFAULT
        if names:
            # A name the stack has: its value; one it lacks: Mistral's default, if any.
            live[self.INPUT] = {name: given.get(name, default) for name, default in names.items()}
        else:
            live[self.INPUT] = {} if given else resource_properties.get(self.INPUT)
        for key in (self.TYPE, self.DESCRIPTION, self.OUTPUT):
            if key in body:
                live[key] = body[key]
            else:  # left out of the definition: what the stack holds, if it is unset too
                live[key] = resource_properties.get(key) if resource_properties.get(key) in (None, [], {}) else None
        return live


# The live value of an input name the stack does not have and Mistral gives no default:
# an execution must give it.
NO_DEFAULT = "(no default: each execution must give it)"


def _decoded(text: Any) -> Any:
    """Mistral's JSON texts (an execution's input, output) as data."""
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text)
    except ValueError:
        return text


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Mistral::Workflow": MistralWorkflow}
