"""Software deployments through the engine, with the agent's side played by the test
through the same capability URLs a real agent uses (tests/acceptance/
test_agent_deployment.py runs the real os-collect-config and heat-agents): a
DeployedServer's metadata lists the derived configs, a signal completes or fails the
deployment, updates redeploy, DELETE and SUSPEND actions run, StructuredDeployment
substitutes inputs, groups deploy to several servers, and what stoker cannot serve is
refused."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from stoker.engine.errors import StackNotFoundError
from stoker.engine.signals import SignalCredentialError
from stoker.engine.states import Action
from stoker.sdk.exceptions import ResourceNotFoundError, ValidationError
from tests.support.stacks import template
from tests.support.waiting import finished, in_background, wait_until

DEPLOYED = """
heat_template_version: 2016-10-14
parameters:
  transport: {type: string, default: CFN_SIGNAL}
  foo: {type: string, default: fooooo}
  actions: {type: comma_delimited_list, default: "CREATE,UPDATE"}
  name: {type: string, default: ""}
resources:
  server:
    type: OS::Heat::DeployedServer
  config:
    type: OS::Heat::SoftwareConfig
    properties:
      group: script
      inputs:
        - name: foo
        - {name: bar, default: baz, type: String}
      outputs:
        - name: result
        - {name: oops, error_output: true}
      config: "#!/bin/sh\\necho $foo\\n"
  deployment:
    type: OS::Heat::SoftwareDeployment
    properties:
      config: {get_resource: config}
      server: {get_resource: server}
      signal_transport: {get_param: transport}
      actions: {get_param: actions}
      name: {get_param: name}
      input_values: {foo: {get_param: foo}, extra: 42}
outputs:
  result: {value: {get_attr: [deployment, result]}}
  stdout: {value: {get_attr: [deployment, deploy_stdout]}}
  stderr: {value: {get_attr: [deployment, deploy_stderr]}}
  status_code: {value: {get_attr: [deployment, deploy_status_code]}}
  occ: {value: {get_attr: [server, os_collect_config]}}
