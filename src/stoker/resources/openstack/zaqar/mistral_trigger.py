"""OS::Zaqar::MistralTrigger, as Heat has it: a Zaqar subscription whose subscriber is
Mistral's executions URL (through a Keystone trust), so each message starts a workflow.

Owns: its schema (Heat's), the subscription data it makes (the workflow, its params and
input as Zaqar's ``post_data``, the message passed as ``env.notification``) and the refusal
at validate time of a cloud without a workflow service. Mistral's endpoint and the
``mistral.workflow`` constraint are the mistral client plugin's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from stoker.resources.openstack.mistral.client_plugin import refuse_without_mistral
from stoker.resources.openstack.zaqar.subscription import ZaqarSubscription, ZaqarSubscriptionBase
from stoker.sdk import constraints, properties, support
from stoker.sdk.resource import Resource

__all__ = ["MistralTrigger", "resource_mapping"]


class MistralTrigger(ZaqarSubscriptionBase):
    """A Zaqar subscription for triggering Mistral workflows.

    This Zaqar subscription type listens for messages in a queue and triggers a Mistral
    workflow execution each time one is received.

    The content of the Zaqar message is passed to the workflow in the environment with the
    name "notification", and thus is accessible from within the workflow as:

        <% env().notification %>

    Other environment variables can be set using the 'env' key in the params property.
    """

    support_status = support.SupportStatus(version="8.0.0", status=support.SUPPORTED)

    PROPERTIES = (QUEUE_NAME, TTL, WORKFLOW_ID, PARAMS, INPUT) = (
        "queue_name",
        "ttl",
        "workflow_id",
        "params",
        "input",
    )

    properties_schema = {
        QUEUE_NAME: ZaqarSubscription.properties_schema[QUEUE_NAME],
        TTL: ZaqarSubscription.properties_schema[TTL],
        WORKFLOW_ID: properties.Schema(
            properties.Schema.STRING,
            "UUID of the Mistral workflow to trigger.",
            required=True,
            constraints=[constraints.CustomConstraint("mistral.workflow")],
            update_allowed=True,
        ),
        PARAMS: properties.Schema(
            properties.Schema.MAP,
            "Parameters to pass to the Mistral workflow execution. The parameters depend on the workflow type.",
            required=False,
            default={},
            update_allowed=True,
        ),
        INPUT: properties.Schema(
            properties.Schema.MAP,
            "Input values to pass to the Mistral workflow.",
            required=False,
            default={},
            update_allowed=True,
        ),
    }

    def validate(self) -> None:
        # Before the properties: without Mistral, nothing else about the trigger matters.
        refuse_without_mistral(
            self,
            hint="deploy Mistral in this cloud, or notify a webhook with OS::Zaqar::Subscription instead",
        )
        super().validate()

    def _subscriber_url(self) -> str:
        endpoint = self.client_plugin("mistral").workflow_endpoint()
        return f"trust+{str(endpoint).rstrip('/')}/executions"

    def _subscription_options(self) -> dict[str, Any]:
        params = dict(self.properties[self.PARAMS] or {})
        params["env"] = {**dict(params.get("env") or {}), "notification": "$zaqar_message$"}
        post_data = {
            self.WORKFLOW_ID: self.properties[self.WORKFLOW_ID],
            self.PARAMS: params,
            self.INPUT: self.properties[self.INPUT],
        }
        return {"post_data": json.dumps(post_data)}

    def parse_live_resource_data(
        self, resource_properties: Mapping[str, Any], resource_data: Mapping[str, Any]
    ) -> dict[str, Any]:
        options = resource_data.get("options") or {}
        post_data = json.loads(options.get("post_data", "{}"))
        params = post_data.get(self.PARAMS, {})
        environment = params.get("env", {})
        environment.pop("notification", None)
        if not environment:
            params.pop("env", None)
        return {
            self.QUEUE_NAME: resource_data.get(self.QUEUE_NAME),
            self.TTL: resource_data.get(self.TTL),
            self.WORKFLOW_ID: post_data.get(self.WORKFLOW_ID),
            self.PARAMS: params,
            self.INPUT: post_data.get(self.INPUT),
        }


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Zaqar::MistralTrigger": MistralTrigger}
