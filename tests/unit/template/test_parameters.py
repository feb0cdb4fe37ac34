"""stoker.template.parameters: declarations, conversion, constraints and values."""

from __future__ import annotations

from typing import Any

import pytest

from stoker.template.errors import Location, TemplateError
from stoker.template.parameters import PSEUDO, ParameterSchema, parse_schema, resolve_values


def schema(name: str = "p", **body: Any) -> ParameterSchema:
    """A declaration read as the template reader reads it; it must be valid."""
    errors: list[TemplateError] = []
    result = parse_schema(name, body, ("parameters",), errors, lambda path: None)
    assert errors == []
    assert result is not None
    return result


def schema_errors(name: str, body: Any) -> list[TemplateError]:
    errors: list[TemplateError] = []
    parse_schema(name, body, ("parameters",), errors, lambda path: Location("t.yaml", len(path), 1))
    return errors


# -- boolean ---------------------------------------------------------------------


@pytest.mark.parametrize("text", ["1", "t", "true", "on", "y", "yes", "TRUE", "Yes", "On", " true ", "T", "Y"])
def test_boolean_accepts_true_spellings(text):
    assert schema(type="boolean").convert(text) is True


@pytest.mark.parametrize("text", ["0", "f", "false", "off", "n", "no", "FALSE", "No", "OFF", " no ", "F", "N"])
def test_boolean_accepts_false_spellings(text):
    assert schema(type="boolean").convert(text) is False


def test_boolean_accepts_booleans_and_zero_or_one():
    boolean = schema(type="boolean")

    assert boolean.convert(True) is True
    assert boolean.convert(False) is False
    assert boolean.convert(1) is True
    assert boolean.convert(0) is False


@pytest.mark.parametrize("value", ["maybe", "2", "", "truthy", "nope", None, 2, [True]])
def test_boolean_refuses_anything_else(value):
    with pytest.raises(ValueError, match="Unrecognized value") as caught:
        schema(type="boolean").convert(value)

    assert "acceptable values are: 0, 1, f, false, n, no, off, on, t, true, y, yes" in str(caught.value)


# -- number ----------------------------------------------------------------------


@pytest.mark.parametrize(("value", "number"), [("5", 5), ("-3", -3), ("2.5", 2.5), ("1e3", 1000.0), (7, 7), (0.5, 0.5)])
def test_number_converts_strings_to_int_or_float(value, number):
    converted = schema(type="number").convert(value)

    assert converted == number
    assert type(converted) is type(number)


@pytest.mark.parametrize("value", ["abc", "", "1,5", None, True, [1]])
def test_number_refuses_what_is_not_a_number(value):
    with pytest.raises(ValueError, match="is not a number"):
        schema(type="number").convert(value)


# -- string ----------------------------------------------------------------------


def test_string_converts_scalars_to_text():
    string = schema(type="string")

    assert string.convert("x") == "x"
    assert string.convert(5) == "5"
    assert string.convert(None) == ""


@pytest.mark.parametrize("value", [{"a": 1}, ["a"]])
def test_string_refuses_maps_and_lists(value):
    with pytest.raises(ValueError, match="must be a string"):
        schema(type="string").convert(value)


# -- comma_delimited_list ----------------------------------------------------------


def test_comma_delimited_list_splits_a_string_and_keeps_its_whitespace():
    # Heat's param_utils.delim_string_to_list: value.split(','), nothing stripped.
    assert schema(type="comma_delimited_list").convert("a, b ,c") == ["a", " b ", "c"]
    assert schema(type="comma_delimited_list").convert(" a ") == [" a "]


def test_comma_delimited_list_keeps_empty_items():
    assert schema(type="comma_delimited_list").convert("a,,b") == ["a", "", "b"]


def test_comma_delimited_list_of_empty_string_is_empty():
    assert schema(type="comma_delimited_list").convert("") == []


def test_comma_delimited_list_accepts_a_list_as_text_items():
    assert schema(type="comma_delimited_list").convert(["a", 1, 2.5]) == ["a", "1", "2.5"]


def test_comma_delimited_list_refuses_a_map():
    with pytest.raises(ValueError, match="comma-delimited list"):
        schema(type="comma_delimited_list").convert({"a": 1})


