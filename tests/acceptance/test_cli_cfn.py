"""The ``stoker`` command with CloudFormation-compatible templates, as a user runs it."""

from __future__ import annotations

import json

from tests.acceptance.test_cli import run, write  # noqa: F401 - run is a fixture

CFN = """\
AWSTemplateFormatVersion: '2010-09-09'
Description: Validated CFN.
Parameters:
  Size:
    Type: Number
    Default: 3
    Description: How many.
    MinValue: 1
    MaxValue: 5
    ConstraintDescription: one to five
  Password:
    Type: String
    NoEcho: 'true'
    MinLength: 8
Mappings:
  Prefixes:
    small: {name: s}
Resources:
  secret:
    Type: OS::Heat::RandomString
    Properties:
      length: {Ref: Size}
  label:
    Type: OS::Heat::Value
    Properties:
      value: {"Fn::Join": ["-", [{"Fn::FindInMap": [Prefixes, small, name]}, {Ref: "AWS::StackName"}]]}
Outputs:
  label:
    Value: {"Fn::GetAtt": [label, value]}
"""


def test_cli_template_validate_cfn(run, tmp_path):  # noqa: F811
    path = write(tmp_path, "cfn.yaml", CFN)
    bad = write(tmp_path, "bad.yaml", CFN.replace("Type: OS::Heat::Value", "Typ: OS::Heat::Value"))

    result = json.loads(
        run(
            "template", "validate", "-t", path, "--parameter", "Password=long-enough", "-f", "json"
        ).stdout
    )
    refused = run(
        "template", "validate", "-t", bad, "--parameter", "Password=long-enough", check=False
    )

    assert result["Description"] == "Validated CFN."
    assert result["Parameters"] == {
        "Size": {
            "Type": "Number",
            "NoEcho": "false",
            "Description": "How many.",
            "Label": "Size",
            "Default": 3,
            "MinValue": 1,
            "MaxValue": 5,
            "ConstraintDescription": "one to five",
        },
        "Password": {
            "Type": "String",
            "NoEcho": "true",
            "Description": "",
            "Label": "Password",
            "MinLength": 8,
            "Value": "******",  # given (Heat shows a given value; a hidden one masked)
        },
    }
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[1:] == [
        f"  - {bad}:24:5: Resources.label: Resource label has no Type (add 'Type: OS::Heat::None' or another resource type)",
        f"  - {bad}:24:10: Resources.label.Typ: \"Typ\" is not a valid keyword inside a resource definition (did you mean 'Type'?)",
    ]


def test_cli_template_version_list_has_the_cfn_formats(run):  # noqa: F811
    listed = json.loads(run("template", "version", "list", "-f", "json").stdout)

    assert listed[:2] == [
        {"version": "AWSTemplateFormatVersion.2010-09-09", "type": "cfn", "aliases": []},
        {"version": "HeatTemplateFormatVersion.2012-12-12", "type": "cfn", "aliases": []},
    ]
    assert listed[2]["version"] == "heat_template_version.2013-05-23"


def test_cli_stack_create_from_cfn(run, tmp_path):  # noqa: F811
    path = write(tmp_path, "cfn.yaml", CFN)

    created = json.loads(
        run(
            "stack",
            "create",
            "web",
            "-t",
            path,
            "--parameter",
            "Password=long-enough",
            "-f",
            "json",
        ).stdout
    )

    assert created["stack_status"] == "CREATE_COMPLETE"
    assert {o["output_key"]: o["output_value"] for o in created["outputs"]} == {"label": "s-web"}
