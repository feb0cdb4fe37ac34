"""Reading CloudFormation-compatible templates (AWSTemplateFormatVersion 2010-09-09 and
HeatTemplateFormatVersion 2012-12-12) into the Template the engine consumes, and every
problem found, with its place."""

from __future__ import annotations

import json
import textwrap

import pytest

from stoker.template import parameters, versions
from stoker.template.definitions import OutputDefinition
from stoker.template.errors import Location, TemplateError, TemplateErrors
from stoker.template.functions.access import GetAttr
from stoker.template.functions.base import to_template
from stoker.template.functions.cfn import CfnRef, FindInMap
from stoker.template.hot import Template

GOOD = """\
AWSTemplateFormatVersion: '2010-09-09'
Description: A web server
Parameters:
  Env:
    Type: String
    Default: test
    AllowedValues: [test, prod]
    ConstraintDescription: test or prod
    Description: Where it runs
  Size:
    Type: Number
    Default: 2
    MinValue: 1
    MaxValue: 8
  Zones:
    Type: CommaDelimitedList
    Default: az1,az2
  Settings:
    Type: Json
    Default: {debug: true}
  Verbose:
    Type: Boolean
    Default: 'false'
  Password:
    Type: String
    NoEcho: true
    MinLength: 8
    MaxLength: 64
    AllowedPattern: '[a-z0-9]*'
    Label: Admin password
Mappings:
  Flavors:
    test: {web: m1.small}
    prod: {web: m1.large}
Conditions:
  IsProd: {"Fn::Equals": [{Ref: Env}, prod]}
  IsTest: {"Fn::Not": [IsProd]}
Resources:
  port:
    Type: OS::Neutron::Port
    Properties:
      network: private
  server:
    Type: OS::Nova::Server
    Properties:
      flavor: {"Fn::FindInMap": [Flavors, {Ref: Env}, web]}
      name: {Ref: "AWS::StackName"}
      networks:
        - port: {Ref: port}
    Metadata:
      role: {"Fn::GetAtt": [port, name]}
    DependsOn: port
    UpdatePolicy: {pause: 10}
    DeletionPolicy: Retain
    Description: The server
  backup:
    Type: OS::Heat::None
    Condition: IsProd
Outputs:
  address:
    Description: The server's address
    Value: {"Fn::GetAtt": [server, first_address]}
  backup:
    Value: {Ref: backup}
    Condition: IsProd
"""


def load(text: str, file: str = "t.yaml") -> Template:
    return Template.load(textwrap.dedent(text), file)


def load_errors(text: str, file: str = "t.yaml") -> list[TemplateError]:
    with pytest.raises(TemplateErrors) as caught:
        load(text, file)
    return caught.value.errors


def load_error(text: str, file: str = "t.yaml") -> TemplateError:
    errors = load_errors(text, file)
    assert len(errors) == 1, [str(error) for error in errors]
    return errors[0]


def cfn(body: str, version: str = "AWSTemplateFormatVersion: '2010-09-09'") -> str:
    return version + "\n" + textwrap.dedent(body)


# -- a good template ------------------------------------------------------------


def test_cfn_template_reads_into_the_engines_template():
    template = load(GOOD)

    assert template.version is versions.find("AWSTemplateFormatVersion.2010-09-09")
    assert template.description == "A web server"
    assert template.problems == []
    assert template.mappings == {
        "Flavors": {"test": {"web": "m1.small"}, "prod": {"web": "m1.large"}}
    }
    assert set(template.conditions) == {"IsProd", "IsTest"}
    server = template.resources["server"]
    assert server.resource_type == "OS::Nova::Server"
    assert isinstance(server.properties_data["flavor"], FindInMap)
    assert isinstance(server.properties_data["name"], CfnRef)
    assert isinstance(server.metadata["role"], GetAttr)
    assert server.depends_on == ("port",)
    assert server.update_policy == {"pause": 10}
    assert server.deletion_policy == "Retain"
    assert server.description == "The server"
    assert server.external_id is None
    # Ref names parameters too; the graph keeps the names that are resources
    assert server.required_resource_names() & set(template.resources) == {"port"}
    assert template.resources["backup"].condition == "IsProd"
    assert template.outputs["address"].description == "The server's address"
    assert template.outputs["backup"].condition == "IsProd"