@pytest.mark.parametrize("value", [5, 1.5, True])
def test_comma_delimited_list_refuses_a_scalar_that_is_no_string(value):
    # Heat: delim_string_to_list(5) -> AttributeError -> "Value must be a comma-delimited list string: ..."
    with pytest.raises(ValueError) as caught:
        schema(type="comma_delimited_list").convert(value)

    assert str(caught.value) == (
        f"Value must be a comma-delimited list string: '{type(value).__name__}' object has no attribute 'split'"
    )


def test_comma_delimited_list_items_are_text_as_heat_makes_them():
    assert schema(type="comma_delimited_list").convert([True, None, " x "]) == ["True", "None", " x "]


# -- json ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "loaded"),
    [
        ({"a": [1, 2]}, {"a": [1, 2]}),
        ([1, "b"], [1, "b"]),
        ('{"a": {"b": true}}', {"a": {"b": True}}),
        ("[1, 2]", [1, 2]),
        ("", {}),
        (None, {}),
    ],
)
def test_json_accepts_maps_lists_and_json_text(value, loaded):
    assert schema(type="json").convert(value) == loaded


@pytest.mark.parametrize(("value", "words"), [("{bad", "must be valid JSON"), ("5", "JSON object or list"), ('"text"', "JSON object or list")])
def test_json_refuses_other_text(value, words):
    with pytest.raises(ValueError, match=words):
        schema(type="json").convert(value)


# -- declarations ----------------------------------------------------------------


def test_parse_schema_reads_every_key():
    declared = schema(
        "password",
        type="string",
        label="Password",
        description="The admin password",
        default="secret",
        hidden=True,
        immutable="true",
        tags=["security"],
        constraints=[{"length": {"min": 6}}],
    )

    assert (declared.name, declared.type, declared.label, declared.description) == (
        "password",
        "string",
        "Password",
        "The admin password",
    )
    assert declared.default == "secret"
    assert declared.hidden is True
    assert declared.immutable is True
    assert declared.tags == ["security"]
    assert len(declared.constraints) == 1
    assert not declared.required


def test_parse_schema_without_default_is_required():
    assert schema(type="string").required


def test_parse_schema_unknown_key_has_a_hint():
    [error] = schema_errors("p", {"type": "string", "lable": "x"})

    assert error.message == "Invalid key 'lable' for parameter (p)"
    assert error.path == "parameters.p.lable"
    assert error.hint == "did you mean 'label'?"
    assert error.location == Location("t.yaml", 3, 1)


def test_parse_schema_missing_type_is_an_error():
    [error] = schema_errors("p", {"default": 1})

    assert error.message == "Missing parameter type for parameter: p"
    assert "comma_delimited_list" in error.hint


def test_parse_schema_unknown_type_is_an_error():
    [error] = schema_errors("p", {"type": "integer"})

    assert error.message == "Invalid type (integer) for parameter p"
    assert error.path == "parameters.p.type"


def test_parse_schema_declaration_must_be_a_map():
    [error] = schema_errors("p", "string")

    assert error.message == "A parameter must be a map with at least a type"
    assert error.path == "parameters.p"


def test_parse_schema_bad_constraints_are_errors_with_their_index():
    errors = schema_errors("p", {"type": "string", "constraints": [{"length": {"min": 1}}, {"bogus": 1}, "x"]})

    assert [(error.path, error.message) for error in errors] == [
        ("parameters.p.constraints[1]", "Invalid constraint: Unknown constraint 'bogus'"),
        ("parameters.p.constraints[2]", "Invalid constraint: a constraint must be a map"),
    ]


def test_parse_schema_constraint_of_another_type_is_an_error_not_a_crash():
    [error] = schema_errors("p", {"type": "number", "default": 0, "constraints": [{"length": {"min": 0}}]})

    assert error.path == "parameters.p.constraints[0]"
    assert error.message == (
        "Invalid constraint: Length constraint invalid for Number: "
        "a number parameter takes only range, allowed_values, modulo, custom_constraint constraints"
    )


def test_parse_schema_default_must_convert():
    [error] = schema_errors("p", {"type": "number", "default": "ten"})

    assert error.path == "parameters.p.default"
    assert error.message == "Invalid default for parameter p: Value 'ten' is not a number"


def test_parse_schema_default_must_meet_the_constraints():
    [error] = schema_errors(
        "p", {"type": "string", "default": "c", "constraints": [{"allowed_values": ["a", "b"], "description": "a or b"}]}
    )

    assert error.message == "Invalid default for parameter p: a or b"


# -- constraints -----------------------------------------------------------------


def check(declared: ParameterSchema, value: Any) -> str | None:
    return declared.check_constraints(declared.convert(value))


