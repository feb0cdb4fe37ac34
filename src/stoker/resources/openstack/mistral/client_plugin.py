"""The ``mistral`` client plugin (Mistral's v2 API through openstacksdk's workflow proxy)
and Heat's ``mistral.workflow`` constraint.

openstacksdk's proxy sends a workflow definition but drops Mistral's answer (the names of
the workflows it made), and has no workflow update by definition nor cron trigger input of
its own shape; so every call goes through the proxy as a keystoneauth adapter (its endpoint
discovery from the catalog's ``workflowv2``, its token), as python-mistralclient sends them.
Mistral has no microversions.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from stoker.resources.openstack.client_plugin import OpenStackClientPlugin, http_status
from stoker.resources.openstack.constraints import LookupConstraint
from stoker.sdk.exceptions import ClientPluginError, EntityNotFound, ValidationError

__all__ = [
    "MistralClientPlugin",
    "MistralRequestError",
    "WorkflowConstraint",
    "client_mapping",
    "constraint_mapping",
    "no_workflow_service",
]

# The workflow service as Heat's mistral client plugin finds it in the catalog.
WORKFLOW_SERVICE_TYPE = "workflowv2"
# An execution's states: still going, done, failed (Heat's ExternalResource reads these).
RUNNING_STATES = ("IDLE", "RUNNING", "PAUSED")
SUCCESS, FAILED_STATES = "SUCCESS", ("ERROR", "CANCELLED")


class MistralRequestError(ClientPluginError):
    """Mistral refused a request; the message carries its status and its own words."""

    def __init__(self, method: str, path: str, status: int, answer: str):
        super().__init__(f"Mistral refused {method} {path}: {status} {_faultstring(answer)}")
        self.status_code = status


def _faultstring(answer: str) -> str:
    """Mistral's error text (``faultstring`` of its JSON answer), else the answer."""
    try:
        return str(json.loads(answer).get("faultstring") or answer)
    except (ValueError, AttributeError):
        return answer


