"""The CloudFormation-style functions of heat_template_version 2013-05-23, and their
removal in later versions."""

from __future__ import annotations

import pytest

from stoker.template import versions
from tests.unit.template.fakes import FakeContext, evaluate, evaluate_error, parse_error, parse_ok

OLD = "2013-05-23"
STACK = FakeContext(parameters={"flavor": "m1.small"}, resources={"port": {"reference": "port-1", "attributes": {}}})


def test_ref_gives_a_resource_reference_or_a_parameter():
    assert evaluate({"Ref": "port"}, STACK, OLD) == "port-1"
    assert evaluate({"Ref": "flavor"}, STACK, OLD) == "m1.small"


def test_ref_depends_on_its_name():
    assert list(parse_ok({"Ref": "port"}, OLD).dependencies()) == ["port"]


def test_get_azs_without_zones_in_the_context_is_nova():
    assert evaluate({"Fn::GetAZs": ""}, version=OLD) == ["nova"]


@pytest.mark.parametrize(
    ("args", "value"),
    [
        ([1, ["a", "b"]], "b"),
        (["1", ["a", "b"]], "b"),
        ([5, ["a"]], ""),
        (["k", {"k": "v"}], "v"),
        (["x", {"k": "v"}], ""),
        ([0, '["j", "s"]'], "j"),
        ([0, ""], ""),
    ],
)
def test_select(args, value):
    assert evaluate({"Fn::Select": args}, version=OLD) == value


def test_select_index_errors():
    assert evaluate_error({"Fn::Select": [0, {"k": "v"}]}, version=OLD).message == 'Index to "Fn::Select" must be a string'
    assert evaluate_error({"Fn::Select": ["x", ["a"]]}, version=OLD).message == 'Index to "Fn::Select" must be an integer'


def test_join_split_replace_base64():
    assert evaluate({"Fn::Join": [",", ["a", "b"]]}, version=OLD) == "a,b"
    assert evaluate({"Fn::Split": [",", "a,b"]}, version=OLD) == ["a", "b"]
    assert evaluate({"Fn::Replace": [{"$x": "1", "%y%": "2"}, "$x is %y%"]}, version=OLD) == "1 is 2"
    assert evaluate({"Fn::Base64": "plain"}, version=OLD) == "plain"


def test_member_list_to_map():
    data = {
        "Fn::MemberListToMap": [
            "Name",
            "Value",
            [".member.0.Name=key", ".member.0.Value=door", ".member.1.Name=colour", ".member.1.Value=red"],
        ]
    }

    assert evaluate(data, version=OLD) == {"key": "door", "colour": "red"}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"Fn::Select": [1]}, 'Arguments to "Fn::Select" must be of the form [index, collection]'),
        ({"Fn::Split": ","}, 'Incorrect arguments to "Fn::Split"'),
        ({"Fn::Replace": "x"}, 'Incorrect arguments to "Fn::Replace"'),
        ({"Fn::MemberListToMap": ["a"]}, "Wrong Arguments try"),
        ({"Ref": ["a"]}, 'Argument to "Ref" must be a resource or parameter name'),
    ],
)
def test_cfn_argument_errors(data, message):
    assert parse_error(data, OLD).message.startswith(message)


@pytest.mark.parametrize(
    ("name", "args", "replacement"),
    [
        ("Ref", "x", "use get_resource or get_param instead"),
        ("Fn::GetAZs", "", "pass the availability zones as a parameter instead"),
        ("Fn::Join", [",", ["a"]], "use list_join instead"),
        ("Fn::Split", [",", "a"], "use str_split instead"),
        ("Fn::Replace", [{}, "a"], "use str_replace instead"),
        ("Fn::Base64", "a", "give the text as it is (Heat never encoded it)"),
        ("Fn::MemberListToMap", ["a", "b", []], "give a map instead"),
        ("Fn::ResourceFacade", "Metadata", "use resource_facade instead"),
    ],
)
@pytest.mark.parametrize("version", [v for v in versions.HOT_VERSIONS if v >= "2014-10-16"])
def test_cfn_functions_removed_in_2014_10_16(name, args, replacement, version):
    error = parse_error({name: args}, version)

    assert error.message == (
        f"The function {name} is not supported in heat_template_version {version}: it was removed in 2014-10-16; {replacement}"
    )


@pytest.mark.parametrize("version", ["2014-10-16", "2015-04-30"])
def test_select_stays_until_2015_10_15(version):
    assert evaluate({"Fn::Select": [0, ["a"]]}, version=version) == "a"


@pytest.mark.parametrize("version", [v for v in versions.HOT_VERSIONS if v >= "2015-10-15"])
def test_select_removed_in_2015_10_15(version):
    error = parse_error({"Fn::Select": [0, ["a"]]}, version)

    assert error.message.startswith(f"The function Fn::Select is not supported in heat_template_version {version}: it was removed in 2015-10-15")