def test_cfn_json_template_reads_the_same():
    data = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Resources": {"r": {"Type": "OS::Heat::None", "Properties": {"a": {"Ref": "AWS::Region"}}}},
        "Outputs": {"o": {"Value": {"Fn::Join": ["-", ["x", {"Ref": "r"}]]}}},
    }

    template = Template.load(json.dumps(data), "t.json")

    assert set(template.resources) == {"r"}
    assert to_template(template.outputs["o"].value) == {"Fn::Join": ["-", ["x", {"Ref": "r"}]]}


def test_cfn_stored_template_reads_back():
    stored = load(GOOD).data

    assert set(Template.from_data(stored).resources) == {"port", "server", "backup"}


def test_heat_format_2012_reads_without_conditions():
    template = load(
        cfn(
            """
            Resources:
              r:
                Type: OS::Heat::None
                DependsOn: [s]
              s: {Type: OS::Heat::None}
            Outputs:
              o: {Value: {"Fn::GetAtt": [s, show]}, Description: all}
            """,
            "HeatTemplateFormatVersion: '2012-12-12'",
        )
    )

    assert template.version.name == "HeatTemplateFormatVersion.2012-12-12"
    assert not template.version.has_conditions
    assert template.resources["r"].depends_on == ("s",)
    assert template.outputs["o"] == OutputDefinition("o", template.outputs["o"].value, "all")


# -- conditions ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("env", "active", "label"),
    [("prod", {"port", "server", "backup"}, "big"), ("test", {"port", "server"}, "small")],
)
def test_cfn_conditions_choose_resources_and_if_values(env, active, label):
    text = GOOD.replace(
        "    Type: OS::Heat::None\n    Condition: IsProd",
        '    Type: OS::Heat::None\n    Condition: IsProd\n    Properties: {label: {"Fn::If": [IsProd, big, small]}}',
    )
    text = text.replace(
        "    DeletionPolicy: Retain\n",
        '    DeletionPolicy: Retain\n    Condition: {"Fn::Or": [IsProd, IsTest]}\n',
    )
    template = load(text)
    values = {"Env": env, "OS::stack_name": "s", "OS::stack_id": "i", "OS::project_id": "p"}

    chosen = template.with_conditions(values)

    assert set(chosen.resources) == active
    assert template.evaluate_conditions(values) == {
        "IsProd": env == "prod",
        "IsTest": env == "test",
    }
    if "backup" in active:
        assert chosen.resources["backup"].properties_data == {"label": label}
    assert (chosen.outputs["backup"].value is None) is (env == "test")


def test_cfn_ref_to_an_inactive_resource_is_an_error():
    text = GOOD + "  uses_backup:\n    Value: {Ref: backup}\n"
    template = load(text)

    with pytest.raises(TemplateErrors) as caught:
        template.with_conditions({"Env": "test"})

    assert [error.message for error in caught.value.errors] == [
        'The specified reference "backup" (in uses_backup) is incorrect.'
    ]


def test_cfn_condition_errors_name_the_cfn_sections():
    errors = load_errors(
        cfn(
            """
            Conditions:
              a: {"Fn::Not": [b]}
              b: {"Fn::Not": [a]}
            Resources:
              r: {Type: OS::Heat::None, Condition: c}
            """
        )
    )

    assert [(error.path, error.message) for error in errors] == [
        ("Conditions.a", 'Circular definition for condition "a"'),
        ("Resources.r.Condition", 'Invalid condition "c"'),
    ]