class MistralClientPlugin(OpenStackClientPlugin):
    """Mistral through openstacksdk's ``connection.workflow``."""

    name = "mistral"
    service_type = "workflow"
    proxy_name = "workflow"

    def request(
        self, method: str, path: str, json_body: Any = None, text: str | None = None
    ) -> Any:
        """One request on Mistral's v2 endpoint: a JSON body, or a workflow definition as
        ``text`` (Mistral takes YAML as text/plain). The decoded answer (None when empty);
        a refusal raises MistralRequestError with its HTTP status."""
        arguments: dict[str, Any] = {"raise_exc": False}
        if text is not None:
            arguments.update(data=text.encode(), headers={"Content-Type": "text/plain"})
        elif json_body is not None:
            arguments["json"] = json_body
        response = self.client().request(path, method.upper(), **arguments)
        if response.status_code >= 400:
            raise MistralRequestError(
                method.upper(), path, response.status_code, response.text[:800]
            )
        return response.json() if response.content else None

    def is_not_found(self, error: BaseException) -> bool:
        return super().is_not_found(error) or http_status(error) == 404

    def workflow_endpoint(self) -> str | None:
        """Mistral's endpoint from the catalog, None when the cloud has no workflow service."""
        try:
            return self.connection.endpoint_for(WORKFLOW_SERVICE_TYPE)
        except Exception as error:  # noqa: BLE001 - keystoneauth's catalog errors
            if type(error).__name__ == "EndpointNotFound":
                return None
            raise

    # -- workflows ------------------------------------------------------------------

    def create_workflows(self, definition: str) -> list[dict[str, Any]]:
        """Create the workflows of a v2 definition (YAML); Mistral's records of them."""
        return list(
            (self.request("POST", "/workflows", text=definition) or {}).get("workflows", [])
        )

    def update_workflows(self, definition: str) -> list[dict[str, Any]]:
        """Replace the definitions of the workflows a v2 definition names."""
        return list((self.request("PUT", "/workflows", text=definition) or {}).get("workflows", []))

    def get_workflow(self, identifier: str) -> dict[str, Any]:
        """The workflow of this name or id; one that is not there is EntityNotFound."""
        try:
            return dict(self.request("GET", f"/workflows/{quote(identifier, safe='')}") or {})
        except MistralRequestError as error:
            if error.status_code == 404:
                raise EntityNotFound("Workflow", identifier) from None
            raise

    def delete_workflow(self, identifier: str) -> None:
        self.request("DELETE", f"/workflows/{quote(identifier, safe='')}")

    def find_workflow(self, identifier: Any) -> dict[str, Any]:
        """Heat's ``mistral.workflow`` check (``get_workflow_by_identifier``)."""
        if self.workflow_endpoint() is None:
            raise no_workflow_service(
                "a workflow reference (mistral.workflow)",
                hint="deploy Mistral in this cloud (a Zaqar queue can notify a webhook with "
                "OS::Zaqar::Subscription instead of starting a workflow)",
            )
        return self.get_workflow(str(identifier))

    # -- executions ----------------------------------------------------------------

    def create_execution(
        self,
        workflow: str,
        workflow_input: Any = None,
        description: str | None = None,
        params: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Start an execution of the workflow (a name or an id), as python-mistralclient
        sends it: input and params as JSON texts."""
        body: dict[str, Any] = {_workflow_key(workflow): workflow}
        if description is not None:
            body["description"] = description
        if workflow_input is not None:
            body["input"] = json.dumps(workflow_input)
        body["params"] = json.dumps(dict(params or {}))
        return dict(self.request("POST", "/executions", json_body=body) or {})

    def get_execution(self, execution_id: str) -> dict[str, Any]:
        try:
            return dict(self.read(lambda: self.request("GET", f"/executions/{execution_id}")) or {})
        except MistralRequestError as error:
            if error.status_code == 404:
                raise EntityNotFound("Execution", execution_id) from None
            raise

    def delete_execution(self, execution_id: str) -> None:
        # Mistral refuses to delete a running execution unless forced.
        self.request("DELETE", f"/executions/{execution_id}?force=true")

    def executions_of(self, workflow: str) -> list[dict[str, Any]]:
        """The executions of the workflow of this name, newest first."""
        path = f"/executions?workflow_name={quote(workflow, safe='')}&sort_keys=created_at&sort_dirs=desc"
        return list((self.request("GET", path) or {}).get("executions", []))

    # -- cron triggers -------------------------------------------------------------

    def create_cron_trigger(
        self,
        name: str,
        workflow: str,
        *,
        pattern: str | None,
        workflow_input: Any,
        first_time: str | None,
        count: int | None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"name": name, _workflow_key(workflow): workflow}
        if pattern:
            body["pattern"] = pattern
        if workflow_input:
            body["workflow_input"] = json.dumps(workflow_input)
        if first_time:
            body["first_execution_time"] = first_time
        if count is not None:
            body["remaining_executions"] = count
        return dict(self.request("POST", "/cron_triggers", json_body=body) or {})

    def get_cron_trigger(self, name: str) -> dict[str, Any]:
        try:
            return dict(self.request("GET", f"/cron_triggers/{quote(name, safe='')}") or {})
        except MistralRequestError as error:
            if error.status_code == 404:
                raise EntityNotFound("Cron Trigger", name) from None
            raise

    def delete_cron_trigger(self, name: str) -> None:
        self.request("DELETE", f"/cron_triggers/{quote(name, safe='')}")


def _workflow_key(workflow: str) -> str:
    """Mistral takes a workflow by id or by name, in two keys (as python-mistralclient picks)."""
    import uuid

    try:
        uuid.UUID(str(workflow))
    except ValueError:
        return "workflow_name"
    return "workflow_id"


def no_workflow_service(
    what: str,
    path: str | None = None,
    hint: str = "deploy Mistral in this cloud, or use a cloud that has it",
) -> ValidationError:
    """The refusal of a type that needs Mistral, on a cloud whose catalog has none."""
    return ValidationError(
        f"{what} needs the Mistral workflow service (service type "
        f"{WORKFLOW_SERVICE_TYPE}), and this cloud's catalog has none",
        path=path,
        hint=hint,
    )


def refuse_without_mistral(resource: Any, **hint: str) -> None:
    """Before any other check of a Mistral type: without Mistral nothing else matters."""
    if resource.client_plugin("mistral").workflow_endpoint() is None:
        raise no_workflow_service(resource.type, path=f"resources.{resource.name}", **hint)


class WorkflowConstraint(LookupConstraint):
    name, client_plugin_name, finder = "mistral.workflow", "mistral", "find_workflow"


def client_mapping() -> dict[str, type[OpenStackClientPlugin]]:
    return {"mistral": MistralClientPlugin}


def constraint_mapping() -> dict[str, type[LookupConstraint]]:
    return {WorkflowConstraint.name: WorkflowConstraint}
