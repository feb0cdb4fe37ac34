"""What the CloudFormation-compatible formats read differently from HOT: parameters and
Mappings.

AWSTemplateFormatVersion 2010-09-09 and HeatTemplateFormatVersion 2012-12-12 spell their
sections and keys their own way (``versions.CFN_KEYWORDS``), and ``stoker.template.hot``
reads resources, outputs and conditions of both formats with the same code. This module
reads what has no HOT counterpart:

- a parameter (Type, Default, NoEcho, AllowedValues, ...) into the same
  ``ParameterSchema`` a HOT parameter gives, as Heat's ``parameters.Schema.from_dict``
  does: constraints in Heat's order (Range from MinValue/MaxValue, Length from
  MinLength/MaxLength, AllowedValues, AllowedPattern), each carrying the
  ConstraintDescription, and a constraint refused where the type cannot have it;
- the Mappings section, which ``Fn::FindInMap`` reads.

Must not: read resources or functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from stoker.sdk import constraints as constr
from stoker.template import parameters
from stoker.template.errors import Location, TemplateError, format_path
from stoker.template.parameters import ParameterSchema

# Heat's parameters.PARAMETER_KEYS
KEYS = (
    "Type",
    "Default",
    "NoEcho",
    "AllowedValues",
    "AllowedPattern",
    "MaxLength",
    "MinLength",
    "MaxValue",
    "MinValue",
    "Description",
    "ConstraintDescription",
    "Label",
)
# CFN type -> the parameter type it reads as
TYPES = {
    "String": parameters.STRING,
    "Number": parameters.NUMBER,
    "CommaDelimitedList": parameters.COMMA_DELIMITED_LIST,
    "Json": parameters.JSON,
    "Boolean": parameters.BOOLEAN,
}
# The data type each parameter type is to a constraint (Heat's Schema: a
# CommaDelimitedList is a LIST, a Json a MAP).
Locate = Callable[[tuple], Location | None]


class _Problems:
    """Errors of one section, each with its place."""

    def __init__(self, errors: list[TemplateError], locate: Locate):
        self.errors = errors
        self.locate = locate

    def add(self, message: str, where: tuple, hint: str | None = None) -> None:
        self.errors.append(
            TemplateError(message, path=format_path(where), location=self.locate(where), hint=hint)
        )


def parse_parameter(
    name: str, body: Any, path: tuple, errors: list[TemplateError], locate: Locate
) -> ParameterSchema | None:
    """Read one entry of a CFN template's Parameters section (``path``: the section's)."""
    problems = _Problems(errors, locate)
    where = path + (name,)
    if not isinstance(body, Mapping):
        problems.add(
            f"Invalid parameter ({name}), expected a mapping",
            where,
            hint="give at least a Type, such as 'Type: String'",
        )
        return None
    for key in body:
        if key not in KEYS:
            problems.add(
                f"Invalid key '{key}' for parameter ({name})",
                where + (key,),
                parameters.did_you_mean(key, KEYS),
            )
    kind = body.get("Type")
    if kind not in TYPES:
        problems.add(
            f"Invalid type ({kind}) for parameter {name}"
            if kind is not None
            else f"Missing parameter type for parameter: {name}",
            where + ("Type",) if kind is not None else where,
            hint=(parameters.did_you_mean(kind, TYPES) if isinstance(kind, str) else None)
            or "use one of " + ", ".join(TYPES),
        )
        return None
    schema = ParameterSchema(
        name=name,
        type=TYPES[kind],
        default=body.get("Default"),
        label=body.get("Label"),
        description=body.get("Description"),
        # Heat: str(NoEcho).lower() == 'true', so true, True and "TRUE" hide the value
        hidden=str(body.get("NoEcho", "false")).lower() == "true",
        constraints=_constraints(body, where, problems),
        section=format_path(path),
    )
    parameters.check_default(schema, where + ("Default",), errors, locate)
    return schema


def _constraints(
    body: Mapping[str, Any], where: tuple, problems: _Problems
) -> list[constr.Constraint]:
    description = body.get("ConstraintDescription")
    kind = body["Type"]
    data_type = parameters.CONSTRAINED_AS[TYPES[kind]]
    found: list[tuple[str, constr.Constraint]] = []
    for first, second, build, integral in (
        ("MinValue", "MaxValue", constr.Range, False),
        ("MinLength", "MaxLength", constr.Length, True),
    ):
        if first not in body and second not in body:
            continue
        bounds = [_number(body, key, integral, where, problems) for key in (first, second)]
        if all(bound is not False for bound in bounds) and bounds != [None, None]:
            found.append(
                (first if first in body else second, build(bounds[0], bounds[1], description))
            )
    for key, make in (
        ("AllowedValues", constr.AllowedValues),
        ("AllowedPattern", constr.AllowedPattern),
    ):
        if key not in body:
            continue
        try:
            found.append((key, make(body[key], description)))
        except (ValueError, TypeError) as error:
            problems.add(f"Invalid {key} for parameter {where[-1]}: {error}", where + (key,))
    result = []
    for key, constraint in found:
        if data_type not in constraint.valid_types:
            # Heat's Schema.validate: 'Length constraint invalid for Number'
            problems.add(
                f"Parameter '{where[-1]}' is invalid: {type(constraint).__name__} constraint invalid for {kind}",
                where + (key,),
                hint=f"{key} does not apply to a {kind} parameter",
            )
            continue
        result.append(constraint)
    return result


def _number(
    body: Mapping[str, Any], key: str, integral: bool, where: tuple, problems: _Problems
) -> Any:
    """The bound under ``key`` as Heat's ``Schema.get_num`` reads it (a number, or a string
    holding one); None when absent, False after reporting a bad one."""
    value = body.get(key)
    if value is None:
        return None
    number: Any = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = value
    elif isinstance(value, str):
        for convert in (int, float):
            try:
                number = convert(value)
                break
            except ValueError:
                continue
    if number is None:
        problems.add(
            f"{key} of parameter {where[-1]} must be a number, not {value!r}", where + (key,)
        )
        return False
    if integral and not isinstance(number, int):
        problems.add("min/max length must be integral", where + (key,), hint=f"{key} is {value!r}")
        return False
    return number


def read_mappings(
    section: Any, path: tuple, errors: list[TemplateError], locate: Locate
) -> dict[str, Any] | None:
    """The Mappings section: map name -> top-level key -> second-level key -> value.
    None when it cannot be read (reported), so that Fn::FindInMap is not also reported."""
    if section is None:
        return {}
    problems = _Problems(errors, locate)
    if not isinstance(section, Mapping):
        problems.add("The Mappings section must be a map of mappings", path)
        return None
    readable = True
    for name, mapping in section.items():
        if not isinstance(mapping, Mapping):
            problems.add(f"Mapping {name} must be a map of keys to maps of values", path + (name,))
            readable = False
            continue
        for key, values in mapping.items():
            if not isinstance(values, Mapping):
                problems.add(
                    f"The key {key} of mapping {name} must be a map of values",
                    path + (name, key),
                    hint="Fn::FindInMap reads [map_name, top_level_key, second_level_key]",
                )
                readable = False
    return dict(section) if readable else None