# -- versions and sections ---------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "hint"),
    [
        (
            "AWSTemplateFormatVersion",
            "2010-09-10",
            '"AWSTemplateFormatVersion" should be: 2010-09-09',
        ),
        (
            "HeatTemplateFormatVersion",
            "2010-09-09",
            '"HeatTemplateFormatVersion" should be: 2012-12-12',
        ),
    ],
)
def test_cfn_unknown_version_is_an_error(key, value, hint):
    error = load_error(f"{key}: '{value}'\nResources: {{}}\n")

    assert error.message == f'"{value}" is not a valid {key}'
    assert error.hint == hint
    assert error.location == Location("t.yaml", 1, len(key) + 3)


def test_cfn_two_version_keys_are_ambiguous():
    error = load_error(
        "AWSTemplateFormatVersion: '2010-09-09'\nHeatTemplateFormatVersion: '2012-12-12'\n"
    )

    assert (
        error.message == "Ambiguous versions (AWSTemplateFormatVersion, HeatTemplateFormatVersion)"
    )


@pytest.mark.parametrize(
    ("version", "section", "hint"),
    [
        (
            "HeatTemplateFormatVersion: '2012-12-12'",
            "Conditions",
            "valid sections: AWSTemplateFormatVersion, HeatTemplateFormatVersion, Description, Mappings, Parameters, Resources, Outputs",
        ),
        ("AWSTemplateFormatVersion: '2010-09-09'", "Resource", "did you mean 'Resources'?"),
        ("AWSTemplateFormatVersion: '2010-09-09'", "resources", "did you mean 'Resources'?"),
        (
            "AWSTemplateFormatVersion: '2010-09-09'",
            "parameter_groups",
            "did you mean 'Parameters'?",
        ),
    ],
)
def test_cfn_unknown_section_is_an_error(version, section, hint):
    error = load_error(f"{version}\n{section}: {{}}\n")

    assert error.message == f"The template section is invalid: {section}"
    assert error.hint == hint


@pytest.mark.parametrize(
    ("version", "key", "hint"),
    [
        ("AWSTemplateFormatVersion: '2010-09-09'", "type", "did you mean 'Type'?"),
        ("AWSTemplateFormatVersion: '2010-09-09'", "Propertes", "did you mean 'Properties'?"),
        ("AWSTemplateFormatVersion: '2010-09-09'", "external_id", None),
        (
            "HeatTemplateFormatVersion: '2012-12-12'",
            "Condition",
            "'Condition' needs AWSTemplateFormatVersion 2010-09-09 (HeatTemplateFormatVersion 2012-12-12 has no conditions)",
        ),
    ],
)
def test_cfn_unknown_resource_key_is_an_error(version, key, hint):
    error = load_error(f"{version}\nResources:\n  r:\n    Type: OS::Heat::None\n    {key}: x\n")

    assert error.message == f'"{key}" is not a valid keyword inside a resource definition'
    assert error.path == f"Resources.r.{key}"
    assert error.hint == hint


def test_cfn_resource_shape_errors():
    errors = load_errors(
        cfn(
            """
            Resources:
              a: {Properties: {}}
              b: {Type: OS::Heat::None, Properties: [1], DependsOn: [{x: 1}], Metadata: 3}
              c: {Type: OS::Heat::None, DeletionPolicy: retain}
            """
        )
    )

    assert [(error.path, error.message, error.hint) for error in errors] == [
        (
            "Resources.a",
            "Resource a has no Type",
            "add 'Type: OS::Heat::None' or another resource type",
        ),
        ("Resources.b.Properties", "Properties must be a map", None),
        ("Resources.b.DependsOn", "DependsOn must be a resource name or a list of names", None),
        ("Resources.b.Metadata", "Metadata must be a map", None),
        (
            "Resources.c.DeletionPolicy",
            'Invalid deletion policy "retain"',
            "use Delete, Retain or Snapshot",
        ),
    ]