"""


def outputs(service, name: str) -> dict:
    return {o["output_key"]: o["output_value"] for o in service.outputs(name)}


def resource(service, stack: str, name: str):
    return next(r for r in service.list_resources(stack) if r.name == name and r.current)


def capability(url: str) -> tuple[str, str]:
    """(credential id, secret) of a stoker capability URL."""
    parts = urlsplit(url)
    return parts.path.rsplit("/", 1)[1], parse_qs(parts.query)["secret"][0]


class Agent:
    """What os-collect-config and heat-config-notify do, through the service: poll the
    server's metadata URL, and signal each deployment's outputs to its deploy_signal_id."""

    def __init__(self, service, stack: str, server: str = "server"):
        self.service = service
        self.stack = stack
        self.server = server

    def metadata(self) -> dict:
        shown = self.service.resource_metadata(self.service.get_stack(self.stack), self.server)
        url = shown["os-collect-config"]["request"]["metadata_url"]
        return self.service.metadata_by_capability(*capability(url))

    def shown(self) -> dict:
        """The metadata the API shows (GET .../resources/<server>/metadata)."""
        return self.service.resource_metadata(self.service.get_stack(self.stack), self.server)

    def deployments(self) -> list[dict]:
        return self.metadata()["deployments"]

    def wait_for_deployments(self, count: int = 1, action: str | None = None) -> list[dict]:
        def ready() -> bool:
            try:
                found = self.deployments()
            except (StackNotFoundError, ResourceNotFoundError, KeyError):
                return False  # not created yet, or no polling URL yet
            return len(found) >= count and (action is None or all(inputs(d)["deploy_action"] == action for d in found))

        wait_until(ready, f"{count} deployment(s) of the server", interval_s=0.05)
        return self.deployments()

    def signal(self, deployment: dict, details: dict) -> dict:
        return self.service.signal_by_capability(*capability(inputs(deployment)["deploy_signal_id"]), details)


def inputs(deployment: dict) -> dict:
    return {entry["name"]: entry.get("value") for entry in deployment["inputs"]}


def create(service, name: str = "d", **parameters):
    return in_background(lambda: service.create_stack(name, template(DEPLOYED), parameters={k: str(v) for k, v in parameters.items()}))


def test_deployment_waits_for_the_server_signal_and_takes_its_outputs(service):
    thread, result = create(service)
    agent = Agent(service, "d")
    [deployed] = agent.wait_for_deployments()
    server = resource(service, "d", "server")
    values = inputs(deployed)
    # The derived config: the config's inputs with values, the undeclared value, Heat's deploy_* inputs.
    assert [entry["name"] for entry in deployed["inputs"]] == [
        "foo", "bar", "extra", "deploy_server_id", "deploy_action", "deploy_stack_id",
        "deploy_resource_name", "deploy_signal_transport", "deploy_signal_id", "deploy_signal_verb",
    ]  # fmt: skip
    stack = service.get_stack("d")
    assert values["foo"] == "fooooo" and values["bar"] == "baz" and values["extra"] == 42
    assert values["deploy_server_id"] == server.physical_resource_id
    assert values["deploy_action"] == "CREATE"
    assert values["deploy_stack_id"] == f"d/{stack.id}"
    assert values["deploy_resource_name"] == "deployment"
    assert values["deploy_signal_transport"] == "CFN_SIGNAL"
    assert values["deploy_signal_verb"] == "POST"
    assert values["deploy_signal_id"].startswith("http://127.0.0.1:8004/v1/waitcondition/")
    assert deployed["group"] == "script" and deployed["config"] == "#!/bin/sh\necho $foo\n"
    assert [o["name"] for o in deployed["outputs"]] == ["result", "oops"]
    assert resource(service, "d", "deployment").state == "CREATE_IN_PROGRESS"

    agent.signal(deployed, {"deploy_stdout": "fooooo\n", "deploy_stderr": "", "deploy_status_code": 0, "result": "done"})

    stack = finished(thread, result)
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    shown = outputs(service, "d")
    assert shown["result"] == "done"
    assert shown["stdout"] == "fooooo\n"
    assert shown["status_code"] == 0
    assert shown["occ"]["collectors"] == ["request", "local"]
    # The agent polls what the API shows.
    assert agent.metadata() == agent.shown()
    assert agent.shown()["os-collect-config"] == shown["occ"]
    events = [e.resource_status_reason for e in service.list_events("d", "deployment")]
    assert any(reason.startswith("Signal: deployment ") and reason.endswith(" succeeded") for reason in events)
    # The signal URL's secret is never shown.
    secret = capability(values["deploy_signal_id"])[1]
    assert all(secret not in e.resource_status_reason for e in service.list_events("d"))


@pytest.mark.parametrize(
    ("details", "reason"),
    [
        ({"deploy_status_code": 3, "deploy_stderr": "boom"}, "Deployment to server failed: deploy_status_code : Deployment exited with non-zero status code: 3"),
        ({"deploy_status_code": 0, "oops": "it broke"}, "Deployment to server failed: oops : it broke"),
    ],
)
def test_deployment_fails_on_a_failure_signal(service, details, reason):
    thread, result = create(service)
    agent = Agent(service, "d")
    [deployed] = agent.wait_for_deployments()
    agent.signal(deployed, details)
    stack = finished(thread, result)
    assert stack.state == "CREATE_FAILED"
    assert reason in stack.status_reason
    assert resource(service, "d", "deployment").status_reason.endswith(reason)


def test_temp_url_transport_asks_for_a_put(service):
    thread, result = create(service, transport="TEMP_URL_SIGNAL")
    agent = Agent(service, "d")
    [deployed] = agent.wait_for_deployments()
    assert inputs(deployed)["deploy_signal_verb"] == "PUT"
    agent.signal(deployed, {"deploy_status_code": 0, "result": "r"})
    assert finished(thread, result).state == "CREATE_COMPLETE"


def test_no_signal_completes_at_once_and_delete_cleans_up(service):
    stack = service.create_stack("d", template(DEPLOYED), parameters={"transport": "NO_SIGNAL"})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    agent = Agent(service, "d")
    [deployed] = agent.deployments()
    assert "deploy_signal_id" not in inputs(deployed)
    deployment = resource(service, "d", "deployment")
    assert service.store.software_configs.get_software_deployment(deployment.physical_resource_id).status == "COMPLETE"
    metadata_url = agent.metadata()["os-collect-config"]["request"]["metadata_url"]
    service.delete_stack("d")
    # The deployment and its derived config are gone, and so is the polling URL.
    assert service.store.software_configs.get_software_deployment(deployment.physical_resource_id) is None
    assert service.store.software_configs.get_software_config(deployed["id"]) is None
    with pytest.raises(SignalCredentialError):
        service.metadata_by_capability(*capability(metadata_url))


def test_update_redeploys_a_new_derived_config_and_waits_again(service):
    thread, result = create(service)
    agent = Agent(service, "d")
    [first] = agent.wait_for_deployments()
    agent.signal(first, {"deploy_status_code": 0, "result": "one"})
    assert finished(thread, result).state == "CREATE_COMPLETE"

    thread, result = in_background(lambda: service.update_stack("d", template(DEPLOYED), parameters={"foo": "new"}))
    [second] = agent.wait_for_deployments(action="UPDATE")
    assert second["id"] != first["id"]
    assert inputs(second)["foo"] == "new"
    # The same signal URL serves every action of the deployment.
    assert inputs(second)["deploy_signal_id"] == inputs(first)["deploy_signal_id"]
    # The previous derived config is deleted.
    assert service.store.software_configs.get_software_config(first["id"]) is None
    assert resource(service, "d", "deployment").state == "UPDATE_IN_PROGRESS"
    agent.signal(second, {"deploy_status_code": 0, "result": "two"})
    stack = finished(thread, result)
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert outputs(service, "d")["result"] == "two"


def test_actions_decide_when_a_deployment_runs(service):
    # Deployed only at DELETE: create completes without a signal; delete waits for one.
    stack = service.create_stack("d", template(DEPLOYED), parameters={"actions": "DELETE"})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    agent = Agent(service, "d")
    assert agent.deployments() == []
    thread, result = in_background(lambda: service.delete_stack("d"))
    [deployed] = agent.wait_for_deployments(action="DELETE")
    assert resource(service, "d", "deployment").state == "DELETE_IN_PROGRESS"
    agent.signal(deployed, {"deploy_status_code": 0})
    finished(thread, result)
    with pytest.raises(Exception, match="not found|could not be found"):
        service.get_stack("d")


def test_suspend_and_resume_deploy_when_asked(service):
    stack = service.create_stack("d", template(DEPLOYED), parameters={"actions": "SUSPEND,RESUME", "transport": "NO_SIGNAL"})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    agent = Agent(service, "d")
    assert agent.deployments() == []
    assert service.stack_action("d", Action.SUSPEND).state == "SUSPEND_COMPLETE"
    [deployed] = agent.deployments()
    assert inputs(deployed)["deploy_action"] == "SUSPEND"
    assert service.stack_action("d", Action.RESUME).state == "RESUME_COMPLETE"
    [deployed] = agent.deployments()
    assert inputs(deployed)["deploy_action"] == "RESUME"


def test_metadata_is_sorted_by_config_name(service):
    two = DEPLOYED.replace("  deployment:\n", "  second:\n    type: OS::Heat::SoftwareDeployment\n    properties:\n      config: {get_resource: config}\n      server: {get_resource: server}\n      signal_transport: NO_SIGNAL\n      name: a-first\n  deployment:\n")
    stack = service.create_stack("d", template(two), parameters={"transport": "NO_SIGNAL", "name": "z-last"})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert [d["name"] for d in Agent(service, "d").deployments()] == ["a-first", "z-last"]


def test_signal_after_the_deployment_completed_changes_nothing(service):
    thread, result = create(service)
    agent = Agent(service, "d")
    [deployed] = agent.wait_for_deployments()
    agent.signal(deployed, {"deploy_status_code": 0, "result": "first"})
    assert finished(thread, result).state == "CREATE_COMPLETE"
    agent.signal(deployed, {"deploy_status_code": 1, "result": "late"})
    assert outputs(service, "d")["result"] == "first"
    assert resource(service, "d", "deployment").state == "CREATE_COMPLETE"


def test_a_metadata_url_is_not_a_signal_url_and_the_reverse(service):
    thread, result = create(service)
    agent = Agent(service, "d")
    [deployed] = agent.wait_for_deployments()
    metadata_url = agent.metadata()["os-collect-config"]["request"]["metadata_url"]
    with pytest.raises(SignalCredentialError):
        service.signal_by_capability(*capability(metadata_url), {"deploy_status_code": 0})
    with pytest.raises(SignalCredentialError):
        service.metadata_by_capability(*capability(inputs(deployed)["deploy_signal_id"]))
    credential_id, secret = capability(metadata_url)
    with pytest.raises(SignalCredentialError):
        service.metadata_by_capability(credential_id, secret + "x")
    agent.signal(deployed, {"deploy_status_code": 0})
    assert finished(thread, result).state == "CREATE_COMPLETE"


STRUCTURED = """
heat_template_version: 2016-10-14
parameters:
  validate: {type: string, default: LAX}
