"""The functions of the CloudFormation-compatible formats, each version with Heat's table
(heat/engine/cfn/template.py and cfn/functions.py), and get_attr of HOT 2013-05-23."""

from __future__ import annotations

from typing import Any

import pytest

from stoker.sdk.properties import UNRESOLVED
from stoker.template import versions
from stoker.template.errors import TemplateError
from stoker.template.functions import cfn
from stoker.template.functions.base import Parser, resolve
from tests.unit.template.fakes import (
    PATH,
    FakeContext,
    NestedContext,
    data_warning,
    evaluate,
    evaluate_error,
    parse_condition,
    parse_error,
    parse_ok,
)

AWS = "AWSTemplateFormatVersion.2010-09-09"
HEAT = "HeatTemplateFormatVersion.2012-12-12"
BOTH = [AWS, HEAT]
STACK = FakeContext(
    parameters={
        "OS::stack_name": "web stack",
        "OS::stack_id": "1234",
        "OS::project_id": "p/1",
        "Env": "prod",
        "Zones": ["az1", "az2"],
    },
    resources={
        "port": {
            "reference": "port-1",
            "attributes": {"name": "p", "ips": ["10.0.0.5", "10.0.0.6"], "info": {"mac": "m"}},
        },
        "pending": None,
    },
    conditions={"IsProd": True},
)
MAPPINGS = {"Sizes": {"prod": {"cpu": 4, "disks": ["a", "b"]}, "test": {"cpu": 1}}}

# Heat's tables: HeatTemplate (2012-12-12) and CfnTemplate (2010-09-09).
HEAT_FUNCTIONS = {
    "Fn::FindInMap",
    "Fn::GetAZs",
    "Ref",
    "Fn::GetAtt",
    "Fn::Select",
    "Fn::Join",
    "Fn::Split",
    "Fn::Replace",
    "Fn::Base64",
    "Fn::MemberListToMap",
    "Fn::ResourceFacade",
}
AWS_CONDITIONS = {"Fn::Equals", "Ref", "Fn::FindInMap", "Fn::Not", "Fn::And", "Fn::Or"}


def with_mappings(
    data: Any, version: str = AWS, mappings: Any = MAPPINGS, condition: bool = False
) -> tuple[Any, list[TemplateError]]:
    table = versions.find(version)
    errors: list[TemplateError] = []
    parser = Parser(
        table.functions, errors, table.unknown_functions, table.condition_functions, {}, mappings
    )
    if condition:
        return parser.for_conditions().parse(data, ("Conditions", "c")), errors
    return parser.parse(data, PATH), errors


# -- the tables --------------------------------------------------------------------


def test_cfn_function_tables_match_heat():
    assert set(versions.find(HEAT).functions) == HEAT_FUNCTIONS
    assert set(versions.find(AWS).functions) == HEAT_FUNCTIONS | {"Fn::If"}
    assert set(versions.find(AWS).condition_functions) == AWS_CONDITIONS
    assert versions.find(HEAT).condition_functions is None


def test_cfn_condition_ref_reads_parameters_only():
    assert versions.find(AWS).condition_functions["Ref"] is cfn.ParamRef
    assert versions.find(AWS).functions["Ref"] is cfn.CfnRef


@pytest.mark.parametrize(
    ("data", "version", "message"),
    [
        (
            {"Fn::If": ["c", 1, 2]},
            HEAT,
            "'Fn::If' is not a function in HeatTemplateFormatVersion 2012-12-12 (it appears in "
            "AWSTemplateFormatVersion 2010-09-09), so this is read as a plain map, as Heat reads it",
        ),
        (
            {"get_param": "Env"},
            AWS,
            "'get_param' is not a function in AWSTemplateFormatVersion 2010-09-09, so this is read as a plain map, "
            "as Heat reads it; the function is Ref",
        ),
        (
            {"get_attr": ["port", "name"]},
            HEAT,
            "'get_attr' is not a function in HeatTemplateFormatVersion 2012-12-12, so this is read as a plain map, "
            "as Heat reads it; the function is Fn::GetAtt",
        ),
        (
            {"Fn::Sub": "${AWS::StackName}"},
            AWS,
            "'Fn::Sub' is not a function in AWSTemplateFormatVersion 2010-09-09 (Heat does not implement it), "
            "so this is read as a plain map, as Heat reads it",
        ),
    ],
)
def test_cfn_function_not_in_the_version_is_data_with_a_warning(data, version, message):
    # Heat's CFN tables have no entry for these names: the map is plain data.
    warning = data_warning(data, version)

    assert warning.message == message
    assert warning.path == "resources.server.properties." + next(iter(data))


