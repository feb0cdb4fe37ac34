"""OS::Heat::ResourceChain: a nested stack of one member per listed type, in order
unless concurrent; its attributes through get_attr; update and delete as in Heat."""

from __future__ import annotations

import pytest

from stoker.engine.clock import FakeClock
from stoker.template.errors import TemplateErrors
from tests.support.stacks import template

CHAIN = """
heat_template_version: 2021-04-16
parameters:
  types:
    type: comma_delimited_list
    default: OS::Heat::TestResource,OS::Heat::TestResource,OS::Heat::TestResource
  concurrent: {type: boolean, default: false}
  value: {type: string, default: linked}
resources:
  chain:
    type: OS::Heat::ResourceChain
    properties:
      resources: {get_param: types}
      concurrent: {get_param: concurrent}
      resource_properties:
        value: {get_param: value}
        wait_secs: 10
outputs:
  refs: {value: {get_attr: [chain, refs]}}
  outputs: {value: {get_attr: [chain, output]}}
  by_name: {value: {get_attr: [chain, attributes, output]}}
  first_ref: {value: {get_attr: [chain, resource.0]}}
  second: {value: {get_attr: [chain, resource.1, output]}}
  second_dotted: {value: {get_attr: [chain, resource.1.output]}}
"""


@pytest.fixture
def chained(make_service):
    return make_service(clock=FakeClock())


def outputs(service, name: str) -> dict:
    return {o["output_key"]: o.get("output_value") for o in service.outputs(name)}


def chain_record(service, stack: str):
    return next(r for r in service.list_resources(stack) if r.name == "chain")


def child_of(service, stack: str):
    return service.store.get_stack(chain_record(service, stack).physical_resource_id)


def member_events(service, child_id: str) -> list[tuple[str, str]]:
    return [(e.resource_name, f"{e.resource_action}_{e.resource_status}") for e in service.store.events.list_events(child_id) if e.resource_name != "" and e.resource_type != "OS::Heat::Stack"]


def test_chain_creates_members_one_after_another(chained):
    stack = chained.create_stack("c", template(CHAIN))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    child = child_of(chained, "c")
    assert child.owner_id == stack.id and child.owner_resource == "chain"
    assert member_events(chained, child.id) == [
        (name, state) for name in ("0", "1", "2") for state in ("CREATE_IN_PROGRESS", "CREATE_COMPLETE")
    ]


def test_concurrent_chain_creates_members_together(chained):
    stack = chained.create_stack("c", template(CHAIN), parameters={"concurrent": True})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    events = member_events(chained, child_of(chained, "c").id)
    started = [index for index, (_, state) in enumerate(events) if state == "CREATE_IN_PROGRESS"]
    finished = [index for index, (_, state) in enumerate(events) if state == "CREATE_COMPLETE"]
    assert len(started) == 3 and max(started) < min(finished)


def test_chain_attributes_through_get_attr(chained):
    chained.create_stack("c", template(CHAIN))
    members = {r.name: r.physical_resource_id for r in chained.list_resources(child_of(chained, "c").id)}
    result = outputs(chained, "c")
    assert result["refs"] == [members["0"], members["1"], members["2"]]
    assert result["outputs"] == ["linked"] * 3
    assert result["by_name"] == {"0": "linked", "1": "linked", "2": "linked"}
    assert result["first_ref"] == members["0"]
    assert result["second"] == result["second_dotted"] == "linked"


def test_chain_update_of_resources_is_in_place(chained):
    chained.create_stack("c", template(CHAIN))
    record, child = chain_record(chained, "c"), child_of(chained, "c")
    before = {r.name: r.physical_resource_id for r in chained.list_resources(child.id)}
    types = "OS::Heat::TestResource,OS::Heat::None,OS::Heat::TestResource,OS::Heat::TestResource"
    stack = chained.update_stack("c", template(CHAIN), parameters={"types": types})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert chain_record(chained, "c").physical_resource_id == record.physical_resource_id
    after = {r.name: (r.type, r.physical_resource_id) for r in chained.list_resources(child.id)}
    assert set(after) == {"0", "1", "2", "3"}
    assert after["0"][1] == before["0"] and after["2"][1] == before["2"]  # unchanged members stay
    assert after["1"][0] == "OS::Heat::None" and after["1"][1] != before["1"]  # a new type replaces
    assert outputs(chained, "c")["outputs"] == ["linked", None, "linked", "linked"]
    # A shorter list deletes the members past its end.
    stack = chained.update_stack("c", template(CHAIN), parameters={"types": "OS::Heat::TestResource"})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert [r.name for r in chained.list_resources(child.id)] == ["0"]
    assert outputs(chained, "c")["refs"] == [after["0"][1]]


