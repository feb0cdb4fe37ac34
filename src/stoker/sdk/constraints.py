"""Property value constraints (seed 001, "属性约束").

Each constraint checks one value and explains a failure in words, using the author's
description when one is given. Which data types a constraint applies to is declared
here so a plugin schema that misuses one is rejected when the plugin registers.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from stoker.sdk import patterns

__all__ = ["AllowedPattern", "AllowedValues", "BaseCustomConstraint", "Constraint", "CustomConstraint", "Length", "Modulo", "Range"]

# Data type names, shared with properties.Schema (kept here to avoid an import cycle).
INTEGER, STRING, NUMBER, BOOLEAN, MAP, LIST, ANY = (
    "Integer",
    "String",
    "Number",
    "Boolean",
    "Map",
    "List",
    "Any",
)


class Constraint:
    """A rule a value must satisfy."""

    valid_types: tuple[str, ...] = ()

    def __init__(self, description: str | None = None):
        self.description = description

    def validate(self, value: Any, context: Any = None) -> str | None:
        """Return None when ``value`` is valid, else the message to show."""
        if self._is_valid(value, context):
            return None
        return self.description or self._explain(value)

    def _is_valid(self, value: Any, context: Any) -> bool:
        raise NotImplementedError

    def _explain(self, value: Any) -> str:
        raise NotImplementedError

    def to_dict(self) -> dict[str, Any]:
        raise NotImplementedError


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Number) and not isinstance(value, bool)


class Range(Constraint):
    """The value lies in ``[min, max]``; applies to INTEGER and NUMBER."""

    valid_types = (INTEGER, NUMBER)

    def __init__(self, min: float | None = None, max: float | None = None, description: str | None = None):  # noqa: A002
        super().__init__(description)
        if min is None and max is None:
            raise ValueError("A Range constraint needs a min, a max, or both")
        self.min = min
        self.max = max

    def _is_valid(self, value: Any, context: Any) -> bool:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return False
        return (self.min is None or number >= self.min) and (self.max is None or number <= self.max)

    def _explain(self, value: Any) -> str:
        if self.min is not None and self.max is not None:
            return f"{value} is out of range (min: {self.min}, max: {self.max})"
        if self.min is not None:
            return f"{value} must be no less than {self.min}"
        return f"{value} must be no greater than {self.max}"

    def to_dict(self) -> dict[str, Any]:
        body = {k: v for k, v in (("min", self.min), ("max", self.max)) if v is not None}
        return {"range": body, "description": self.description}


class Length(Constraint):
    """The length lies in ``[min, max]``; applies to STRING, LIST and MAP."""

    valid_types = (STRING, LIST, MAP)

    def __init__(self, min: int | None = None, max: int | None = None, description: str | None = None):  # noqa: A002
        super().__init__(description)
        if min is None and max is None:
            raise ValueError("A Length constraint needs a min, a max, or both")
        self.min = min
        self.max = max

    def _is_valid(self, value: Any, context: Any) -> bool:
        try:
            size = len(value)
        except TypeError:
            return False
        return (self.min is None or size >= self.min) and (self.max is None or size <= self.max)

    def _explain(self, value: Any) -> str:
        if self.min is not None and self.max is not None:
            return f"length ({len(value)}) is out of range (min: {self.min}, max: {self.max})"
        if self.min is not None:
            return f"length ({len(value)}) must be at least {self.min}"
        return f"length ({len(value)}) must be no more than {self.max}"

    def to_dict(self) -> dict[str, Any]:
        body = {k: v for k, v in (("min", self.min), ("max", self.max)) if v is not None}
        return {"length": body, "description": self.description}


class AllowedValues(Constraint):
    """The value is one of a list; applies to every type but MAP."""

    valid_types = (STRING, INTEGER, NUMBER, BOOLEAN, LIST, ANY)

    def __init__(self, allowed: Sequence[Any], description: str | None = None):
        super().__init__(description)
        if isinstance(allowed, str) or not isinstance(allowed, Sequence):
            raise ValueError("AllowedValues needs a list of values")
        self.allowed = tuple(allowed)

    def _is_valid(self, value: Any, context: Any) -> bool:
        if isinstance(value, list):
            return all(self._is_valid(item, context) for item in value)
        if value in self.allowed:
            return True
        # Numbers arrive as strings from parameters; compare them as numbers.
        return any(_is_number(a) and _equal_number(a, value) for a in self.allowed)

    def _explain(self, value: Any) -> str:
        allowed = ", ".join(f'"{a}"' for a in self.allowed)
        return f'"{value}" is not an allowed value [{allowed}]'

    def to_dict(self) -> dict[str, Any]:
        return {"allowed_values": list(self.allowed), "description": self.description}


def _equal_number(number: Any, value: Any) -> bool:
    try:
        return float(value) == float(number)
    except (TypeError, ValueError):
        return False


class AllowedPattern(Constraint):
    """The whole string matches a regular expression; applies to STRING."""

    valid_types = (STRING,)

    def __init__(self, pattern: str, description: str | None = None):
        super().__init__(description)
        # Matched by RE2, in time linear in the value, or under a time limit (sdk/patterns):
        # the pattern and the value may both come from a user, and a backtracking match
        # would otherwise hold the process for ever.
        try:
            self.match = patterns.compile(pattern).fullmatch
        except patterns.PatternError as error:
            raise ValueError(f"AllowedPattern {pattern!r} is not a valid regular expression: {error}")
        self.pattern = pattern

    def _is_valid(self, value: Any, context: Any) -> bool:
        try:
            return isinstance(value, str) and self.match(value) is not None
        except patterns.PatternTimeoutError:
            return False  # a value whose match runs out of time is not accepted

    def _explain(self, value: Any) -> str:
        return f'"{value}" does not match pattern "{self.pattern}"'

    def to_dict(self) -> dict[str, Any]:
        return {"allowed_pattern": self.pattern, "description": self.description}


class Modulo(Constraint):
    """``value`` is ``offset`` plus a multiple of ``step``; INTEGER and NUMBER.

    Available in templates from version 2017-02-24 on.
    """

    valid_types = (INTEGER, NUMBER)

    def __init__(self, step: int | None = None, offset: int | None = None, description: str | None = None):
        super().__init__(description)
        if step is None or offset is None:
            raise ValueError("A Modulo constraint needs both a step and an offset")
        if step == 0:
            raise ValueError("The step of a Modulo constraint cannot be 0")
        if abs(offset) >= abs(step):
            raise ValueError("The offset of a Modulo constraint must be smaller than its step")
        self.step = step
        self.offset = offset

    def _is_valid(self, value: Any, context: Any) -> bool:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return False
        return (number - self.offset) % self.step == 0

    def _explain(self, value: Any) -> str:
        return f"{value} is not a multiple of {self.step} with an offset of {self.offset}"

    def to_dict(self) -> dict[str, Any]:
        return {"modulo": {"step": self.step, "offset": self.offset}, "description": self.description}


class CustomConstraint(Constraint):
    """A named constraint looked up in the registry (plugins add them with constraint_mapping())."""

    valid_types = (STRING, INTEGER, NUMBER, BOOLEAN, LIST, MAP, ANY)

    def __init__(self, name: str, description: str | None = None, environment: Any = None):
        super().__init__(description)
        self.name = name
        self.environment = environment
        self._last_error: str | None = None

    def _is_valid(self, value: Any, context: Any) -> bool:
        lookup: Callable[[str], Any] | None = getattr(context, "custom_constraint", None)
        checker = lookup(self.name) if lookup else None
        if checker is None:
            # Checked again with the engine's registry at run time; a plain Properties
            # object without one cannot judge a custom constraint.
            if lookup is None:
                return True
            self._last_error = f'"{self.name}" is not a registered custom constraint'
            return False
        if isinstance(checker, type):
            checker = checker()
        ok = checker.validate(value, context) if hasattr(checker, "validate") else checker(value)
        if not ok:
            message = getattr(checker, "error", None)
            self._last_error = message(value) if callable(message) else f'"{value}" does not validate {self.name}'
        return bool(ok)

    def _explain(self, value: Any) -> str:
        return self._last_error or f'"{value}" does not validate {self.name}'

    def to_dict(self) -> dict[str, Any]:
        return {"custom_constraint": self.name, "description": self.description}


class BaseCustomConstraint:
    """Base of named constraints a plugin registers through ``constraint_mapping()``.

    Override ``validate_with_client(client, value)`` (raising one of
    ``expected_exceptions`` when the value is wrong) or ``validate(value, context)``.
    """

    expected_exceptions: tuple[type[BaseException], ...] = (ValueError,)
    resource_client_name: str | None = None
    resource_getter_name: str | None = None

    def __init__(self) -> None:
        self._error_message: str | None = None

    def error(self, value: Any) -> str:
        return self._error_message or f'"{value}" does not validate {type(self).__name__}'

    def validate(self, value: Any, context: Any, template: Any = None) -> bool:
        client = None
        if self.resource_client_name and context is not None and hasattr(context, "client"):
            client = context.client(self.resource_client_name)
        try:
            self.validate_with_client(client, value)
        except self.expected_exceptions as error:
            self._error_message = str(error)
            return False
        return True

    def validate_with_client(self, client: Any, value: Any) -> None:
        if client is not None and self.resource_getter_name:
            getattr(client, self.resource_getter_name)(value)


def constraint_from_mapping(data: Mapping[str, Any]) -> Constraint:
    """Build a constraint from its template form (``{range: {min: 1}}``)."""
    description = data.get("description")
    for key, value in data.items():
        if key == "description":
            continue
        if key == "range":
            return Range(value.get("min"), value.get("max"), description)
        if key == "length":
            return Length(value.get("min"), value.get("max"), description)
        if key == "allowed_values":
            return AllowedValues(value, description)
        if key == "allowed_pattern":
            return AllowedPattern(value, description)
        if key == "modulo":
            return Modulo(value.get("step"), value.get("offset"), description)
        if key == "custom_constraint":
            return CustomConstraint(value, description)
        raise ValueError(f"Unknown constraint {key!r}")
    raise ValueError("A constraint needs one of range, length, allowed_values, allowed_pattern, modulo, custom_constraint")