def test_hot_if_in_2012_is_data_with_a_warning_and_no_replacement():
    warning = data_warning({"if": ["c", 1, 2]}, HEAT)

    assert warning.message == (
        "'if' is not a function in HeatTemplateFormatVersion 2012-12-12, so this is read as a plain map, as Heat reads it"
    )


def test_cfn_condition_functions_outside_conditions_are_data():
    # As in Heat: Fn::Equals is no function of the resources' table.
    assert parse_ok({"Fn::Equals": [1, 1]}, AWS) == {"Fn::Equals": [1, 1]}


# -- Ref and the pseudo parameters ------------------------------------------------


@pytest.mark.parametrize("version", BOTH)
def test_ref_gives_a_resource_reference_or_a_parameter(version):
    assert evaluate({"Ref": "port"}, STACK, version) == "port-1"
    assert evaluate({"Ref": "Env"}, STACK, version) == "prod"
    assert evaluate({"Ref": "pending"}, STACK, version) is UNRESOLVED


@pytest.mark.parametrize("version", BOTH)
def test_ref_reads_the_aws_pseudo_parameters(version):
    assert evaluate({"Ref": "AWS::StackName"}, STACK, version) == "web stack"
    assert evaluate({"Ref": "AWS::Region"}, STACK, version) == "ap-southeast-1"
    # Heat's stack ARN, each part quoted
    assert (
        evaluate({"Ref": "AWS::StackId"}, STACK, version)
        == "arn:openstack:heat::p%2F1:stacks/web%20stack/1234"
    )


def test_hot_2013_ref_has_no_aws_pseudo_parameters():
    context = FakeContext(parameters={"OS::stack_name": "s"})

    with pytest.raises(KeyError):
        evaluate({"Ref": "AWS::StackName"}, context, "2013-05-23")


def test_ref_argument_must_be_a_name():
    assert (
        parse_error({"Ref": ["port"]}, AWS).message
        == 'Argument to "Ref" must be a resource or parameter name (a string)'
    )


# -- Fn::GetAtt --------------------------------------------------------------------


@pytest.mark.parametrize("version", BOTH)
def test_get_att_reads_the_whole_attribute(version):
    context = FakeContext(resources=STACK.resources)

    assert evaluate({"Fn::GetAtt": ["port", "ips"]}, context, version) == ["10.0.0.5", "10.0.0.6"]
    assert context.attribute_reads == [("port", "ips", ())]


@pytest.mark.parametrize("version", BOTH)
def test_get_att_of_a_resource_not_created_is_unresolved(version):
    assert evaluate({"Fn::GetAtt": ["pending", "name"]}, STACK, version) is UNRESOLVED


@pytest.mark.parametrize("args", [["port"], ["port", "ips", 0], "port.name"])
def test_get_att_takes_exactly_a_resource_and_an_attribute(args):
    assert (
        parse_error({"Fn::GetAtt": args}, AWS).message
        == 'Arguments to "Fn::GetAtt" must be of the form [resource_name, attribute]'
    )


def test_get_att_depends_on_its_resource_and_names_its_attribute():
    parsed = parse_ok({"Fn::GetAtt": ["port", "name"]}, HEAT)

    assert list(parsed.dependencies()) == ["port"]
    assert list(parsed.referenced_attributes()) == [("port", "name")]


# -- the functions both versions share with HOT 2013-05-23 --------------------------


