"""SoftwareDeployment and StructuredDeployment through the plugin author's harness (the
in-memory config and deployment stores), and StructuredDeployment's substitution rule."""

from __future__ import annotations

import pytest

from stoker.resources.heat.software_deployment import SoftwareDeployment
from stoker.resources.heat.structured_config import StructuredDeployment, substitute_inputs
from stoker.sdk.exceptions import UpdateReplace, ValidationError
from stoker.sdk.testing import PluginHarness


def harness_with_config(plugin: type, config: object, inputs: list | None = None, **properties) -> PluginHarness:
    harness = PluginHarness(plugin, {"server": "server-1", "signal_transport": "NO_SIGNAL"})
    stored = harness.software_configs.create(name="cfg", group="script", config=config, inputs=inputs or [], outputs=[{"name": "out"}])
    harness.resource = harness._build({"server": "server-1", "signal_transport": "NO_SIGNAL", "config": stored["id"], **properties})
    return harness


def derived(harness: PluginHarness) -> dict:
    [config] = harness.software_deployments.metadata("server-1")
    return config


def test_no_signal_deployment_stores_a_derived_config_and_completes():
    harness = harness_with_config(SoftwareDeployment, "#!/bin/sh", [{"name": "a", "default": "x"}], input_values={"b": 1})
    harness.create()
    deployment = harness.software_deployments.show(harness.resource.resource_id)
    assert deployment["status"] == "COMPLETE"
    assert deployment["status_reason"] == "Not waiting for outputs signal"
    assert deployment["action"] == "CREATE"
    values = {entry["name"]: entry["value"] for entry in derived(harness)["inputs"]}
    assert values["a"] == "x" and values["b"] == 1
    assert values["deploy_action"] == "CREATE" and values["deploy_signal_transport"] == "NO_SIGNAL"
    assert "deploy_signal_id" not in values
    # Outputs are attributes before any value arrives; anything else is refused.
    assert harness.attribute("out") is None
    assert harness.attribute("deploy_stdout") is None
    with pytest.raises(Exception, match="nope"):
        harness.attribute("nope")
    harness.delete()
    assert harness.software_deployments.list() == []
    assert [c["name"] for c in harness.software_configs.configs.values()] == ["cfg"]


def test_replace_on_change_input_replaces_the_deployment():
    inputs = [{"name": "a", "replace_on_change": True}]
    harness = harness_with_config(SoftwareDeployment, "#!/bin/sh", inputs, input_values={"a": 1})
    harness.create()
    config_id = harness.resource.properties["config"]
    with pytest.raises(UpdateReplace):
        harness.update({"server": "server-1", "signal_transport": "NO_SIGNAL", "config": config_id, "input_values": {"a": 2}})


def test_structured_deployment_substitutes_with_its_input_key():
    harness = harness_with_config(StructuredDeployment, {"v": {"my_input": "a"}, "w": {"get_input": "a"}}, [{"name": "a"}], input_values={"a": 5}, input_key="my_input")
    harness.create()
    assert derived(harness)["config"] == {"v": 5, "w": {"get_input": "a"}}


def test_substitute_inputs_rules():
    assert substitute_inputs({"a": {"get_input": "x"}}, {"x": [1]}, "get_input") == {"a": [1]}
    # Only a one-key map whose value is a name is an input reference.
    assert substitute_inputs({"get_input": "x", "other": 1}, {"x": 2}, "get_input") == {"get_input": "x", "other": 1}
    assert substitute_inputs({"get_input": ["x"]}, {"x": 2}, "get_input") == {"get_input": ["x"]}
    assert substitute_inputs("text", {}, "get_input") == "text"
    assert substitute_inputs([{"get_input": "gone"}], {}, "get_input") == [None]
    with pytest.raises(ValidationError, match=r"The Parameter \(gone\) was not provided."):
        substitute_inputs([{"get_input": "gone"}], {}, "get_input", strict=True)