def test_constraint_description_is_the_message():
    declared = schema(type="number", constraints=[{"range": {"min": 1, "max": 10}, "description": "Pick 1 to 10"}])

    assert check(declared, "11") == "Pick 1 to 10"
    assert check(declared, "10") is None


def test_constraint_without_description_explains_itself():
    declared = schema(type="number", constraints=[{"range": {"min": 1, "max": 10}}])

    assert check(declared, "0") == "0 is out of range (min: 1, max: 10)"


def test_constraint_length_applies_to_strings_and_lists():
    assert check(schema(type="string", constraints=[{"length": {"min": 3}}]), "ab") == "length (2) must be at least 3"
    assert check(schema(type="comma_delimited_list", constraints=[{"length": {"max": 2}}]), "a,b,c") == (
        "length (3) must be no more than 2"
    )


def test_constraint_allowed_values_compare_numbers_as_numbers():
    declared = schema(type="number", constraints=[{"allowed_values": [1, 2, 4]}])

    assert check(declared, "4") is None
    assert check(declared, "3") == '"3" is not an allowed value ["1", "2", "4"]'


def test_constraint_allowed_values_apply_to_each_list_item():
    declared = schema(type="comma_delimited_list", constraints=[{"allowed_values": ["a", "b"]}])

    assert check(declared, "a,b,a") is None
    assert check(declared, "a,c") is not None


def test_constraint_allowed_pattern_matches_the_whole_string():
    declared = schema(type="string", constraints=[{"allowed_pattern": "[a-z]+", "description": "lower case only"}])

    assert check(declared, "abc") is None
    assert check(declared, "abcD") == "lower case only"


def test_constraint_first_failure_is_reported():
    declared = schema(
        type="string",
        constraints=[{"length": {"min": 2}, "description": "too short"}, {"allowed_pattern": "[0-9]+", "description": "digits"}],
    )

    assert check(declared, "a") == "too short"
    assert check(declared, "ab") == "digits"


# -- resolve_values ---------------------------------------------------------------


def test_resolve_values_uses_user_values_then_defaults():
    schemas = {"flavor": schema("flavor", type="string", default="m1.small"), "count": schema("count", type="number")}

    values, errors = resolve_values(schemas, {"count": "3"}, {}, {})

    assert errors == []
    assert values == {"flavor": "m1.small", "count": 3}


def test_resolve_values_missing_required_parameter_is_an_error():
    values, [error] = resolve_values({"key_name": schema("key_name", type="string")}, {}, {}, {})

    assert "key_name" not in values
    assert error.message == "The Parameter (key_name) was not provided."
    assert error.path == "parameters.key_name"
    assert "key_name=VALUE" in error.hint


def test_resolve_values_unknown_parameter_has_a_did_you_mean_hint():
    schemas = {"flavor": schema("flavor", type="string", default="m1.small")}

    _, [error] = resolve_values(schemas, {"flavour": "m1.large"}, {}, {})

    assert error.message == "The Parameter (flavour) was not defined in template."
    assert error.path == "parameters.flavour"
    assert error.hint == "did you mean 'flavor'?"


def test_resolve_values_unknown_parameter_without_a_close_name_says_what_to_do():
    _, [error] = resolve_values({}, {"zzz": 1}, {}, {})

    assert "declare it" in error.hint


def test_resolve_values_parameter_defaults_override_the_template_default():
    schemas = {"flavor": schema("flavor", type="string", default="m1.small")}

    values, errors = resolve_values(schemas, {}, {"flavor": "m1.large"}, {})

    assert errors == []
    assert values["flavor"] == "m1.large"


def test_resolve_values_user_value_overrides_parameter_defaults():
    schemas = {"flavor": schema("flavor", type="string", default="m1.small")}

    values, _ = resolve_values(schemas, {"flavor": "m1.xlarge"}, {"flavor": "m1.large"}, {})

    assert values["flavor"] == "m1.xlarge"


def test_resolve_values_parameter_defaults_satisfy_a_required_parameter():
    values, errors = resolve_values({"key": schema("key", type="string")}, {}, {"key": "mykey"}, {})

    assert errors == []
    assert values["key"] == "mykey"


def test_resolve_values_parameter_defaults_may_name_unknown_parameters():
    values, errors = resolve_values({}, {}, {"used_by_another_template": 1}, {})

    assert errors == []
    assert values == {}