@pytest.mark.parametrize("parameters", [{"value": "changed"}, {"concurrent": True}], ids=["resource_properties", "concurrent"])
def test_chain_replaced_when_a_property_that_cannot_be_updated_changes(chained, parameters):
    chained.create_stack("c", template(CHAIN))
    old_child = child_of(chained, "c")
    stack = chained.update_stack("c", template(CHAIN), parameters=parameters)
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    new_child = child_of(chained, "c")
    assert new_child.id != old_child.id
    assert chained.store.get_stack(old_child.id).deleted_at is not None
    assert outputs(chained, "c")["outputs"] == [parameters.get("value", "linked")] * 3


def test_chain_delete_removes_the_nested_stack(chained):
    chained.create_stack("c", template(CHAIN))
    child = child_of(chained, "c")
    assert chained.delete_stack("c").state == "DELETE_COMPLETE"
    assert chained.store.get_stack(child.id).deleted_at is not None
    # Members are deleted in the reverse of their order.
    deletes = [name for name, state in member_events(chained, child.id) if state == "DELETE_COMPLETE"]
    assert deletes == ["2", "1", "0"]


def test_chain_validation(chained):
    with pytest.raises(TemplateErrors, match=r"resources.chain: nested stack: resources.1.type: The Resource Type \(OS::Heat::NoSuchThing\) could not be found"):
        chained.create_stack("c", template(CHAIN), parameters={"types": "OS::Heat::None,OS::Heat::NoSuchThing"})
    with pytest.raises(TemplateErrors, match=r"resources.chain.properties.resources: Property is required"):
        chained.create_stack("c", template("heat_template_version: 2021-04-16\nresources:\n  chain: {type: OS::Heat::ResourceChain}\n"))


def test_chain_attributes_needs_the_attribute_to_map(chained):
    chained.create_stack("c", template(CHAIN + "  whole: {value: {get_attr: [chain, attributes]}}\n"))
    (whole,) = [o for o in chained.outputs("c") if o["output_key"] == "whole"]
    assert whole["output_error"] == "The Referenced Attribute (chain attributes) is incorrect."


# Heat's functional test of the chain (heat_integrationtests/functional/test_resource_chain.py).
HEAT_SIMPLE = """
heat_template_version: 2016-04-08
parameters:
  string-length:
    type: number
resources:
  my-chain:
    type: OS::Heat::ResourceChain
    properties:
      resources: ['OS::Heat::RandomString', 'OS::Heat::RandomString']
      resource_properties:
        length: { get_param: string-length }
outputs:
  resource-ids:
    value: { get_attr: [my-chain, refs] }
  resource-0-value:
    value: { get_attr: [my-chain, resource.0, value] }
  all-resource-attrs:
    value: { get_attr: [my-chain, attributes, value] }
"""

HEAT_UPDATED = """
heat_template_version: 2016-04-08
parameters:
  string-length:
    type: number
resources:
  my-chain:
    type: OS::Heat::ResourceChain
    properties:
      resources: ['OS::Heat::None']
"""


def test_chain_as_heats_functional_test_uses_it(chained):
    stack = chained.create_stack("h", template(HEAT_SIMPLE), parameters={"string-length": 8})
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    nested = next(r for r in chained.list_resources("h") if r.name == "my-chain").physical_resource_id
    assert {r.name: r.type for r in chained.list_resources(nested)} == {"0": "OS::Heat::RandomString", "1": "OS::Heat::RandomString"}
    result = outputs(chained, "h")
    assert len(result["resource-ids"]) == 2
    assert len(result["resource-0-value"]) == 8
    assert set(result["all-resource-attrs"]) == {"0", "1"} and all(len(v) == 8 for v in result["all-resource-attrs"].values())
    stack = chained.update_stack("h", template(HEAT_UPDATED), parameters={"string-length": 8})
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    nested = next(r for r in chained.list_resources("h") if r.name == "my-chain").physical_resource_id
    assert {r.name: r.type for r in chained.list_resources(nested)} == {"0": "OS::Heat::None"}
