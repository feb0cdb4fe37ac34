"""stoker.template.hot: names in a HOT template: a function a version lacks is data, and
resources, parameters and parameter tags as Heat names them (the rest of the reader: test_hot.py)."""

from __future__ import annotations

import pytest

from stoker.template.errors import Location
from stoker.template.functions.access import GetParam
from stoker.template.hot import Template
from tests.unit.template.test_hot import load_error, load_errors, template

# -- names that are no function in the version: data, as Heat reads them ------------------
# Heat looks a one-key map's key up in the version's function table only
# (heat/engine/hot/template.py ``functions``; heat/engine/function.py parse): a name it
# lacks is an ordinary map key. A removed function (hot_funcs.Removed) stays an error.


def test_template_function_of_a_later_version_is_data_with_a_warning():
    text = template(
        "  web:\n"
        "    type: OS::Heat::None\n"
        "    properties:\n"
        "      value: {filter: [[1, 2], {get_param: OS::stack_name}]}\n",
        version="2016-10-14",
    )

    loaded = Template.load(text, "t.yaml")

    value = loaded.resources["web"].properties_data["value"]
    assert list(value) == ["filter"] and isinstance(value["filter"][1], GetParam)  # its value is parsed
    (warning,) = loaded.warnings
    assert warning.path == "resources.web.properties.value.filter"
    assert warning.location == Location("t.yaml", 6, 23)
    assert "'filter' is not a function in heat_template_version 2016-10-14" in warning.message
    assert "it appears in heat_template_version 2017-02-24" in warning.message


@pytest.mark.parametrize(("name", "version", "first"), [("make_url", "2017-02-24", "2017-09-01"), ("yaql", "2016-04-08", "2016-10-14")])
def test_template_later_functions_in_metadata_and_outputs_are_data(name, version, first):
    text = template(
        f"  web:\n    type: OS::Heat::None\n    metadata: {{{name}: {{host: h}}}}\n",
        version=version,
        extra=f"outputs:\n  out:\n    value: {{{name}: {{expression: x}}}}\n",
    )

    loaded = Template.load(text)

    assert loaded.resources["web"].metadata == {name: {"host": "h"}}
    assert loaded.outputs["out"].value == {name: {"expression": "x"}}
    assert [warning.path for warning in loaded.warnings] == ["resources.web.metadata." + name, "outputs.out.value." + name]
    assert all(f"it appears in heat_template_version {first}" in warning.message for warning in loaded.warnings)


def test_template_removed_function_is_still_an_error():
    # hot_funcs.Removed: "The function Ref is not supported in this version of HOT."
    error = load_error(template("  web:\n    type: OS::Heat::None\n    properties:\n      a: {Ref: x}\n", version="2015-10-15"))

    assert error.path == "resources.web.properties.a.Ref"
    assert "removed in 2014-10-16" in error.message


def test_template_hot_function_in_a_cfn_template_is_data():
    text = (
        "AWSTemplateFormatVersion: 2010-09-09\n"
        "Resources:\n"
        "  web:\n"
        "    Type: OS::Heat::None\n"
        "    Metadata: {get_param: x}\n"
    )

    loaded = Template.load(text)

    assert loaded.resources["web"].metadata == {"get_param": "x"}
    assert [warning.path for warning in loaded.warnings] == ["Resources.web.Metadata.get_param"]


def test_template_condition_of_a_later_function_is_refused_as_no_condition():
    # contains is no condition function before 2017-09-01: the map is data, which is no
    # condition (Heat: 'The definition of condition "c" is invalid').
    text = "heat_template_version: 2017-02-24\nconditions:\n  c: {contains: [a, [a]]}\nresources: {}\n"

    errors = load_errors(text)

    assert [error.message for error in errors] == ["The definition of condition \"c\" is invalid: {'contains': ['a', ['a']]}"]


def test_template_duplicate_key_is_a_warning_and_the_last_value_counts():
    text = template("  web:\n    type: OS::Heat::None\n    type: OS::Heat::RandomString\n")

    loaded = Template.load(text, "t.yaml")

    assert loaded.resources["web"].resource_type == "OS::Heat::RandomString"
    assert [str(warning) for warning in loaded.warnings] == [
        "t.yaml:5:5: resources.web.type: Duplicate key 'type' (first on line 4): the last value is used, "
        "as Heat reads it (remove all but one of them)"
    ]


# -- names, parameters (heat/engine/stack.py validate, hot/parameters.py) ----------------


def test_template_resource_named_like_a_parameter_is_heats_duplicate_names_error():
    text = "heat_template_version: 2021-04-16\nparameters:\n  web: {type: string}\nresources:\n  web: {type: OS::Heat::None}\n"

    error = load_error(text)

    assert error.message == "Duplicate names {'web'}"
    assert error.path == "resources.web"
    assert error.location == Location("t.yaml", 5, 8)


def test_template_resource_named_like_a_pseudo_parameter_is_a_duplicate():
    text = "heat_template_version: 2021-04-16\nresources:\n  OS::stack_name: {type: OS::Heat::None}\n"

    assert load_error(text).message == "Duplicate names {'OS::stack_name'}"


def test_cfn_resource_named_like_a_parameter_is_a_duplicate():
    text = (
        "AWSTemplateFormatVersion: 2010-09-09\n"
        "Parameters:\n  web: {Type: String}\n"
        "Resources:\n  web: {Type: OS::Heat::None}\n"
    )

    error = load_error(text)

    assert error.message == "Duplicate names {'web'}"
    assert error.path == "Resources.web"


@pytest.mark.parametrize("version", ["2013-05-23", "2016-10-14", "2017-09-01"])
def test_template_parameter_tags_before_2018_03_02_are_heats_invalid_key(version):
    # HOTParamSchema's KEYS lack 'tags' until HOTParamSchema20180302.
    text = f"heat_template_version: {version}\nparameters:\n  p:\n    type: string\n    tags: [a]\nresources: {{}}\n"

    error = load_error(text)

    assert error.message == "Invalid key 'tags' for parameter (p)"
    assert error.path == "parameters.p.tags"
    assert error.hint == "tags need heat_template_version 2018-03-02 or later"


@pytest.mark.parametrize("version", ["2018-03-02", "queens", "2021-04-16"])
def test_template_parameter_tags_from_2018_03_02(version):
    text = f"heat_template_version: {version}\nparameters:\n  p:\n    type: string\n    tags: [a, b]\nresources: {{}}\n"

    assert Template.load(text).parameters["p"].tags == ["a", "b"]


def test_template_parameter_tags_must_be_a_list():
    text = "heat_template_version: 2018-03-02\nparameters:\n  p:\n    type: string\n    tags: a\nresources: {}\n"

    assert load_error(text).message == "Tags property should be a list for parameter: p"
