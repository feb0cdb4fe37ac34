"""The Mistral types without a cloud: Heat's registration, the workflow definition built
from the properties (the YAML Mistral receives), the validation rules in Heat's words and
their places, the signal data rules, and the external resource's update rules
(tests/cloud/test_mistral_types.py drives the real Mistral)."""

from __future__ import annotations

import pytest
import yaml

from stoker.resources.openstack import constraint_mapping, resource_mapping
from stoker.resources.openstack.mistral.cron_trigger import MistralCronTrigger
from stoker.resources.openstack.mistral.external_resource import MistralExternalResource
from stoker.resources.openstack.mistral.workflow import MistralWorkflow
from stoker.sdk.exceptions import ValidationError
from stoker.sdk.testing import PluginHarness


class CatalogWithMistral:
    """The one question validation asks the mistral client plugin: its endpoint."""

    def __init__(self, endpoint: str | None = "http://mistral.example/v2"):
        self.endpoint = endpoint

    def workflow_endpoint(self) -> str | None:
        return self.endpoint


WORKFLOWS = {"mistral.workflow": lambda value: value in ("wf", "other")}


def harness(plugin, properties, endpoint: str | None = "http://mistral.example/v2"):
    return PluginHarness(
        plugin,
        properties,
        name="it",
        clients={"mistral": CatalogWithMistral(endpoint)},
        constraints=WORKFLOWS,
    )


def test_mistral_types_and_constraint_are_registered_under_heat_names():
    mapping = resource_mapping()
    assert mapping["OS::Mistral::Workflow"] is MistralWorkflow
    assert mapping["OS::Mistral::CronTrigger"] is MistralCronTrigger
    assert mapping["OS::Mistral::ExternalResource"] is MistralExternalResource
    assert constraint_mapping()["mistral.workflow"].client_plugin_name == "mistral"


def test_mistral_workflow_definition_is_heats_layout():
    workflow = harness(
        MistralWorkflow,
        {
            "name": "greeter",
            "type": "direct",
            "description": "says hello",
            "input": {"greeting": "hi", "who": None},
            "output": {"said": "<% $.said %>"},
            "task_defaults": {"retry": {"count": 2, "delay": 1}},
            "tasks": [
                {
                    "name": "greet",
                    "action": "std.echo output=<% $.greeting %>",
                    "on_success": ["next"],
                    "keep_result": False,
                    # A kilo-era policies map: its keys become the task's own.
                    "policies": {"wait_before": 3},
                },
                {
                    "name": "next",
                    "workflow": "other",
                    "with_items": "x in <% [1] %>",
                    "concurrency": 1,
                },
            ],
        },
    )
    workflow.validate()
    definition = yaml.safe_load(workflow.resource.definition())
    assert definition == {
        "version": "2.0",
        "greeter": {
            "type": "direct",
            "description": "says hello",
            "output": {"said": "<% $.said %>"},
            "input": ["greeting", "who"],
            "task-defaults": {"retry": {"count": 2, "delay": 1}},
            "tasks": {
                "greet": {
                    "action": "std.echo output=<% $.greeting %>",
                    "on-success": ["next"],
                    "keep-result": False,
                    "wait-before": 3,
                },
                "next": {"workflow": "other", "with-items": "x in <% [1] %>", "concurrency": 1},
            },
        },
    }
    assert workflow.reference() == "greeter"
    # Without a name: Heat's physical name.
    unnamed = harness(
        MistralWorkflow, {"type": "direct", "tasks": [{"name": "a", "action": "std.noop"}]}
    )
    assert unnamed.reference().startswith("test-stack-it-")