def test_resolve_values_include_pseudo_parameters():
    pseudo = {"OS::stack_name": "web", "OS::stack_id": "1234", "OS::project_id": "p1"}

    values, errors = resolve_values({}, {}, {}, pseudo)

    assert errors == []
    assert values == pseudo
    assert set(PSEUDO) == set(pseudo)


def test_resolve_values_converts_and_checks_values():
    schemas = {
        "count": schema("count", type="number", constraints=[{"range": {"max": 5}, "description": "At most 5"}]),
        "debug": schema("debug", type="boolean"),
        "zones": schema("zones", type="comma_delimited_list"),
    }

    values, errors = resolve_values(schemas, {"count": "2", "debug": "on", "zones": "a, b"}, {}, {})

    assert errors == []
    assert values == {"count": 2, "debug": True, "zones": ["a", " b"]}


def test_resolve_values_reports_every_problem_together():
    schemas = {
        "count": schema("count", type="number", constraints=[{"range": {"max": 5}, "description": "At most 5"}]),
        "debug": schema("debug", type="boolean"),
        "name": schema("name", type="string"),
    }

    values, errors = resolve_values(schemas, {"count": "9", "debug": "perhaps", "nmae": "x"}, {}, {})

    assert values == {}
    assert [error.path for error in errors] == [
        "parameters.nmae",
        "parameters.count",
        "parameters.debug",
        "parameters.name",
    ]
    assert errors[1].message == "Parameter 'count' is invalid: At most 5"
    assert errors[2].message.startswith("Parameter 'debug' is invalid: Unrecognized value 'perhaps'")
    assert errors[3].message == "The Parameter (name) was not provided."


# -- to_validate_dict ---------------------------------------------------------------


def test_to_validate_dict_of_a_plain_parameter():
    assert schema("flavor", type="string").to_validate_dict() == {
        "Type": "String",
        "NoEcho": "false",
        "Description": "",
        "Label": "flavor",
    }


@pytest.mark.parametrize(
    ("kind", "shown"),
    [
        ("string", "String"),
        ("number", "Number"),
        ("boolean", "Boolean"),
        ("json", "Json"),
        ("comma_delimited_list", "CommaDelimitedList"),
    ],
)
def test_to_validate_dict_type_names(kind, shown):
    assert schema(type=kind).to_validate_dict()["Type"] == shown


def test_to_validate_dict_with_every_detail():
    declared = schema(
        "name",
        type="string",
        label="Server name",
        description="The name of the server",
        default="web",
        hidden=True,
        tags=["a"],
        constraints=[
            {"length": {"min": 2, "max": 20}, "description": "2 to 20 characters."},
            {"allowed_values": ["web", "db"]},
            {"allowed_pattern": "[a-z]+", "description": "Lower case."},
        ],
    )

    assert declared.to_validate_dict() == {
        "Type": "String",
        "Default": "web",
        "NoEcho": "true",
        "Description": "The name of the server",
        "Label": "Server name",
        "MinLength": 2,
        "MaxLength": 20,
        "AllowedValues": ["web", "db"],
        "AllowedPattern": "[a-z]+",
        "ConstraintDescription": "2 to 20 characters. Lower case.",
        "Tags": ["a"],
    }


def test_to_validate_dict_number_constraints():
    declared = schema(
        "count",
        type="number",
        default=3,
        constraints=[{"range": {"min": 1, "max": 9}, "description": "1 to 9"}, {"modulo": {"step": 2, "offset": 1}}],
    )

    assert declared.to_validate_dict() == {
        "Type": "Number",
        "Default": 3,
        "NoEcho": "false",
        "Description": "",
        "Label": "count",
        "MinValue": 1,
        "MaxValue": 9,
        "Step": 2,
        "Offset": 1,
        "ConstraintDescription": "1 to 9",
    }


def test_to_validate_dict_one_sided_constraints():
    shown = schema(type="number", constraints=[{"range": {"min": 0}}]).to_validate_dict()
    assert shown["MinValue"] == 0
    assert "MaxValue" not in shown
    assert "ConstraintDescription" not in shown

    shown = schema(type="string", constraints=[{"length": {"max": 8}}]).to_validate_dict()
    assert shown["MaxLength"] == 8
    assert "MinLength" not in shown


def test_to_validate_dict_custom_constraint():
    shown = schema(type="string", constraints=[{"custom_constraint": "nova.flavor"}]).to_validate_dict()

    assert shown["CustomConstraint"] == "nova.flavor"
