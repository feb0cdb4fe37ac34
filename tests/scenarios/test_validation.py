"""Bad input is refused before anything runs, with every problem and its place."""

from __future__ import annotations

import pytest

from stoker.engine.errors import StackExistsError, StackNotFoundError
from stoker.sdk.exceptions import ValidationError
from stoker.template.errors import TemplateErrors
from tests.support.stacks import template


def problems(service, body: str, **kwargs) -> list[str]:
    with pytest.raises(TemplateErrors) as caught:
        service.create_stack("bad", template(body, "bad.yaml"), **kwargs)
    assert service.store.find_stack("bad") is None, "nothing may be stored for a refused stack"
    return [str(e) for e in caught.value.errors]


def test_bad_yaml_names_line_and_column(service):
    found = problems(service, "heat_template_version: 2021-04-16\nresources:\n  a:\n    type: OS::Heat::None\n     properties: {}\n")
    assert found == ["bad.yaml:5:16: Invalid YAML: mapping values are not allowed in this context"]


def test_unknown_resource_type_suggests_the_right_one(service):
    found = problems(service, "heat_template_version: 2021-04-16\nresources:\n  a:\n    type: OS::Heat::RandomStrin\n")
    assert found == ["bad.yaml:4:11: resources.a.type: The Resource Type (OS::Heat::RandomStrin) could not be found. (did you mean 'OS::Heat::RandomString'?)"]


def test_missing_required_property(service):
    found = problems(service, "heat_template_version: 2021-04-16\nresources:\n  v:\n    type: OS::Heat::Value\n    properties: {type: string}\n")
    assert found == ["bad.yaml:5:17: resources.v.properties.value: Property is required but has no value (set it in the template)"]


def test_wrong_property_type(service):
    found = problems(service, "heat_template_version: 2021-04-16\nresources:\n  r:\n    type: OS::Heat::RandomString\n    properties:\n      length: ten\n")
    assert found == ["bad.yaml:6:15: resources.r.properties.length: Value 'ten' is not an integer"]


def test_constraint_violation_names_the_range(service):
    found = problems(service, "heat_template_version: 2021-04-16\nresources:\n  r:\n    type: OS::Heat::RandomString\n    properties:\n      length: 1000\n")
    assert found == ["bad.yaml:6:15: resources.r.properties.length: 1000 is out of range (min: 1, max: 512)"]


def test_unknown_get_resource_target(service):
    found = problems(service, "heat_template_version: 2021-04-16\nresources:\n  a:\n    type: OS::Heat::None\n    properties:\n      x: {get_resource: b}\n")
    assert found == ['bad.yaml:6:25: resources.a.properties.x.get_resource: The specified reference "b" (in get_resource) is not a resource in the template']


def test_unknown_attribute(service):
    found = problems(service, "heat_template_version: 2021-04-16\nresources:\n  r:\n    type: OS::Heat::RandomString\n  a:\n    type: OS::Heat::None\n    properties:\n      x: {get_attr: [r, valeu]}\n")
    assert found == ["bad.yaml:8:21: resources.a.properties.x.get_attr: The Referenced Attribute (r valeu) is incorrect. (did you mean 'value'?)"]


def test_dependency_cycle_is_named(service):
    body = """
    heat_template_version: 2021-04-16
    resources:
      a:
        type: OS::Heat::Value
        properties: {value: {get_attr: [c, value]}}
      b:
        type: OS::Heat::Value
        properties: {value: {get_attr: [a, value]}}
      c:
        type: OS::Heat::Value
        properties: {value: {get_resource: b}}
    """
    found = problems(service, body)
    assert len(found) == 1
    assert "Circular Dependency Found: a -> c -> b -> a" in found[0]


def test_missing_parameter(service):
    found = problems(service, "heat_template_version: 2021-04-16\nparameters:\n  size: {type: number}\nresources: {}\n")
    assert found == ["bad.yaml:3:9: parameters.size: The Parameter (size) was not provided. (pass --parameter size=VALUE or set it in an environment file)"]


def test_invalid_parameter_value(service):
    found = problems(service, "heat_template_version: 2021-04-16\nparameters:\n  size: {type: number}\nresources: {}\n", parameters={"size": "big"})
    assert found == ["bad.yaml:3:9: parameters.size: Parameter 'size' is invalid: Value 'big' is not a number"]


def test_every_problem_is_reported_at_once(service):
    body = """
    heat_template_version: 2021-04-16
    parameters:
      size: {type: number}
    resources:
      a: {type: OS::Heat::Nonee}
      b:
        type: OS::Heat::RandomString
        properties: {length: abc, lenght: 3}
      c:
        type: OS::Heat::None
        properties: {x: {get_resource: nothere}}
        depnds_on: a
    outputs:
      o: {description: no value}
    """
    found = problems(service, body)
    assert len(found) == 7, found
    assert all(line.startswith("bad.yaml:") for line in found)


def test_invalid_stack_name_and_duplicates(service):
    with pytest.raises(ValidationError, match="Invalid stack name"):
        service.create_stack("1-bad name", template("heat_template_version: 2021-04-16\n"))
    service.create_stack("taken", template("heat_template_version: 2021-04-16\n"))
    with pytest.raises(StackExistsError):
        service.create_stack("taken", template("heat_template_version: 2021-04-16\n"))
    with pytest.raises(StackNotFoundError):
        service.delete_stack("nothing-here")


def test_hostile_yaml_refused(service):
    bomb = "heat_template_version: 2021-04-16\na: &a [x, x, x, x, x, x, x, x, x]\n"
    for level in "bcdefghij":
        previous = chr(ord(level) - 1)
        bomb += f"{level}: &{level} [*{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}, *{previous}]\n"
    found = problems(service, bomb)
    assert "expands to more than" in found[0]
    found = problems(service, "heat_template_version: 2021-04-16\nresources: !!python/object/apply:os.system ['true']\n")
    assert "Unsupported YAML tag" in found[0]


def test_template_validate_needs_no_parameter_values_as_in_heat(service):
    """Heat's template-validate checks a template without its parameters' values (a
    user validates before choosing them); create still needs them."""
    body = """
    heat_template_version: 2021-04-16
    parameters:
      size: {type: number, constraints: [{range: {min: 1, max: 9}}]}
      name: {type: string}
    resources:
      value:
        type: OS::Heat::Value
        properties: {value: {get_param: name}}
      existing:
        type: OS::Heat::RandomString
        external_id: abc
        properties: {length: many}
    """

    result, _ = service.validate_template(template(body))

    assert set(result["Parameters"]) == {"size", "name"}
    # Nor are values given judged (Heat: validate_value=False): what create would refuse
    # is a note, and the value is shown as given.
    notes: list[str] = []
    result, _ = service.validate_template(template(body), parameters={"size": 99}, notes=notes)
    assert result["Parameters"]["size"]["Value"] == 99
    assert [note.split("parameters.", 1)[1] for note in notes] == [
        "size: Parameter 'size' is invalid: 99 is out of range (min: 1, max: 9)",
        "name: The Parameter (name) was not provided. (pass --parameter name=VALUE or set it in an environment file)",
    ]
    assert problems(service, body)[0].endswith("parameters.size: The Parameter (size) was not provided. (pass --parameter size=VALUE or set it in an environment file)")