def test_cfn_output_errors():
    errors = load_errors(
        cfn(
            """
            Resources: {}
            Outputs:
              a: {Description: no value}
              b: {Value: 1, value: 2}
              c: 3
            """,
            "HeatTemplateFormatVersion: '2012-12-12'",
        )
    )

    # An output key Heat does not read is ignored (a warning: Template.warnings).
    assert [(error.path, error.message, error.hint) for error in errors] == [
        ("Outputs.a", "Output a has no Value", None),
        ("Outputs.c", "Output c must be a map with a Value", None),
    ]


def test_cfn_references_are_checked():
    errors = load_errors(
        cfn(
            """
            Parameters:
              Env: {Type: String, Default: test}
            Resources:
              r:
                Type: OS::Heat::None
                DependsOn: sever
                Properties:
                  a: {Ref: Evn}
                  b: {"Fn::GetAtt": [srv, name]}
                  c: {Ref: r}
                  d: {Ref: "OS::stack_name"}
              server: {Type: OS::Heat::None}
            """
        )
    )

    assert [(error.path, error.message, error.hint) for error in errors] == [
        (
            "Resources.r.DependsOn[0]",
            '"sever" (in DependsOn) is not a resource in the template',
            "did you mean 'server'?",
        ),
        (
            "Resources.r.Properties.a.Ref",
            'The specified reference "Evn" (in Ref) is neither a resource nor a parameter of the template',
            "did you mean 'Env'?",
        ),
        (
            "Resources.r.Properties.b.Fn::GetAtt",
            'The specified reference "srv" (in Fn::GetAtt) is not a resource in the template',
            "did you mean 'server'?",
        ),
        (
            "Resources.r.Properties.c.Ref",
            "Circular dependency: resource r refers to itself (in Ref)",
            None,
        ),
        (
            "Resources.r.Properties.d.Ref",
            'The specified reference "OS::stack_name" (in Ref) is neither a resource nor a parameter of the template',
            "did you mean 'AWS::StackName'?",
        ),
    ]


def test_cfn_mappings_must_be_maps_of_maps():
    errors = load_errors(
        cfn(
            """
            Mappings:
              Flavors: {test: m1.small}
            Resources:
              r:
                Type: OS::Heat::None
                Properties: {a: {"Fn::FindInMap": [Flavors, test, web]}}
            """
        )
    )

    # The lookup is not reported too: the Mappings it reads are broken.
    assert [(error.path, error.message) for error in errors] == [
        ("Mappings.Flavors.test", "The key test of mapping Flavors must be a map of values")
    ]


def test_cfn_several_mistakes_at_once_each_with_its_place():
    text = """\
AWSTemplateFormatVersion: '2010-09-09'
Parameters:
  Size: {Type: Integer}
Mappings:
  Flavors:
    test: {web: m1.small}
Resources:
  web:
    Type: OS::Nova::Server
    Properties:
      flavor: {"Fn::FindInMap": [Flavors, prod, web]}
      image: {Ref: Imgae}
    DependsOn: db
  db:
    Typo: OS::Heat::None
Outputs:
  url: {Value: {"Fn::GetAtt": [web]}}
"""
    errors = load_errors(text, "web.yaml")

    assert [(str(error.location), error.path) for error in errors] == [
        ("web.yaml:3:16", "Parameters.Size.Type"),
        ("web.yaml:11:15", "Resources.web.Properties.flavor"),
        ("web.yaml:12:20", "Resources.web.Properties.image.Ref"),
        ("web.yaml:15:5", "Resources.db"),
        ("web.yaml:15:11", "Resources.db.Typo"),
        ("web.yaml:17:16", "Outputs.url.Value"),
    ]
    assert "Invalid type (Integer) for parameter Size" in errors[0].message
    assert (
        errors[1].message == '"prod" (in Fn::FindInMap) is not a top-level key of mapping "Flavors"'
    )


# -- parameters ---------------------------------------------------------------------


