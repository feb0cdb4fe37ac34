"""Template parameters: declarations, user values, conversion and constraints.

Owns Heat's conversion rules for the five parameter types and the pseudo parameters
(OS::stack_name, OS::stack_id, OS::project_id). Errors name ``parameters.<name>``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stoker.sdk import constraints as constr
from stoker.sdk.properties import UNRESOLVED
from stoker.template.errors import TemplateError, format_path

TYPES = (STRING, NUMBER, BOOLEAN, JSON, COMMA_DELIMITED_LIST) = (
    "string",
    "number",
    "boolean",
    "json",
    "comma_delimited_list",
)
# The data type a parameter's value has when its constraints check it.
CONSTRAINED_AS = {
    STRING: constr.STRING,
    NUMBER: constr.NUMBER,
    COMMA_DELIMITED_LIST: constr.LIST,
    JSON: constr.MAP,
    BOOLEAN: constr.BOOLEAN,
}
# Heat's names for the parameter types, as its messages spell them.
HEAT_TYPE_NAMES = {STRING: "String", NUMBER: "Number", COMMA_DELIMITED_LIST: "CommaDelimitedList", JSON: "Json", BOOLEAN: "Boolean"}
PSEUDO = (STACK_NAME, STACK_ID, PROJECT_ID) = ("OS::stack_name", "OS::stack_id", "OS::project_id")
KEYS = ("type", "label", "description", "default", "hidden", "constraints", "immutable", "tags")
# ``tags`` arrives with heat_template_version 2018-03-02 (Heat's HOTParamSchema20180302).
TAGS_SINCE = "2018-03-02"

_TRUE = {"1", "t", "true", "on", "y", "yes"}
_FALSE = {"0", "f", "false", "off", "n", "no"}


@dataclass
class ParameterSchema:
    name: str
    type: str
    default: Any = None
    label: str | None = None
    description: str | None = None
    hidden: bool = False
    immutable: bool = False
    tags: list[str] = field(default_factory=list)
    constraints: list[constr.Constraint] = field(default_factory=list)
    # the section that declares it, for errors' paths (a CFN template's is "Parameters")
    section: str = "parameters"

    @property
    def required(self) -> bool:
        return self.default is None

    def convert(self, value: Any) -> Any:
        """Convert a user value to this type; raise ValueError with a plain message."""
        kind = self.type
        if kind == STRING:
            if isinstance(value, (dict, list)):
                raise ValueError(f"Value must be a string, not a {type(value).__name__}")
            if isinstance(value, bool):
                return str(value).lower()
            return "" if value is None else str(value)
        if kind == NUMBER:
            if isinstance(value, bool):
                raise ValueError(f"Value '{value}' is not a number")
            if isinstance(value, (int, float)):
                return value
            try:
                return int(str(value))
            except ValueError:
                try:
                    return float(str(value))
                except ValueError:
                    raise ValueError(f"Value '{value}' is not a number")
        if kind == BOOLEAN:
            if isinstance(value, bool):
                return value
            text = str(value).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise ValueError(f"Unrecognized value '{value}', acceptable values are: " + ", ".join(sorted(_TRUE | _FALSE)))
        if kind == JSON:
            if isinstance(value, (dict, list)):
                return value
            if value is None or value == "":
                return {}
            try:
                loaded = json.loads(str(value))
            except ValueError as error:
                raise ValueError(f"Value must be valid JSON: {error}")
            if not isinstance(loaded, (dict, list)):
                raise ValueError("Value must be a JSON object or list")
            return loaded
        if kind == COMMA_DELIMITED_LIST:
            # Heat's CommaDelimitedListParam.parse: a list's items as text; a string
            # split on commas with its whitespace kept (param_utils.delim_string_to_list);
            # anything else fails on .split.
            if isinstance(value, list):
                return [str(item) for item in value]
            if value is None or value == "":
                return []
            if not isinstance(value, str):
                raise ValueError(
                    f"Value must be a comma-delimited list string: '{type(value).__name__}' object has no attribute 'split'"
                )
            return value.split(",")
        raise ValueError(f"Unknown parameter type {kind}")

    def check_constraints(self, value: Any, context: Any = None) -> str | None:
        """``context`` offers ``custom_constraint(name)`` (the engine's registry)."""
        for constraint in self.constraints:
            message = constraint.validate(value, context)
            if message:
                return message
        return None

    def to_validate_dict(self) -> dict[str, Any]:
        """Heat's template-validate shape for one parameter."""
        body: dict[str, Any] = {
            "Type": _VALIDATE_TYPES[self.type],
            "NoEcho": "true" if self.hidden else "false",
            "Description": self.description or "",
            "Label": self.label or self.name,
        }
        if self.default is not None:
            body["Default"] = self.default
        descriptions = []
        for constraint in self.constraints:
            shape = constraint.to_dict()
            if "allowed_values" in shape:
                body["AllowedValues"] = shape["allowed_values"]
            if "allowed_pattern" in shape:
                body["AllowedPattern"] = shape["allowed_pattern"]
            if "length" in shape:
                if "min" in shape["length"]:
                    body["MinLength"] = shape["length"]["min"]
                if "max" in shape["length"]:
                    body["MaxLength"] = shape["length"]["max"]
            if "range" in shape:
                if "min" in shape["range"]:
                    body["MinValue"] = shape["range"]["min"]
                if "max" in shape["range"]:
                    body["MaxValue"] = shape["range"]["max"]
            if "modulo" in shape:
                body["Step"] = shape["modulo"]["step"]
                body["Offset"] = shape["modulo"]["offset"]
            if "custom_constraint" in shape:
                body["CustomConstraint"] = shape["custom_constraint"]
            if constraint.description:
                descriptions.append(constraint.description)
        if descriptions:  # as Heat: every constraint's description, in order
            body["ConstraintDescription"] = " ".join(descriptions)
        if self.tags:
            body["Tags"] = list(self.tags)
        return body


_VALIDATE_TYPES = {
    STRING: "String",
    NUMBER: "Number",
    BOOLEAN: "Boolean",
    JSON: "Json",
    COMMA_DELIMITED_LIST: "CommaDelimitedList",
}


def parse_schema(name: str, body: Any, path: tuple, errors: list[TemplateError], locate, version_date: str = "9999-12-31") -> ParameterSchema | None:
    """Read one entry of the ``parameters`` section (``version_date``: the template's
    heat_template_version, which decides whether a modulo constraint and tags are allowed)."""
    where = path + (name,)
    if not isinstance(body, Mapping):
        errors.append(TemplateError("A parameter must be a map with at least a type", path=format_path(where), location=locate(where)))
        return None
    keys = KEYS if version_date >= TAGS_SINCE else tuple(key for key in KEYS if key != "tags")
    for key in body:
        if key not in keys:
            errors.append(
                TemplateError(
                    f"Invalid key '{key}' for parameter ({name})",
                    path=format_path(where + (key,)),
                    location=locate(where + (key,)),
                    hint=(
                        f"tags need heat_template_version {TAGS_SINCE} or later"
                        if key == "tags"
                        else did_you_mean(key, keys)
                    ),
                )
            )
    kind = body.get("type")
    if kind not in TYPES:
        errors.append(
            TemplateError(
                f"Invalid type ({kind}) for parameter {name}" if kind is not None else f"Missing parameter type for parameter: {name}",
                path=format_path(where + ("type",)),
                location=locate(where + ("type",) if kind is not None else where),
                hint="use one of " + ", ".join(TYPES),
            )
        )
        return None
    constraints = []
    entries = body.get("constraints") or []
    if not isinstance(entries, list):
        spot = where + ("constraints",)
        errors.append(TemplateError(f"Invalid constraints for parameter {name}: expected a list of constraints, not {type(entries).__name__}", path=format_path(spot), location=locate(spot)))
        entries = []
    for index, entry in enumerate(entries):
        try:
            if not isinstance(entry, Mapping):
                raise ValueError("a constraint must be a map")
            if "modulo" in entry and version_date < "2017-02-24":
                raise ValueError(f"the modulo constraint is not supported in heat_template_version {version_date}; it appears in 2017-02-24")
            constraint = constr.constraint_from_mapping(entry)
            _check_bounds(constraint)
            if CONSTRAINED_AS[kind] not in constraint.valid_types:
                # Heat's Schema.validate: 'Length constraint invalid for Number'
                raise ValueError(
                    f"{type(constraint).__name__} constraint invalid for {HEAT_TYPE_NAMES[kind]}: "
                    f"a {kind} parameter takes only {', '.join(_constraint_keys(kind))} constraints"
                )
            constraints.append(constraint)
        except (ValueError, TypeError, AttributeError) as error:
            spot = where + ("constraints", index)
            errors.append(TemplateError(f"Invalid constraint: {error}", path=format_path(spot), location=locate(spot)))
    schema = ParameterSchema(
        name=name,
        type=kind,
        default=body.get("default"),
        label=body.get("label"),
        description=body.get("description"),
        hidden=_truthy(body.get("hidden")),
        immutable=_truthy(body.get("immutable")),
        tags=_tags(body.get("tags"), name, where + ("tags",), errors, locate) if "tags" in keys else [],
        constraints=constraints,
    )
    check_default(schema, where + ("default",), errors, locate)
    return schema


def _constraint_keys(kind: str) -> list[str]:
    by_key: dict[str, type[constr.Constraint]] = {
        "range": constr.Range,
        "length": constr.Length,
        "allowed_values": constr.AllowedValues,
        "allowed_pattern": constr.AllowedPattern,
        "modulo": constr.Modulo,
        "custom_constraint": constr.CustomConstraint,
    }
    return [key for key, cls in by_key.items() if CONSTRAINED_AS[kind] in cls.valid_types]


def _check_bounds(constraint: constr.Constraint) -> None:
    """Bounds of the kind Heat's constraint schemas require (a range's numbers, a
    length's and a modulo's integers): any other value would be compared with the
    parameter's value later, and fail there with no place to name."""
    kind: type | tuple[type, ...]
    if isinstance(constraint, constr.Range):
        bounds, kind, message = (constraint.min, constraint.max), (int, float), "range min/max must be numeric"
    elif isinstance(constraint, constr.Length):
        bounds, kind, message = (constraint.min, constraint.max), int, "length min/max must be integral"
    elif isinstance(constraint, constr.Modulo):
        bounds, kind, message = (constraint.step, constraint.offset), int, "modulo step/offset must be integer"
    else:
        return
    for bound in bounds:
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, kind)):
            raise ValueError(f"{message}, not {json.dumps(bound)[:40] if isinstance(bound, str) else type(bound).__name__}")