resources:
  server:
    type: OS::Heat::DeployedServer
  config:
    type: OS::Heat::StructuredConfig
    properties:
      group: apply-config
      inputs: [{name: port}]
      config:
        listen: {get_input: port}
        missing: {get_input: nothing}
        keep: {literal: {get_input: port}}
        list: [{get_input: port}, plain]
  deployment:
    type: OS::Heat::StructuredDeployment
    properties:
      config: {get_resource: config}
      server: {get_resource: server}
      signal_transport: NO_SIGNAL
      input_values: {port: 8080}
      input_values_validate: {get_param: validate}
"""


def test_structured_deployment_substitutes_inputs(service):
    stack = service.create_stack("s", template(STRUCTURED))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    [deployed] = Agent(service, "s").deployments()
    assert deployed["config"] == {"listen": 8080, "missing": None, "keep": {"literal": 8080}, "list": [8080, "plain"]}
    assert deployed["group"] == "apply-config"


def test_structured_deployment_strict_needs_every_input(service):
    stack = service.create_stack("s", template(STRUCTURED), parameters={"validate": "STRICT"})
    assert stack.state == "CREATE_FAILED"
    assert "The Parameter (nothing) was not provided." in stack.status_reason


GROUP = """
heat_template_version: 2016-10-14
resources:
  one: {type: OS::Heat::DeployedServer}
  two: {type: OS::Heat::DeployedServer}
  config:
    type: OS::Heat::SoftwareConfig
    properties:
      group: script
      outputs: [{name: result}]
      config: "#!/bin/sh"
  deployments:
    type: OS::Heat::SoftwareDeploymentGroup
    properties:
      config: {get_resource: config}
      servers: {first: {get_resource: one}, second: {get_resource: two}}
      input_values: {foo: bar}