def test_cfn_parameters_map_onto_the_parameter_schema():
    schemas = load(GOOD).parameters

    assert {name: schema.type for name, schema in schemas.items()} == {
        "Env": parameters.STRING,
        "Size": parameters.NUMBER,
        "Zones": parameters.COMMA_DELIMITED_LIST,
        "Settings": parameters.JSON,
        "Verbose": parameters.BOOLEAN,
        "Password": parameters.STRING,
    }
    assert schemas["Password"].hidden and not schemas["Env"].hidden
    assert schemas["Password"].label == "Admin password"
    assert schemas["Password"].required and not schemas["Env"].required
    assert schemas["Zones"].convert(schemas["Zones"].default) == ["az1", "az2"]
    assert schemas["Verbose"].convert(schemas["Verbose"].default) is False


def test_cfn_parameters_validate_as_heat_shows_them():
    schemas = load(GOOD).parameters

    assert schemas["Env"].to_validate_dict() == {
        "Type": "String",
        "NoEcho": "false",
        "Description": "Where it runs",
        "Label": "Env",
        "Default": "test",
        "AllowedValues": ["test", "prod"],
        "ConstraintDescription": "test or prod",
    }
    assert schemas["Password"].to_validate_dict() == {
        "Type": "String",
        "NoEcho": "true",
        "Description": "",
        "Label": "Admin password",
        "MinLength": 8,
        "MaxLength": 64,
        "AllowedPattern": "[a-z0-9]*",
    }
    assert schemas["Size"].to_validate_dict()["MinValue"] == 1


def test_cfn_constraint_description_goes_with_every_constraint_as_in_heat():
    template = load(
        cfn(
            "Parameters:\n  P: {Type: String, MinLength: 2, AllowedValues: [ab, cd], ConstraintDescription: two letters}\n"
        )
    )
    schema = template.parameters["P"]

    assert schema.to_validate_dict()["ConstraintDescription"] == "two letters two letters"
    assert schema.check_constraints("x") == "two letters"


@pytest.mark.parametrize(
    ("body", "value", "message"),
    [
        ("{Type: Number, MinValue: 1, MaxValue: 8}", "9", "9 is out of range (min: 1, max: 8)"),
        ("{Type: String, MinLength: 3}", "ab", "length (2) must be at least 3"),
        ("{Type: String, AllowedPattern: '[a-z]+'}", "A1", '"A1" does not match pattern "[a-z]+"'),
        (
            "{Type: CommaDelimitedList, AllowedValues: [a, b]}",
            "a,c",
            '"[\'a\', \'c\']" is not an allowed value ["a", "b"]',
        ),
        ("{Type: Number, AllowedValues: [1, 2]}", "3", '"3" is not an allowed value ["1", "2"]'),
    ],
)
def test_cfn_parameter_constraints_check_values(body, value, message):
    template = load(cfn(f"Parameters:\n  P: {body}\n"))
    schemas = template.parameters

    values, errors = parameters.resolve_values(schemas, {"P": value}, {}, {})

    assert [(error.path, error.message) for error in errors] == [
        ("Parameters.P", f"Parameter 'P' is invalid: {message}")
    ]


def test_cfn_hidden_parameter_value_never_shows():
    template = load(cfn("Parameters:\n  P: {Type: String, NoEcho: 'TRUE', AllowedValues: [a]}\n"))

    _, errors = parameters.resolve_values(template.parameters, {"P": "secret"}, {}, {})

    assert "secret" not in errors[0].message


