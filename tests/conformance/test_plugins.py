"""One check over every registered resource type: what every plugin must satisfy."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from stoker.engine.clock import FakeClock
from stoker.engine.handlers import (
    DELETE_SNAPSHOT,
    HANDLERS,
    SNAPSHOT_DELETE,
    HandlerRunner,
    handler_pair,
)
from stoker.engine.states import Action
from stoker.environment.registry import check_plugin
from stoker.resources import builtin_mapping
from stoker.sdk import attributes, properties
from stoker.sdk.resource import Resource
from stoker.sdk.signals import MemorySignals, SignalSource
from stoker.sdk.software_config import MemorySoftwareConfigs, MemorySoftwareDeployments
from stoker.sdk.stack_resource import StackResource
from stoker.template.definitions import ResourceDefinition
from tests.support.stacks import from_data

TYPES = sorted(builtin_mapping().items())


@pytest.mark.parametrize(("type_name", "cls"), TYPES, ids=[t for t, _ in TYPES])
def test_plugin_declarations_are_valid(type_name, cls):
    assert check_plugin(type_name, cls) == []
    assert inspect.getdoc(cls), f"{type_name} needs a docstring: it is the type's documentation"
    for name, schema in cls.properties_schema.items():
        assert isinstance(schema, properties.Schema), name
        assert schema.description, f"{type_name}: property {name} has no description"
        schema.to_dict()
    for name, schema in cls.attributes_schema.items():
        assert isinstance(schema, attributes.Schema), name
        assert schema.description, f"{type_name}: attribute {name} has no description"
    cls.support_status.to_dict()


@pytest.mark.parametrize(("type_name", "cls"), TYPES, ids=[t for t, _ in TYPES])
def test_plugin_handler_pairs_are_callable(type_name, cls):
    """Every handler named in the engine's table that the plugin implements, and its
    check, can be called with the documented signature."""
    for action, pair in HANDLERS.items():
        handle = getattr(cls, pair.handle, None)
        if handle is None:
            continue
        assert callable(handle), f"{type_name}.{pair.handle}"
        params = list(inspect.signature(handle).parameters)[1:]
        expected = {Action.UPDATE: ["json_snippet", "tmpl_diff", "prop_diff"], SNAPSHOT_DELETE: ["state"], DELETE_SNAPSHOT: ["snapshot"]}.get(action, [])
        assert params == expected, f"{type_name}.{pair.handle}{params}"
        check = getattr(cls, pair.check, None)
        if check is not None:
            assert len(inspect.signature(check).parameters) == 2, f"{type_name}.{pair.check}(self, token)"


class _Stack:
    name = "conformance"
    id = "00000000-0000-0000-0000-000000000000"


class _Hooks:
    def __init__(self, clock):
        self.clock = clock
        self.physical_ids = []
        self.configs = MemorySoftwareConfigs()
        self.deployments = MemorySoftwareDeployments(self.configs)

    def resource_id_set(self, resource, physical_id):
        self.physical_ids.append(physical_id)

    def data_changed(self, resource):
        pass

    def client_plugin(self, resource, name):
        raise AssertionError("built-in plugins need no client")

    def software_configs(self, resource):
        # The SDK's in-memory config store (OS::Heat::SoftwareConfig and its kin).
        return self.configs

    def software_deployments(self, resource):
        return self.deployments

    def signals(self, resource):
        # In-memory signals: the handles the wait conditions below name, each signalled once.
        return _signals()

    def now(self):
        return self.clock.now()


_CFN_HANDLE_URL = "http://127.0.0.1:8004/v1/waitcondition/sample?secret=sample"


def _signals() -> MemorySignals:
    from stoker.resources.heat.wait_condition_handle import (
        HeatWaitConditionHandle,
        WaitConditionHandle,
    )

    heat, cfn = MemorySignals(), MemorySignals()
    heat.add({"status": "SUCCESS"})
    cfn.add({"Status": "SUCCESS", "Reason": "r", "UniqueId": "1", "Data": None}, "1")
    return MemorySignals(sources={"handle": SignalSource("handle", HeatWaitConditionHandle, heat), _CFN_HANDLE_URL: SignalSource("cfn", WaitConditionHandle, cfn)})


_EVERY_DEPLOY_ACTION = ["CREATE", "UPDATE", "DELETE", "SUSPEND", "RESUME"]

SAMPLE_PROPERTIES = {
    "OS::Heat::Value": {"value": "x"},
    "OS::Heat::Stack": {"template": "heat_template_version: 2021-04-16\nresources: {inner: {type: OS::Heat::None}}\n"},
    "OS::Heat::ResourceGroup": {"count": 2, "resource_def": {"type": "OS::Heat::None"}},
    "AWS::CloudFormation::Stack": {"TemplateURL": "https://example.com/child.yaml"},
    "OS::Heat::AccessPolicy": {"AllowedResources": []},
    "OS::Heat::WaitCondition": {"handle": "handle", "timeout": 60},
    "AWS::CloudFormation::WaitCondition": {"Handle": _CFN_HANDLE_URL, "Timeout": 60},
    "OS::Heat::SoftwareComponent": {"configs": [{"tool": "script", "config": "echo hi"}]},
    "OS::Heat::ResourceChain": {"resources": ["OS::Heat::None", "OS::Heat::None"]},
    "OS::Heat::AutoScalingGroup": {"min_size": 1, "max_size": 3, "resource": {"type": "OS::Heat::None"}},
    "OS::Heat::SoftwareDeployment": {"server": "srv", "signal_transport": "NO_SIGNAL", "actions": _EVERY_DEPLOY_ACTION},
    "OS::Heat::StructuredDeployment": {"server": "srv", "signal_transport": "NO_SIGNAL", "actions": _EVERY_DEPLOY_ACTION},
    "OS::Heat::SoftwareDeploymentGroup": {"servers": {"a": "srv-a", "b": "srv-b"}, "signal_transport": "NO_SIGNAL"},
    "OS::Heat::SoftwareDeployments": {"servers": {"a": "srv-a"}, "signal_transport": "NO_SIGNAL"},
    "OS::Heat::StructuredDeploymentGroup": {"servers": {"a": "srv-a", "b": "srv-b"}, "signal_transport": "NO_SIGNAL"},
    "OS::Heat::StructuredDeployments": {"servers": {"a": "srv-a"}, "signal_transport": "NO_SIGNAL"},
    "OS::Heat::ScalingPolicy": {"auto_scaling_group_id": "group", "adjustment_type": "change_in_capacity", "scaling_adjustment": 1},
    "AWS::AutoScaling::ScalingPolicy": {"AutoScalingGroupName": "group", "AdjustmentType": "ChangeInCapacity", "ScalingAdjustment": 1},
}


# Types that talk to a cloud (a default client plugin) run this lifecycle against the test
# cloud instead: tests/cloud/test_neutron_types.py::test_neutron_types_create_update_check_delete.
LOCAL_TYPES = [(name, cls) for name, cls in TYPES if not cls.default_client_name]


@pytest.mark.parametrize(("type_name", "cls"), LOCAL_TYPES, ids=[t for t, _ in LOCAL_TYPES])
def test_plugin_lifecycle_runs_through_the_handler_table(type_name, cls, service):
    """Create, update (or replacement), suspend/resume where implemented, and delete, each
    polled to completion through the same runner the engine uses, on a fake clock.
    A nested stack resource needs the engine to run its child: it goes through a stack."""
    if issubclass(cls, StackResource):
        _nested_lifecycle(type_name, service)
        return
    clock = FakeClock()
    hooks = _Hooks(clock)
    definition = ResourceDefinition("r", type_name, SAMPLE_PROPERTIES.get(type_name, {})).bind(lambda value: value)
    resource: Resource = cls("r", definition, _Stack(), uuid="6a1c3a4e-5b2c-4c39-9f4e-0123456789ab", hooks=hooks)
    runner = HandlerRunner(clock, threads=2)

    async def lifecycle() -> None:
        resource.validate()
        await runner.run(resource, Action.CREATE)
        assert hooks.physical_ids, f"{type_name} must set a physical id on create"
        for action in (Action.SUSPEND, Action.RESUME, Action.DELETE):
            handle, _ = handler_pair(resource, action)
            if handle is not None or action == Action.DELETE:
                await runner.run(resource, action)

    try:
        asyncio.run(lifecycle())
    finally:
        runner.close()


# The request's files a sample needs (a TemplateURL's template).
SAMPLE_FILES = {
    "AWS::CloudFormation::Stack": {"https://example.com/child.yaml": "heat_template_version: 2021-04-16\nresources: {inner: {type: OS::Heat::None}}\n"}
}


def _nested_lifecycle(type_name: str, service) -> None:
    template = {"heat_template_version": "2021-04-16", "resources": {"r": {"type": type_name, "properties": SAMPLE_PROPERTIES[type_name]}}}
    stack = service.create_stack("conformance", from_data(template), files=SAMPLE_FILES.get(type_name))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    (record,) = service.list_resources("conformance")
    child = service.store.get_stack(record.physical_resource_id)
    assert child is not None and child.owner_id == stack.id and child.state == "CREATE_COMPLETE"
    for action, state in ((Action.SUSPEND, "SUSPEND_COMPLETE"), (Action.RESUME, "RESUME_COMPLETE"), (Action.CHECK, "CHECK_COMPLETE")):
        assert service.stack_action("conformance", action).state == state
        assert service.store.get_stack(child.id).state == state
    assert service.delete_stack("conformance").state == "DELETE_COMPLETE"
    assert service.store.get_stack(child.id).deleted_at is not None


SAMPLE_TRANSLATED = {"OS::Heat::RandomString": {"sequence": "digits"}}


@pytest.mark.parametrize(("type_name", "cls"), TYPES, ids=[t for t, _ in TYPES])
def test_plugin_translation_rules_are_valid(type_name, cls):
    from stoker.sdk.testing import PluginHarness
    from stoker.sdk.translation import check_rules, resource_rules

    for sample in ({**SAMPLE_PROPERTIES.get(type_name, {})}, {**SAMPLE_PROPERTIES.get(type_name, {}), **SAMPLE_TRANSLATED.get(type_name, {})}):
        harness = PluginHarness(cls, sample)
        rules = resource_rules(harness.resource, harness.resource.properties) or []
        assert check_rules(cls.properties_schema, rules) == []