@pytest.mark.parametrize(
    ("properties", "message", "path"),
    [
        (
            {"type": "reverse", "tasks": [{"name": "a", "action": "std.noop"}]},
            "'task_name' is not assigned in 'params' in case of reverse type workflow.",
            "resources.it.properties.params",
        ),
        (
            {"type": "direct", "tasks": [{"name": "a", "action": "std.noop", "requires": ["b"]}]},
            "task a contains property 'requires' in case of direct workflow.",
            "resources.it.properties.tasks[0].requires",
        ),
        (
            {"type": "direct", "tasks": [{"name": "a", "action": "std.noop", "workflow": "wf"}]},
            "Cannot define the following properties at the same time: workflow, action",
            "resources.it.properties.tasks[0]",
        ),
        (
            {"type": "direct", "tasks": [{"name": "a"}]},
            "At least one of the following properties must be specified: workflow, action",
            "resources.it.properties.tasks[0]",
        ),
        (
            {"type": "direct", "tasks": [{"name": "a", "action": "std.noop", "concurrency": 2}]},
            "concurrency property requires with_items property to be specified.",
            "resources.it.properties.tasks[0].concurrency",
        ),
    ],
)
def test_mistral_workflow_validation_errors_name_their_place(properties, message, path):
    with pytest.raises(ValidationError) as raised:
        harness(MistralWorkflow, properties).validate()
    assert message in str(raised.value)
    assert raised.value.path == path


def test_mistral_types_are_refused_on_a_cloud_without_mistral():
    for plugin, properties in (
        (MistralWorkflow, {"type": "direct", "tasks": [{"name": "a", "action": "std.noop"}]}),
        (MistralCronTrigger, {"pattern": "* * * * *", "workflow": {"name": "wf"}}),
        (MistralExternalResource, {"actions": {"CREATE": {"workflow": "wf"}}}),
    ):
        with pytest.raises(
            ValidationError, match=r"needs the Mistral workflow service \(service type workflowv2\)"
        ):
            harness(plugin, properties, endpoint=None).validate()


def test_mistral_workflow_signal_data_is_checked_as_heat_does():
    workflow = harness(
        MistralWorkflow,
        {
            "type": "direct",
            "input": {"greeting": "hi"},
            "tasks": [{"name": "a", "action": "std.noop"}],
        },
    ).resource
    assert workflow._signal_input_and_params(
        {"input": {"greeting": "yo"}, "params": {"env": {}}}
    ) == (
        {"greeting": "yo"},
        {"env": {}},
    )
    with pytest.raises(ValidationError, match="Signal data error: Unknown input shout"):
        workflow._validate_signal_data({"shout": 1}, None)
    with pytest.raises(ValidationError, match="Input in signal data must be a map"):
        workflow._validate_signal_data(["x"], None)
    with pytest.raises(ValidationError, match="Params must be a map"):
        workflow._validate_signal_data(None, "x")
    body_as_input = harness(
        MistralWorkflow,
        {
            "type": "direct",
            "use_request_body_as_input": True,
            "input": {"greeting": "hi"},
            "tasks": [{"name": "a", "action": "std.noop"}],
        },
    ).resource
    assert body_as_input._signal_input_and_params({"greeting": "yo"}) == ({"greeting": "yo"}, None)


def test_mistral_cron_trigger_needs_a_pattern_or_a_first_time():
    with pytest.raises(ValidationError, match="pattern, first_time") as raised:
        harness(MistralCronTrigger, {"workflow": {"name": "wf"}}).validate()
    assert raised.value.path == "resources.it.properties"
    harness(
        MistralCronTrigger, {"first_time": "2030-01-01 00:00", "workflow": {"name": "wf"}}
    ).validate()


def test_mistral_external_resource_update_rules():
    resource = harness(
        MistralExternalResource,
        {
            "actions": {"CREATE": {"workflow": "wf"}},
            "replace_on_change_inputs": ["zone"],
            "always_update": True,
        },
    ).resource
    before = {"input": {"zone": "a", "size": 1}}
    assert not resource.needs_replace_with_prop_diff(
        {"input"}, {"input": {"zone": "a", "size": 2}, "replace_on_change_inputs": ["zone"]}, before
    )
    assert resource.needs_replace_with_prop_diff(
        {"input"}, {"input": {"zone": "b", "size": 1}, "replace_on_change_inputs": ["zone"]}, before
    )
    assert resource.updates_when_unchanged()
    assert not harness(
        MistralExternalResource, {"actions": {"CREATE": {"workflow": "wf"}}}
    ).resource.updates_when_unchanged()