@pytest.mark.parametrize("version", BOTH)
@pytest.mark.parametrize(
    ("data", "value"),
    [
        ({"Fn::Select": [1, ["a", "b"]]}, "b"),
        ({"Fn::Select": ["mac", {"Fn::GetAtt": ["port", "info"]}]}, "m"),
        ({"Fn::Select": [5, ["a"]]}, ""),
        ({"Fn::Join": [",", ["a", {"Ref": "Env"}]]}, "a,prod"),
        ({"Fn::Split": [",", "a,b"]}, ["a", "b"]),
        ({"Fn::Replace": [{"$env": {"Ref": "Env"}}, "run in $env"]}, "run in prod"),
        ({"Fn::Base64": "#!/bin/sh"}, "#!/bin/sh"),
        ({"Fn::GetAZs": {"Ref": "AWS::Region"}}, ["nova"]),
        (
            {"Fn::MemberListToMap": ["Name", "Value", [".member.0.Name=k", ".member.0.Value=v"]]},
            {"k": "v"},
        ),
    ],
)
def test_shared_functions(version, data, value):
    assert evaluate(data, STACK, version) == value


@pytest.mark.parametrize("version", BOTH)
def test_resource_facade_reads_the_parent_resource(version):
    context = NestedContext(
        {"metadata": {"role": "db"}, "deletion_policy": "Retain", "update_policy": {}}
    )

    assert evaluate({"Fn::ResourceFacade": "Metadata"}, context, version) == {"role": "db"}
    assert parse_error({"Fn::ResourceFacade": "metadata"}, version).message.startswith(
        'Incorrect arguments to "Fn::ResourceFacade"'
    )


def test_join_errors_name_fn_join_and_no_hot_version():
    error = evaluate_error({"Fn::Join": [",", ["a", {"Ref": "Zones"}]]}, STACK, AWS)
    assert error.message == "Items to join must be strings in this template version, not list"
    assert error.hint is None
    assert (
        parse_error({"Fn::Join": [","]}, HEAT).message
        == "Arguments to Fn::Join must be a list [delimiter, list, ...]"
    )


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"Fn::Select": [1]}, 'Arguments to "Fn::Select" must be of the form [index, collection]'),
        (
            {"Fn::Split": ","},
            'Incorrect arguments to "Fn::Split" should be: "Fn::Split" : [ ",", "str1,str2"]]',
        ),
        ({"Fn::Replace": "x"}, 'Incorrect arguments to "Fn::Replace"'),
        ({"Fn::MemberListToMap": ["a"]}, "Wrong Arguments try"),
    ],
)
def test_shared_function_argument_errors(data, message):
    assert parse_error(data, HEAT).message.startswith(message)


def test_base64_of_a_list_is_an_error():
    assert (
        evaluate_error({"Fn::Base64": {"Ref": "Zones"}}, STACK, AWS).message
        == '"Fn::Base64" argument must be a string'
    )


# -- Fn::FindInMap -----------------------------------------------------------------


@pytest.mark.parametrize("version", BOTH)
def test_find_in_map_reads_the_mappings(version):
    parsed, errors = with_mappings({"Fn::FindInMap": ["Sizes", {"Ref": "Env"}, "disks"]}, version)

    assert errors == []
    assert resolve(parsed, STACK) == ["a", "b"]


@pytest.mark.parametrize(
    ("args", "message", "hint"),
    [
        (
            ["Size", "prod", "cpu"],
            '"Size" (in Fn::FindInMap) is not a mapping of the Mappings section',
            "did you mean 'Sizes'?",
        ),
        (
            ["Sizes", "qa", "cpu"],
            '"qa" (in Fn::FindInMap) is not a top-level key of mapping "Sizes"',
            "it has: prod, test",
        ),
        (
            ["Sizes", "test", "disks"],
            '"disks" (in Fn::FindInMap) is not a second-level key of "Sizes.test"',
            "it has: cpu",
        ),
    ],
)
def test_find_in_map_with_literal_names_is_checked_as_it_is_read(args, message, hint):
    _, errors = with_mappings({"Fn::FindInMap": args})

    assert [(error.message, error.hint, error.path) for error in errors] == [
        (message, hint, "resources.server.properties")
    ]