@pytest.mark.parametrize(
    ("body", "path", "message", "hint"),
    [
        (
            "3",
            "Parameters.P",
            "Invalid parameter (P), expected a mapping",
            "give at least a Type, such as 'Type: String'",
        ),
        (
            "{Default: 1}",
            "Parameters.P",
            "Missing parameter type for parameter: P",
            "use one of String, Number, CommaDelimitedList, Json, Boolean",
        ),
        (
            "{Type: string}",
            "Parameters.P.Type",
            "Invalid type (string) for parameter P",
            "did you mean 'String'?",
        ),
        (
            "{Type: String, Hidden: true}",
            "Parameters.P.Hidden",
            "Invalid key 'Hidden' for parameter (P)",
            None,
        ),
        (
            "{Type: String, MinValue: 1}",
            "Parameters.P.MinValue",
            "Parameter 'P' is invalid: Range constraint invalid for String",
            "MinValue does not apply to a String parameter",
        ),
        (
            "{Type: Number, MaxLength: 1}",
            "Parameters.P.MaxLength",
            "Parameter 'P' is invalid: Length constraint invalid for Number",
            "MaxLength does not apply to a Number parameter",
        ),
        (
            "{Type: Json, AllowedValues: [a]}",
            "Parameters.P.AllowedValues",
            "Parameter 'P' is invalid: AllowedValues constraint invalid for Json",
            "AllowedValues does not apply to a Json parameter",
        ),
        (
            "{Type: Number, AllowedPattern: '[0-9]'}",
            "Parameters.P.AllowedPattern",
            "Parameter 'P' is invalid: AllowedPattern constraint invalid for Number",
            "AllowedPattern does not apply to a Number parameter",
        ),
        (
            "{Type: String, MinLength: 1.5}",
            "Parameters.P.MinLength",
            "min/max length must be integral",
            "MinLength is 1.5",
        ),
        (
            "{Type: Number, MaxValue: many}",
            "Parameters.P.MaxValue",
            "MaxValue of parameter P must be a number, not 'many'",
            None,
        ),
        (
            "{Type: String, AllowedPattern: '['}",
            "Parameters.P.AllowedPattern",
            "Invalid AllowedPattern for parameter P: AllowedPattern '[' is not a valid regular expression: unterminated character set at position 0",
            None,
        ),
        (
            "{Type: Number, Default: 9, MaxValue: '5'}",
            "Parameters.P.Default",
            "Invalid default for parameter P: 9 must be no greater than 5",
            None,
        ),
    ],
)
def test_cfn_parameter_declaration_errors(body, path, message, hint):
    errors = load_errors(cfn(f"Parameters:\n  P: {body}\n"))

    assert [(error.path, error.message, error.hint) for error in errors] == [(path, message, hint)]
    assert errors[0].location is not None


def test_cfn_numbers_given_as_strings_read_as_heat_reads_them():
    schema = load(
        cfn("Parameters:\n  P: {Type: Number, MinValue: '1', MaxValue: '2.5'}\n")
    ).parameters["P"]

    assert schema.to_validate_dict()["MinValue"] == 1
    assert schema.to_validate_dict()["MaxValue"] == 2.5


def test_cfn_template_without_a_version_is_told_which_key_to_add():
    error = load_error("Resources: {}\n")

    assert (
        error.message == "The template has no AWSTemplateFormatVersion or HeatTemplateFormatVersion"
    )
    assert error.hint == "add a first line such as 'AWSTemplateFormatVersion: 2010-09-09'"


@pytest.mark.parametrize(
    ("path", "placed", "where"),
    [
        ("resources.server.properties.flavor", "Resources.server.Properties.flavor", 46),
        ("resources.server.type", "Resources.server.Type", 44),
        ("resources.server.depends_on[0]", "Resources.server.DependsOn[0]", 52),
        ("resources.server", "Resources.server", 44),
        ("outputs.address.value", "Outputs.address.Value", 62),
        ("parameters.Env", "Parameters.Env", 5),
        ("conditions.IsProd", "Conditions.IsProd", 36),
        ("Resources.port.Properties", "Resources.port.Properties", 42),
    ],
)
def test_cfn_errors_named_the_hot_way_are_placed_in_the_cfn_template(path, placed, where):
    """The engine and plugins name places as HOT does; a CFN template respells them."""
    error = load(GOOD).place(TemplateError("problem", path=path))

    assert error.path == placed
    assert error.location.line == where


def test_cfn_place_leaves_an_error_placed_elsewhere_alone():
    elsewhere = Location("child.yaml", 3, 1)

    error = load(GOOD).place(TemplateError("problem", path="resources.r.type", location=elsewhere))

    assert (error.path, error.location) == ("resources.r.type", elsewhere)