outputs:
  stdouts: {value: {get_attr: [deployments, deploy_stdouts]}}
  codes: {value: {get_attr: [deployments, deploy_status_codes]}}
  results: {value: {get_attr: [deployments, result]}}
"""


def test_deployment_group_deploys_to_every_server(service):
    thread, result = in_background(lambda: service.create_stack("g", template(GROUP)))
    for index, server in enumerate(("one", "two")):
        agent = Agent(service, "g", server)
        [deployed] = agent.wait_for_deployments()
        assert inputs(deployed)["foo"] == "bar"
        agent.signal(deployed, {"deploy_stdout": f"out{index}", "deploy_status_code": 0, "result": f"r{index}"})
    stack = finished(thread, result)
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    shown = outputs(service, "g")
    assert shown["stdouts"] == {"first": "out0", "second": "out1"}
    assert shown["codes"] == {"first": 0, "second": 0}
    assert shown["results"] == {"first": "r0", "second": "r1"}


def test_deployment_zaqar_signal_without_a_cloud_fails_naming_it(service):
    # ZAQAR_SIGNAL is served (tests/cloud/test_zaqar_signals.py): with no cloud, the
    # deployment's create fails saying so.
    text = DEPLOYED.replace("signal_transport: {get_param: transport}", "signal_transport: ZAQAR_SIGNAL")
    stack = service.create_stack("d", template(text))
    assert stack.state == "CREATE_FAILED"
    assert "resources.deployment: No OpenStack cloud is configured" in stack.status_reason


def test_deployed_server_zaqar_message_without_a_cloud_fails_naming_it(service):
    text = DEPLOYED.replace("    type: OS::Heat::DeployedServer\n", "    type: OS::Heat::DeployedServer\n    properties: {software_config_transport: ZAQAR_MESSAGE}\n")
    stack = service.create_stack("d", template(text))
    assert stack.state == "CREATE_FAILED"
    assert "resources.server: No OpenStack cloud is configured" in stack.status_reason


def test_unknown_attribute_of_a_deployment_is_refused_and_outputs_are_known(service):
    text = DEPLOYED + "  nope: {value: {get_attr: [deployment, no_such_output]}}\n"
    stack = service.create_stack("d", template(text), parameters={"transport": "NO_SIGNAL"})
    assert stack.state == "CREATE_COMPLETE"
    shown = {o["output_key"]: o for o in service.outputs("d")}
    assert shown["result"]["output_value"] is None
    assert "no_such_output" in str(shown["nope"].get("output_error"))


def test_a_server_of_the_stack_must_take_software_config_user_data(service):
    """Heat's rule, checked once the server exists: a server deployments target that
    takes RAW (or HEAT_CFNTOOLS) user data would never poll for them."""
    from stoker.resources.heat.software_deployment import SoftwareDeployment
    from stoker.sdk.signals import MemorySignals, SignalSource
    from stoker.sdk.testing import PluginHarness

    harness = PluginHarness(SoftwareDeployment, {"server": "srv-1", "signal_transport": "NO_SIGNAL"})
    harness.signals = MemorySignals(sources={"srv-1": SignalSource("vm", object, MemorySignals(), {"user_data_format": "RAW"})})
    with pytest.raises(ValidationError, match="Resource vm's property user_data_format should be set to SOFTWARE_CONFIG since there are software deployments on it."):
        harness.create()
    assert harness.software_deployments.list() == []
    harness.signals = MemorySignals(sources={"srv-1": SignalSource("vm", object, MemorySignals(), {"user_data_format": "SOFTWARE_CONFIG"})})
    harness.create()
    assert len(harness.software_deployments.list()) == 1


def test_outputs_that_echo_a_hidden_value_are_shown_masked_and_the_engine_reads_them(make_service, database_url):
    from stoker.engine.software_deployments import StoredSoftwareDeployments

    service = make_service(database_url)
    hidden = DEPLOYED.replace("foo: {type: string, default: fooooo}", "foo: {type: string, hidden: true}")
    secret = "Zebra-S3cret-77"
    thread, result = in_background(lambda: service.create_stack("h", template(hidden), parameters={"foo": secret}))
    agent = Agent(service, "h")
    [deployed] = agent.wait_for_deployments()
    assert inputs(deployed)["foo"] == secret  # the agent's own URL
    assert inputs(agent.shown()["deployments"][0])["foo"] == "******"
    agent.signal(deployed, {"deploy_stdout": f"set {secret}\n", "deploy_status_code": 0, "result": secret})
    assert finished(thread, result).state == "CREATE_COMPLETE"

    # The template's outputs are the author's to show (as in Heat); the engine read the value.
    assert outputs(service, "h")["result"] == secret
    # The API's view of the deployment masks it where it echoes.
    (shown,) = StoredSoftwareDeployments(service.store, admin=True, masked=True).list()
    assert shown["output_values"]["deploy_stdout"] == "set ******\n" and shown["output_values"]["result"] == "******"
    assert shown["input_values"]["foo"] == "******"
    attributes = service.resource_attributes(service.get_stack("h"), "deployment")
    assert attributes["deploy_stdout"] == "set ******\n"


def test_deployed_server_config_and_deployment_are_imported_by_the_id_they_had(make_service):
    """A deployment (NO_SIGNAL: complete once its config is in the server's metadata), its
    config and its deployed server made, abandoned and imported back: nothing made or
    deployed again, no drift, an update touches none, the delete deletes them."""
    import yaml

    from tests.cloud.test_import_round_trip import round_trip

    service = make_service(enable_stack_abandon=True)

    def count() -> dict[str, int]:
        return {"configs": len(service.store.software_configs.list_software_configs())}

    data = yaml.safe_load(DEPLOYED)
    data["parameters"]["transport"]["default"] = "NO_SIGNAL"
    round_trip(service, data, "rt-deployed", count)
