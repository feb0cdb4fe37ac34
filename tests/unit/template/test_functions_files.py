"""get_file (only from the template's files map) and resource_facade."""

from __future__ import annotations

import pytest

from stoker.sdk.properties import UNRESOLVED
from stoker.template.functions.files import GetFile
from stoker.template.hot import Template
from tests.unit.template.fakes import (
    PENDING,
    VERSIONS_FROM,
    FakeContext,
    NestedContext,
    evaluate,
    evaluate_error,
    parse_error,
    parse_ok,
)

FILES = {"scripts/setup.sh": "#!/bin/sh\necho hi\n", "empty.txt": ""}

# -- get_file --------------------------------------------------------------------


@pytest.mark.parametrize("version", VERSIONS_FROM["2013-05-23"])
def test_get_file_gives_the_content_from_the_files_map(version):
    assert evaluate({"get_file": "scripts/setup.sh"}, version=version, files=FILES) == FILES["scripts/setup.sh"]
    assert evaluate({"get_file": "empty.txt"}, version=version, files=FILES) == ""


@pytest.mark.parametrize("path", ["/etc/passwd", "../../etc/passwd", "file:///etc/passwd", "scripts/../../etc/shadow"])
def test_get_file_of_a_path_not_in_files_is_refused(path):
    error = parse_error({"get_file": path}, files=FILES)

    assert error.message == f'No content found in the "files" section for get_file path: {path}'
    assert error.path == "resources.server.properties"
    assert "never the engine's disk" in error.hint


def test_get_file_computed_path_not_in_files_is_refused_when_resolved():
    context = FakeContext(parameters={"path": "/etc/passwd"})

    error = evaluate_error({"get_file": {"get_param": "path"}}, context, files=FILES)
    assert error.message == 'No content found in the "files" section for get_file path: /etc/passwd'


def test_get_file_computed_path_in_files():
    context = FakeContext(parameters={"path": "scripts/setup.sh"})

    assert evaluate({"get_file": {"get_param": "path"}}, context, files=FILES) == FILES["scripts/setup.sh"]


@pytest.mark.parametrize("args", [["a"], {"a": 1}, 5, None])
def test_get_file_argument_must_be_a_string(args):
    assert parse_error({"get_file": args}, files=FILES).message == 'Argument to "get_file" must be a string'


def test_get_file_of_an_unresolved_path_is_unresolved():
    assert evaluate({"get_file": {"get_attr": ["pending", "path"]}}, PENDING, files=FILES) is UNRESOLVED


def test_get_file_reads_the_template_files():
    text = "heat_template_version: 2013-05-23\nresources:\n  r:\n    type: OS::Heat::None\n    properties:\n      data: {get_file: a.txt}\n"
    template = Template.load(text, files={"a.txt": "content"})

    call = template.resources["r"].properties_data["data"]
    assert isinstance(call, GetFile)
    assert call.result(FakeContext()) == "content"


def test_get_file_missing_from_the_template_files_is_a_template_error():
    text = "heat_template_version: 2021-04-16\nresources:\n  r:\n    type: OS::Heat::None\n    properties:\n      data: {get_file: /etc/passwd}\n"

    template = Template.load(text, "t.yaml", files={}, collect=True)
    assert [(p.path, p.message) for p in template.problems] == [
        ("resources.r.properties.data", 'No content found in the "files" section for get_file path: /etc/passwd')
    ]
    assert template.problems[0].location.line == 6


# -- resource_facade -------------------------------------------------------------

FACADE = {"metadata": {"role": "db"}, "deletion_policy": "Retain", "update_policy": {"pause": 1}}


@pytest.mark.parametrize("version", VERSIONS_FROM["2013-05-23"])
@pytest.mark.parametrize("attribute", ["metadata", "deletion_policy", "update_policy"])
def test_resource_facade_reads_the_parent_resource(version, attribute):
    assert evaluate({"resource_facade": attribute}, NestedContext(FACADE), version) == FACADE[attribute]


def test_resource_facade_argument_must_be_one_of_three():
    error = parse_error({"resource_facade": "properties"})

    assert error.message == 'Incorrect arguments to "resource_facade" should be one of: metadata, deletion_policy, update_policy'


def test_resource_facade_in_a_top_level_stack_is_an_error():
    error = evaluate_error({"resource_facade": "metadata"})

    assert "only available in a template that implements a resource type" in error.message


def test_cfn_resource_facade_in_2013_05_23():
    context = NestedContext(FACADE)

    assert evaluate({"Fn::ResourceFacade": "DeletionPolicy"}, context, "2013-05-23") == "Retain"
    assert parse_ok({"Fn::ResourceFacade": "Metadata"}, "2013-05-23").args == "Metadata"
    assert "should be one of: Metadata, DeletionPolicy, UpdatePolicy" in parse_error({"Fn::ResourceFacade": "metadata"}, "2013-05-23").message


def test_get_file_keeps_the_files_when_an_if_around_it_is_expanded():
    text = (
        "heat_template_version: 2021-04-16\nconditions:\n  c: true\nresources:\n  r:\n    type: OS::Heat::None\n"
        "    properties:\n      data: {if: [c, {str_replace: {template: {get_file: a.txt}, params: {X: y}}}]}\n"
    )
    template = Template.load(text, files={"a.txt": "X!"}).with_conditions({})

    assert evaluate_properties(template) == {"data": "y!"}


def evaluate_properties(template: Template) -> dict:
    from stoker.template.functions.base import resolve

    return resolve(template.resources["r"].properties_data, FakeContext())
