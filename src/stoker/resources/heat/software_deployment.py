"""OS::Heat::SoftwareDeployment and OS::Heat::SoftwareDeploymentGroup: a software config
applied to a server, which signals back the outcome.

At each action it is triggered for, a deployment stores a *derived* config (the config
with the deployment's input values and Heat's ``deploy_*`` inputs, among them where and
how to signal) and points its stored deployment (``sdk.software_config``'s
``SoftwareDeployments``: Heat's software_deployments, served by the API too) at it. The
server's agent finds the derived config in its metadata, runs it and signals the
outputs; the deployment then completes, or fails on a non-zero ``deploy_status_code`` or
an ``error_output``. Signals come through stoker's own capability URL (CFN_SIGNAL: POST;
TEMP_URL_SIGNAL: PUT), a credential valid only for this deployment and revoked when it is
deleted; TEMP_URL_SIGNAL on a cloud whose catalog has Swift uses a Swift temp URL instead,
as Heat does (``resources/openstack/swift/temp_url_signal.py``), read at each poll;
ZAQAR_SIGNAL gives the agent a Zaqar queue and a Keystone stack user to post with
(``resources/openstack/zaqar/signal_queue.py``), popped at each poll, as Heat's engine
does. A deployment to a server of this stack whose transport is ZAQAR_MESSAGE posts the
server's new metadata to the server's queue (Heat's ``_push_metadata_software_deployments``). Waiting is polling the stored deployment, so a wait survives an engine restart
and a signal sent while no engine runs is not lost.

Must not: sleep, or put a signal URL (it holds a secret) into a message.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, ClassVar

from stoker.resources import server_transport
from stoker.resources.heat.wait_condition_handle import kept_signals
from stoker.resources.openstack.keystone import stack_user
from stoker.resources.openstack.swift import temp_url_signal
from stoker.resources.openstack.zaqar import signal_queue
from stoker.resources.unserved import ServedValues
from stoker.sdk import attributes, constraints, properties, support
from stoker.sdk.exceptions import (
    InvalidTemplateAttribute,
    StokerError,
    UpdateReplace,
    ValidationError,
)
from stoker.sdk.resource import Resource
from stoker.sdk.software_config import (
    SoftwareConfigNotFoundError,
    SoftwareDeploymentNotFoundError,
    software_configs,
    software_deployments,
)

SIGNAL_TRANSPORTS = (CFN_SIGNAL, TEMP_URL_SIGNAL, HEAT_SIGNAL, NO_SIGNAL, ZAQAR_SIGNAL) = (
    "CFN_SIGNAL",
    "TEMP_URL_SIGNAL",
    "HEAT_SIGNAL",
    "NO_SIGNAL",
    "ZAQAR_SIGNAL",
)
# Heat's default_deployment_signal_transport; stoker serves it with its own URL.
DEFAULT_SIGNAL_TRANSPORT = CFN_SIGNAL
# What a transport stoker cannot serve is missing (every one is served now).
UNSERVED_SIGNAL_TRANSPORTS: dict[str, str] = {}
# Transports whose agent authenticates as the deployment's Keystone stack user.
STACK_USER_TRANSPORTS = (HEAT_SIGNAL, ZAQAR_SIGNAL)
_VERBS = {CFN_SIGNAL: "POST", TEMP_URL_SIGNAL: "PUT"}

# Keys of the deployment's data: its signal credential and URL (the URL holds the secret).
CREDENTIAL_ID, SIGNAL_URL = "credential_id", "signal_url"

STATUSES = (DEPLOY_IN_PROGRESS, DEPLOY_COMPLETE, DEPLOY_FAILED) = ("IN_PROGRESS", "COMPLETE", "FAILED")


class DeploymentFailedError(StokerError):
    """The server signalled a failure (Heat: "Deployment to server failed: ...")."""


class SoftwareDeployment(Resource):
    """This resource associates a server with some configuration.

    The configuration is to be deployed to that server.

    A deployment allows input values to be specified which map to the inputs schema
    defined in the config resource. These input values are interpreted by the
    configuration tool in a tool-specific manner.

    Whenever this resource goes to an IN_PROGRESS state, it creates an ephemeral config
    that includes the inputs values plus a number of extra inputs which have names
    prefixed with ``deploy_``. The extra inputs relate to the current state of the
    stack, along with the information and credentials required to signal back the
    deployment results.

    Unless signal_transport=NO_SIGNAL, this resource will remain in an IN_PROGRESS state
    until the server signals it with the output values for that deployment. Those output
    values are then available as resource attributes, along with the default attributes
    deploy_stdout, deploy_stderr and deploy_status_code.

    Specifying actions other than the default CREATE and UPDATE will result in the
    deployment being triggered in those actions. For example this would allow cleanup
    configuration to be performed during actions SUSPEND and DELETE. A config could be
    designed to only work with some specific actions, or a config can read the value of
    the deploy_action input to allow conditional logic to perform different configuration
    for different actions.

    stoker signals through its own URLs (``deploy_signal_id``, under the server's
    ``public_url``): CFN_SIGNAL takes a POST and TEMP_URL_SIGNAL a PUT of the outputs
    (to a Swift TempURL, as in Heat, when the cloud has Swift).
    HEAT_SIGNAL gives the deployment a Keystone stack user whose credentials
    (``deploy_auth_url``, ``deploy_user_id``, ``deploy_password``, ``deploy_project_id``)
    the agent signals stoker's resource-signal API with. ZAQAR_SIGNAL gives it a Zaqar
    queue (``deploy_queue_id``) and a stack user (the same ``deploy_*`` credentials) to
    post the outputs to it with.
    """

    support_status = support.SupportStatus(version="2014.1")

    PROPERTIES: tuple[str, ...]
    PROPERTIES = (CONFIG, SERVER, INPUT_VALUES, DEPLOY_ACTIONS, NAME, SIGNAL_TRANSPORT) = (
        "config",
        "server",
        "input_values",
        "actions",
        "name",
        "signal_transport",
    )

    ALLOWED_DEPLOY_ACTIONS = (Resource.CREATE, Resource.UPDATE, Resource.DELETE, Resource.SUSPEND, Resource.RESUME)

    ATTRIBUTES = (STDOUT, STDERR, STATUS_CODE) = ("deploy_stdout", "deploy_stderr", "deploy_status_code")

    DERIVED_CONFIG_INPUTS = (
        DEPLOY_SERVER_ID,
        DEPLOY_ACTION,
        DEPLOY_SIGNAL_ID,
        DEPLOY_STACK_ID,
        DEPLOY_RESOURCE_NAME,
        DEPLOY_SIGNAL_VERB,
        DEPLOY_SIGNAL_TRANSPORT,
    ) = (
        "deploy_server_id",
        "deploy_action",
        "deploy_signal_id",
        "deploy_stack_id",
        "deploy_resource_name",
        "deploy_signal_verb",
        "deploy_signal_transport",
    )
    # Heat's inputs for HEAT_SIGNAL (the stack user's credentials and where to use them).
    STACK_USER_INPUTS = (DEPLOY_AUTH_URL, DEPLOY_USER_ID, DEPLOY_PASSWORD, DEPLOY_PROJECT_ID, DEPLOY_REGION_NAME) = (
        "deploy_auth_url",
        "deploy_user_id",
        "deploy_password",
        "deploy_project_id",
        "deploy_region_name",
    )
    # Heat's input for ZAQAR_SIGNAL: the queue to post the outputs to.
    DEPLOY_QUEUE_ID = "deploy_queue_id"

    properties_schema = {
        CONFIG: properties.Schema(
            properties.Schema.STRING,
            "ID of software configuration resource to execute when applying to the server.",
            update_allowed=True,
        ),
        SERVER: properties.Schema(
            properties.Schema.STRING,
            "ID of resource to apply configuration to. Normally this should be a Nova server ID.",
            required=True,
        ),
        INPUT_VALUES: properties.Schema(
            properties.Schema.MAP,
            "Input values to apply to the software configuration on this server.",
            update_allowed=True,
        ),
        DEPLOY_ACTIONS: properties.Schema(
            properties.Schema.LIST,
            "Which lifecycle actions of the deployment resource will result in this deployment being triggered.",
            update_allowed=True,
            default=[Resource.CREATE, Resource.UPDATE],
            constraints=[constraints.AllowedValues(ALLOWED_DEPLOY_ACTIONS)],
        ),
        NAME: properties.Schema(
            properties.Schema.STRING,
            "Name of the derived config associated with this deployment. This is used to apply a "
            "sort order to the list of configurations currently deployed to a server.",
            update_allowed=True,
        ),
        SIGNAL_TRANSPORT: properties.Schema(
            properties.Schema.STRING,
            "How the server should signal to heat with the deployment output values. CFN_SIGNAL "
            "will allow an HTTP POST to a signed URL (stoker's own). TEMP_URL_SIGNAL will create a "
            "Swift TempURL to be signaled via HTTP PUT (stoker's own URL on a cloud without Swift). HEAT_SIGNAL will allow calls to the "
            "Heat API resource-signal using the provided keystone credentials (a stack user's, "
            "at stoker's API). ZAQAR_SIGNAL will create a dedicated zaqar queue to be signaled "
            "using the provided keystone credentials. NO_SIGNAL will result in the "
            "resource going to the COMPLETE state without waiting for any signal.",
            default=DEFAULT_SIGNAL_TRANSPORT,
            constraints=[
                constraints.AllowedValues(SIGNAL_TRANSPORTS),
                ServedValues(SIGNAL_TRANSPORTS, UNSERVED_SIGNAL_TRANSPORTS, "signal_transport"),
            ],
        ),
    }

    attributes_schema = {
        STDOUT: attributes.Schema("Captured stdout from the configuration execution.", type=attributes.Schema.STRING),
        STDERR: attributes.Schema("Captured stderr from the configuration execution.", type=attributes.Schema.STRING),
        STATUS_CODE: attributes.Schema(
            "Returned status code from the configuration execution.", type=attributes.Schema.STRING
        ),
    }

    # Any output the config declares is an attribute too.
    dynamic_attributes: ClassVar[bool] = True

    # -- the stores -----------------------------------------------------------------------

    def _deployments(self) -> Any:
        return software_deployments(self)

    def _configs(self) -> Any:
        return software_configs(self)

    def _transport(self) -> str:
        return self.properties[self.SIGNAL_TRANSPORT]

    def _signal_transport_none(self) -> bool:
        return self._transport() == NO_SIGNAL

    # -- the derived config -----------------------------------------------------------------

    def _load_config(self, config_id: str | None = None) -> dict[str, Any]:
        """The config as stored (inputs and outputs as lists), or an empty one."""
        if config_id is None:
            config_id = self.properties[self.CONFIG]
        config = dict(self._configs().show(config_id)) if config_id else {}
        config["inputs"] = list(config.get("inputs") or [])
        config["outputs"] = list(config.get("outputs") or [])
        return config

    def _signal_url(self) -> str:
        """This deployment's capability URL, issued once and kept (sealed) in its data;
        for TEMP_URL_SIGNAL on a cloud with Swift, a Swift temp URL instead (as Heat)."""
        url = self.data().get(SIGNAL_URL)
        if url:
            return str(url)
        if self._transport() == TEMP_URL_SIGNAL and (
            self.data().get(temp_url_signal.SWIFT_OBJECT) or temp_url_signal.swift_offered(self)
        ):
            return temp_url_signal.signal_url(self)
        signals = kept_signals(self)
        credential = signals.issue_credential()
        url = signals.waitcondition_url(credential)
        self.data_set(CREDENTIAL_ID, credential.id)
        self.data_set(SIGNAL_URL, url, redact=True)
        return url

    def _stack_path(self) -> str:
        return f"{self.stack.name}/{self.stack.id}"

    def _build_derived_inputs(self, action: str, source: Mapping[str, Any]) -> list[dict[str, Any]]:
        """The config's inputs with their values, then any value that has no declared
        input, then Heat's deploy_* inputs (as Heat's _build_derived_inputs)."""
        values = dict(self.properties[self.INPUT_VALUES] or {})
        inputs: list[dict[str, Any]] = []
        for declared in source["inputs"]:
            entry = dict(declared)
            entry["value"] = values.pop(declared["name"], declared.get("default"))
            inputs.append(entry)
        for name, value in values.items():
            inputs.append({"name": name, "type": "String", "value": value})

        def deploy_input(name: str, value: Any, description: str) -> None:
            inputs.append({"name": name, "description": description, "type": "String", "value": value})

        deploy_input(self.DEPLOY_SERVER_ID, self.properties[self.SERVER], "ID of the server being deployed to")
        deploy_input(self.DEPLOY_ACTION, action, "Name of the current action being deployed")
        deploy_input(self.DEPLOY_STACK_ID, self._stack_path(), "ID of the stack this deployment belongs to")
        deploy_input(self.DEPLOY_RESOURCE_NAME, self.name, "Name of this deployment resource in the stack")
        deploy_input(
            self.DEPLOY_SIGNAL_TRANSPORT,
            self._transport(),
            "How the server should signal to heat with the deployment output values.",
        )
        verb = _VERBS.get(self._transport())
        if verb is not None:
            deploy_input(self.DEPLOY_SIGNAL_ID, self._signal_url(), "ID of signal to use for signaling output values")
            deploy_input(self.DEPLOY_SIGNAL_VERB, verb, "HTTP verb to use for signaling output values")
        if self._transport() in STACK_USER_TRANSPORTS:
            if not self.data().get(stack_user.USER_ID):
                stack_user.create_stack_user(self)
            credentials = stack_user.stack_user_credentials(self)
            deploy_input(self.DEPLOY_AUTH_URL, credentials["auth_url"], "URL for API authentication")
            deploy_input(self.DEPLOY_USER_ID, credentials["user_id"], "ID of the user to authenticate with")
            deploy_input(self.DEPLOY_PASSWORD, credentials["password"], "Password of the user to authenticate with")
            deploy_input(self.DEPLOY_PROJECT_ID, credentials["project_id"], "ID of project for API authentication")
            deploy_input(self.DEPLOY_REGION_NAME, stack_user.region_name(self), "Region name for API authentication")
        if self._transport() == ZAQAR_SIGNAL:
            deploy_input(self.DEPLOY_QUEUE_ID, signal_queue.queue_id(self), "ID of queue to use for signaling output values")
        return inputs

    def empty_config(self) -> Any:
        return ""

    def _build_derived_config(self, action: str, source: Mapping[str, Any], inputs: list[dict[str, Any]]) -> Any:
        return source.get("config")

    def _create_derived_config(self, action: str, source: Mapping[str, Any]) -> str:
        inputs = self._build_derived_inputs(action, source)
        derived = self._build_derived_config(action, source, inputs)
        created = self._configs().create(
            name=self.properties[self.NAME] or source.get("name") or self.physical_resource_name(),
            group=source.get("group") or "Heat::Ungrouped",
            config=derived or self.empty_config(),
            inputs=inputs,
            outputs=source["outputs"],
            options=source.get("options"),
        )
        return created["id"]

    def _delete_derived_config(self, config_id: str | None) -> None:
        if not config_id:
            return
        try:
            self._configs().delete(config_id)
        except SoftwareConfigNotFoundError:
            pass

    def _derived_config_id(self) -> str | None:
        try:
            return self._deployments().show(self.resource_id)["config_id"]
        except SoftwareDeploymentNotFoundError:
            return None

    # -- triggering ---------------------------------------------------------------------------

    def _triggered_by(self, action: str, config: Mapping[str, Any]) -> bool:
        if config.get("group") == "component":
            body = config.get("config")
            configs = body.get("configs") if isinstance(body, Mapping) else None
            return any(action in (entry.get("actions") or []) for entry in configs or [] if isinstance(entry, Mapping))
        return action in (self.properties[self.DEPLOY_ACTIONS] or [])

    def _handle_action(self, action: str, config: Mapping[str, Any] | None = None, prev_derived: str | None = None) -> dict[str, Any] | None:
        """Store a derived config for ``action`` and point the deployment at it; the token
        to wait with, or None when there is nothing to wait for."""
        if config is None:
            config = self._load_config()
        if not self._triggered_by(action, config):
            return None
        derived = self._create_derived_config(action, config)
        if self._signal_transport_none():
            status, reason = DEPLOY_COMPLETE, "Not waiting for outputs signal"
        else:
            status, reason = DEPLOY_IN_PROGRESS, "Deploy data available"
        deployments = self._deployments()
        if self.resource_id is None:
            # The id is recorded before the deployment exists: a crash between the two
            # leaves an id whose deployment is missing, never a deployment nobody owns.
            self.resource_id_set(str(uuid.uuid4()))
            deployments.create(
                deployment_id=self.resource_id,
                server_id=self.properties[self.SERVER],
                config_id=derived,
                input_values=self.properties[self.INPUT_VALUES],
                action=action,
                status=status,
                status_reason=reason,
                # Its stack user's project (in a stack user domain) may read it too, as
                # Heat's stack_user_project_id lets the stack's users.
                stack_user_project_id=self.data().get(stack_user.PROJECT_ID),
            )
        else:
            if prev_derived is None:
                prev_derived = self._derived_config_id()
            deployments.update(
                self.resource_id,
                config_id=derived,
                input_values=self.properties[self.INPUT_VALUES],
                action=action,
                status=status,
                status_reason=reason,
            )
            self._delete_derived_config(prev_derived)
        self._push_server_metadata()
        return None if self._signal_transport_none() else {"deployment": self.resource_id, "action": action}

    def _push_server_metadata(self) -> None:
        """A server of this stack polling with ZAQAR_MESSAGE gets its new metadata posted
        to its queue (its deployments changed). A server of another stack is not reached:
        its agent sees the change at the next post made for that server."""
        server = self.properties[self.SERVER]
        signals = self.signals()
        source = signals.find(server) if signals is not None and server else None
        if source is None or source.instance is None:
            return
        if source.properties.get("software_config_transport") != server_transport.ZAQAR_MESSAGE:
            return
        server_transport.push_metadata(source.instance())

    def _check_complete(self) -> bool:
        # TEMP_URL_SIGNAL on Swift: a signal PUT to the temp URL is taken as Heat's
        # engine takes it when it shows the deployment.
        details = temp_url_signal.new_signal(self)
        if details is not None:
            self.handle_signal(details)
        # ZAQAR_SIGNAL: Heat's engine pops one message when it shows the deployment.
        for details in signal_queue.take_signals(self):
            self.handle_signal(details)
        try:
            deployment = self._deployments().show(self.resource_id)
        except SoftwareDeploymentNotFoundError as error:
            raise DeploymentFailedError(f"The deployment {self.resource_id} of resource {self.name} no longer exists") from error
        if deployment["status"] == DEPLOY_COMPLETE:
            return True
        if deployment["status"] == DEPLOY_FAILED:
            raise DeploymentFailedError(f"Deployment to server failed: {deployment['status_reason']}")
        return False

    # -- lifecycle --------------------------------------------------------------------------

    def _check_server(self) -> None:
        """Heat's check: a server of this stack that deployments target must take its
        user data as SOFTWARE_CONFIG (its agent would never poll otherwise). Made when
        the server exists (its reference is only known then), before anything is stored."""
        signals = self.signals()
        server = self.properties[self.SERVER]
        source = signals.find(server) if signals is not None and server else None
        if source is None:
            return
        user_data_format = source.properties.get("user_data_format")
        if user_data_format and user_data_format != "SOFTWARE_CONFIG":
            raise ValidationError(
                f"Resource {source.name}'s property user_data_format should be set to SOFTWARE_CONFIG "
                "since there are software deployments on it.",
                path=f"resources.{source.name}.properties.user_data_format",
                hint="set user_data_format: SOFTWARE_CONFIG on the server",
            )

    def handle_create(self) -> dict[str, Any] | None:
        self._check_server()
        return self._handle_action(self.CREATE)

    def check_create_complete(self, token: Any) -> bool:
        return not token or self._check_complete()

    def handle_update(self, json_snippet: Any, tmpl_diff: Mapping[str, Any], prop_diff: Mapping[str, Any]) -> dict[str, Any] | None:
        prev_derived = None
        old_inputs: dict[str, Any] = {}
        if self.resource_id is not None:
            prev_derived = self._derived_config_id()
            if prev_derived:
                try:
                    old_inputs = {i["name"]: i for i in self._load_config(prev_derived)["inputs"]}
                except SoftwareConfigNotFoundError:
                    old_inputs = {}
        self.properties = json_snippet.properties(self.properties_schema, self.context)
        config = self._load_config()
        for entry in self._build_derived_inputs(self.UPDATE, config):
            old = old_inputs.get(entry["name"])
            if entry.get("replace_on_change") and old is not None and entry.get("value") != old.get("value"):
                # Heat: a changed input marked replace_on_change replaces the deployment.
                raise UpdateReplace(self.name)
        return self._handle_action(self.UPDATE, config=config, prev_derived=prev_derived)

    def check_update_complete(self, token: Any) -> bool:
        return not token or self._check_complete()

    def handle_suspend(self) -> dict[str, Any] | None:
        return self._handle_action(self.SUSPEND)

    def check_suspend_complete(self, token: Any) -> bool:
        return not token or self._check_complete()

    def handle_resume(self) -> dict[str, Any] | None:
        return self._handle_action(self.RESUME)

    def check_resume_complete(self, token: Any) -> bool:
        return not token or self._check_complete()

    def handle_delete(self) -> dict[str, Any] | None:
        # A deployment triggered only by DELETE has no stored deployment until now.
        try:
            token = self._handle_action(self.DELETE)
        except (SoftwareDeploymentNotFoundError, SoftwareConfigNotFoundError):
            token = None
        if not token:
            self._delete_resource()
        return token

    def check_delete_complete(self, token: Any) -> bool:
        if not token or self._check_complete():
            self._delete_resource()
            return True
        return False

    def _delete_resource(self) -> None:
        derived = None
        if self.resource_id is not None:
            derived = self._derived_config_id()
            try:
                self._deployments().delete(self.resource_id)
            except SoftwareDeploymentNotFoundError:
                pass
        self._delete_derived_config(derived)
        self._forget_signals()
        self._push_server_metadata()

    def _forget_signals(self) -> None:
        temp_url_signal.forget(self)
        signal_queue.forget(self)
        if self.data().get(stack_user.USER_ID) or self._transport() in STACK_USER_TRANSPORTS:
            stack_user.delete_stack_user(self)
        if self.data().get(CREDENTIAL_ID):
            kept_signals(self).revoke_credentials()
            self.data_delete(SIGNAL_URL)
            self.data_delete(CREDENTIAL_ID)

    def handle_signal(self, details: Any = None) -> str | None:
        """The server's outputs (``deploy_stdout``, ``deploy_stderr``,
        ``deploy_status_code`` and the config's outputs); returns Heat's event text."""
        if details is not None and not isinstance(details, Mapping):
            raise ValidationError("The deployment's signal must be a JSON object of output values")
        if self.resource_id is None:
            raise ValidationError(f"Resource {self.name} has no deployment to signal yet")
        now = datetime.now(UTC).isoformat()
        return self._deployments().signal(self.resource_id, dict(details or {}), now)

    # -- attributes ---------------------------------------------------------------------------

    def get_attribute(self, key: str) -> Any:
        """Attributes are the deployment's output values (Heat's get_attribute)."""
        if key == attributes.SHOW:
            return self._show_resource()
        if self.resource_id is not None:
            try:
                values = self._deployments().show(self.resource_id).get("output_values") or {}
            except SoftwareDeploymentNotFoundError:
                values = {}
            if key in values:
                return values[key]
        if key in self.ATTRIBUTES or key in self._output_names():
            return None
        raise InvalidTemplateAttribute(self.name, key)

    def _output_names(self) -> set[str]:
        config_id = self.properties[self.CONFIG]
        if not config_id:
            return set()
        try:
            return {output["name"] for output in self._configs().show(config_id).get("outputs") or []}
        except SoftwareConfigNotFoundError:
            return set()

    def _show_resource(self) -> dict[str, Any] | None:
        if self.resource_id is None:
            return None
        try:
            return self._deployments().show(self.resource_id)
        except SoftwareDeploymentNotFoundError:
            return None


def resource_mapping() -> dict[str, type[Resource]]:
    return {"OS::Heat::SoftwareDeployment": SoftwareDeployment}