def test_find_in_map_with_computed_names_is_checked_when_it_resolves():
    parsed, errors = with_mappings({"Fn::FindInMap": ["Sizes", {"Ref": "Env"}, "cpu"]})
    assert errors == []

    with pytest.raises(
        TemplateError, match='"qa" \\(in Fn::FindInMap\\) is not a top-level key of mapping "Sizes"'
    ):
        resolve(parsed, FakeContext(parameters={"Env": "qa"}))
    with pytest.raises(
        TemplateError, match='The top-level key given to "Fn::FindInMap" must be a string, got list'
    ):
        resolve(parsed, FakeContext(parameters={"Env": ["x"]}))
    assert resolve(parsed, FakeContext(parameters={"Env": UNRESOLVED})) is UNRESOLVED


def test_find_in_map_takes_three_arguments():
    _, errors = with_mappings({"Fn::FindInMap": ["Sizes", "prod"]})

    assert [error.message for error in errors] == [
        'Arguments to "Fn::FindInMap" must be of the form [map_name, top_level_key, second_level_key]'
    ]


def test_find_in_map_is_not_checked_against_unreadable_mappings():
    _, errors = with_mappings({"Fn::FindInMap": ["Sizes", "prod", "cpu"]}, mappings=None)

    assert errors == []


def test_find_in_map_in_a_condition():
    parsed, errors = with_mappings(
        {"Fn::Equals": [{"Fn::FindInMap": ["Sizes", {"Ref": "Env"}, "cpu"]}, 4]}, condition=True
    )

    assert errors == []
    assert resolve(parsed, STACK) is True


# -- conditions --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "value"),
    [
        ({"Fn::Equals": [{"Ref": "Env"}, "prod"]}, True),
        ({"Fn::Equals": [{"Ref": "AWS::StackName"}, "other"]}, False),
        ({"Fn::Not": [{"Fn::Equals": [{"Ref": "Env"}, "prod"]}]}, False),
        ({"Fn::Not": ["IsProd"]}, False),
        ({"Fn::And": ["IsProd", {"Fn::Equals": [1, 1]}]}, True),
        ({"Fn::Or": [False, {"Fn::Not": [True]}]}, False),
    ],
)
def test_condition_functions(data, value):
    parsed, errors = parse_condition(data, AWS)

    assert errors == []
    assert resolve(parsed, STACK) is value


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"Fn::Not": "IsProd"}, 'Arguments to "Fn::Not" must be of the form: [condition]'),
        ({"Fn::Not": ["a", "b"]}, 'Arguments to "Fn::Not" must be of the form: [condition]'),
        ({"Fn::And": ["IsProd"]}, 'The minimum number of condition arguments to "Fn::And" is 2.'),
        ({"Fn::Equals": [1]}, 'Arguments to "Fn::Equals" must be of the form: [value_1, value_2]'),
        ({"Fn::If": ["IsProd", True, False]}, 'The function "Fn::If" is invalid in this context'),
        (
            {"Fn::Equals": [{"Fn::GetAtt": ["port", "name"]}, "p"]},
            'The function "Fn::GetAtt" is invalid in this context',
        ),
        ({"Ref": ["Env"]}, 'Argument to "Ref" must be a parameter name (a string)'),
    ],
)
def test_condition_function_errors(data, message):
    _, errors = parse_condition(data, AWS)

    assert [error.message for error in errors] == [message]


def test_condition_ref_reads_a_parameter_not_a_resource():
    parsed, _ = parse_condition({"Ref": "port"}, AWS)

    assert isinstance(parsed, cfn.ParamRef)
    assert parsed.parameter_name() == "port"
    assert list(parsed.dependencies()) == []


def test_not_names_its_condition_literally():
    from stoker.template.functions.conditions import literal_names

    parsed, _ = parse_condition({"Fn::Not": ["IsProd"]}, AWS)

    assert list(literal_names(parsed)) == ["IsProd"]


def test_fn_if_chooses_a_value():
    assert evaluate({"Fn::If": ["IsProd", "big", "small"]}, STACK, AWS) == "big"
    assert (
        evaluate({"Fn::If": [{"Fn::Equals": [{"Ref": "Env"}, "test"]}, "big", "small"]}, STACK, AWS)
        == "small"
    )


def test_fn_if_needs_three_arguments():
    error = parse_error({"Fn::If": ["IsProd", "big"]}, AWS)

    assert (
        error.message
        == 'Arguments to "Fn::If" must be of the form: [condition_name, value_if_true, value_if_false]'
    )
    assert error.hint is None


