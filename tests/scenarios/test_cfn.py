"""A stack from a CloudFormation-compatible template: create, update, delete, outputs."""

from __future__ import annotations

import json

import pytest

from stoker.service import Source
from stoker.template.errors import TemplateErrors
from tests.support.stacks import event_states, states, template

V1 = """
AWSTemplateFormatVersion: '2010-09-09'
Description: A CFN stack
Parameters:
  Env:
    Type: String
    Default: test
    AllowedValues: [test, prod]
  Size:
    Type: Number
    Default: 2
    MinValue: 1
Mappings:
  Lengths:
    test: {secret: 8}
    prod: {secret: 16}
Conditions:
  IsProd: {"Fn::Equals": [{Ref: Env}, prod]}
Resources:
  secret:
    Type: OS::Heat::RandomString
    Properties:
      length: {"Fn::FindInMap": [Lengths, {Ref: Env}, secret]}
  label:
    Type: OS::Heat::Value
    DependsOn: secret
    Properties:
      value:
        "Fn::Replace":
          - {"%size%": {Ref: Size}}
          - {"Fn::Join": ["-", [{Ref: "AWS::StackName"}, {"Fn::If": [IsProd, big, small]}, "%size%"]]}
  backup:
    Type: OS::Heat::None
    Condition: IsProd
    DeletionPolicy: Retain
Outputs:
  secret:
    Description: The generated secret
    Value: {"Fn::GetAtt": [secret, value]}
  label:
    Value: {"Fn::GetAtt": [label, value]}
  stack_arn:
    Value: {Ref: "AWS::StackId"}
  backup:
    Value: {Ref: backup}
    Condition: IsProd
"""


def outputs(service, name: str) -> dict:
    return {o["output_key"]: o.get("output_value") for o in service.outputs(name)}


def test_cfn_stack_create_update_delete(service):
    stack = service.create_stack("cfn", template(V1, "cfn.yaml"))
    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert set(states(service, "cfn")) == {"secret", "label"}
    values = outputs(service, "cfn")
    assert len(values["secret"]) == 8
    assert values["label"] == "cfn-small-2"
    assert values["stack_arn"] == f"arn:openstack:heat:::stacks/cfn/{stack.id}"
    assert values["backup"] is None
    shown = service.stack_parameters(stack)
    assert shown["AWS::StackName"] == "cfn" and shown["AWS::Region"] == "ap-southeast-1"
    assert shown["AWS::StackId"] == values["stack_arn"]
    assert not any(name.startswith("OS::") for name in shown)
    assert service.description_of("cfn") == "A CFN stack"

    stack = service.update_stack(
        "cfn", template(V1, "cfn.yaml"), parameters={"Env": "prod", "Size": "3"}
    )
    assert stack.state == "UPDATE_COMPLETE", stack.status_reason
    assert states(service, "cfn") == {
        "secret": "CREATE_COMPLETE",
        "label": "UPDATE_COMPLETE",
        "backup": "CREATE_COMPLETE",
    }
    # a new length replaces the secret: the new one is created before the old one goes
    assert event_states(service, "cfn", "secret")[2:] == [
        "CREATE_IN_PROGRESS",
        "CREATE_COMPLETE",
        "DELETE_IN_PROGRESS",
        "DELETE_COMPLETE",
    ]
    values = outputs(service, "cfn")
    assert len(values["secret"]) == 16
    assert values["label"] == "cfn-big-3"
    backup = next(r for r in service.list_resources("cfn") if r.name == "backup")
    assert values["backup"] == backup.physical_resource_id

    stack = service.delete_stack("cfn")
    assert stack.state == "DELETE_COMPLETE"
    reasons = [e.resource_status_reason for e in service.store.events.list_events(stack.id, "backup")]
    assert reasons[-1] == "Retained: deletion_policy is Retain"


def test_cfn_stack_refuses_a_bad_parameter_with_its_place(service):
    with pytest.raises(TemplateErrors) as caught:
        service.create_stack("cfn", template(V1, "cfn.yaml"), parameters={"Env": "qa"})

    (error,) = caught.value.errors
    assert error.path == "Parameters.Env"
    assert str(error.location) == "cfn.yaml:6:5"
    assert (
        error.message
        == 'Parameter \'Env\' is invalid: "qa" is not an allowed value ["test", "prod"]'
    )


def test_heat_format_json_stack(service):
    body = {
        "HeatTemplateFormatVersion": "2012-12-12",
        "Parameters": {"Names": {"Type": "CommaDelimitedList", "Default": "a,b"}},
        "Resources": {
            "first": {
                "Type": "OS::Heat::Value",
                "Properties": {"value": {"Fn::Select": [1, {"Ref": "Names"}]}},
            },
            "nothing": {"Type": "OS::Heat::None", "DependsOn": "first"},
        },
        "Outputs": {"first": {"Value": {"Fn::GetAtt": ["first", "value"]}}},
    }
    stack = service.create_stack("heat", Source(json.dumps(body), "heat.json"))

    assert stack.state == "CREATE_COMPLETE", stack.status_reason
    assert outputs(service, "heat") == {"first": "b"}
    assert service.delete_stack("heat").state == "DELETE_COMPLETE"


def test_cfn_validation_errors_carry_cfn_paths_and_places(service):
    body = V1.replace('length: {"Fn::FindInMap": [Lengths, {Ref: Env}, secret]}', "length: many")

    with pytest.raises(TemplateErrors) as caught:
        service.preview_create("cfn", template(body, "cfn.yaml"))

    assert [(str(error.location), error.path) for error in caught.value.errors] == [
        ("cfn.yaml:23:15", "Resources.secret.Properties.length")
    ]
    # Template validate judges no property value (Heat: with_value=False): a note.
    notes: list[str] = []
    service.validate_template(template(body, "cfn.yaml"), notes=notes)
    assert [note.split(": ")[0:2] for note in notes] == [["cfn.yaml:23:15", "Resources.secret.Properties.length"]]