def _tags(value: Any, name: str, where: tuple, errors: list[TemplateError], locate) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list):  # Heat's Schema._validate_dict
        errors.append(
            TemplateError(
                f"Tags property should be a list for parameter: {name}",
                path=format_path(where),
                location=locate(where),
                hint=f"give a list, not a {type(value).__name__}: tags: [a, b]",
            )
        )
        return []
    return value


def check_default(schema: ParameterSchema, where: tuple, errors: list[TemplateError], locate) -> None:
    """The default, if any, must convert to the type and meet the constraints
    (``where``: the default's place in the template)."""
    if schema.default is None:
        return
    try:
        default = schema.convert(schema.default)
        message = schema.check_constraints(default)
        if message:
            raise ValueError(message)
    except ValueError as error:
        errors.append(TemplateError(f"Invalid default for parameter {schema.name}: {error}", path=format_path(where), location=locate(where)))


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def did_you_mean(word: str, choices) -> str | None:
    from difflib import get_close_matches

    close = get_close_matches(str(word), list(choices), n=1)
    return f"did you mean '{close[0]}'?" if close else None


def resolve_values(
    schemas: Mapping[str, ParameterSchema],
    user_values: Mapping[str, Any],
    defaults: Mapping[str, Any],
    pseudo: Mapping[str, Any],
    context: Any = None,
    require_values: bool = True,
) -> tuple[dict[str, Any], list[TemplateError]]:
    """Compute every parameter's value. Returns (values, errors): errors list every problem.
    Without ``require_values`` (Heat's template-validate), a parameter with no value is
    left out of the values instead of being an error.

    ``user_values`` come from the request and the environment's ``parameters``;
    ``defaults`` from ``parameter_defaults`` (they override template defaults and may name
    parameters the template does not have).
    """
    errors: list[TemplateError] = []
    values: dict[str, Any] = dict(pseudo)
    for name in user_values:
        if name not in schemas:
            errors.append(
                TemplateError(
                    f"The Parameter ({name}) was not defined in template.",
                    path=f"parameters.{name}",
                    hint=did_you_mean(name, schemas) or "remove it or declare it in the template's parameters section",
                )
            )
    for name, schema in schemas.items():
        if name in user_values:
            raw = user_values[name]
            if raw is UNRESOLVED:  # validating a nested stack: its parent's value is not known yet
                values[name] = raw
                continue
        elif name in defaults:
            raw = defaults[name]
        elif schema.default is not None:
            raw = schema.default
        elif not require_values:
            continue
        else:
            errors.append(
                TemplateError(
                    f"The Parameter ({name}) was not provided.",
                    path=f"{schema.section}.{name}",
                    hint=f"pass --parameter {name}=VALUE or set it in an environment file",
                )
            )
            continue
        try:
            value = schema.convert(raw)
        except ValueError as error:
            errors.append(TemplateError(f"Parameter '{name}' is invalid: {_masked(schema, raw, str(error))}", path=f"{schema.section}.{name}"))
            continue
        message = schema.check_constraints(value, context)
        if message:
            errors.append(TemplateError(f"Parameter '{name}' is invalid: {_masked(schema, raw, message)}", path=f"{schema.section}.{name}"))
            continue
        values[name] = value
    return values, errors


def _masked(schema: ParameterSchema, raw: Any, message: str) -> str:
    """A hidden parameter's value never appears in a message (it leaves the engine)."""
    if not schema.hidden:
        return message
    return message.replace(str(raw), "******") if str(raw) else message