# -- get_attr of HOT 2013-05-23 (Heat's GetAttThenSelect) ----------------------------


def test_hot_2013_get_attr_selects_the_path_from_the_whole_attribute():
    context = FakeContext(resources=STACK.resources)

    assert evaluate({"get_attr": ["port", "ips", 1]}, context, "2013-05-23") == "10.0.0.6"
    assert evaluate({"get_attr": ["port", "info", "mac"]}, context, "2013-05-23") == "m"
    assert context.attribute_reads == [("port", "ips", ()), ("port", "info", ())]


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["ips", "1"], None),  # a list is indexed by integers only
        (["info", 0], None),
        (["info", "ip"], None),
        (["ips", 5], None),
        (["name", 0], "p"),  # a string is a sequence
        (["info", "mac", "x"], None),
    ],
)
def test_hot_2013_get_attr_selects_as_heat(path, value):
    assert evaluate({"get_attr": ["port", *path]}, STACK, "2013-05-23") == value


def test_hot_2014_get_attr_hands_the_path_to_the_stack():
    context = FakeContext(resources=STACK.resources)

    assert evaluate({"get_attr": ["port", "ips", 1]}, context, "2014-10-16") == "10.0.0.6"
    assert context.attribute_reads == [("port", "ips", (1,))]


def test_hot_2013_get_attr_of_an_attribute_without_value_is_none():
    context = FakeContext(resources={"r": {"reference": "r", "attributes": {"a": None}}})

    assert evaluate({"get_attr": ["r", "a", "x"]}, context, "2013-05-23") is None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ("port", 'Argument to "get_attr" must be a list'),
        (
            ["port"],
            'Arguments to "get_attr" must be of the form [resource_name, attribute, (path), ...]',
        ),
    ],
)
def test_hot_2013_get_attr_argument_errors(args, message):
    assert parse_error({"get_attr": args}, "2013-05-23").message == message


# -- introspection -------------------------------------------------------------------


def test_template_versions_list_the_cfn_formats_first_as_heat_sorts_them():
    listed = versions.template_versions()

    assert listed[:2] == [
        {"version": AWS, "type": "cfn", "aliases": []},
        {"version": HEAT, "type": "cfn", "aliases": []},
    ]
    assert [entry["type"] for entry in listed[2:]] == ["hot"] * len(versions.HOT_VERSIONS)


@pytest.mark.parametrize("version", BOTH)
def test_template_functions_of_the_cfn_formats(version):
    listed = versions.template_functions(version)

    assert [entry["functions"] for entry in listed] == sorted(versions.find(version).functions)
    described = {entry["functions"]: entry["description"] for entry in listed}
    assert described["Ref"] == "A function for resolving parameters or resource references."
    assert described["Fn::FindInMap"] == "A function for resolving keys in the template mappings."
    assert described["Fn::GetAtt"] == "A function for resolving resource attributes."


def test_template_functions_with_conditions_describe_ref_as_its_condition_form():
    listed = versions.template_functions(AWS, with_condition_functions=True)

    names = [entry["functions"] for entry in listed]
    assert names[-4:] == ["Fn::And", "Fn::Equals", "Fn::Not", "Fn::Or"]
    assert names.count("Ref") == 1 and names.count("Fn::FindInMap") == 1
    assert (
        next(entry for entry in listed if entry["functions"] == "Ref")["description"]
        == "A function for resolving parameter references."
    )
    assert versions.template_functions(
        HEAT, with_condition_functions=True
    ) == versions.template_functions(HEAT)
    assert [entry["functions"] for entry in versions.condition_functions(AWS)] == sorted(
        AWS_CONDITIONS
    )
    assert versions.condition_functions(HEAT) == []


def test_versions_are_found_by_heat_name_date_or_alias():
    assert versions.find(AWS).kind == "cfn"
    assert versions.find("heat_template_version.wallaby") is versions.get("2021-04-16")
    assert versions.find("rocky") is versions.get("2018-08-31")
    assert versions.find("2010-09-09") is None
    with pytest.raises(
        KeyError, match="Template with version AWSTemplateFormatVersion.2099-01-01 not found"
    ):
        versions.template_functions("AWSTemplateFormatVersion.2099-01-01")
